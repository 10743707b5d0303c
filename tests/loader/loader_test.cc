// The loader against fixture plugins: good ones load and work, each kind of bad one is skipped
// with its own one-line reason, and the runtime stays usable after every rejection.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "loader_test_util.h"
#include "weft/internal/runtime.h"
#include "weft/logging.h"

namespace weft {
namespace {

using loader_test::Extra;
using loader_test::FindRecord;
using loader_test::Fixture;
using loader_test::FreshRuntime;
using ::testing::HasSubstr;

std::string HostRange() {
  return SdkVersionString(Runtime::HostSdkMin()) + "–" + SdkVersionString(Runtime::HostSdkMax());
}

// A scratch directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/weft-loader-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string File(const std::string& name, const std::string& bytes) const {
    std::string p = path_ + "/" + name;
    std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Exercises the good fixture's device so that "the runtime is still usable" means something.
void ExpectGoodPluginWorks(Runtime& rt) {
  PluginRecord rec = rt.LoadPlugin(Fixture("fixture_good"));
  ASSERT_TRUE(rec.accepted) << rec.reason;
  ASSERT_EQ(rt.DeviceCount("fixdev"), 2);
  Device& dev = internal::GetDevice(rt, Context("fixdev", 1));
  weft_device_ptr p = dev.Allocate(64);
  const char text[] = "still usable";
  dev.CopyFromHost(p, 0, text, sizeof(text));
  char back[sizeof(text)] = {};
  dev.CopyToHost(back, p, 0, sizeof(text));
  EXPECT_STREQ(back, text);
  dev.Free(p);
}

// Loads `path`, expects a rejection whose reason contains every string in `parts`, exactly one
// warning line naming the file, and a working runtime afterwards.
PluginRecord ExpectRejected(const std::string& path, std::initializer_list<std::string> parts) {
  Runtime& rt = FreshRuntime();
  testing::internal::CaptureStderr();
  PluginRecord rec = rt.LoadPlugin(path);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(rec.accepted);
  EXPECT_EQ(rec.plugin, nullptr);
  for (const auto& part : parts) EXPECT_THAT(rec.reason, HasSubstr(part)) << "for " << path;
  EXPECT_EQ(rec.reason.find("Bad file descriptor"), std::string::npos) << rec.reason;
  EXPECT_EQ(rec.reason.find('\n'), std::string::npos) << "the reason is one line";
  EXPECT_EQ(err, "[weft warning] skipping plugin " + rec.path + ": " + rec.reason + "\n");
  ExpectGoodPluginWorks(rt);
  return rec;
}

TEST(Loader, GoodPluginNegotiatesAndItsDevicesWork) {
  Runtime& rt = FreshRuntime();
  PluginRecord rec = rt.LoadPlugin(Fixture("fixture_good"));
  ASSERT_TRUE(rec.accepted) << rec.reason;
  EXPECT_EQ(rec.name, "fixture_good");
  EXPECT_EQ(rec.version, "3.1.4");
  EXPECT_EQ(rec.origin, "explicit");
  EXPECT_EQ(rec.chosen, Runtime::HostSdkMax());
  EXPECT_EQ(rec.reason, "");
  const Plugin* plugin = internal::FindPlugin(rt, "fixture_good");
  ASSERT_EQ(plugin, rec.plugin);
  EXPECT_EQ(plugin->device_type(), "fixdev");
  EXPECT_EQ(plugin->host()->sdk_version, Runtime::HostSdkMax());
  EXPECT_EQ(plugin->provides(), WEFT_PLUGIN_PROVIDES_DEVICE | WEFT_PLUGIN_PROVIDES_OPERATORS);

  Device& dev = internal::GetDevice(rt, Context("fixdev", 1));
  EXPECT_EQ(dev.context(), Context("fixdev", 1));
  EXPECT_EQ(dev.type(), "fixdev");
  EXPECT_EQ(dev.id(), 1);
  EXPECT_EQ(&dev.plugin(), plugin);
  EXPECT_EQ(dev.properties().name, "fixture device 1");
  EXPECT_EQ(dev.properties().vendor, "weft tests");
  EXPECT_EQ(dev.properties().total_memory, uint64_t{1} << 30);
  EXPECT_TRUE(dev.host_addressable());
  EXPECT_EQ(CapabilityNames(dev.properties().capabilities),
            (std::vector<std::string>{"host_addressable", "peer_copy"}));
  ASSERT_EQ(dev.properties().attributes.size(), 3u);
  EXPECT_EQ(dev.properties().attributes[0], std::make_pair(std::string("seen_sdk"), SdkVersionString(rec.chosen)));

  // Host -> dev1, memset, dev1 -> dev0 (peer), dev0 -> host, at odd offsets and sizes.
  Device& dev0 = internal::GetDevice(rt, Context("fixdev", 0));
  weft_device_ptr a = dev.Allocate(1000, 256);
  weft_device_ptr b = dev0.Allocate(1000);
  EXPECT_EQ(a % 256, 0u);
  std::vector<uint8_t> src(1000);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7);
  weft_stream s = dev.CreateStream();
  dev.CopyFromHost(a, 3, src.data(), 997, s);
  dev.Memset(a, 10, 5, 0xAB, s);
  weft_event e = dev.CreateEvent();
  dev.RecordEvent(e, s);
  dev.StreamWaitEvent(s, e);
  dev.SynchronizeStream(s);
  EXPECT_TRUE(dev.QueryEvent(e));
  dev.SynchronizeEvent(e);
  dev0.CopyFromDevice(b, 1, dev, a, 3, 997);
  std::vector<uint8_t> out(997);
  dev0.CopyToHost(out.data(), b, 1, 997);
  for (size_t i = 0; i < out.size(); ++i) {
    uint8_t want = (i >= 7 && i < 12) ? 0xAB : src[i];
    ASSERT_EQ(out[i], want) << "byte " << i;
  }
  dev.DestroyEvent(e);
  dev.DestroyStream(s);
  dev.Free(a);
  dev0.Free(b);
  dev.Free(0);
  EXPECT_EQ(dev.Allocate(0), 0u);
}

TEST(Loader, DeviceErrorsCarryContextAndKind) {
  Runtime& rt = FreshRuntime();
  ASSERT_TRUE(rt.LoadPlugin(Fixture("fixture_good")).accepted);
  Device& dev = internal::GetDevice(rt, Context("fixdev", 1));
  try {
    dev.Allocate(uint64_t{2} << 30);
    FAIL() << "no error";
  } catch (const OutOfMemoryError& e) {
    EXPECT_STREQ(e.what(), "fixdev(1): allocate 2147483648 bytes: fixture devices hold at most 1 GiB");
  }
  try {
    dev.CopyFromHost(0, 0, "x", 1);
    FAIL() << "no error";
  } catch (const OutOfMemoryError&) {
    FAIL() << "not an out-of-memory error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "fixdev(1): copy 1 bytes from host: copy from or to a null address");
  }
  EXPECT_THROW(dev.Allocate(8, 3), Error);
}

TEST(Loader, DeviceLookupErrorsNameWhatIsLoaded) {
  Runtime& rt = FreshRuntime();
  ASSERT_TRUE(rt.LoadPlugin(Fixture("fixture_good")).accepted);
  EXPECT_TRUE(rt.HasDevice(Context("fixdev", 1)));
  EXPECT_FALSE(rt.HasDevice(Context("fixdev", 2)));
  EXPECT_FALSE(rt.HasDevice(Context("nosuch", 0)));
  EXPECT_EQ(rt.DeviceCount("nosuch"), 0);
  auto list = rt.ListDevices();
  EXPECT_NE(std::find(list.begin(), list.end(), Context("fixdev", 1)), list.end());
  try {
    internal::GetDevice(rt, Context("nosuch", 0));
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no device nosuch(0): loaded device types are "));
    EXPECT_THAT(e.what(), HasSubstr("fixdev (2 devices)"));
    EXPECT_THAT(e.what(), HasSubstr("weft-info"));
  }
  try {
    internal::GetDevice(rt, Context("fixdev", 5));
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "no device fixdev(5): fixdev has 2 devices (fixdev(0) to fixdev(1))");
  }
}

