// GPU plugins (cuda, hip) as the machine they run on allows: on a machine without the GPU or its
// driver (every machine this project builds on) each plugin must still load, report zero devices
// with the reason and the remedy — through the Runtime, weft-info and train_mnist — and the
// device checks skip with that reason. With a GPU present the same tests check its properties and
// a round trip through its memory, streams and events.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "require.h"
#include "run_command.h"
#include "weft/internal/device.h"
#include "weft/internal/plugin.h"
#include "weft/internal/runtime.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct GpuPlugin {
  const char* type;         // plugin name = device type
  const char* path;         // the built file
  const char* vendor_word;  // what the no-device reason must mention
};

// Readable parameters in test names and CTest output.
void PrintTo(const GpuPlugin& p, std::ostream* os) { *os << p.type; }

std::vector<GpuPlugin> BuiltPlugins() {
  std::vector<GpuPlugin> out;
#ifdef WEFT_TEST_HAVE_CUDA
  out.push_back({"cuda", WEFT_TEST_CUDA_PLUGIN, "CUDA"});
#endif
#ifdef WEFT_TEST_HAVE_HIP
  out.push_back({"hip", WEFT_TEST_HIP_PLUGIN, "HIP"});
#endif
  return out;
}

// Output and stderr of `cmd`, under RunCommand's deadline.
std::string Shell(const std::string& cmd, int* status = nullptr) { return wtest::RunCommand(cmd + " 2>&1", status); }

class GpuPluginTest : public ::testing::TestWithParam<GpuPlugin> {
 protected:
  const weft::Plugin* Find() {
    const weft::Plugin* p = weft::internal::FindPlugin(weft::Runtime::Get(), GetParam().type);
    if (p == nullptr) {
      std::string why;
      for (const weft::PluginRecord& r : weft::Runtime::Get().PluginRecords())
        if (r.path.find(GetParam().type) != std::string::npos) why += r.path + ": " + r.reason + "\n";
      ADD_FAILURE() << "plugin '" << GetParam().type << "' was built but not loaded:\n" << why;
    }
    return p;
  }
  int Count() { return weft::Runtime::Get().DeviceCount(GetParam().type); }
};

TEST_P(GpuPluginTest, LoadsAndReportsDevicesOrWhyThereAreNone) {
  const weft::Plugin* p = Find();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->device_type(), GetParam().type);
  EXPECT_FALSE(weft::internal::Kernels(weft::Runtime::Get(), GetParam().type).empty()) << "no kernels registered";
  const int n = Count();
  if (n == 0) {
    std::printf("%s: 0 devices: %s\n", GetParam().type, p->device_note().c_str());
    EXPECT_THAT(p->device_note(), HasSubstr(GetParam().vendor_word));
    EXPECT_THAT(p->device_note(), HasSubstr("Error"));  // the runtime's error name and code
    EXPECT_THAT(p->device_note(), ::testing::AnyOf(HasSubstr("install"), HasSubstr("check")));
    return;
  }
  for (int i = 0; i < n; ++i) {
    const weft::DeviceProperties& props =
        weft::internal::GetDevice(weft::Runtime::Get(), weft::Context(GetParam().type, i)).properties();
    std::printf("%s(%d): %s, %s, %d compute units, PCI %s\n", GetParam().type, i, props.name.c_str(),
                props.vendor.c_str(), props.compute_units, props.pci_bus_id.c_str());
    EXPECT_FALSE(props.name.empty());
    EXPECT_GT(props.total_memory, 0u);
    EXPECT_GT(props.compute_units, 0);
    EXPECT_FALSE(props.pci_bus_id.empty());
  }
}

// The plugin links the vendor runtime and math libraries but never the driver library (libcuda's
// stub would link here and then fail to load on every machine without the driver).
TEST_P(GpuPluginTest, LinksTheRuntimeNotTheDriver) {
  const std::string needed = Shell(std::string("readelf -d ") + GetParam().path + " | grep NEEDED");
  ASSERT_THAT(needed, HasSubstr("NEEDED")) << "readelf failed on " << GetParam().path;
  if (std::string(GetParam().type) == "cuda") {
    EXPECT_THAT(needed, HasSubstr("libcudart.so"));
    EXPECT_THAT(needed, HasSubstr("libcudnn.so"));
    EXPECT_THAT(needed, Not(HasSubstr("libcublas")));  // dlopened at the first GEMM (cublas_api.h)
    EXPECT_THAT(needed, Not(HasSubstr("[libcuda.so")));
  } else {
    EXPECT_THAT(needed, HasSubstr("libamdhip64.so"));
  }
}

