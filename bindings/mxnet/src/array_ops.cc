// MXNet's reset_arrays (src/operator/contrib/reset_arrays.cc): sets every input array to zero in
// place, no outputs. Gluon's ParameterDict.zero_grad() calls it for the gradients of one device
// (grad_req='add'). Run by the binding on weft's NDArray assignment (queued on each array's engine
// variable, like any write); arrays of every storage type and device.
#include <string>

#include "binding_ops.h"
#include "weft/base.h"

namespace weft::mx {
namespace {

void ResetArraysOp(const std::vector<NDArray>& in, const std::map<std::string, std::string>& params,
                   std::vector<NDArray>* out) {
  auto it = params.find("num_arrays");
  if (it == params.end()) Fail("reset_arrays: the attribute num_arrays (the number of arrays) is required");
  if (it->second != std::to_string(in.size()))
    Fail("reset_arrays: num_arrays = {} but {} arrays were given", it->second, in.size());
  if (!out->empty()) Fail("reset_arrays has no outputs (it zeroes its inputs in place); {} given", out->size());
  for (NDArray a : in) {
    if (a.storage_type() == StorageType::kDefault) {
      a = 0.0f;
    } else {  // a sparse array becomes all-zero: nothing stored
      NDArray::CopyFromTo(NDArray::CreateSparse(a.storage_type(), a.GetShape(), a.GetContext(), a.GetDType()), a);
    }
  }
}

}  // namespace

std::optional<BindingOp> FindArrayOp(const std::string& name) {
  if (name != "reset_arrays") return std::nullopt;
  OpInfo info = BindingOpInfo(name, "Set to zero multiple arrays.", {"data"},
                              {BindingAttr("num_arrays", "int", std::nullopt, "number of input arrays")});
  info.variadic_attr = "num_arrays";
  return BindingOp{std::move(info), ResetArraysOp};
}

}  // namespace weft::mx
