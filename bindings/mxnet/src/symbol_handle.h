// The Symbol handle of the C API. MXNet creates an op node in two steps — an "atomic" symbol
// (op + attributes, MXSymbolCreateAtomicSymbol) that the frontend then composes with its inputs
// (NNSymbolCompose) — while a weft::Symbol is always a whole graph; the handle keeps the atomic
// step until composition builds the node with weft::Operator.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "common.h"
#include "weft/symbol.h"

namespace weft::mx {

struct SymbolH : Handle<HandleKind::kSymbol> {
  struct Atomic {
    std::string op;  // the op name as looked up (an alias keeps its name: it is the naming hint)
    std::map<std::string, std::string> attrs;
  };
  std::optional<Atomic> atomic;  // set until composed
  Symbol symbol;                 // the graph (empty while atomic)

  /// The graph; an atomic symbol nobody composed is composed now without inputs (every input a
  /// new variable), as MXNet's frontends always compose right after creating one.
  Symbol& Get();
};

inline SymbolH& Sym(SymbolHandle h) { return *Handle<HandleKind::kSymbol>::From<SymbolH>(h); }
inline SymbolHandle NewSym(Symbol s) {
  auto* h = new SymbolH;
  h->symbol = std::move(s);
  return h;
}

/// Builds the atomic symbol's node with its inputs (positional or by name) and node name (empty:
/// an automatic name). Missing inputs become variables "<name>_<input>".
Symbol ComposeAtomic(const SymbolH::Atomic& atomic, const std::string& name, const std::vector<Symbol>& args,
                     const std::map<std::string, Symbol>& kwargs);

}  // namespace weft::mx
