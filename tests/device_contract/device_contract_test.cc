// Device contract suite (shared/design/testing.md §1): every device of every device plugin the
// Runtime finds must pass these. Parametrised over Runtime::ListDevices(); the Inventory test
// prints the devices tested. WEFT_CONTRACT_EXPECT (comma-separated device types, set by CMake to
// "cpu,simdev") names types that must be present, so a plugin that silently fails to load fails
// the suite instead of shrinking it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include "contract_support.h"
#include "weft/base.h"
#include "weft/plugin.h"
#include "weft/runtime.h"

namespace weft {
// Readable test parameters in GoogleTest output ("simdev(1)" instead of raw bytes).
void PrintTo(const Context& c, std::ostream* os) { *os << c.ToString(); }
}  // namespace weft

namespace weft::contract {
namespace {

// Before anything asks the Runtime (test registration included), point discovery at the build
// tree's plugins when the caller did not (running the binary by hand, or test listing).
const bool kPluginPathSet = [] {
  setenv("WEFT_PLUGIN_PATH", WEFT_TEST_PLUGIN_DIR ":" WEFT_CONTRACT_TEST_PLUGIN_DIR, /*overwrite=*/0);
  return true;
}();

bool IsPowerOfTwo(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

std::string Caps(uint64_t caps) {
  std::string out;
  for (const std::string& n : CapabilityNames(caps)) out += (out.empty() ? "" : ",") + n;
  return out.empty() ? "-" : out;
}

TEST(DeviceContractInventory, ListsExpectedDeviceTypesAndPrintsThem) {
  Runtime& rt = Runtime::Get();
  const std::vector<Context> devices = rt.ListDevices();
  std::printf("%-10s %-48s %-8s %14s %6s  %s\n", "device", "name", "vendor", "memory (MiB)", "align", "capabilities");
  for (const Context& c : devices) {
    const DeviceProperties& p = rt.GetDevice(c).properties();
    std::printf("%-10s %-48.48s %-8.8s %14llu %6llu  %s\n", c.ToString().c_str(), p.name.c_str(), p.vendor.c_str(),
                static_cast<unsigned long long>(p.total_memory >> 20), static_cast<unsigned long long>(p.min_alignment),
                Caps(p.capabilities).c_str());
  }
  std::printf("%zu devices of %zu types; kernels:", devices.size(), rt.DeviceTypes().size());
  for (const std::string& t : rt.DeviceTypes()) std::printf(" %s %zu", t.c_str(), rt.Kernels(t).size());
  std::printf("\n");
  const char* expect = std::getenv("WEFT_CONTRACT_EXPECT");
  std::stringstream types(expect != nullptr ? expect : "cpu");
  for (std::string t; std::getline(types, t, ',');) {
    if (t.empty()) continue;
    EXPECT_GT(rt.DeviceCount(t), 0) << "no '" << t << "' devices: is its plugin built and on WEFT_PLUGIN_PATH?";
  }
}

// A device plugin without devices (a GPU plugin on a machine without the GPU or its driver) has no
// instance in the suite below; it must say why, and the contract skips it with that reason.
TEST(DeviceContractInventory, PluginsWithoutDevicesSayWhyAndAreSkipped) {
  std::string skipped;
  for (const Plugin* p : Runtime::Get().Plugins()) {
    if (p->device_type().empty() || Runtime::Get().DeviceCount(p->device_type()) > 0) continue;
    EXPECT_FALSE(p->device_note().empty()) << p->name() << " reports 0 devices without a reason";
    skipped += "\n  " + p->device_type() + ": " + p->device_note();
  }
  if (!skipped.empty()) GTEST_SKIP() << "device types with no device, not tested:" << skipped;
}

class DeviceContract : public ::testing::TestWithParam<Context> {
 protected:
  Device& dev() { return Runtime::Get().GetDevice(GetParam()); }
  // Every other device of the same plugin (peers), this one excluded.
  std::vector<Device*> Peers() {
    std::vector<Device*> out;
    const int n = Runtime::Get().DeviceCount(GetParam().GetDeviceType());
    for (int i = 0; i < n; ++i)
      if (i != GetParam().GetDeviceId())
        out.push_back(&Runtime::Get().GetDevice(Context(GetParam().GetDeviceType(), i)));
    return out;
  }
};

TEST_P(DeviceContract, PropertiesAreConsistent) {
  Device& d = dev();
  const DeviceProperties& p = d.properties();
  EXPECT_FALSE(p.name.empty());
  EXPECT_FALSE(p.vendor.empty());
  EXPECT_TRUE(IsPowerOfTwo(p.min_alignment)) << p.min_alignment;
  EXPECT_GE(p.compute_units, 0);
  EXPECT_EQ(d.type(), GetParam().GetDeviceType());
  EXPECT_EQ(d.id(), GetParam().GetDeviceId());
  for (const auto& [k, v] : p.attributes) EXPECT_FALSE(k.empty());
  const DeviceProperties again = d.QueryProperties();
  EXPECT_EQ(again.name, p.name);
  EXPECT_EQ(again.capabilities, p.capabilities);
  EXPECT_EQ(again.total_memory, p.total_memory);
  if (p.total_memory != 0) {
    EXPECT_LE(again.free_memory, p.total_memory);
  }
}

TEST_P(DeviceContract, AllocateAndFreeZeroOddAndAlignedSizes) {
  Device& d = dev();
  EXPECT_EQ(d.Allocate(0), 0u);
  d.Free(0);  // no-op
  const uint64_t align = d.properties().min_alignment;
  std::vector<weft_device_ptr> ptrs;
  for (uint64_t bytes : {1ull, 3ull, 17ull, 63ull, 4095ull, 4096ull, 12345ull, 1ull << 20}) {
    const weft_device_ptr p = d.Allocate(bytes);
    ASSERT_NE(p, 0u) << bytes;
    EXPECT_EQ(p % align, 0u) << bytes << " bytes: not aligned to min_alignment " << align;
    ptrs.push_back(p);
  }
  for (uint64_t alignment : {64ull, 256ull, 4096ull}) {
    const weft_device_ptr p = d.Allocate(100, alignment);
    EXPECT_EQ(p % alignment, 0u) << alignment;
    ptrs.push_back(p);
  }
  std::vector<weft_device_ptr> sorted = ptrs;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << "two live allocations share an address";
  for (weft_device_ptr p : ptrs) d.Free(p);
  EXPECT_THROW(d.Allocate(8, 3), Error) << "alignment 3 is not a power of two";
}

// Host -> device -> host with offsets and odd lengths; bytes outside the written range keep the
// memset sentinel (catches copies that write too much).
void CopyRoundTrip(Device& d, weft_stream stream) {
  constexpr uint64_t kBytes = 4099;
  constexpr uint8_t kSentinel = 0xEE;
  Buffer buf(d, kBytes);
  struct Case {
    uint64_t dst_offset, src_offset, bytes;
  };
  uint32_t seed = 1;
  for (Case c : {Case{0, 0, kBytes}, Case{1, 0, 1}, Case{7, 3, 1000}, Case{4096, 5, 3}, Case{kBytes - 1, 0, 1},
                 Case{100, 17, 2049}}) {
    SCOPED_TRACE(testing::Message() << "dst_offset " << c.dst_offset << " src_offset " << c.src_offset << " bytes "
                                    << c.bytes);
    const std::vector<uint8_t> src = Pattern(c.src_offset + c.bytes, ++seed);
    d.Memset(buf.ptr(), 0, kBytes, kSentinel, stream);
    d.CopyFromHost(buf.ptr(), c.dst_offset, src.data() + c.src_offset, c.bytes, stream);
    // Read an odd window around the written range back at an offset.
    std::vector<uint8_t> window(c.bytes + 2, 0);
    const uint64_t lo = c.dst_offset > 0 ? c.dst_offset - 1 : 0;
    const uint64_t len = std::min<uint64_t>(kBytes - lo, c.bytes + 2);
    d.CopyToHost(window.data(), buf.ptr(), lo, len, stream);
    if (stream != nullptr) d.SynchronizeStream(stream);
    const uint64_t shift = c.dst_offset - lo;
    if (shift == 1) {
      EXPECT_EQ(window[0], kSentinel) << "byte before the copied range changed";
    }
    EXPECT_EQ(FirstMismatch(window.data() + shift, src.data() + c.src_offset, c.bytes), -1);
    if (shift + c.bytes < len) {
      EXPECT_EQ(window[shift + c.bytes], kSentinel) << "byte after the copied range changed";
    }
    const std::vector<uint8_t> all = ReadBack(d, buf.ptr(), kBytes);
    const auto outside = std::count_if(all.begin(), all.begin() + static_cast<int64_t>(c.dst_offset),
                                       [&](uint8_t b) { return b != kSentinel; }) +
                         std::count_if(all.begin() + static_cast<int64_t>(c.dst_offset + c.bytes), all.end(),
                                       [&](uint8_t b) { return b != kSentinel; });
    EXPECT_EQ(outside, 0) << "bytes outside the copied range changed";
  }
}

TEST_P(DeviceContract, CopyHostDeviceHostOnNullStream) { CopyRoundTrip(dev(), nullptr); }

TEST_P(DeviceContract, CopyHostDeviceHostOnStream) {
  Stream s(dev());
  CopyRoundTrip(dev(), s.get());
}

TEST_P(DeviceContract, ZeroByteCopiesAndMemsetsAreNoOps) {
  Device& d = dev();
  Buffer buf(d, 16);
  d.Memset(buf.ptr(), 0, 16, 0x11);
  d.CopyFromHost(buf.ptr(), 16, nullptr, 0);  // offset at the end, nothing to do
  d.CopyToHost(nullptr, buf.ptr(), 0, 0);
  d.Memset(buf.ptr(), 3, 0, 0x22);
  const std::vector<uint8_t> all = ReadBack(d, buf.ptr(), 16);
  EXPECT_EQ(std::count(all.begin(), all.end(), 0x11), 16);
}

// Device -> device within one device and to every peer, with offsets, on `stream_kind` streams.
void DeviceToDevice(Device& src_dev, Device& dst_dev, bool use_streams) {
  constexpr uint64_t kBytes = 3001;
  Buffer src(src_dev, kBytes), dst(dst_dev, kBytes);
  const std::vector<uint8_t> pattern = Pattern(kBytes, 77);
  src_dev.CopyFromHost(src.ptr(), 0, pattern.data(), kBytes);
  dst_dev.Memset(dst.ptr(), 0, kBytes, 0);
  Stream s(dst_dev, !use_streams);
  dst_dev.CopyFromDevice(dst.ptr(), 5, src_dev, src.ptr(), 11, 1999, s.get());
  s.Sync();
  const std::vector<uint8_t> got = ReadBack(dst_dev, dst.ptr(), kBytes);
  EXPECT_EQ(FirstMismatch(got.data() + 5, pattern.data() + 11, 1999), -1);
  EXPECT_EQ(std::count(got.begin(), got.begin() + 5, 0), 5);
  EXPECT_EQ(std::count(got.begin() + 5 + 1999, got.end(), 0), static_cast<int64_t>(kBytes - 5 - 1999));
}

TEST_P(DeviceContract, CopyDeviceToDeviceSameDevice) {
  DeviceToDevice(dev(), dev(), false);
  DeviceToDevice(dev(), dev(), true);
}

TEST_P(DeviceContract, CopyDeviceToDevicePeers) {
  if (!(dev().properties().capabilities & WEFT_DEVICE_CAP_PEER_COPY)) GTEST_SKIP() << "no PEER_COPY capability";
  const std::vector<Device*> peers = Peers();
  if (peers.empty()) GTEST_SKIP() << "only one " << GetParam().GetDeviceType() << " device";
  for (Device* peer : peers) {
    SCOPED_TRACE(peer->context().ToString());
    DeviceToDevice(*peer, dev(), false);  // into this device
    DeviceToDevice(*peer, dev(), true);
    DeviceToDevice(dev(), *peer, true);  // out of it
  }
}

TEST_P(DeviceContract, CopyWithinOneAllocation) {
  Device& d = dev();
  constexpr uint64_t kBytes = 1000;
  Buffer buf(d, kBytes);
  const std::vector<uint8_t> pattern = Pattern(kBytes, 5);
  d.CopyFromHost(buf.ptr(), 0, pattern.data(), kBytes);
  d.CopyFromDevice(buf.ptr(), 600, d, buf.ptr(), 3, 300);  // disjoint ranges of one allocation
  const std::vector<uint8_t> got = ReadBack(d, buf.ptr(), kBytes);
  EXPECT_EQ(FirstMismatch(got.data() + 600, pattern.data() + 3, 300), -1);
  EXPECT_EQ(FirstMismatch(got.data(), pattern.data(), 600), -1);
}

void MemsetRanges(Device& d, weft_stream stream) {
  constexpr uint64_t kBytes = 1023;
  Buffer buf(d, kBytes);
  d.Memset(buf.ptr(), 0, kBytes, 0x00, stream);
  d.Memset(buf.ptr(), 1, 1, 0xFF, stream);
  d.Memset(buf.ptr(), 10, 333, 0x7B, stream);
  d.Memset(buf.ptr(), kBytes - 3, 3, 0x01, stream);
  std::vector<uint8_t> got(kBytes);
  d.CopyToHost(got.data(), buf.ptr(), 0, kBytes, stream);
  if (stream != nullptr) d.SynchronizeStream(stream);
  for (uint64_t i = 0; i < kBytes; ++i) {
    const uint8_t want = i == 1 ? 0xFF : (i >= 10 && i < 343) ? 0x7B : i >= kBytes - 3 ? 0x01 : 0x00;
    ASSERT_EQ(got[i], want) << "byte " << i;
  }
}

TEST_P(DeviceContract, MemsetOnNullStream) { MemsetRanges(dev(), nullptr); }
TEST_P(DeviceContract, MemsetOnStream) {
  Stream s(dev());
  MemsetRanges(dev(), s.get());
}

TEST_P(DeviceContract, StreamRunsWorkInQueueOrder) {
  Device& d = dev();
  constexpr uint64_t kBytes = 1 << 16;
  Buffer buf(d, kBytes);
  Stream s(d);
  std::vector<uint8_t> results(8 * kBytes);
  std::vector<std::vector<uint8_t>> sources;
  for (uint32_t round = 0; round < 8; ++round) sources.push_back(Pattern(kBytes, 100 + round));
  // Each round overwrites the buffer and reads it back; only FIFO order gives each read its round.
  for (uint32_t round = 0; round < 8; ++round) {
    d.Memset(buf.ptr(), 0, kBytes, 0, s.get());
    d.CopyFromHost(buf.ptr(), 0, sources[round].data(), kBytes, s.get());
    d.CopyToHost(results.data() + round * kBytes, buf.ptr(), 0, kBytes, s.get());
  }
  s.Sync();
  for (uint32_t round = 0; round < 8; ++round)
    EXPECT_EQ(FirstMismatch(results.data() + round * kBytes, sources[round].data(), kBytes), -1) << "round " << round;
}

TEST_P(DeviceContract, EventNeverRecordedIsComplete) {
  Event e(dev());
  EXPECT_TRUE(dev().QueryEvent(e.get()));
  dev().SynchronizeEvent(e.get());
}

TEST_P(DeviceContract, EventRecordedOnNullStreamIsComplete) {
  Event e(dev());
  dev().RecordEvent(e.get(), nullptr);
  EXPECT_TRUE(dev().QueryEvent(e.get()));
}

// A long job on stream A (a chain of big copies), an event recorded after it, stream B waits on
// the event and then reads the result: B must see A's final data, never an earlier state.
TEST_P(DeviceContract, EventOrdersWorkAcrossStreams) {
  Device& d = dev();
  const uint64_t total = d.properties().total_memory;
  const uint64_t bytes = total != 0 && total < (256ull << 20) ? total / 8 : 16ull << 20;
  Buffer a(d, bytes), b(d, bytes);
  Stream sa(d), sb(d);
  Event done(d);
  std::vector<uint8_t> host(bytes);
  for (uint8_t round = 1; round <= 3; ++round) {
    SCOPED_TRACE(testing::Message() << "round " << int(round));
    d.Memset(b.ptr(), 0, bytes, 0);  // synchronous: the stale state B must not see
    d.Memset(a.ptr(), 0, bytes, static_cast<uint8_t>(round * 16), sa.get());
    for (int hop = 0; hop < 4; ++hop) {  // a <-> b: the job takes a while
      d.CopyFromDevice(b.ptr(), 0, d, a.ptr(), 0, bytes, sa.get());
      d.CopyFromDevice(a.ptr(), 0, d, b.ptr(), 0, bytes, sa.get());
    }
    d.Memset(b.ptr(), 0, bytes, static_cast<uint8_t>(round * 16 + 1), sa.get());
    d.RecordEvent(done.get(), sa.get());
    (void)d.QueryEvent(done.get());  // may be either; must not fail
    d.StreamWaitEvent(sb.get(), done.get());
    d.CopyToHost(host.data(), b.ptr(), 0, bytes, sb.get());
    sb.Sync();
    EXPECT_TRUE(d.QueryEvent(done.get())) << "B passed the wait but the event is not complete";
    const auto wrong = std::count_if(host.begin(), host.end(), [&](uint8_t v) { return v != round * 16 + 1; });
    EXPECT_EQ(wrong, 0) << "stream B ran before the work it waited for";
    sa.Sync();
  }
}

TEST_P(DeviceContract, EventSynchronizeWaitsForRecordedWork) {
  Device& d = dev();
  constexpr uint64_t kBytes = 8 << 20;
  Buffer buf(d, kBytes);
  Stream s(d);
  Event e(d);
  std::vector<uint8_t> host(kBytes, 0);
  d.Memset(buf.ptr(), 0, kBytes, 0x3C, s.get());
  d.CopyToHost(host.data(), buf.ptr(), 0, kBytes, s.get());
  d.RecordEvent(e.get(), s.get());
  d.SynchronizeEvent(e.get());
  EXPECT_TRUE(d.QueryEvent(e.get()));
  EXPECT_EQ(std::count(host.begin(), host.end(), 0x3C), static_cast<int64_t>(kBytes));
  s.Sync();
}

TEST_P(DeviceContract, NullStreamWaitBlocksTheHostUntilTheEvent) {
  Device& d = dev();
  constexpr uint64_t kBytes = 8 << 20;
  Buffer buf(d, kBytes);
  Stream s(d);
  Event e(d);
  d.Memset(buf.ptr(), 0, kBytes, 0, nullptr);
  d.Memset(buf.ptr(), 0, kBytes, 0x42, s.get());
  d.RecordEvent(e.get(), s.get());
  d.StreamWaitEvent(nullptr, e.get());  // NULL stream: the host waits
  std::vector<uint8_t> host(kBytes);
  d.CopyToHost(host.data(), buf.ptr(), 0, kBytes, nullptr);
  EXPECT_EQ(std::count(host.begin(), host.end(), 0x42), static_cast<int64_t>(kBytes));
  s.Sync();
}

// Freeing memory that queued work still uses waits for that work (as cudaFree does): no crash,
// no corruption, nothing left for the stream to report. Under ASan a plugin that frees at once
// shows up as a use-after-free.
TEST_P(DeviceContract, FreeWithQueuedWorkIsSafe) {
  Device& d = dev();
  constexpr uint64_t kBytes = 8 << 20;
  Stream s(d);
  Buffer keep(d, kBytes);
  const weft_device_ptr p = d.Allocate(kBytes);
  d.Memset(p, 0, kBytes, 0x11, s.get());
  d.CopyFromDevice(keep.ptr(), 0, d, p, 0, kBytes, s.get());
  d.Free(p);
  s.Sync();
  const std::vector<uint8_t> got = ReadBack(d, keep.ptr(), kBytes);
  EXPECT_EQ(std::count(got.begin(), got.end(), 0x11), static_cast<int64_t>(kBytes));
}

TEST_P(DeviceContract, AbsurdAllocationIsOutOfMemoryNotACrash) {
  Device& d = dev();
  EXPECT_THROW(d.Allocate(1ull << 62), OutOfMemoryError);
  Buffer after(d, 4096);  // the device still works
  EXPECT_NE(after.ptr(), 0u);
}

TEST_P(DeviceContract, FillingSmallMemoryIsOutOfMemoryAndRecoverable) {
  Device& d = dev();
  const uint64_t total = d.properties().total_memory;
  if (total == 0 || total > (1ull << 30)) GTEST_SKIP() << "device memory unknown or larger than 1 GiB";
  std::vector<weft_device_ptr> held;
  bool hit = false;
  for (int i = 0; i < 8 && !hit; ++i) {
    try {
      held.push_back(d.Allocate(total / 4));
    } catch (const OutOfMemoryError& e) {
      hit = true;
      EXPECT_NE(std::string(e.what()).find(GetParam().ToString()), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(hit) << "allocated more than total_memory without an error";
  EXPECT_LE(held.size(), 4u);
  for (weft_device_ptr p : held) d.Free(p);
  Buffer again(d, total / 4);  // freed memory is usable again
}

TEST_P(DeviceContract, FreeOfForeignOrInteriorPointerIsAnError) {
  Device& d = dev();
  Buffer buf(d, 256);
  EXPECT_THROW(d.Free(buf.ptr() + 8), Error) << "interior pointer";
  int on_stack = 0;
  EXPECT_THROW(d.Free(static_cast<weft_device_ptr>(reinterpret_cast<uintptr_t>(&on_stack))), Error) << "host pointer";
  const weft_device_ptr p = d.Allocate(64);
  d.Free(p);
  EXPECT_THROW(d.Free(p), Error) << "double free";
  d.Memset(buf.ptr(), 0, 256, 1);  // the live allocation is intact
}

TEST_P(DeviceContract, OutOfRangeAccessIsAnError) {
  Device& d = dev();
  if (d.host_addressable()) GTEST_SKIP() << "host pointers carry no bounds the plugin could check";
  Buffer buf(d, 100);
  std::vector<uint8_t> host(200);
  Stream s(d);
  for (weft_stream stream : {static_cast<weft_stream>(nullptr), s.get()}) {
    EXPECT_THROW(d.CopyToHost(host.data(), buf.ptr(), 0, 101, stream), Error);
    EXPECT_THROW(d.CopyToHost(host.data(), buf.ptr(), 100, 1, stream), Error);
    EXPECT_THROW(d.CopyFromHost(buf.ptr(), 99, host.data(), 2, stream), Error);
    EXPECT_THROW(d.CopyFromHost(buf.ptr(), ~0ull, host.data(), 2, stream), Error) << "offset overflow";
    EXPECT_THROW(d.Memset(buf.ptr(), 50, 51, 0, stream), Error);
    EXPECT_THROW(d.CopyFromDevice(buf.ptr(), 0, d, buf.ptr(), 60, 41, stream), Error);
    EXPECT_THROW(d.CopyToHost(host.data(), 0x1000, 0, 1, stream), Error) << "never allocated";
  }
  s.Sync();  // errors were raised synchronously: nothing is left for the stream to report
  try {
    d.CopyToHost(host.data(), buf.ptr(), 0, 101);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(GetParam().ToString()), std::string::npos) << e.what();
  }
  const weft_device_ptr p = d.Allocate(64);
  d.Free(p);
  EXPECT_THROW(d.CopyToHost(host.data(), p, 0, 1), Error) << "use after free";
}

TEST_P(DeviceContract, ConcurrentUseFromSeveralThreads) {
  Device& d = dev();
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        Stream s(d);
        for (int i = 0; i < 20; ++i) {
          const uint64_t bytes = 1000 + 37 * static_cast<uint64_t>(i) + static_cast<uint64_t>(t);
          Buffer buf(d, bytes);
          const std::vector<uint8_t> src = Pattern(bytes, static_cast<uint32_t>(t * 100 + i));
          std::vector<uint8_t> back(bytes);
          d.CopyFromHost(buf.ptr(), 0, src.data(), bytes, s.get());
          d.CopyToHost(back.data(), buf.ptr(), 0, bytes, s.get());
          s.Sync();
          if (back != src) ++failures[static_cast<size_t>(t)];
        }
      } catch (const std::exception&) {
        failures[static_cast<size_t>(t)] += 1000;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[static_cast<size_t>(t)], 0) << "thread " << t;
}

// A kernel queued on a stream runs after the copies queued before it and before those after it
// (devices whose kernels compute in host code must queue the whole call). Uses elemwise_add
// float32, the simplest kernel a device is likely to have; skipped when it has none.
TEST_P(DeviceContract, KernelOnStreamIsOrderedWithCopies) {
  Device& d = dev();
  const KernelInfo* k = Runtime::Get().FindKernel("elemwise_add", d.type(), DType::kFloat32);
  if (k == nullptr) GTEST_SKIP() << "no float32 elemwise_add kernel for " << d.type();
  constexpr int64_t kN = 1 << 18;
  constexpr uint64_t kBytes = kN * sizeof(float);
  weft_shape shape{1, {kN}};
  const weft_shape shapes[3] = {shape, shape, shape};
  const int32_t dtypes[3] = {WEFT_DTYPE_FLOAT32, WEFT_DTYPE_FLOAT32, WEFT_DTYPE_FLOAT32};
  weft_kernel_state_args sa{};
  sa.struct_size = sizeof(sa);
  sa.kernel_data = k->def->kernel_data;
  sa.op_name = "elemwise_add";
  sa.device = d.id();
  sa.num_inputs = 2;
  sa.input_shapes = shapes;
  sa.input_dtypes = dtypes;
  sa.num_outputs = 1;
  sa.output_shapes = shapes + 2;
  sa.output_dtypes = dtypes + 2;
  if (k->def->create_state != nullptr) ThrowIfError(k->def->create_state(k->plugin_state, &sa), "create_state");
  ASSERT_EQ(sa.workspace_bytes, 0u);

  Buffer a(d, kBytes), b(d, kBytes), out(d, kBytes);
  std::vector<float> ha(kN), hb(kN), hout(kN, -1.0f);
  Stream s(d);
  for (int round = 0; round < 3; ++round) {
    for (int64_t i = 0; i < kN; ++i) {
      ha[static_cast<size_t>(i)] = static_cast<float>(i % 1000) + static_cast<float>(round);
      hb[static_cast<size_t>(i)] = 0.5f * static_cast<float>(round);
    }
    d.CopyFromHost(a.ptr(), 0, ha.data(), kBytes, s.get());
    d.CopyFromHost(b.ptr(), 0, hb.data(), kBytes, s.get());
    const int64_t dims[1] = {kN};
    const weft_tensor ins[2] = {{sizeof(weft_tensor), a.ptr(), 0, WEFT_DTYPE_FLOAT32, d.id(), 1, dims, nullptr},
                                {sizeof(weft_tensor), b.ptr(), 0, WEFT_DTYPE_FLOAT32, d.id(), 1, dims, nullptr}};
    const weft_tensor outs[1] = {{sizeof(weft_tensor), out.ptr(), 0, WEFT_DTYPE_FLOAT32, d.id(), 1, dims, nullptr}};
    const int32_t req = WEFT_REQ_WRITE;
    weft_kernel_args ka{};
    ka.struct_size = sizeof(ka);
    ka.kernel_data = k->def->kernel_data;
    ka.state = sa.state;
    ka.device = d.id();
    ka.num_inputs = 2;
    ka.inputs = ins;
    ka.num_outputs = 1;
    ka.outputs = outs;
    ka.req = &req;
    ka.stream = s.get();
    ThrowIfError(k->def->compute(k->plugin_state, &ka), "compute");
    d.Memset(a.ptr(), 0, kBytes, 0, s.get());  // must not reach the kernel's input
    d.CopyToHost(hout.data(), out.ptr(), 0, kBytes, s.get());
    s.Sync();
    int64_t wrong = 0;
    for (int64_t i = 0; i < kN; ++i)
      wrong += hout[static_cast<size_t>(i)] != ha[static_cast<size_t>(i)] + hb[static_cast<size_t>(i)];
    EXPECT_EQ(wrong, 0) << "round " << round;
  }
  if (k->def->destroy_state != nullptr) k->def->destroy_state(k->plugin_state, sa.state);
}

INSTANTIATE_TEST_SUITE_P(AllDevices, DeviceContract, ::testing::ValuesIn(Runtime::Get().ListDevices()),
                         [](const ::testing::TestParamInfo<Context>& info) { return TestName(info.param); });

}  // namespace
}  // namespace weft::contract
