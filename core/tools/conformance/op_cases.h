// The conformance suite's cases: for each built-in forward op, attribute sets and input shapes
// (size-1 axes, odd extents, broadcasting) with the value domains the op needs. Backward ops are
// tested through the forward cases of the op they differentiate.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <source_location>
#include <string>
#include <vector>

#include "conformance_util.h"

namespace wconf {

struct Input {
  Shape shape;
  Domain domain;
};

struct OpCase {
  std::string op;
  std::map<std::string, std::string> attrs;
  std::vector<Input> in, aux;
  // float32 outputs that inference cannot give (_set_value fills the caller's array).
  std::vector<Shape> out;
  bool fd_grad = true;   // check the CPU backward against central finite differences
  bool is_train = true;  // false for ops that draw random numbers (results differ across devices)
  bool req_add = true;   // false: the op refuses req add (its output is a bit pattern, _quantize_2bit)
  // The forward result is exactly defined (IEEE add/sub/mul are correctly rounded; copies, max,
  // min move values): every device must match the cpu bit for bit, not within a tolerance.
  bool exact = false;
  // Device types whose kernel for this op refuses these attributes with an error (a feature the
  // cpu kernel has and theirs lacks yet). The suite checks that they do refuse rather than run
  // wrong; remove a device from the list when its kernel gains the feature.
  std::vector<std::string> refused_by;
  // The file that made the case (Case()'s caller, __FILE__ form), for weft-conformance --list-cases.
  std::string source;
  bool RefusedBy(const std::string& device) const {
    return std::find(refused_by.begin(), refused_by.end(), device) != refused_by.end();
  }
  std::string Label() const;
};

/// Every case, in a fixed order.
const std::vector<OpCase>& AllCases();

// ---- building cases ----

inline const Domain kSigned{};
inline const Domain kPositive{0.2, 2.0};
inline const Domain kAwayFromZero{-1, 1, false, 0.05};
inline const Domain kDistinct{-3, 3, false, 0, true};

inline Input In(Shape s, Domain d = kSigned) { return Input{std::move(s), d}; }

inline OpCase Case(std::string op, std::map<std::string, std::string> attrs, std::vector<Input> in,
                   std::vector<Input> aux = {}, std::source_location where = std::source_location::current()) {
  OpCase c;
  c.source = where.file_name();
  c.op = std::move(op);
  c.attrs = std::move(attrs);
  c.in = std::move(in);
  c.aux = std::move(aux);
  return c;
}

/// The case without the finite-difference check of the cpu's gradient.
inline OpCase NoGrad(OpCase c) {
  c.fd_grad = false;
  return c;
}

// ---- cases as data: one row of a family table (op_cases.cc) ----

inline constexpr uint32_t kNoGrad = 1u << 0;     // fd_grad = false
inline constexpr uint32_t kInference = 1u << 1;  // is_train = false
inline constexpr uint32_t kNoReqAdd = 1u << 2;   // req_add = false

/// Cases of the ops `ops` (each op gets the same ones) with attributes `attrs`: one with inputs
/// `in`, or, when `each` is not empty, one per input set of `each`; `aux` their aux states; flags
/// kNoGrad / kInference / kNoReqAdd; `refused_by` as OpCase's.
struct CaseRow {
  std::vector<std::string> ops;
  std::map<std::string, std::string> attrs = {};
  std::vector<Input> in = {};
  std::vector<Input> aux = {};
  std::vector<std::vector<Input>> each = {};
  uint32_t flags = 0;
  std::vector<std::string> refused_by = {};
};

/// Appends the cases of `rows` to v, op by op in row order: an op's cases keep the order of its
/// rows (RunOpConformance seeds a case's inputs by its position among its op's cases).
void AddRows(std::vector<OpCase>& v, const std::vector<CaseRow>& rows,
             std::source_location where = std::source_location::current());

/// Appends the cases of the ops MXNet's Python frontend needs (op_cases_frontend.cc).
void AddFrontendCases(std::vector<OpCase>& v);

}  // namespace wconf