TEST(Loader, KernelsAndOpDefsAreIndexedByOpDeviceAndDtype) {
  Runtime& rt = FreshRuntime();
  ASSERT_TRUE(rt.LoadPlugin(Fixture("fixture_good")).accepted);
  const KernelInfo* f32 = internal::FindKernel(rt, "fixture_scale", "fixdev", DType::kFloat32);
  const KernelInfo* f64 = internal::FindKernel(rt, "fixture_scale", "fixdev", DType::kFloat64);
  const KernelInfo* i32 = internal::FindKernel(rt, "fixture_scale", "fixdev", DType::kInt32);
  ASSERT_NE(f32, nullptr);
  ASSERT_NE(i32, nullptr);
  EXPECT_EQ(f32, f64);
  EXPECT_NE(f32->def, i32->def);
  EXPECT_EQ(f32->plugin, internal::FindPlugin(rt, "fixture_good"));
  EXPECT_EQ(internal::FindKernel(rt, "fixture_scale", "fixdev", DType::kInt8), nullptr);
  EXPECT_EQ(internal::FindKernel(rt, "fixture_scale", "cpu_nonexistent", DType::kFloat32), nullptr);
  EXPECT_EQ(internal::FindKernel(rt, "no_such_op", "fixdev", DType::kFloat32), nullptr);
  EXPECT_EQ(internal::Kernels(rt, "fixdev").size(), 2u);

  // Run the float32 kernel through its C table on device memory.
  Device& dev = internal::GetDevice(rt, Context("fixdev", 0));
  float x[3] = {1.5f, -2.0f, 4.0f}, y[3] = {};
  weft_device_ptr in = dev.Allocate(sizeof(x)), out = dev.Allocate(sizeof(y));
  dev.CopyFromHost(in, 0, x, sizeof(x));
  int64_t shape[1] = {3};
  weft_tensor tin{sizeof(weft_tensor), in, 0, WEFT_DTYPE_FLOAT32, 0, 1, shape, nullptr};
  weft_tensor tout{sizeof(weft_tensor), out, 0, WEFT_DTYPE_FLOAT32, 0, 1, shape, nullptr};
  int32_t req = WEFT_REQ_WRITE;
  weft_kernel_args args{};
  args.struct_size = sizeof(args);
  args.num_inputs = 1;
  args.inputs = &tin;
  args.num_outputs = 1;
  args.outputs = &tout;
  args.req = &req;
  ThrowIfError(f32->def->compute(f32->plugin_state, &args), "fixture_scale");
  dev.CopyToHost(y, out, 0, sizeof(y));
  EXPECT_EQ(y[0], 3.0f);
  EXPECT_EQ(y[1], -4.0f);
  EXPECT_EQ(y[2], 8.0f);
  dev.Free(in);
  dev.Free(out);

  bool found = false;
  for (const PluginOpDef& d : internal::OpDefs(rt)) {
    if (std::string(d.def->name) != "fixture_scale") continue;
    found = true;
    EXPECT_EQ(d.plugin, internal::FindPlugin(rt, "fixture_good"));
    ASSERT_EQ(d.def->num_attrs, 1);
    EXPECT_STREQ(d.def->attrs[0].name, "factor");
    EXPECT_STREQ(d.def->attrs[0].default_value, "2");
    EXPECT_EQ(d.def->struct_size, sizeof(weft_op_def));
  }
  EXPECT_TRUE(found);
}

