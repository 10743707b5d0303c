#include "contract_checks.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "contract_support.h"
#include "weft/internal/runtime.h"

namespace weft::contract {
namespace {

// Ends a check early (Require failed, or Skip).
struct Stop {};

bool IsPowerOfTwo(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

// Every other device of the same plugin (peers), this one excluded.
std::vector<Device*> Peers(Device& d) {
  std::vector<Device*> out;
  const int n = Runtime::Get().DeviceCount(d.type());
  for (int i = 0; i < n; ++i)
    if (i != d.id()) out.push_back(&internal::GetDevice(Runtime::Get(), Context(d.type(), i)));
  return out;
}

void PropertiesAreConsistent(Device& d, Checker& c) {
  const DeviceProperties& p = d.properties();
  c.Expect(!p.name.empty(), "the device has no name");
  c.Expect(!p.vendor.empty(), "the device has no vendor");
  c.Expect(IsPowerOfTwo(p.min_alignment), fmt::format("min_alignment {} is not a power of two", p.min_alignment));
  c.Expect(p.compute_units >= 0, "compute_units is negative");
  for (const auto& [k, v] : p.attributes) c.Expect(!k.empty(), "an attribute has an empty key");
  const DeviceProperties again = d.QueryProperties();
  c.Expect(again.name == p.name, "the name changed between two queries");
  c.Expect(again.capabilities == p.capabilities, "the capabilities changed between two queries");
  c.Expect(again.total_memory == p.total_memory, "total_memory changed between two queries");
  if (p.total_memory != 0) c.Expect(again.free_memory <= p.total_memory, "free_memory exceeds total_memory");
}

void AllocateAndFreeZeroOddAndAlignedSizes(Device& d, Checker& c) {
  c.Expect(d.Allocate(0) == 0u, "allocating 0 bytes did not return 0");
  d.Free(0);  // no-op
  const uint64_t align = d.properties().min_alignment;
  std::vector<weft_device_ptr> ptrs;
  for (uint64_t bytes : {1ull, 3ull, 17ull, 63ull, 4095ull, 4096ull, 12345ull, 1ull << 20}) {
    const weft_device_ptr p = d.Allocate(bytes);
    c.Require(p != 0u, fmt::format("allocating {} bytes returned 0", bytes));
    c.Expect(p % align == 0u, fmt::format("{} bytes: not aligned to min_alignment {}", bytes, align));
    ptrs.push_back(p);
  }
  for (uint64_t alignment : {64ull, 256ull, 4096ull}) {
    const weft_device_ptr p = d.Allocate(100, alignment);
    c.Expect(p % alignment == 0u, fmt::format("100 bytes aligned to {}: got {:#x}", alignment, p));
    ptrs.push_back(p);
  }
  std::vector<weft_device_ptr> sorted = ptrs;
  std::sort(sorted.begin(), sorted.end());
  c.Expect(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), "two live allocations share an address");
  for (weft_device_ptr p : ptrs) d.Free(p);
  c.ExpectError([&] { d.Allocate(8, 3); }, "alignment 3 (not a power of two)");
}

// Host -> device -> host with offsets and odd lengths; bytes outside the written range keep the
// memset sentinel (catches copies that write too much).
void CopyRoundTrip(Device& d, weft_stream stream, Checker& c) {
  constexpr uint64_t kBytes = 4099;
  constexpr uint8_t kSentinel = 0xEE;
  Buffer buf(d, kBytes);
  struct Case {
    uint64_t dst_offset, src_offset, bytes;
  };
  uint32_t seed = 1;
  for (Case k : {Case{0, 0, kBytes}, Case{1, 0, 1}, Case{7, 3, 1000}, Case{4096, 5, 3}, Case{kBytes - 1, 0, 1},
                 Case{100, 17, 2049}}) {
    Checker::Trace t(c, fmt::format("dst_offset {} src_offset {} bytes {}", k.dst_offset, k.src_offset, k.bytes));
    const std::vector<uint8_t> src = Pattern(k.src_offset + k.bytes, ++seed);
    d.Memset(buf.ptr(), 0, kBytes, kSentinel, stream);
    d.CopyFromHost(buf.ptr(), k.dst_offset, src.data() + k.src_offset, k.bytes, stream);
    // Read an odd window around the written range back at an offset.
    std::vector<uint8_t> window(k.bytes + 2, 0);
    const uint64_t lo = k.dst_offset > 0 ? k.dst_offset - 1 : 0;
    const uint64_t len = std::min<uint64_t>(kBytes - lo, k.bytes + 2);
    d.CopyToHost(window.data(), buf.ptr(), lo, len, stream);
    if (stream != nullptr) d.SynchronizeStream(stream);
    const uint64_t shift = k.dst_offset - lo;
    if (shift == 1) c.Expect(window[0] == kSentinel, "byte before the copied range changed");
    const int64_t bad = FirstMismatch(window.data() + shift, src.data() + k.src_offset, k.bytes);
    c.Expect(bad == -1, fmt::format("copied data differs at byte {}", bad));
    if (shift + k.bytes < len) c.Expect(window[shift + k.bytes] == kSentinel, "byte after the copied range changed");
    const std::vector<uint8_t> all = ReadBack(d, buf.ptr(), kBytes);
    const auto outside = std::count_if(all.begin(), all.begin() + static_cast<int64_t>(k.dst_offset),
                                       [&](uint8_t b) { return b != kSentinel; }) +
                         std::count_if(all.begin() + static_cast<int64_t>(k.dst_offset + k.bytes), all.end(),
                                       [&](uint8_t b) { return b != kSentinel; });
    c.Expect(outside == 0, fmt::format("{} bytes outside the copied range changed", outside));
  }
}

void CopyHostDeviceHostOnNullStream(Device& d, Checker& c) { CopyRoundTrip(d, nullptr, c); }

void CopyHostDeviceHostOnStream(Device& d, Checker& c) {
  Stream s(d);
  CopyRoundTrip(d, s.get(), c);
}

void ZeroByteCopiesAndMemsetsAreNoOps(Device& d, Checker& c) {
  Buffer buf(d, 16);
  d.Memset(buf.ptr(), 0, 16, 0x11);
  d.CopyFromHost(buf.ptr(), 16, nullptr, 0);  // offset at the end, nothing to do
  d.CopyToHost(nullptr, buf.ptr(), 0, 0);
  d.Memset(buf.ptr(), 3, 0, 0x22);
  const std::vector<uint8_t> all = ReadBack(d, buf.ptr(), 16);
  c.Expect(std::count(all.begin(), all.end(), 0x11) == 16, "a zero-byte copy or memset changed the buffer");
}

// Device -> device from src_dev to dst_dev with offsets, on a stream or the NULL stream.
void DeviceToDevice(Device& src_dev, Device& dst_dev, bool use_streams, Checker& c) {
  constexpr uint64_t kBytes = 3001;
  Checker::Trace t(c, fmt::format("{} -> {} on {} stream", src_dev.context().ToString(), dst_dev.context().ToString(),
                                  use_streams ? "a" : "the NULL"));
  Buffer src(src_dev, kBytes), dst(dst_dev, kBytes);
  const std::vector<uint8_t> pattern = Pattern(kBytes, 77);
  src_dev.CopyFromHost(src.ptr(), 0, pattern.data(), kBytes);
  dst_dev.Memset(dst.ptr(), 0, kBytes, 0);
  Stream s(dst_dev, !use_streams);
  dst_dev.CopyFromDevice(dst.ptr(), 5, src_dev, src.ptr(), 11, 1999, s.get());
  s.Sync();
  const std::vector<uint8_t> got = ReadBack(dst_dev, dst.ptr(), kBytes);
  c.Expect(FirstMismatch(got.data() + 5, pattern.data() + 11, 1999) == -1, "the copied bytes differ");
  c.Expect(std::count(got.begin(), got.begin() + 5, 0) == 5, "bytes before the copied range changed");
  c.Expect(std::count(got.begin() + 5 + 1999, got.end(), 0) == static_cast<int64_t>(kBytes - 5 - 1999),
           "bytes after the copied range changed");
}

void CopyDeviceToDeviceSameDevice(Device& d, Checker& c) {
  DeviceToDevice(d, d, false, c);
  DeviceToDevice(d, d, true, c);
}

std::string WithoutPeers(Device& d) {
  if (!(d.properties().capabilities & WEFT_DEVICE_CAP_PEER_COPY)) return "no PEER_COPY capability";
  if (Peers(d).empty()) return "only one " + d.type() + " device";
  return "";
}

void CopyDeviceToDevicePeers(Device& d, Checker& c) {
  for (Device* peer : Peers(d)) {
    DeviceToDevice(*peer, d, false, c);  // into this device
    DeviceToDevice(*peer, d, true, c);
    DeviceToDevice(d, *peer, true, c);  // out of it
  }
}

void CopyWithinOneAllocation(Device& d, Checker& c) {
  constexpr uint64_t kBytes = 1000;
  Buffer buf(d, kBytes);
  const std::vector<uint8_t> pattern = Pattern(kBytes, 5);
  d.CopyFromHost(buf.ptr(), 0, pattern.data(), kBytes);
  d.CopyFromDevice(buf.ptr(), 600, d, buf.ptr(), 3, 300);  // disjoint ranges of one allocation
  const std::vector<uint8_t> got = ReadBack(d, buf.ptr(), kBytes);
  c.Expect(FirstMismatch(got.data() + 600, pattern.data() + 3, 300) == -1, "the copied range differs");
  c.Expect(FirstMismatch(got.data(), pattern.data(), 600) == -1, "bytes before the destination changed");
}

void MemsetRanges(Device& d, weft_stream stream, Checker& c) {
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
    c.Require(got[i] == want, fmt::format("byte {} is {:#x}, expected {:#x}", i, got[i], want));
  }
}

void MemsetOnNullStream(Device& d, Checker& c) { MemsetRanges(d, nullptr, c); }
void MemsetOnStream(Device& d, Checker& c) {
  Stream s(d);
  MemsetRanges(d, s.get(), c);
}

void StreamRunsWorkInQueueOrder(Device& d, Checker& c) {
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
    c.Expect(FirstMismatch(results.data() + round * kBytes, sources[round].data(), kBytes) == -1,
             fmt::format("round {} read another round's data", round));
}

void EventNeverRecordedIsComplete(Device& d, Checker& c) {
  Event e(d);
  c.Expect(d.QueryEvent(e.get()), "a new event is not complete");
  d.SynchronizeEvent(e.get());
}

void EventRecordedOnNullStreamIsComplete(Device& d, Checker& c) {
  Event e(d);
  d.RecordEvent(e.get(), nullptr);
  c.Expect(d.QueryEvent(e.get()), "an event recorded on the NULL stream is not complete");
}

// A long job on stream A (a chain of big copies), an event recorded after it, stream B waits on
// the event and then reads the result: B must see A's final data, never an earlier state.
void EventOrdersWorkAcrossStreams(Device& d, Checker& c) {
  const uint64_t total = d.properties().total_memory;
  const uint64_t bytes = total != 0 && total < (256ull << 20) ? total / 8 : 16ull << 20;
  Buffer a(d, bytes), b(d, bytes);
  Stream sa(d), sb(d);
  Event done(d);
  std::vector<uint8_t> host(bytes);
  for (uint8_t round = 1; round <= 3; ++round) {
    Checker::Trace t(c, fmt::format("round {}", round));
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
    c.Expect(d.QueryEvent(done.get()), "B passed the wait but the event is not complete");
    const auto wrong = std::count_if(host.begin(), host.end(), [&](uint8_t v) { return v != round * 16 + 1; });
    c.Expect(wrong == 0, "stream B ran before the work it waited for");
    sa.Sync();
  }
}

void EventSynchronizeWaitsForRecordedWork(Device& d, Checker& c) {
  constexpr uint64_t kBytes = 8 << 20;
  Buffer buf(d, kBytes);
  Stream s(d);
  Event e(d);
  std::vector<uint8_t> host(kBytes, 0);
  d.Memset(buf.ptr(), 0, kBytes, 0x3C, s.get());
  d.CopyToHost(host.data(), buf.ptr(), 0, kBytes, s.get());
  d.RecordEvent(e.get(), s.get());
  d.SynchronizeEvent(e.get());
  c.Expect(d.QueryEvent(e.get()), "the event is not complete after event_synchronize");
  c.Expect(std::count(host.begin(), host.end(), 0x3C) == static_cast<int64_t>(kBytes),
           "event_synchronize returned before the recorded copy finished");
  s.Sync();
}

void NullStreamWaitBlocksTheHostUntilTheEvent(Device& d, Checker& c) {
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
  c.Expect(std::count(host.begin(), host.end(), 0x42) == static_cast<int64_t>(kBytes),
           "stream_wait_event on the NULL stream returned before the event");
  s.Sync();
}

// Freeing memory that queued work still uses waits for that work (as cudaFree does): no crash,
// no corruption, nothing left for the stream to report.
void FreeWithQueuedWorkIsSafe(Device& d, Checker& c) {
  constexpr uint64_t kBytes = 8 << 20;
  Stream s(d);
  Buffer keep(d, kBytes);
  const weft_device_ptr p = d.Allocate(kBytes);
  d.Memset(p, 0, kBytes, 0x11, s.get());
  d.CopyFromDevice(keep.ptr(), 0, d, p, 0, kBytes, s.get());
  d.Free(p);
  s.Sync();
  const std::vector<uint8_t> got = ReadBack(d, keep.ptr(), kBytes);
  c.Expect(std::count(got.begin(), got.end(), 0x11) == static_cast<int64_t>(kBytes),
           "work queued before a free did not see the freed memory's data");
}

void AbsurdAllocationIsOutOfMemoryNotACrash(Device& d, Checker& c) {
  c.ExpectError([&] { d.Allocate(1ull << 62); }, "allocating 2^62 bytes", /*oom=*/true);
  Buffer after(d, 4096);  // the device still works
  c.Expect(after.ptr() != 0u, "allocating after an out-of-memory error failed");
}

std::string WithoutSmallMemory(Device& d) {
  const uint64_t total = d.properties().total_memory;
  return total == 0 || total > (1ull << 30) ? "device memory unknown or larger than 1 GiB" : "";
}

void FillingSmallMemoryIsOutOfMemoryAndRecoverable(Device& d, Checker& c) {
  const uint64_t total = d.properties().total_memory;
  std::vector<weft_device_ptr> held;
  bool hit = false;
  for (int i = 0; i < 8 && !hit; ++i) {
    try {
      held.push_back(d.Allocate(total / 4));
    } catch (const OutOfMemoryError& e) {
      hit = true;
      c.Expect(std::string(e.what()).find(d.context().ToString()) != std::string::npos,
               std::string("the out-of-memory error does not name the device: ") + e.what());
    }
  }
  c.Expect(hit, "allocated more than total_memory without an error");
  c.Expect(held.size() <= 4u, fmt::format("{} allocations of total_memory / 4 succeeded", held.size()));
  for (weft_device_ptr p : held) d.Free(p);
  Buffer again(d, total / 4);  // freed memory is usable again
}

void FreeOfForeignOrInteriorPointerIsAnError(Device& d, Checker& c) {
  Buffer buf(d, 256);
  c.ExpectError([&] { d.Free(buf.ptr() + 8); }, "freeing an interior pointer");
  int on_stack = 0;
  c.ExpectError([&] { d.Free(static_cast<weft_device_ptr>(reinterpret_cast<uintptr_t>(&on_stack))); },
                "freeing a host pointer");
  const weft_device_ptr p = d.Allocate(64);
  d.Free(p);
  c.ExpectError([&] { d.Free(p); }, "double free");
  d.Memset(buf.ptr(), 0, 256, 1);  // the live allocation is intact
}

std::string HostAddressable(Device& d) {
  return d.host_addressable() ? "host pointers carry no bounds the plugin could check" : "";
}

void OutOfRangeAccessIsAnError(Device& d, Checker& c) {
  Buffer buf(d, 100);
  std::vector<uint8_t> host(200);
  Stream s(d);
  for (weft_stream stream : {static_cast<weft_stream>(nullptr), s.get()}) {
    Checker::Trace t(c, stream == nullptr ? "NULL stream" : "stream");
    c.ExpectError([&] { d.CopyToHost(host.data(), buf.ptr(), 0, 101, stream); }, "reading 101 bytes of 100");
    c.ExpectError([&] { d.CopyToHost(host.data(), buf.ptr(), 100, 1, stream); }, "reading at offset 100 of 100");
    c.ExpectError([&] { d.CopyFromHost(buf.ptr(), 99, host.data(), 2, stream); }, "writing 2 bytes at offset 99");
    c.ExpectError([&] { d.CopyFromHost(buf.ptr(), ~0ull, host.data(), 2, stream); }, "offset overflow");
    c.ExpectError([&] { d.Memset(buf.ptr(), 50, 51, 0, stream); }, "memset past the end");
    c.ExpectError([&] { d.CopyFromDevice(buf.ptr(), 0, d, buf.ptr(), 60, 41, stream); }, "device copy past the end");
    c.ExpectError([&] { d.CopyToHost(host.data(), 0x1000, 0, 1, stream); }, "a pointer never allocated");
  }
  s.Sync();  // errors were raised synchronously: nothing is left for the stream to report
  try {
    d.CopyToHost(host.data(), buf.ptr(), 0, 101);
  } catch (const Error& e) {
    c.Expect(std::string(e.what()).find(d.context().ToString()) != std::string::npos,
             std::string("the error does not name the device: ") + e.what());
  }
  const weft_device_ptr p = d.Allocate(64);
  d.Free(p);
  c.ExpectError([&] { d.CopyToHost(host.data(), p, 0, 1); }, "use after free");
}

void ConcurrentUseFromSeveralThreads(Device& d, Checker& c) {
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
  for (int t = 0; t < kThreads; ++t)
    c.Expect(
        failures[static_cast<size_t>(t)] == 0,
        fmt::format("thread {}: {} round trips wrong (1000+ = an exception)", t, failures[static_cast<size_t>(t)]));
}

// One elemwise_add call of kernel `k` on `d` queued on `stream`: out = a + b (n float32).
void QueueAdd(Device& d, const KernelInfo& k, void* state, weft_device_ptr a, weft_device_ptr b, weft_device_ptr out,
              int64_t n, weft_stream stream) {
  const int64_t dims[1] = {n};
  const weft_tensor ins[2] = {{sizeof(weft_tensor), a, 0, WEFT_DTYPE_FLOAT32, d.id(), 1, dims, nullptr},
                              {sizeof(weft_tensor), b, 0, WEFT_DTYPE_FLOAT32, d.id(), 1, dims, nullptr}};
  const weft_tensor outs[1] = {{sizeof(weft_tensor), out, 0, WEFT_DTYPE_FLOAT32, d.id(), 1, dims, nullptr}};
  const int32_t req = WEFT_REQ_WRITE;
  weft_kernel_args ka{};
  ka.struct_size = sizeof(ka);
  ka.kernel_data = k.def->kernel_data;
  ka.state = state;
  ka.device = d.id();
  ka.num_inputs = 2;
  ka.inputs = ins;
  ka.num_outputs = 1;
  ka.outputs = outs;
  ka.req = &req;
  ka.stream = stream;
  ThrowIfError(k.def->compute(k.plugin_state, &ka), "compute");
}

// A kernel queued on a stream runs after the copies queued before it and before those after it
// (devices whose kernels compute in host code must queue the whole call). Uses elemwise_add
// float32, the simplest kernel a device is likely to have; skipped when it has none.
std::string WithoutAddKernel(Device& d) {
  return internal::FindKernel(Runtime::Get(), "elemwise_add", d.type(), DType::kFloat32) == nullptr
             ? "no float32 elemwise_add kernel for " + d.type()
             : "";
}

void KernelOnStreamIsOrderedWithCopies(Device& d, Checker& c) {
  const KernelInfo* k = internal::FindKernel(Runtime::Get(), "elemwise_add", d.type(), DType::kFloat32);
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
  c.Require(sa.workspace_bytes == 0u, "elemwise_add asked for a workspace");
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
    QueueAdd(d, *k, sa.state, a.ptr(), b.ptr(), out.ptr(), kN, s.get());
    d.Memset(a.ptr(), 0, kBytes, 0, s.get());  // must not reach the kernel's input
    d.CopyToHost(hout.data(), out.ptr(), 0, kBytes, s.get());
    s.Sync();
    int64_t wrong = 0;
    for (int64_t i = 0; i < kN; ++i)
      wrong += hout[static_cast<size_t>(i)] != ha[static_cast<size_t>(i)] + hb[static_cast<size_t>(i)];
    c.Expect(wrong == 0, fmt::format("round {}: {} of {} sums wrong", round, wrong, kN));
  }
  if (k->def->destroy_state != nullptr) k->def->destroy_state(k->plugin_state, sa.state);
}

}  // namespace

