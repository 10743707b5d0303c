// libFuzzer target: Symbol::LoadJSON on arbitrary bytes must either load (and then save, list
// and reload consistently) or throw weft::Error — never crash. Built by the `fuzz` preset; run by
// scripts/fuzz.sh with json.dict and the MXNet fixtures as seeds.
#include <cstddef>
#include <cstdint>
#include <string>

#include "weft/symbol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    weft::Symbol s = weft::Symbol::LoadJSON(text);
    std::string json = s.ToJSON();
    s.ListArguments();
    s.ListOutputs();
    s.ListAuxiliaryStates();
    s.InferShapePartial({});
    if (weft::Symbol::LoadJSON(json).ToJSON() != json) __builtin_trap();  // save/load must be stable
  } catch (const weft::Error&) {
  }
  return 0;
}