TEST(Loader, OlderMinorTablesReadAbsentTailAsNull) {
  Runtime& rt = FreshRuntime();
  PluginRecord rec = rt.LoadPlugin(Fixture("fixture_older"));
  ASSERT_TRUE(rec.accepted) << rec.reason;
  const Plugin* p = rec.plugin;
  // Junk lies past each struct_size in the plugin's memory; the normalised copies must not show it.
  EXPECT_EQ(p->api()->transport_api, nullptr);
  EXPECT_EQ(p->transport_api(), nullptr);
  Device& dev = internal::GetDevice(rt, Context("fixold", 0));
  EXPECT_EQ(dev.api()->pinned_alloc, nullptr);
  EXPECT_EQ(dev.api()->pinned_free, nullptr);
  EXPECT_EQ(dev.api()->event_elapsed, nullptr);
  EXPECT_EQ(dev.api()->native_handle, nullptr);
  EXPECT_EQ(dev.api()->launch_host_func, nullptr);
  EXPECT_NE(dev.api()->event_synchronize, nullptr);
  bool found = false;
  for (const PluginOpDef& d : internal::OpDefs(rt)) {
    if (std::string(d.def->name) != "fixture_old_op") continue;
    found = true;
    EXPECT_NE(d.def->infer_shape, nullptr);
    EXPECT_EQ(d.def->infer_type, nullptr);
    EXPECT_EQ(d.def->backward_op, nullptr);
    EXPECT_EQ(d.def->backward_uses, 0u);
    EXPECT_EQ(d.def->num_inplace, 0);
    EXPECT_EQ(d.def->inplace_pairs, nullptr);
  }
  EXPECT_TRUE(found);
  // A kernel def of the size before source_file / math_files were appended: read as NULL.
  const std::vector<KernelInfo> kernels = internal::Kernels(rt, "fixold");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_STREQ(kernels[0].def->op_name, "fixture_old_op");
  EXPECT_NE(kernels[0].def->compute, nullptr);
  EXPECT_EQ(kernels[0].def->source_file, nullptr);
  EXPECT_EQ(kernels[0].def->math_files, nullptr);
  // ... and before the 2.1 storage claim: a dense kernel that is never handed a sparse array.
  EXPECT_EQ(kernels[0].def->storage_types, 0u);
  EXPECT_EQ(kernels[0].def->infer_storage, nullptr);
  EXPECT_FALSE(internal::IsSparseKernel(*kernels[0].def));
  weft_device_ptr ptr = dev.Allocate(16);
  dev.Memset(ptr, 0, 16, 1);
  dev.Free(ptr);
}