// Loading the CUDA plugin maps no cuBLAS: libcublasLt alone costs ~150 MiB resident at dlopen,
// which every process (GPU or not) paid while the plugin linked it. With a device, the first GEMM
// loads it.
TEST_P(GpuPluginTest, LoadingMapsNoCublas) {
  if (std::string(GetParam().type) != "cuda") GTEST_SKIP() << "cuBLAS is the CUDA plugin's";
  ASSERT_NE(Find(), nullptr);
  if (Count() > 0) GTEST_SKIP() << "a CUDA device is present: another test's GEMM may have loaded cuBLAS";
  FILE* maps = std::fopen("/proc/self/maps", "r");
  ASSERT_NE(maps, nullptr);
  char line[4096];
  bool cublas = false, cudart = false;
  while (std::fgets(line, sizeof(line), maps) != nullptr) {
    cublas = cublas || std::strstr(line, "libcublas") != nullptr;
    cudart = cudart || std::strstr(line, "libcudart") != nullptr;
  }
  std::fclose(maps);
  EXPECT_TRUE(cudart) << "the CUDA runtime is not mapped: was the plugin loaded in this process?";
  EXPECT_FALSE(cublas) << "loading the CUDA plugin mapped cuBLAS";
}

TEST_P(GpuPluginTest, WeftInfoShowsTheDevicesOrTheReason) {
#ifndef WEFT_INFO_PATH
  WEFT_SKIP_UNLESS_REQUIRED() << "weft-info is not built";
#else
  const weft::Plugin* p = Find();
  ASSERT_NE(p, nullptr);
  const std::string dir = std::filesystem::path(GetParam().path).parent_path().string();
  int status = -1;
  const std::string out = Shell("env WEFT_PLUGIN_PATH=" + dir + " " + WEFT_INFO_PATH, &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_THAT(out, HasSubstr(std::string("accepted  ") + GetParam().type + " "));
  if (Count() == 0)
    EXPECT_THAT(out, HasSubstr("devices: " + p->device_note())) << out;
  else
    EXPECT_THAT(out, HasSubstr(std::string(GetParam().type) + "(0): ")) << out;
#endif
}

TEST_P(GpuPluginTest, TrainMnistSaysWhenThereIsNoDevice) {
#ifndef WEFT_TRAIN_MNIST_PATH
  WEFT_SKIP_UNLESS_REQUIRED() << "samples are not built";
#else
  if (!std::filesystem::exists(WEFT_TRAIN_MNIST_PATH))
    WEFT_SKIP_UNLESS_REQUIRED() << WEFT_TRAIN_MNIST_PATH << " is not built";
  if (Count() > 0) GTEST_SKIP() << GetParam().type << " devices are present: nothing to refuse";
  const weft::Plugin* p = Find();
  ASSERT_NE(p, nullptr);
  int status = 0;
  const std::string out = Shell(
      std::string(WEFT_TRAIN_MNIST_PATH) + " --device " + GetParam().type + " --epochs 1 --num-examples 100", &status);
  EXPECT_NE(status, 0) << out;
  EXPECT_THAT(out, HasSubstr(std::string("no ") + GetParam().type + " device is present: " + p->device_note()));
#endif
}

// A round trip through device memory on a stream, ordered by an event: runs only with a device;
// without one it skips and says why (the device contract suite, parametrised over present devices,
// has no instance for this plugin then).
TEST_P(GpuPluginTest, DeviceRoundTripOrSkipWithReason) {
  const weft::Plugin* p = Find();
  ASSERT_NE(p, nullptr);
  if (Count() == 0) GTEST_SKIP() << GetParam().type << ": no device: " << p->device_note();
  weft::Device& d = weft::internal::GetDevice(weft::Runtime::Get(), weft::Context(GetParam().type, 0));
  std::vector<uint8_t> in(4097), out(4097, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 7 + 1);
  const weft_device_ptr buf = d.Allocate(in.size());
  d.CopyFromHost(buf, 0, in.data(), in.size());
  d.CopyToHost(out.data(), buf, 0, out.size());
  d.Free(buf);
  EXPECT_EQ(in, out);
}

std::string Name(const ::testing::TestParamInfo<GpuPlugin>& info) { return info.param.type; }

INSTANTIATE_TEST_SUITE_P(Built, GpuPluginTest, ::testing::ValuesIn(BuiltPlugins()), Name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GpuPluginTest);

}  // namespace
