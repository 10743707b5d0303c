// RegisterTensorKernels and the setup helpers of tensor_kernels.h.
#include "cpu_kernels.h"
#include "tensor_kernels.h"

namespace weft::cpu {

void RegisterTensorKernels(weft::sdk::KernelTable& table) {
  using namespace tensor;
  RegisterCopyKernels(table);
  RegisterCastKernels(table);
  RegisterConcatKernels(table);
  RegisterTransposeKernels(table);
  RegisterDotKernels(table);
  RegisterIndexKernels(table);
  RegisterSliceKernels(table);
  RegisterReduceKernels(table);
  RegisterUnaryKernels(table);
  RegisterScalarKernels(table);
  RegisterBinaryKernels(table);
  RegisterBroadcastBinaryKernels(table);
  RegisterBroadcastMulDivKernels(table);
  RegisterWideArithKernels(table);
  RegisterGatherKernels(table);
  RegisterBroadcastKernels(table);
  RegisterPadKernels(table);
  RegisterNormKernels(table);
  RegisterSortKernels(table);
  RegisterUpSamplingKernels(table);
  RegisterCompareKernels(table);
  RegisterMathKernels(table);
  RegisterUnaryMathKernels(table);
  RegisterAssignKernels(table);
  RegisterMatrixKernels(table);
  RegisterRandomKernels(table);
  RegisterRandomMultiKernels(table);
  RegisterLegacyKernels(table);
  RegisterLinalgKernels(table);
}

namespace tensor {

void Invalid(const KernelSetup& s, const std::string& message) {
  throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, s.op_name + ": " + message);
}

void Unsupported(const KernelSetup& s, const std::string& message) {
  throw sdk::Error(WEFT_ERR_UNSUPPORTED, s.op_name + ": " + message);
}

void RequireSameDType(const KernelSetup& s) {
  if (s.inputs.empty()) return;
  const int32_t d = s.inputs[0].dtype;
  auto check = [&](const std::vector<TensorDesc>& ts, const char* what) {
    for (size_t i = 0; i < ts.size(); ++i) {
      if (ts[i].dtype != d) {
        Invalid(s, std::string(what) + " " + std::to_string(i) + " is " + sdk::DTypeName(ts[i].dtype) +
                       " but input 0 is " + sdk::DTypeName(d) + "; all must match");
      }
    }
  };
  check(s.inputs, "input");
  check(s.outputs, "output");
}

int NormalizeAxis(const KernelSetup& s, int64_t axis, int ndim, const char* attr) {
  if (axis < -ndim || axis >= ndim) {
    Invalid(s, std::string(attr) + "=" + std::to_string(axis) + " is out of range for " + std::to_string(ndim) +
                   " dimensions (use -" + std::to_string(ndim) + ".." + std::to_string(ndim - 1) + ")");
  }
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

}  // namespace tensor
}  // namespace weft::cpu