TEST(Loader, NewerMinorNegotiatesDownAndIsReadOnlyAsFarAsTheHostKnows) {
  Runtime& rt = FreshRuntime();
  PluginRecord rec = rt.LoadPlugin(Fixture("fixture_newer"));
  ASSERT_TRUE(rec.accepted) << rec.reason;
  EXPECT_EQ(rec.plugin_min, WEFT_SDK_MAKE_VERSION(2, 0));
  EXPECT_EQ(rec.plugin_max, WEFT_SDK_MAKE_VERSION(2, 7));
  EXPECT_EQ(rec.chosen, std::min(Runtime::HostSdkMax(), WEFT_SDK_MAKE_VERSION(2, 7)));
  Device& dev = internal::GetDevice(rt, Context("fixnew", 0));
  // What the plugin saw: the negotiated version and this host's table size.
  auto attrs = dev.properties().attributes;
  EXPECT_EQ(attrs.at(0).second, SdkVersionString(rec.chosen));
  EXPECT_EQ(attrs.at(1).second, std::to_string(sizeof(weft_host_api)));
  EXPECT_EQ(dev.api()->struct_size, sizeof(weft_device_api));
  weft_device_ptr ptr = dev.Allocate(32);
  dev.Memset(ptr, 0, 32, 9);
  uint8_t b[32];
  dev.CopyToHost(b, ptr, 0, 32);
  EXPECT_EQ(b[31], 9);
  dev.Free(ptr);
}

TEST(Loader, OtherMajorIsRejectedWithBothRanges) {
  ExpectRejected(Fixture("fixture_other_major"),
                 {"SDK versions do not overlap: plugin speaks SDK 3.0–3.1, host speaks " + HostRange(),
                  "fixture speaks SDK 3.0 to 3.1 only", "upgrade weft"});
}

TEST(Loader, ChoiceOutsideTheRangesIsRejected) {
  ExpectRejected(Fixture("fixture_bad_choice"),
                 {"plugin chose SDK 1.9, which is outside the host's range", "plugin speaks SDK 1.0–1.9"});
}

TEST(Loader, MissingEntrySymbolIsRejected) {
  ExpectRejected(Fixture("fixture_no_entry"), {"does not export weft_plugin_entry", "WEFT_DECLARE_PLUGIN_ENTRY"});
}

