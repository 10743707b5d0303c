// tensor_any_kernel.h: AddAny registers one shared sdk class whose setup finds the op's kernel by
// name and input 0's dtype, else output 0's (the def the host chose), and refuses a second kernel for an overlapping
// dtype mask of the same op.
#include <gtest/gtest.h>

#include <string>

#include "tensor_any_kernel.h"
#include "weft/sdk/cpp/standalone_host.hpp"

namespace {

namespace sdk = weft::sdk;
using weft::cpu::tensor::AddAny;

constexpr uint64_t kF32 = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32);
constexpr uint64_t kF64 = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT64);

// Which toy kernel a setup built (the tests run one at a time).
std::string g_built;

template <int kId>
class ToyKernel {
 public:
  explicit ToyKernel(const sdk::KernelSetup& s) { g_built = s.op_name + "/" + std::to_string(kId); }
  void Compute(const sdk::KernelCall&) const {}
};

// create_state of `op`'s def whose mask holds `dtype`, with `inputs` (0 or 1) scalar inputs and one
// output of that dtype; returns "" or the error's message.
std::string CreateAndDestroy(sdk::KernelTable& t, const std::string& op, int32_t dtype, int inputs = 1) {
  const weft_operator_api* api = t.Api();
  const weft_kernel_def* def = nullptr;
  for (int i = 0; i < api->num_kernels; ++i) {
    if (op == api->kernels[i]->op_name && (api->kernels[i]->dtypes & WEFT_DTYPE_BIT(dtype)) != 0) def = api->kernels[i];
  }
  if (def == nullptr) return "no def";
  weft_shape shape{};
  shape.ndim = 1;
  shape.dims[0] = 1;
  weft_kernel_state_args a{};
  a.struct_size = sizeof(a);
  a.kernel_data = def->kernel_data;
  a.op_name = def->op_name;
  a.num_inputs = inputs;
  a.input_shapes = inputs > 0 ? &shape : nullptr;
  a.input_dtypes = inputs > 0 ? &dtype : nullptr;
  a.num_outputs = 1;
  a.output_shapes = &shape;
  a.output_dtypes = &dtype;
  weft_error* err = def->create_state(nullptr, &a);
  if (err != nullptr) return "error";
  def->destroy_state(nullptr, a.state);
  return "";
}

TEST(AnyKernel, SetupBuildsTheKernelOfTheChosenDtype) {
  sdk::StandaloneHost host;
  sdk::KernelTable t("cpu", host.api());
  AddAny<ToyKernel<1>>(t, "any_kernel_test_pick", kF32);
  AddAny<ToyKernel<2>>(t, "any_kernel_test_pick", kF64);
  g_built.clear();
  EXPECT_EQ(CreateAndDestroy(t, "any_kernel_test_pick", WEFT_DTYPE_FLOAT64), "");
  EXPECT_EQ(g_built, "any_kernel_test_pick/2");
  EXPECT_EQ(CreateAndDestroy(t, "any_kernel_test_pick", WEFT_DTYPE_FLOAT32), "");
  EXPECT_EQ(g_built, "any_kernel_test_pick/1");
}

// Ops without inputs (samplers, zeros) are keyed by their first output's dtype, as the host keys them.
TEST(AnyKernel, OpsWithoutInputsPickByTheOutputsDtype) {
  sdk::StandaloneHost host;
  sdk::KernelTable t("cpu", host.api());
  AddAny<ToyKernel<6>>(t, "any_kernel_test_noinput", kF32);
  AddAny<ToyKernel<7>>(t, "any_kernel_test_noinput", kF64);
  EXPECT_EQ(CreateAndDestroy(t, "any_kernel_test_noinput", WEFT_DTYPE_FLOAT64, 0), "");
  EXPECT_EQ(g_built, "any_kernel_test_noinput/7");
  EXPECT_EQ(CreateAndDestroy(t, "any_kernel_test_noinput", WEFT_DTYPE_FLOAT32, 0), "");
  EXPECT_EQ(g_built, "any_kernel_test_noinput/6");
}

TEST(AnyKernel, SecondTableReusesTheRegistration) {
  sdk::StandaloneHost host;
  sdk::KernelTable a("cpu", host.api()), b("cpu", host.api());
  AddAny<ToyKernel<3>>(a, "any_kernel_test_again", kF32);
  EXPECT_NO_THROW(AddAny<ToyKernel<3>>(b, "any_kernel_test_again", kF32));
  g_built.clear();
  EXPECT_EQ(CreateAndDestroy(b, "any_kernel_test_again", WEFT_DTYPE_FLOAT32), "");
  EXPECT_EQ(g_built, "any_kernel_test_again/3");
}

TEST(AnyKernel, OverlappingMasksOfOneOpAreARegistrationBug) {
  sdk::StandaloneHost host;
  sdk::KernelTable t("cpu", host.api());
  AddAny<ToyKernel<4>>(t, "any_kernel_test_overlap", kF32 | kF64);
  try {
    AddAny<ToyKernel<5>>(t, "any_kernel_test_overlap", kF64);
    FAIL() << "expected an error";
  } catch (const sdk::Error& e) {
    EXPECT_EQ(e.code(), WEFT_ERR_INTERNAL);
    EXPECT_NE(std::string(e.what()).find("any_kernel_test_overlap"), std::string::npos) << e.what();
  }
}

}  // namespace
