// weft_kernel_def.source_file / math_files (SDK 2.0, appended): KernelTable::Add records the
// registering line's file, SourceScope the files holding a kernel's math; the cpu plugin's
// table names the file of each op's kernel. weft-info and the generated OPS.md read them.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cpu_kernels.h"
#include "weft/sdk/cpp/kernel.hpp"
#include "weft/sdk/cpp/standalone_host.hpp"

namespace {

struct NopKernel {
  explicit NopKernel(const weft::sdk::KernelSetup&) {}
  void Compute(const weft::sdk::DeviceCall&) const {}
};

std::vector<std::string> List(const char* const* files) {
  std::vector<std::string> out;
  for (; files != nullptr && *files != nullptr; ++files) out.emplace_back(*files);
  return out;
}

const weft_kernel_def* Only(weft::sdk::KernelTable& t, std::string_view op) {
  const weft_operator_api* api = t.Api();
  const weft_kernel_def* found = nullptr;
  for (int i = 0; i < api->num_kernels; ++i)
    if (op == api->kernels[i]->op_name) {
      EXPECT_EQ(found, nullptr) << op << " registered twice";
      found = api->kernels[i];
    }
  EXPECT_NE(found, nullptr) << op;
  return found;
}

TEST(KernelSources, AddRecordsTheRegisteringFileAndOpenScopes) {
  weft::sdk::KernelTable t("cpu");
  const uint64_t f32 = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32);
  t.Add<NopKernel>("plain", f32);
  {
    weft::sdk::KernelTable::SourceScope outer(t, {"math/a.h"});
    t.Add<NopKernel>("outer", f32);
    {
      weft::sdk::KernelTable::SourceScope inner(t, {"shaders/b.comp", "shaders/c.comp"});
      t.Add<NopKernel>("inner", f32);
    }
    t.Add<NopKernel>("outer_again", f32);
  }
  t.Add<NopKernel>("after", f32);

  for (const char* op : {"plain", "outer", "inner", "outer_again", "after"}) {
    const weft_kernel_def* d = Only(t, op);
    ASSERT_NE(d, nullptr);
    ASSERT_TRUE(WEFT_STRUCT_HAS(d, weft_kernel_def, math_files)) << op;
    EXPECT_TRUE(std::string_view(d->source_file).ends_with("kernel_sources_test.cc")) << d->source_file;
  }
  EXPECT_EQ(Only(t, "plain")->math_files, nullptr);
  EXPECT_EQ(Only(t, "after")->math_files, nullptr);
  EXPECT_EQ(List(Only(t, "outer")->math_files), std::vector<std::string>{"math/a.h"});
  EXPECT_EQ(List(Only(t, "inner")->math_files),
            (std::vector<std::string>{"math/a.h", "shaders/b.comp", "shaders/c.comp"}));
  EXPECT_EQ(List(Only(t, "outer_again")->math_files), std::vector<std::string>{"math/a.h"});
}

TEST(KernelSources, CpuTableNamesTheFileOfEachOpsKernel) {
  weft::sdk::StandaloneHost host;
  std::unique_ptr<weft::sdk::KernelTable> t = weft::cpu::MakeKernelTable(host.api());
  const weft_operator_api* api = t->Api();
  ASSERT_GT(api->num_kernels, 100);
  for (int i = 0; i < api->num_kernels; ++i) {
    const weft_kernel_def* d = api->kernels[i];
    ASSERT_TRUE(WEFT_STRUCT_HAS(d, weft_kernel_def, math_files)) << d->op_name;
    ASSERT_NE(d->source_file, nullptr) << d->op_name;
    EXPECT_NE(std::string_view(d->source_file).find("plugins/cpu/kernels/"), std::string_view::npos)
        << d->op_name << ": " << d->source_file;
  }
  // sin is registered through elemwise_kernels.h's AddUnary helper, which passes its caller's line
  // on: the file holding sin's functor is named, not the helper.
  for (int i = 0; i < api->num_kernels; ++i) {
    const std::string_view op = api->kernels[i]->op_name, file = api->kernels[i]->source_file;
    if (op == "sin" || op == "_backward_sin" || op == "_mul_scalar") {
      EXPECT_FALSE(file.ends_with("elemwise_kernels.h")) << op << ": " << file;
    }
  }
}

}  // namespace