TEST(Loader, InitErrorTextIsShown) {
  ExpectRejected(Fixture("fixture_init_error"), {"init failed: fixture: the frobnicator is not connected"});
}

TEST(Loader, InitThatThrowsIsCaught) {
  ExpectRejected(Fixture("fixture_init_throws"), {"init threw an exception (fixture init exploded)"});
}

TEST(Loader, TooSmallTableIsRejected) {
  ExpectRejected(Fixture("fixture_tiny_table"), {"plugin table is 16 bytes (struct_size), too small"});
}

TEST(Loader, MissingDependencyIsNamed) {
  ExpectRejected(Fixture("fixture_needs_dep"),
                 {"needs libweft_fixture_dep.so, which was not found; install it or add its directory to "
                  "LD_LIBRARY_PATH"});
}

TEST(Loader, NonElfFileIsRejected) {
  TempDir dir;
  ExpectRejected(dir.File("libnotes.so", "these are not machine instructions\n"),
                 {"is not an ELF shared object", "starting with bytes 74 68 65 73", "remove it"});
}

TEST(Loader, WrongArchitectureIsNamed) {
  // A 64-bit little-endian ELF header of a shared object for aarch64 (e_machine 183).
  std::string h(64, '\0');
  const unsigned char ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  std::memcpy(h.data(), ident, sizeof(ident));
  h[16] = 3;    // e_type ET_DYN
  h[18] = 183;  // e_machine EM_AARCH64
  h[20] = 1;    // e_version
  TempDir dir;
#if defined(__x86_64__)
  ExpectRejected(dir.File("libarm.so", h), {"built for aarch64 (ELF machine 183), this host is x86-64"});
#else
  GTEST_SKIP() << "the expected text names x86-64";
#endif
}

TEST(Loader, MissingFileIsRejected) { ExpectRejected("/nonexistent/dir/libweft-nothing.so", {"file does not exist"}); }

TEST(Loader, DuplicateNameKeepsTheFirst) {
  Runtime& rt = FreshRuntime();
  PluginRecord first = rt.LoadPlugin(Fixture("fixture_good"));
  ASSERT_TRUE(first.accepted);
  PluginRecord second = rt.LoadPlugin(Extra("fixture_dup_name"));
  EXPECT_FALSE(second.accepted);
  EXPECT_TRUE(second.duplicate);
  EXPECT_EQ(second.reason, "duplicate: a plugin named 'fixture_good' was already loaded from " + first.path +
                               "; this one is ignored (remove one of the two)");
  EXPECT_EQ(rt.DeviceCount("fixdup"), 0);
  EXPECT_EQ(internal::FindPlugin(rt, "fixture_good")->path(), first.path);
}

TEST(Loader, DuplicateDeviceTypeIsRejected) {
  Runtime& rt = FreshRuntime();
  PluginRecord first = rt.LoadPlugin(Fixture("fixture_good"));
  ASSERT_TRUE(first.accepted);
  PluginRecord second = rt.LoadPlugin(Extra("fixture_dup_type"));
  EXPECT_FALSE(second.accepted);
  EXPECT_THAT(second.reason, HasSubstr("device type 'fixdev' is already provided by plugin 'fixture_good'"));
  EXPECT_EQ(internal::FindPlugin(rt, "fixture_dup_type"), nullptr);
  EXPECT_EQ(internal::GetDevice(rt, Context("fixdev", 0)).plugin().name(), "fixture_good");
  EXPECT_EQ(internal::FindKernel(rt, "fixture_scale", "fixdev", DType::kFloat32)->plugin->name(), "fixture_good");
}

TEST(Loader, LoadingTheSameFileTwiceReturnsTheFirstRecord) {
  Runtime& rt = FreshRuntime();
  PluginRecord a = rt.LoadPlugin(Fixture("fixture_good"));
  PluginRecord b = rt.LoadPlugin(std::string(LOADER_FIXTURE_DIR) + "/../plugins/libfixture_good.so");
  EXPECT_TRUE(b.accepted);
  EXPECT_FALSE(b.duplicate);
  EXPECT_EQ(a.plugin, b.plugin);
}

