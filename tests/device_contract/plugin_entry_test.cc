// Device contract, plugin level: what every device plugin file must do at its C boundary,
// checked on a private copy of the file (so the Runtime's loaded instance is left alone) driven
// by a fake host: version negotiation, configuration at init, argument checks of the C table.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "contract_support.h"
#include "weft/internal/runtime.h"
#include "weft/sdk/plugin.h"

namespace weft::contract {
namespace {

namespace fs = std::filesystem;

// A host whose configuration is a map (no environment) and whose errors are core's objects.
struct FakeHost {
  std::map<std::string, std::string> config;
  std::vector<std::string> logs;
  weft_host_api api{};

  FakeHost() {
    api.struct_size = sizeof(api);
    api.sdk_version = WEFT_SDK_VERSION;
    api.host_ctx = this;
    api.log = [](void* ctx, int32_t, const char* msg, size_t len) {
      static_cast<FakeHost*>(ctx)->logs.emplace_back(msg, len);
    };
    api.error_create = [](void*, int32_t code, const char* msg, size_t len) {
      return CreateError(code, std::string_view(msg, len));
    };
    api.error_code = [](void*, const weft_error* e) { return ErrorCode(e); };
    api.error_message = [](void*, const weft_error* e, size_t* len) {
      std::string_view m = ErrorMessage(e);
      if (len != nullptr) *len = m.size();
      return m.data();
    };
    api.error_release = [](void*, weft_error* e) { ReleaseError(e); };
    api.config_get = [](void* ctx, const char* key, char* buf, size_t size) -> int64_t {
      auto& cfg = static_cast<FakeHost*>(ctx)->config;
      auto it = cfg.find(key);
      if (it == cfg.end()) return -1;
      if (size > 0) {
        const size_t n = std::min(size - 1, it->second.size());
        std::memcpy(buf, it->second.data(), n);
        buf[n] = '\0';
      }
      return static_cast<int64_t>(it->second.size());
    };
  }
};

// A private copy of the named plugin's file, loaded RTLD_LOCAL; unloaded at scope exit.
class PluginCopy {
 public:
  explicit PluginCopy(const std::string& name) {
    const Plugin* p = internal::FindPlugin(Runtime::Get(), name);
    if (p == nullptr) return;
    path_ = fs::temp_directory_path() / ("weft-contract-" + std::to_string(getpid()) + "-" + name + ".so");
    fs::copy_file(p->path(), path_, fs::copy_options::overwrite_existing);
    handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ != nullptr) entry_ = reinterpret_cast<weft_plugin_entry_fn>(dlsym(handle_, WEFT_PLUGIN_ENTRY_SYMBOL));
  }
  ~PluginCopy() {
    if (state_ != nullptr) api_->shutdown(state_);
    if (handle_ != nullptr) dlclose(handle_);
    if (!path_.empty()) fs::remove(path_);
  }
  bool loaded() const { return entry_ != nullptr; }
  weft_plugin_entry_fn entry() const { return entry_; }

  /// Negotiates SDK 2.x and calls init with `host`; returns init's outcome.
  Outcome Init(FakeHost& host) {
    weft_plugin_entry_args args{};
    args.struct_size = sizeof(args);
    args.host_min = WEFT_SDK_MAKE_VERSION(2, 0);
    args.host_max = WEFT_SDK_VERSION;
    EXPECT_EQ(entry_(&args), 0) << args.message;
    api_ = args.api;
    Outcome o = Take(api_->init(&host.api, &state_));
    if (o.code != 0) state_ = nullptr;
    return o;
  }
  const weft_device_api* device() const { return api_->device_api(state_); }
  void* state() const { return state_; }

