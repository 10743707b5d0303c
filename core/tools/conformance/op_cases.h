// The conformance suite's cases: for each built-in forward op, attribute sets and input shapes
// (size-1 axes, odd extents, broadcasting) with the value domains the op needs. Backward ops are
// tested through the forward cases of the op they differentiate.
#pragma once

#include <algorithm>
#include <map>
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
  bool RefusedBy(const std::string& device) const {
    return std::find(refused_by.begin(), refused_by.end(), device) != refused_by.end();
  }
  std::string Label() const;
};

/// Every case, in a fixed order.
const std::vector<OpCase>& AllCases();

}  // namespace wconf