TEST(Loader, DiscoveryFromPluginPathSkipsTheBadAndKeepsTheGood) {
  std::string path = std::string("/nonexistent-dir:") + LOADER_FIXTURE_DIR;
  testing::internal::CaptureStderr();
  Runtime& rt = FreshRuntime(path.c_str());
  std::string err = testing::internal::GetCapturedStderr();
  auto records = rt.PluginRecords();
  struct Want {
    const char* file;
    bool accepted;
  };
  for (Want w : {Want{"fixture_good", true}, Want{"fixture_older", true}, Want{"fixture_newer", true},
                 Want{"fixture_other_major", false}, Want{"fixture_bad_choice", false}, Want{"fixture_no_entry", false},
                 Want{"fixture_init_error", false}, Want{"fixture_init_throws", false},
                 Want{"fixture_tiny_table", false}, Want{"fixture_needs_dep", false}}) {
    const PluginRecord* r = FindRecord(records, Fixture(w.file));
    ASSERT_NE(r, nullptr) << w.file;
    EXPECT_EQ(r->accepted, w.accepted) << w.file << ": " << r->reason;
    EXPECT_EQ(r->origin, "WEFT_PLUGIN_PATH");
    // One warning line per rejected file.
    std::string line = "skipping plugin " + r->path + ": ";
    EXPECT_EQ(err.find(line) != std::string::npos, !w.accepted) << w.file;
  }
  EXPECT_THAT(err, HasSubstr("WEFT_PLUGIN_PATH names /nonexistent-dir, which is neither a directory"));
  // Files come in name order.
  EXPECT_LT(FindRecord(records, Fixture("fixture_bad_choice")) - records.data(),
            FindRecord(records, Fixture("fixture_good")) - records.data());
  auto types = rt.DeviceTypes();
  for (const char* t : {"fixdev", "fixold", "fixnew"}) {
    EXPECT_NE(std::find(types.begin(), types.end(), t), types.end()) << t;
  }
  bool searched = false;
  for (const auto& line : rt.DiscoveryTrace())
    searched |= line == "searching " LOADER_FIXTURE_DIR " (WEFT_PLUGIN_PATH)";
  EXPECT_TRUE(searched);
  ExpectGoodPluginWorks(rt);
}

TEST(Loader, PluginPathEntriesMayBeFilesAndComeFirst) {
  std::string path = Extra("fixture_dup_type") + ":" + LOADER_FIXTURE_DIR;
  testing::internal::CaptureStderr();
  Runtime& rt = FreshRuntime(path.c_str());
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(internal::GetDevice(rt, Context("fixdev", 0)).plugin().name(), "fixture_dup_type");
  auto records = rt.PluginRecords();
  const PluginRecord* good = FindRecord(records, Fixture("fixture_good"));
  ASSERT_NE(good, nullptr);
  EXPECT_FALSE(good->accepted);
  EXPECT_THAT(good->reason, HasSubstr("device type 'fixdev' is already provided by plugin 'fixture_dup_type'"));
}

TEST(Loader, DisableListExcludesByName) {
  testing::internal::CaptureStderr();
  Runtime& rt = FreshRuntime(LOADER_FIXTURE_DIR, "fixture_good, fixture_newer");
  std::string err = testing::internal::GetCapturedStderr();
  auto records = rt.PluginRecords();
  for (const char* name : {"fixture_good", "fixture_newer"}) {
    const PluginRecord* r = FindRecord(records, Fixture(name));
    ASSERT_NE(r, nullptr);
    EXPECT_FALSE(r->accepted);
    EXPECT_TRUE(r->disabled);
    EXPECT_EQ(r->reason, "disabled by WEFT_PLUGINS_DISABLE");
    EXPECT_EQ(err.find("skipping plugin " + r->path), std::string::npos) << "disabling is not a warning";
  }
  EXPECT_EQ(internal::FindPlugin(rt, "fixture_good"), nullptr);
  EXPECT_EQ(rt.DeviceCount("fixdev"), 0);
  EXPECT_EQ(rt.DeviceCount("fixold"), 1);
  // An explicit load by path still works.
  EXPECT_FALSE(rt.LoadPlugin(Fixture("fixture_good")).accepted) << "already considered in this discovery";
  unsetenv("WEFT_PLUGINS_DISABLE");
}