 private:
  fs::path path_;
  void* handle_ = nullptr;
  weft_plugin_entry_fn entry_ = nullptr;
  const weft_plugin_api* api_ = nullptr;
  void* state_ = nullptr;
};

class PluginEntry : public ::testing::TestWithParam<std::string> {};

TEST_P(PluginEntry, NegotiatesTheHighestCommonVersionOrExplains) {
  PluginCopy copy(GetParam());
  ASSERT_TRUE(copy.loaded()) << "plugin '" << GetParam() << "' (built by this tree) was not discovered";
  struct Case {
    uint32_t host_min, host_max;
    bool accept;
  };
  const uint32_t v20 = WEFT_SDK_MAKE_VERSION(2, 0), vmax = WEFT_SDK_VERSION;
  for (Case c :
       {Case{v20, v20, true}, Case{v20, WEFT_SDK_MAKE_VERSION(2, 99), true}, Case{v20, vmax, true},
        Case{WEFT_SDK_MAKE_VERSION(1, 0), WEFT_SDK_MAKE_VERSION(1, 9), false},
        Case{WEFT_SDK_MAKE_VERSION(3, 0), WEFT_SDK_MAKE_VERSION(3, 3), false},
        Case{WEFT_SDK_MAKE_VERSION(0, 1), WEFT_SDK_MAKE_VERSION(0, 9), false},
        Case{WEFT_SDK_MAKE_VERSION(2, 99), WEFT_SDK_MAKE_VERSION(3, 0), false}, Case{vmax, v20, vmax == v20}}) {
    SCOPED_TRACE(testing::Message() << std::hex << "host 0x" << c.host_min << "..0x" << c.host_max);
    weft_plugin_entry_args args{};
    args.struct_size = sizeof(args);
    args.host_min = c.host_min;
    args.host_max = c.host_max;
    const int32_t rc = copy.entry()(&args);
    EXPECT_EQ(args.plugin_min, v20);
    EXPECT_EQ(args.plugin_max, vmax);
    if (c.accept) {
      EXPECT_EQ(rc, 0) << args.message;
      EXPECT_EQ(args.chosen, std::min(c.host_max, vmax));
      ASSERT_NE(args.api, nullptr);
      EXPECT_EQ(std::string(args.api->name), GetParam());
      EXPECT_NE(args.api->provides & WEFT_PLUGIN_PROVIDES_DEVICE, 0u);
    } else {
      EXPECT_NE(rc, 0);
      EXPECT_EQ(args.api, nullptr);
      EXPECT_GT(std::strlen(args.message), 10u) << "a rejection must say why";
      EXPECT_NE(std::string(args.message).find(GetParam()), std::string::npos) << args.message;
    }
  }
}

TEST_P(PluginEntry, RejectsATooShortArgsStructWithoutWritingPastIt) {
  PluginCopy copy(GetParam());
  ASSERT_TRUE(copy.loaded()) << "a plugin this tree builds was not discovered (WEFT_PLUGIN_PATH)";
  unsigned char raw[sizeof(weft_plugin_entry_args) + 16];
  std::memset(raw, 0xCC, sizeof(raw));
  auto* args = reinterpret_cast<weft_plugin_entry_args*>(raw);
  args->struct_size = offsetof(weft_plugin_entry_args, chosen);
  args->host_min = args->host_max = WEFT_SDK_VERSION;
  EXPECT_NE(copy.entry()(args), 0);
  for (size_t i = offsetof(weft_plugin_entry_args, chosen); i < sizeof(raw); ++i) ASSERT_EQ(raw[i], 0xCC) << i;
  EXPECT_NE(copy.entry()(nullptr), 0);
}

TEST_P(PluginEntry, CTableChecksItsArguments) {
  PluginCopy copy(GetParam());
  ASSERT_TRUE(copy.loaded()) << "a plugin this tree builds was not discovered (WEFT_PLUGIN_PATH)";
  FakeHost host;
  ASSERT_EQ(copy.Init(host).code, 0);
  const weft_device_api* d = copy.device();
  ASSERT_NE(d, nullptr);
  void* st = copy.state();
  const int32_t n = d->device_count(st, nullptr);
  ASSERT_GT(n, 0);

  weft_alloc_args alloc{};
  alloc.struct_size = sizeof(alloc);
  alloc.device = n;  // one past the last
  alloc.bytes = 64;
  Outcome o = Take(d->allocate(st, &alloc));
  EXPECT_EQ(o.code, WEFT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(o.message.find(std::string(d->device_type) + "(" + std::to_string(n) + ")"), std::string::npos)
      << o.message;
  alloc.device = 0;
  alloc.struct_size = 4;  // shorter than any SDK's struct
  EXPECT_EQ(Take(d->allocate(st, &alloc)).code, WEFT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(Take(d->allocate(st, nullptr)).code, WEFT_ERR_INVALID_ARGUMENT);

  weft_copy_args cp{};
  cp.struct_size = sizeof(cp);
  cp.kind = 42;
  cp.bytes = 1;
  o = Take(d->copy(st, &cp));
  EXPECT_EQ(o.code, WEFT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(o.message.find("kind"), std::string::npos) << o.message;
  cp.kind = WEFT_COPY_HOST_TO_DEVICE;  // NULL src_host
  EXPECT_EQ(Take(d->copy(st, &cp)).code, WEFT_ERR_INVALID_ARGUMENT);

  int32_t done = -1;
  weft_event_create_args ec{};
  ec.struct_size = sizeof(ec);
  ASSERT_EQ(Take(d->event_create(st, &ec)).code, 0);
  weft_event ev = ec.event;
  EXPECT_EQ(Take(d->event_query(st, ev, nullptr)).code, WEFT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(Take(d->event_query(st, ev, &done)).code, 0);
  EXPECT_EQ(done, 1);
  EXPECT_EQ(Take(d->event_destroy(st, ev)).code, 0);
  EXPECT_EQ(Take(d->stream_synchronize(st, nullptr)).code, 0) << "the NULL stream is always idle";
  EXPECT_EQ(Take(d->stream_create(st, nullptr)).code, WEFT_ERR_INVALID_ARGUMENT);
  weft_stream_create_args sc{};
  sc.struct_size = sizeof(sc);
  sc.device = -1;
  EXPECT_EQ(Take(d->stream_create(st, &sc)).code, WEFT_ERR_INVALID_ARGUMENT);
  sc.struct_size = 4;  // shorter than any SDK's struct
  sc.device = 0;
  EXPECT_EQ(Take(d->stream_create(st, &sc)).code, WEFT_ERR_INVALID_ARGUMENT);
}

// Core's Device passes host pointers already offset; the C ABI also carries host-side offsets
// (src_offset for host->device, dst_offset for device->host), which must be honoured.
TEST_P(PluginEntry, HostSideOffsetsAreHonoured) {
  PluginCopy copy(GetParam());
  ASSERT_TRUE(copy.loaded()) << "a plugin this tree builds was not discovered (WEFT_PLUGIN_PATH)";
  FakeHost host;
  ASSERT_EQ(copy.Init(host).code, 0);
  const weft_device_api* d = copy.device();
  void* st = copy.state();
  weft_alloc_args alloc{};
  alloc.struct_size = sizeof(alloc);
  alloc.bytes = 64;
  ASSERT_EQ(Take(d->allocate(st, &alloc)).code, 0);
  std::vector<uint8_t> src(100), dst(100, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i);
  weft_copy_args cp{};
  cp.struct_size = sizeof(cp);
  cp.kind = WEFT_COPY_HOST_TO_DEVICE;
  cp.src_host = src.data();
  cp.src_offset = 30;
  cp.dst = alloc.ptr;
  cp.dst_offset = 4;
  cp.bytes = 50;
  ASSERT_EQ(Take(d->copy(st, &cp)).code, 0);
  cp = weft_copy_args{};
  cp.struct_size = sizeof(cp);
  cp.kind = WEFT_COPY_DEVICE_TO_HOST;
  cp.src = alloc.ptr;
  cp.src_offset = 4;
  cp.dst_host = dst.data();
  cp.dst_offset = 7;
  cp.bytes = 50;
  ASSERT_EQ(Take(d->copy(st, &cp)).code, 0);
  for (size_t i = 0; i < 50; ++i) ASSERT_EQ(dst[7 + i], 30 + i) << i;
  EXPECT_EQ(dst[6], 0);
  EXPECT_EQ(dst[57], 0);
  EXPECT_EQ(Take(d->free(st, 0, alloc.ptr)).code, 0);
}

TEST_P(PluginEntry, PropertiesFitAnOlderHostsShorterStruct) {
  PluginCopy copy(GetParam());
  ASSERT_TRUE(copy.loaded()) << "a plugin this tree builds was not discovered (WEFT_PLUGIN_PATH)";
  FakeHost host;
  ASSERT_EQ(copy.Init(host).code, 0);
  const weft_device_api* d = copy.device();
  unsigned char raw[sizeof(weft_device_props)];
  std::memset(raw, 0xCC, sizeof(raw));
  auto* props = reinterpret_cast<weft_device_props*>(raw);
  props->struct_size = WEFT_STRUCT_SIZE(weft_device_props, vendor);  // an imagined host that knew only name/vendor
  ASSERT_EQ(Take(d->get_properties(copy.state(), 0, props)).code, 0);
  EXPECT_EQ(props->struct_size, WEFT_STRUCT_SIZE(weft_device_props, vendor));
  EXPECT_GT(std::strlen(props->name), 0u);
  for (size_t i = WEFT_STRUCT_SIZE(weft_device_props, vendor); i < sizeof(raw); ++i) ASSERT_EQ(raw[i], 0xCC) << i;
}

INSTANTIATE_TEST_SUITE_P(DevicePlugins, PluginEntry, ::testing::Values("cpu", "simdev"));

TEST(SimdevConfig, DevicesMemoryAndLatencyComeFromTheHostConfig) {
  PluginCopy copy("simdev");
  ASSERT_TRUE(copy.loaded()) << "a plugin this tree builds was not discovered (WEFT_PLUGIN_PATH)";
  FakeHost host;
  host.config = {{"WEFT_SIMDEV_DEVICES", "3"}, {"WEFT_SIMDEV_MEMORY_MB", "1"}, {"WEFT_SIMDEV_LATENCY_US", "0"}};
  ASSERT_EQ(copy.Init(host).code, 0);
  const weft_device_api* d = copy.device();
  EXPECT_EQ(d->device_count(copy.state(), nullptr), 3);
  weft_device_props props{};
  props.struct_size = sizeof(props);
  ASSERT_EQ(Take(d->get_properties(copy.state(), 2, &props)).code, 0);
  EXPECT_EQ(props.total_memory, 1u << 20);
  EXPECT_EQ(props.capabilities & WEFT_DEVICE_CAP_HOST_ADDRESSABLE, 0u);
  weft_alloc_args alloc{};
  alloc.struct_size = sizeof(alloc);
  alloc.device = 2;
  alloc.bytes = 2u << 20;
  const Outcome o = Take(d->allocate(copy.state(), &alloc));
  EXPECT_EQ(o.code, WEFT_ERR_OUT_OF_MEMORY);
  EXPECT_NE(o.message.find("WEFT_SIMDEV_MEMORY_MB"), std::string::npos) << o.message;
  alloc.bytes = 1u << 19;
  ASSERT_EQ(Take(d->allocate(copy.state(), &alloc)).code, 0);
  EXPECT_GE(alloc.ptr, 0x5eed00000000ull) << "simdev handles live in their own range";
  EXPECT_EQ(Take(d->free(copy.state(), 2, alloc.ptr)).code, 0);
}

TEST(SimdevConfig, NoDevicesComesWithAReason) {
  PluginCopy copy("simdev");
  ASSERT_TRUE(copy.loaded()) << "a plugin this tree builds was not discovered (WEFT_PLUGIN_PATH)";
  FakeHost host;
  host.config = {{"WEFT_SIMDEV_DEVICES", "0"}};
  ASSERT_EQ(copy.Init(host).code, 0);
  const char* reason = nullptr;
  EXPECT_EQ(copy.device()->device_count(copy.state(), &reason), 0);
  ASSERT_NE(reason, nullptr);
  EXPECT_NE(std::string(reason).find("WEFT_SIMDEV_DEVICES"), std::string::npos) << reason;
}

TEST(SimdevConfig, BadValueFailsInitNamingTheKey) {
  PluginCopy copy("simdev");
  ASSERT_TRUE(copy.loaded()) << "a plugin this tree builds was not discovered (WEFT_PLUGIN_PATH)";
  FakeHost host;
  host.config = {{"WEFT_SIMDEV_MEMORY_MB", "lots"}};
  const Outcome o = copy.Init(host);
  EXPECT_EQ(o.code, WEFT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(o.message.find("WEFT_SIMDEV_MEMORY_MB='lots'"), std::string::npos) << o.message;
}

TEST(CpuConfig, DeviceCountComesFromTheHostConfig) {
  {
    PluginCopy copy("cpu");
    ASSERT_TRUE(copy.loaded()) << "a plugin this tree builds was not discovered (WEFT_PLUGIN_PATH)";
    FakeHost host;
    host.config = {{"WEFT_CPU_DEVICES", "2"}};
    ASSERT_EQ(copy.Init(host).code, 0);
    EXPECT_EQ(copy.device()->device_count(copy.state(), nullptr), 2);
    EXPECT_EQ(std::string(copy.device()->device_type), "cpu");
  }
  PluginCopy copy("cpu");
  FakeHost host;
  host.config = {{"WEFT_CPU_DEVICES", "0"}};
  const Outcome o = copy.Init(host);
  EXPECT_EQ(o.code, WEFT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(o.message.find("WEFT_CPU_DEVICES"), std::string::npos) << o.message;
}

}  // namespace
}  // namespace weft::contract
