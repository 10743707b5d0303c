// NDArray on cpu(0), and on simdev when that plugin is loaded: copies in and out, copies between
// devices, shared-memory views, waits, errors, element access and Save/Load.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <numeric>
#include <sstream>
#include <thread>

#include "ndarray_read.h"
#include "require.h"
#include "storage/staging.h"
#include "weft/internal/device.h"
#include "weft/internal/runtime.h"
#include "weft/ndarray.h"
#include "weft/ndarray_format.h"

namespace weft {
namespace {

namespace fs = std::filesystem;

const Context kCpu = Context::cpu(0);

std::vector<float> Iota(size_t n, float start = 0.0f) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

using weft::test::Read;

std::string TempPath(const std::string& name) {
  return (fs::temp_directory_path() / fmt::format("weft-ndarray-{}-{}", ::getpid(), name)).string();
}

// Devices the cross-device tests run on: cpu(0) always, simdev(0)/simdev(1) when loaded.
std::vector<Context> TestDevices() {
  std::vector<Context> out{kCpu};
  for (int i = 0; i < 2; ++i)
    if (Runtime::Get().HasDevice(Context("simdev", i))) out.emplace_back("simdev", i);
  return out;
}

// GTEST_SKIP must run in the test body itself, hence a macro.
#define REQUIRE_SIMDEV(count)                         \
  if (Runtime::Get().DeviceCount("simdev") < (count)) \
  WEFT_SKIP_UNLESS_REQUIRED() << "needs " << (count)  \
                              << " simdev device(s); the simdev plugin is not loaded or has fewer"

TEST(NDArray, NoneArrayRefusesDataAccess) {
  NDArray none;
  EXPECT_TRUE(none.is_none());
  EXPECT_EQ(none.Size(), 0u);
  EXPECT_EQ(none.var(), nullptr);
  EXPECT_THROW(none.GetContext(), Error);
  std::vector<float> out;
  EXPECT_THROW(none.SyncCopyToCPU(&out), Error);
  EXPECT_THROW(none.WaitToRead(), Error);
  NDArray a(Shape(2), kCpu);
  EXPECT_THROW(none.CopyTo(&a), Error);
}

TEST(NDArray, CopiesInAndOutOnCpu) {
  NDArray a(Iota(6), Shape(2, 3), kCpu);
  EXPECT_EQ(a.GetShape(), Shape(2, 3));
  EXPECT_EQ(a.GetDType(), DType::kFloat32);
  EXPECT_EQ(a.GetContext(), kCpu);
  EXPECT_EQ(a.Size(), 6u);
  EXPECT_EQ(a.Bytes(), 24u);
  EXPECT_EQ(Read(a), Iota(6));
  std::vector<float> out(6);
  a.SyncCopyToCPU(out.data(), 6);
  EXPECT_EQ(out, Iota(6));
  EXPECT_THROW(a.SyncCopyToCPU(out.data(), 5), Error);
  EXPECT_THROW(a.SyncCopyFromCPU(Iota(5)), Error);
  a.WaitToRead();
  EXPECT_EQ(a.GetData()[4], 4.0f);
  EXPECT_EQ(a.At(1, 2), 5.0f);
  EXPECT_EQ(a.Offset(1, 2), 5u);
  EXPECT_THROW(a.At(2, 0), Error);
  NDArray b(Iota(4, 1.0f));  // mxnet-cpp's 1-d cpu form
  EXPECT_EQ(b.GetShape(), Shape(4));
  EXPECT_EQ(b.At(3), 4.0f);
}

TEST(NDArray, DelayedAllocationHappensOnFirstUse) {
  NDArray a(Shape(1000), kCpu);  // delay_alloc defaults to true
  EXPECT_EQ(a.dptr(), 0u);
  a.CheckAndAlloc();
  const weft_device_ptr p = a.dptr();
  EXPECT_NE(p, 0u);
  a.CheckAndAlloc();
  EXPECT_EQ(a.dptr(), p);
  EXPECT_EQ(a.storage_handle().size, 4000u);
  NDArray b(Shape(10), kCpu, /*delay_alloc=*/false);
  EXPECT_NE(b.dptr(), 0u);
}

TEST(NDArray, OtherDTypesAreStorableCopyableAndFillable) {
  for (DType dt : {DType::kFloat16, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kUint8, DType::kBfloat16}) {
    SCOPED_TRACE(DTypeName(dt));
    NDArray a(Shape(3, 5), kCpu, true, dt);
    std::vector<uint8_t> bytes(a.Bytes());
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 1);
    a.SyncCopyFromCPUBytes(bytes.data(), bytes.size());
    NDArray b = a.Copy(kCpu);
    std::vector<uint8_t> back(b.Bytes());
    b.SyncCopyToCPUBytes(back.data(), back.size());
    EXPECT_EQ(back, bytes);
    b = 3.0f;
    EXPECT_EQ(b.At(7), 3.0f);
    b = 0.0f;
    EXPECT_EQ(b.At(14), 0.0f);
    std::vector<float> f;
    EXPECT_THROW(a.SyncCopyToCPU(&f), Error) << "float access to a non-float32 array must be refused";
  }
}

TEST(NDArray, SliceAndReshapeShareMemory) {
  NDArray a(Iota(12), Shape(4, 3), kCpu);
  NDArray rows = a.Slice(1, 3);
  EXPECT_EQ(rows.GetShape(), Shape(2, 3));
  EXPECT_TRUE(rows.SharesChunkWith(a));
  EXPECT_EQ(rows.offset(), 12u);
  EXPECT_EQ(Read(rows), Iota(6, 3.0f));
  rows.SyncCopyFromCPU(std::vector<float>(6, -1.0f));
  std::vector<float> expected = Iota(12);
  for (int i = 3; i < 9; ++i) expected[i] = -1.0f;
  EXPECT_EQ(Read(a), expected);
  NDArray flat = a.Reshape(Shape(-1));
  EXPECT_EQ(flat.GetShape(), Shape(12));
  NDArray r = a.Reshape(Shape(2, 6));
  r = 7.0f;
  EXPECT_EQ(Read(a), std::vector<float>(12, 7.0f));
  EXPECT_EQ(a.Slice(2, 2).Size(), 0u);
  EXPECT_THROW(a.Slice(3, 5), Error);
  EXPECT_THROW(a.Slice(2, 1), Error);
  EXPECT_THROW(a.Reshape(Shape(5, 2)), Error);
  EXPECT_THROW(a.Reshape(Shape(-1, -1)), Error);
  NDArray view = a.Slice(2, 4).AsArray(Shape(3), DType::kInt32);
  EXPECT_EQ(view.offset(), 24u);
  EXPECT_THROW(a.Slice(2, 4).AsArray(Shape(7), DType::kFloat32), Error);
}

TEST(NDArray, PushedCopiesRunInOrderWithoutExplicitWaits) {
  NDArray src(Iota(256), Shape(16, 16), kCpu);
  NDArray a(Shape(16, 16), kCpu), b(Shape(16, 16), kCpu), c(Shape(16, 16), kCpu);
  src.CopyTo(&a);
  a.CopyTo(&b);
  b.CopyTo(&c);
  a = 0.0f;    // must not overtake a's read by a.CopyTo(&b)
  src = 1.0f;  // nor src's read by src.CopyTo(&a)
  EXPECT_EQ(Read(c), Iota(256));
  EXPECT_EQ(Read(a), std::vector<float>(256, 0.0f));
  NDArray::WaitAll();
  NDArray wrong(Shape(8), kCpu);
  EXPECT_THROW(src.CopyTo(&wrong), Error);
}

TEST(NDArray, ConcurrentThreadsCopyFromOneSource) {
  NDArray src(Iota(1000), Shape(1000), kCpu);
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        NDArray dst = src.Copy(kCpu);
        dst.Slice(0, 1) = static_cast<float>(t);
        std::vector<float> v = Read(dst);
        if (v[0] != static_cast<float>(t) || v[999] != 999.0f) ++bad;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(NDArray, WaitRethrowsTheErrorOfAFailedWrite) {
  NDArray a(Iota(4), Shape(4), kCpu);
  Engine::Get()->PushSync([](RunContext) { throw Error("kernel exploded"); }, kCpu, {}, {a.var()});
  try {
    a.WaitToRead();
    FAIL() << "expected the op's error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("kernel exploded"), std::string::npos);
  }
  EXPECT_EQ(Read(a), Iota(4)) << "the array works again after the error was seen";
  a.WaitToWrite();
}

TEST(NDArray, FreedArraysReturnTheirMemoryToThePool) {
  NDArray::WaitAll();
  const uint64_t before = Storage::Get()->Stats(kCpu).bytes_in_use;
  {
    NDArray a(Shape(1 << 16), kCpu, false);
    NDArray s = a.Slice(0, 10);
    a = 1.0f;
    EXPECT_GE(Storage::Get()->Stats(kCpu).bytes_in_use, before + (1u << 18));
  }
  NDArray::WaitAll();
  EXPECT_EQ(Storage::Get()->Stats(kCpu).bytes_in_use, before);
}

TEST(NDArray, PrintsLikeMXNetCpp) {
  std::ostringstream os;
  os << NDArray(std::vector<float>{1, 2.5f, 3}, Shape(3), kCpu);
  EXPECT_EQ(os.str(), "[1, 2.5, 3, ]");
}

// ---- across devices -----------------------------------------------------------------------------

TEST(NDArray, CopiesBetweenEveryPairOfDevices) {
  const auto devices = TestDevices();
  if (devices.size() == 1) std::cout << "[ note ] simdev not loaded: only cpu(0) -> cpu(0) is exercised\n";
  const std::vector<float> data = Iota(1000, -500.0f);
  for (const Context& from : devices) {
    for (const Context& to : devices) {
      SCOPED_TRACE(from.ToString() + " -> " + to.ToString());
      NDArray a(data, Shape(10, 100), from);
      NDArray b(Shape(10, 100), to);
      a.CopyTo(&b);
      EXPECT_EQ(Read(b), data);
      NDArray c = b.Copy(from);
      EXPECT_EQ(c.GetContext(), from);
      EXPECT_EQ(Read(c), data);
      // A slice of one device into a slice of another.
      NDArray d(Shape(4, 100), to);
      d = 0.0f;
      NDArray middle = d.Slice(1, 3);
      a.Slice(3, 5).CopyTo(&middle);
      std::vector<float> got = Read(d);
      EXPECT_EQ(got[99], 0.0f);
      EXPECT_EQ(got[100], data[300]);
      EXPECT_EQ(got[299], data[499]);
      EXPECT_EQ(got[300], 0.0f);
    }
  }
}

TEST(NDArray, SimdevArraysWorkThroughTheEngine) {
  REQUIRE_SIMDEV(1);
  const Context dev("simdev", 0);
  NDArray a(Iota(24), Shape(2, 3, 4), dev);
  EXPECT_EQ(a.At(1, 2, 3), 23.0f);
  EXPECT_EQ(Read(a.Slice(1, 2)), Iota(12, 12.0f));
  NDArray r = a.Reshape(Shape(6, 4));
  r.Slice(5, 6) = 2.0f;
  EXPECT_EQ(a.At(23), 2.0f);
  EXPECT_EQ(a.At(19), 19.0f);
  if (!internal::GetDevice(Runtime::Get(), dev).host_addressable()) {
    try {
      a.GetData();
      FAIL() << "expected weft::Error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("simdev(0)"), std::string::npos) << e.what();
    }
  }
}

TEST(NDArray, SimdevPeerCopies) {
  REQUIRE_SIMDEV(2);
  NDArray a(Iota(300), Shape(300), Context("simdev", 0));
  NDArray b(Shape(300), Context("simdev", 1));
  a.CopyTo(&b);
  EXPECT_EQ(Read(b), Iota(300));
  NDArray c = b.Copy(Context("simdev", 0));
  EXPECT_EQ(Read(c), Iota(300));
}

// Copies between host memory and simdev go through pooled staging buffers on copy streams: data
// stays right while the host side is rewritten at once, and buffers are reused.
TEST(NDArray, StagedCopiesAreCorrectAndReuseTheirBuffers) {
  REQUIRE_SIMDEV(2);
  Device& dev0 = internal::GetDevice(Runtime::Get(), Context("simdev", 0));
  const auto before = storage_detail::GetStagingStats(dev0);
  NDArray src(Shape(1000), kCpu), dst(Shape(1000), kCpu);
  NDArray a(Shape(1000), Context("simdev", 0)), b(Shape(1000), Context("simdev", 1));
  for (int round = 0; round < 12; ++round) {
    const float base = static_cast<float>(round * 1000);
    std::vector<float> host = Iota(1000, base);
    src.SyncCopyFromCPU(host);
    src.CopyTo(&a);  // cpu -> simdev(0): staged, queued
    src = -1.0f;     // rewrites the source right away (ordered after the read)
    a.CopyTo(&b);    // simdev(0) -> simdev(1): the plugin's peer copy
    b.CopyTo(&dst);  // simdev(1) -> cpu: staged, then moved by a cpu op
    EXPECT_EQ(Read(dst), Iota(1000, base)) << "round " << round;
    EXPECT_EQ(Read(src), std::vector<float>(1000, -1.0f));
    // SyncCopyFromCPU stages the caller's data: rewriting it after the call changes nothing.
    a.SyncCopyFromCPU(host);
    std::fill(host.begin(), host.end(), 0.0f);
    EXPECT_EQ(Read(a), Iota(1000, base)) << "round " << round;
  }
  // A fill that is not one repeated byte goes through a staging buffer too.
  b = 1.5f;
  EXPECT_EQ(Read(b), std::vector<float>(1000, 1.5f));
  const auto after = storage_detail::GetStagingStats(dev0);
  EXPECT_GE(after.acquired - before.acquired, 24u);
  EXPECT_GE(after.reused - before.reused, 12u) << "staging buffers should come back to the pool and be reused";
}

// The data iterators' gather: runs of consecutive rows, single rows, repeats, and a view with an
// offset, on the cpu (queued copy from the caller's memory) and on simdev (staged here).
TEST(NDArray, CopyRowsFromHostAsyncGathersRows) {
  const std::vector<float> samples = Iota(10 * 3);  // 10 rows of 3
  for (const Context& ctx : TestDevices()) {
    NDArray a(Shape(5, 3), ctx);
    a.CopyRowsFromHostAsync(samples.data(), {7, 8, 9, 2, 2}, 3 * sizeof(float));
    EXPECT_EQ(Read(a), (std::vector<float>{21, 22, 23, 24, 25, 26, 27, 28, 29, 6, 7, 8, 6, 7, 8})) << ctx.ToString();
    NDArray whole(Shape(4, 2), ctx);
    whole = -1.0f;
    whole.Slice(1, 3).CopyRowsFromHostAsync(samples.data(), {0, 1}, 2 * sizeof(float));
    EXPECT_EQ(Read(whole), (std::vector<float>{-1, -1, 0, 1, 2, 3, -1, -1})) << ctx.ToString();
    try {
      a.CopyRowsFromHostAsync(samples.data(), {0, 1}, 3 * sizeof(float));
      FAIL() << "expected weft::Error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("2 rows of 12 bytes"), std::string::npos) << e.what();
    }
  }
}

// ---- files --------------------------------------------------------------------------------------

TEST(NDArray, SaveLoadRoundTripsNamedAndUnnamedArrays) {
  const std::string path = TempPath("roundtrip.params");
  std::map<std::string, NDArray> saved;
  for (const Context& dev : TestDevices()) {
    saved["arg:w_" + dev.ToString()] = NDArray(Iota(6, 1.0f), Shape(3, 2), dev);
    NDArray h(Shape(5), dev, true, DType::kFloat16);
    h = 1.5f;
    saved["aux:h_" + dev.ToString()] = h;
  }
  NDArray::Save(path, saved);
  std::map<std::string, NDArray> loaded = NDArray::LoadToMap(path);
  ASSERT_EQ(loaded.size(), saved.size());
  for (const auto& [name, arr] : saved) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(loaded.count(name));
    const NDArray& got = loaded[name];
    EXPECT_EQ(got.GetContext(), kCpu) << "non-GPU devices are recorded as cpu(0)";
    EXPECT_EQ(got.GetShape(), arr.GetShape());
    EXPECT_EQ(got.GetDType(), arr.GetDType());
    for (size_t i = 0; i < arr.Size(); ++i) EXPECT_EQ(got.At(i), arr.At(i));
  }
  std::vector<NDArray> list = {NDArray(Iota(3), Shape(3), kCpu), NDArray(), NDArray(Iota(2), Shape(1, 2), kCpu)};
  NDArray::Save(path, list);
  std::vector<NDArray> back = NDArray::LoadToList(path);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(Read(back[0]), Iota(3));
  EXPECT_TRUE(back[1].is_none());
  EXPECT_EQ(back[2].GetShape(), Shape(1, 2));
  EXPECT_THROW(NDArray::LoadToMap(path), Error) << "an unnamed file has no map";
  std::map<std::string, NDArray> none_map;
  NDArray::Load(path, nullptr, &none_map);
  EXPECT_TRUE(none_map.empty());
  fs::remove(path);
}

TEST(NDArray, LoadsMXNetsLegacyFileAndGpuRecordOntoTheCpu) {
  std::vector<NDArray> arrays;
  NDArray::Load(WEFT_SHARED_DIR "/fixtures/mxnet/legacy_ndarray.v0", &arrays);
  ASSERT_EQ(arrays.size(), 6u);
  for (const auto& a : arrays) {
    EXPECT_EQ(a.GetContext(), kCpu);
    EXPECT_EQ(Read(a), Iota(128));
  }
  const uint8_t gpu_record[36] = {0xc9, 0xfa, 0x93, 0xf9, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0,
                                  0,    0,    2,    0,    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  NDArray g = NDArray::LoadFromRawBytes(gpu_record, sizeof(gpu_record));
  if (!Runtime::Get().HasDevice(Context::gpu(0))) {
    EXPECT_EQ(g.GetContext(), kCpu);
  }
  EXPECT_EQ(g.GetShape(), Shape(1));
  EXPECT_EQ(g.At(0), 0.0f);
  // Raw bytes round trip.
  NDArray x(Iota(5), Shape(5), kCpu);
  const auto raw = x.SaveToRawBytes();
  EXPECT_EQ(Read(NDArray::LoadFromRawBytes(raw.data(), raw.size())), Iota(5));
}

TEST(NDArray, LoadErrorsNameTheFile) {
  const std::string path = TempPath("bad.params");
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fputs("not a params file at all", f);
    std::fclose(f);
  }
  try {
    NDArray::LoadToList(path);
    FAIL() << "expected weft::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  fs::remove(path);
  EXPECT_THROW(NDArray::LoadToList(path), Error);
}

TEST(NDArray, DuplicateNamesInAFileAreAnError) {
  // A map keeps one array per name; a second record of a name used to replace the first silently.
  NDArrayListData list;
  for (int i = 0; i < 3; ++i) {
    NDArrayRecord r;
    r.shape = Shape(2);
    r.dtype = DType::kFloat32;
    r.data.assign(8, static_cast<uint8_t>(i));
    list.arrays.push_back(r);
  }
  list.names = {"arg:w", "arg:b", "arg:w"};
  const std::string path = TempPath("dup.params");
  WriteNDArrayListFile(path, list);
  try {
    NDArray::LoadToMap(path);
    FAIL() << "expected weft::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the name 'arg:w' appears twice (records 0 and 2)"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(NDArray::LoadToList(path).size(), 3u) << "a list keeps every record";
  fs::remove(path);
}

}  // namespace
}  // namespace weft