TEST(Loader, ExplicitLoadIgnoresTheDisableList) {
  Runtime& rt = FreshRuntime(nullptr, "fixture_good");
  EXPECT_TRUE(rt.LoadPlugin(Fixture("fixture_good")).accepted);
  unsetenv("WEFT_PLUGINS_DISABLE");
}

TEST(Loader, OnPluginLoadedSeesEarlierAndLaterPlugins) {
  Runtime& rt = FreshRuntime();
  ASSERT_TRUE(rt.LoadPlugin(Fixture("fixture_good")).accepted);
  // Callbacks live as long as the runtime, so the state they touch must too.
  static std::vector<std::string> seen;
  static std::atomic<bool> recording{true};
  internal::OnPluginLoaded(rt, [](const Plugin& p) {
    if (!recording) return;
    if (p.name().rfind("fixture_", 0) == 0) seen.push_back(p.name());
    EXPECT_EQ(internal::FindPlugin(Runtime::Get(), p.name()), &p) << "callbacks may use the runtime";
  });
  EXPECT_EQ(seen, std::vector<std::string>{"fixture_good"});
  ASSERT_TRUE(rt.LoadPlugin(Fixture("fixture_older")).accepted);
  EXPECT_FALSE(rt.LoadPlugin(Fixture("fixture_init_error")).accepted);
  EXPECT_EQ(seen, (std::vector<std::string>{"fixture_good", "fixture_older"}));
  seen.clear();
  internal::ResetRuntimeForTesting();
  Runtime::Get().LoadPlugin(Fixture("fixture_newer"));
  EXPECT_EQ(seen, std::vector<std::string>{"fixture_newer"}) << "callbacks survive a reset";
  recording = false;
}

TEST(Loader, ConcurrentLookupsDuringLoads) {
  Runtime& rt = FreshRuntime();
  ASSERT_TRUE(rt.LoadPlugin(Fixture("fixture_good")).accepted);
  std::atomic<bool> stop{false};
  int iterations = 0, found = 0;
  std::thread reader([&] {
    // Keeps looking up while the main thread loads; every lookup must see the first plugin.
    while (!stop || iterations < 1000) {
      ++iterations;
      if (internal::FindKernel(rt, "fixture_scale", "fixdev", DType::kFloat32)) ++found;
      (void)rt.DeviceTypes();
    }
  });
  rt.LoadPlugin(Fixture("fixture_older"));
  rt.LoadPlugin(Fixture("fixture_newer"));
  stop = true;
  reader.join();
  EXPECT_EQ(found, iterations);
  EXPECT_EQ(rt.DeviceCount("fixnew"), 1);
}

TEST(Loader, GpuContextNamesTheFirstGpuClassPlugin) {
  Runtime& rt = FreshRuntime();
  auto types = rt.DeviceTypes();
  std::string want = "cuda";
  for (const auto& t : types) {
    if (t == "cuda" || t == "hip") {
      want = t;
      break;
    }
  }
  EXPECT_EQ(Context::gpu(2), Context(want, 2));
}

TEST(Loader, ResetShutsPluginsDownInReverseLoadOrder) {
  Runtime& rt = FreshRuntime();
  rt.LoadPlugin(Fixture("fixture_good"));
  rt.LoadPlugin(Fixture("fixture_older"));
  rt.LoadPlugin(Fixture("fixture_newer"));
  LogLevel saved = GetLogLevel();
  SetLogLevel(LogLevel::kDebug);
  testing::internal::CaptureStderr();
  internal::ResetRuntimeForTesting();
  std::string err = testing::internal::GetCapturedStderr();
  SetLogLevel(saved);
  size_t newer = err.find("fixture_newer: shutdown"), older = err.find("fixture_older: shutdown"),
         good = err.find("fixture_good: shutdown");
  ASSERT_NE(newer, std::string::npos) << err;
  ASSERT_NE(older, std::string::npos) << err;
  ASSERT_NE(good, std::string::npos) << err;
  EXPECT_LT(newer, older);
  EXPECT_LT(older, good);
}

}  // namespace
}  // namespace weft
