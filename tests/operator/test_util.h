// Helpers shared by the op-definition tests.
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "operator/infer.h"
#include "operator/op_def.h"

namespace weft::test {

using Attrs = std::map<std::string, std::string>;

/// The normalised attributes of `op` given `attrs`.
AttrMap Norm(const std::string& op, const Attrs& attrs);

struct Inferred {
  std::vector<ShapeSlot> in, out, aux;
};

/// Runs shape inference of `op` with the given slots (missing trailing slots are unknown).
Inferred Infer(const std::string& op, const Attrs& attrs, std::vector<ShapeSlot> in, std::vector<ShapeSlot> out = {},
               std::vector<ShapeSlot> aux = {});

/// The message of the weft::Error `f` throws; fails the test when it throws none.
template <typename F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a weft::Error";
  return "";
}

/// Checks that `message` contains every one of `parts`.
void ExpectContains(const std::string& message, std::initializer_list<std::string> parts);

}  // namespace weft::test