void Checker::Expect(bool ok, std::string_view what) {
  if (ok) return;
  std::string msg;
  for (const std::string& t : trace_) msg += t + ": ";
  failures_.push_back(msg + std::string(what));
}

void Checker::Require(bool ok, std::string_view what) {
  Expect(ok, what);
  if (!ok) throw Stop{};
}

void Checker::Skip(std::string reason) {
  skip_reason_ = std::move(reason);
  throw Stop{};
}

const std::vector<ContractCheck>& ContractChecks() {
#define WEFT_CONTRACT_CHECK(f) \
  ContractCheck { #f, &f, nullptr }
#define WEFT_CONTRACT_CHECK_IF(f, not_applicable) \
  ContractCheck { #f, &f, &not_applicable }
  static const std::vector<ContractCheck> checks = {
      WEFT_CONTRACT_CHECK(PropertiesAreConsistent),
      WEFT_CONTRACT_CHECK(AllocateAndFreeZeroOddAndAlignedSizes),
      WEFT_CONTRACT_CHECK(CopyHostDeviceHostOnNullStream),
      WEFT_CONTRACT_CHECK(CopyHostDeviceHostOnStream),
      WEFT_CONTRACT_CHECK(ZeroByteCopiesAndMemsetsAreNoOps),
      WEFT_CONTRACT_CHECK(CopyDeviceToDeviceSameDevice),
      WEFT_CONTRACT_CHECK_IF(CopyDeviceToDevicePeers, WithoutPeers),
      WEFT_CONTRACT_CHECK(CopyWithinOneAllocation),
      WEFT_CONTRACT_CHECK(MemsetOnNullStream),
      WEFT_CONTRACT_CHECK(MemsetOnStream),
      WEFT_CONTRACT_CHECK(StreamRunsWorkInQueueOrder),
      WEFT_CONTRACT_CHECK(EventNeverRecordedIsComplete),
      WEFT_CONTRACT_CHECK(EventRecordedOnNullStreamIsComplete),
      WEFT_CONTRACT_CHECK(EventOrdersWorkAcrossStreams),
      WEFT_CONTRACT_CHECK(EventSynchronizeWaitsForRecordedWork),
      WEFT_CONTRACT_CHECK(NullStreamWaitBlocksTheHostUntilTheEvent),
      WEFT_CONTRACT_CHECK(FreeWithQueuedWorkIsSafe),
      WEFT_CONTRACT_CHECK(AbsurdAllocationIsOutOfMemoryNotACrash),
      WEFT_CONTRACT_CHECK_IF(FillingSmallMemoryIsOutOfMemoryAndRecoverable, WithoutSmallMemory),
      WEFT_CONTRACT_CHECK(FreeOfForeignOrInteriorPointerIsAnError),
      WEFT_CONTRACT_CHECK_IF(OutOfRangeAccessIsAnError, HostAddressable),
      WEFT_CONTRACT_CHECK(ConcurrentUseFromSeveralThreads),
      WEFT_CONTRACT_CHECK_IF(KernelOnStreamIsOrderedWithCopies, WithoutAddKernel),
  };
#undef WEFT_CONTRACT_CHECK
#undef WEFT_CONTRACT_CHECK_IF
  return checks;
}

const char* OutcomeName(ContractOutcome::Status s) {
  switch (s) {
    case ContractOutcome::Status::kFail:
      return "fail";
    case ContractOutcome::Status::kSkip:
      return "skip";
    default:
      return "pass";
  }
}

std::string NotApplicable(const ContractCheck& check, Device& dev) {
  return check.not_applicable != nullptr ? check.not_applicable(dev) : "";
}

ContractOutcome RunContractCheck(const ContractCheck& check, Device& dev) {
  ContractOutcome out;
  Checker c;
  const auto start = std::chrono::steady_clock::now();
  bool skipped = false;
  try {
    if (std::string why = NotApplicable(check, dev); !why.empty()) c.Skip(std::move(why));
    check.run(dev, c);
  } catch (const Stop&) {
    skipped = !c.skip_reason().empty() && c.failures().empty();
  } catch (const std::exception& e) {
    c.Expect(false, std::string("unexpected error: ") + e.what());
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.failures = c.failures();
  if (!out.failures.empty()) {
    out.status = ContractOutcome::Status::kFail;
  } else if (skipped) {
    out.status = ContractOutcome::Status::kSkip;
    out.skip_reason = c.skip_reason();
  }
  return out;
}

}  // namespace weft::contract
