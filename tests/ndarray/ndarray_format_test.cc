// The MXNet NDArray list format: real MXNet files, round trips per dtype, and a corpus of
// corrupted inputs that must all be rejected with weft::Error (never a crash or a huge
// allocation).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

#include <sys/resource.h>
#include <unistd.h>

#include "weft/ndarray_format.h"

namespace weft {
namespace {

namespace fs = std::filesystem;

template <typename T>
void Put(std::vector<uint8_t>& out, T v) {
  auto p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

std::vector<uint8_t> ListHeader(uint64_t n) {
  std::vector<uint8_t> b;
  Put<uint64_t>(b, 0x112);
  Put<uint64_t>(b, 0);
  Put<uint64_t>(b, n);
  return b;
}

NDArrayRecord MakeRecord(Shape shape, DType dtype, uint32_t seed) {
  NDArrayRecord r;
  r.shape = std::move(shape);
  r.dtype = dtype;
  r.data.resize(static_cast<size_t>(r.shape.Size()) * DTypeSize(dtype));
  std::mt19937 rng(seed);
  for (auto& b : r.data) b = static_cast<uint8_t>(rng());
  return r;
}

// Message of the weft::Error `fn` throws; fails the test when it throws nothing.
template <typename Fn>
std::string ErrorOf(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected weft::Error";
  return "";
}

TEST(NDArrayFormat, LoadsMXNetLegacyV0File) {
  const std::string path = WEFT_SHARED_DIR "/fixtures/mxnet/legacy_ndarray.v0";
  NDArrayListData list = ReadNDArrayListFile(path);
  ASSERT_EQ(list.arrays.size(), 6u);
  EXPECT_TRUE(list.names.empty());
  std::vector<float> expected(128);
  std::iota(expected.begin(), expected.end(), 0.0f);
  for (const auto& r : list.arrays) {
    EXPECT_EQ(r.version, 0);
    EXPECT_FALSE(r.none);
    EXPECT_EQ(r.shape, Shape(128));
    EXPECT_EQ(r.dtype, DType::kFloat32);
    EXPECT_EQ(r.dev_type, 1);
    EXPECT_EQ(r.dev_id, 0);
    ASSERT_EQ(r.data.size(), 128 * sizeof(float));
    std::vector<float> got(128);
    std::memcpy(got.data(), r.data.data(), r.data.size());
    EXPECT_EQ(got, expected);
  }
}

TEST(NDArrayFormat, LoadsTheGpuRecordFromMXNetsNoGpuTest) {
  const std::vector<uint8_t> bytes = {0xc9, 0xfa, 0x93, 0xf9, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0,
                                      0,    0,    2,    0,    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  ASSERT_EQ(bytes.size(), 36u);
  NDArrayRecord r = ParseNDArrayRecord(bytes, "gpu-record");
  EXPECT_EQ(r.version, 2);
  EXPECT_EQ(r.shape, Shape(1));
  EXPECT_EQ(r.dtype, DType::kFloat32);
  EXPECT_EQ(r.dev_type, static_cast<int32_t>(SavedDeviceType::kGPU));
  EXPECT_EQ(r.dev_id, 0);
  float v = 1.0f;
  ASSERT_EQ(r.data.size(), sizeof(float));
  std::memcpy(&v, r.data.data(), sizeof(float));
  EXPECT_EQ(v, 0.0f);
  // Writing it back gives the same bytes.
  EXPECT_EQ(SerializeNDArrayRecord(r), bytes);
}

TEST(NDArrayFormat, RoundTripsEveryDType) {
  NDArrayListData list;
  for (int32_t code = 0; code < 13; ++code) {
    list.arrays.push_back(MakeRecord(Shape(3, 1, 5), static_cast<DType>(code), code));
    list.names.push_back(fmt::format("arg:w{}", code));
  }
  list.arrays[4].dev_type = 2;
  list.arrays[4].dev_id = 3;
  const auto bytes = SerializeNDArrayList(list);
  NDArrayListData back = ParseNDArrayList(bytes, "mem");
  ASSERT_EQ(back.arrays.size(), list.arrays.size());
  EXPECT_EQ(back.names, list.names);
  for (size_t i = 0; i < list.arrays.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(back.arrays[i].version, 2);
    EXPECT_EQ(back.arrays[i].shape, list.arrays[i].shape);
    EXPECT_EQ(back.arrays[i].dtype, list.arrays[i].dtype);
    EXPECT_EQ(back.arrays[i].dev_type, list.arrays[i].dev_type);
    EXPECT_EQ(back.arrays[i].dev_id, list.arrays[i].dev_id);
    EXPECT_EQ(back.arrays[i].data, list.arrays[i].data);
  }
}

TEST(NDArrayFormat, ScalarsAndEmptyExtentsUseV3AndNoneUsesV2) {
  NDArrayListData list;
  list.arrays.push_back(MakeRecord(Shape(), DType::kFloat64, 1));
  list.arrays.push_back(MakeRecord(Shape(4, 0, 2), DType::kInt32, 2));
  NDArrayRecord none;
  none.none = true;
  list.arrays.push_back(none);
  const auto bytes = SerializeNDArrayList(list);
  NDArrayListData back = ParseNDArrayList(bytes, "mem");
  ASSERT_EQ(back.arrays.size(), 3u);
  EXPECT_EQ(back.arrays[0].version, 3);
  EXPECT_EQ(back.arrays[0].shape, Shape());
  EXPECT_EQ(back.arrays[0].data, list.arrays[0].data);
  EXPECT_EQ(back.arrays[1].version, 3);
  EXPECT_EQ(back.arrays[1].shape, Shape(4, 0, 2));
  EXPECT_TRUE(back.arrays[1].data.empty());
  EXPECT_EQ(back.arrays[2].version, 2);
  EXPECT_TRUE(back.arrays[2].none);
}

TEST(NDArrayFormat, ReadsV1AndV3Records) {
  auto bytes = ListHeader(2);
  // v1: magic, ndim 2 (2, 2), cpu(0), int64, data
  Put<uint32_t>(bytes, 0xF993FAC8u);
  Put<int32_t>(bytes, 2);
  Put<int64_t>(bytes, 2);
  Put<int64_t>(bytes, 2);
  Put<int32_t>(bytes, 1);
  Put<int32_t>(bytes, 0);
  Put<int32_t>(bytes, 6);
  for (int64_t v : {10, 20, 30, 40}) Put<int64_t>(bytes, v);
  // v3 with an unknown shape (ndim -1): nothing follows the shape
  Put<uint32_t>(bytes, 0xF993FACAu);
  Put<int32_t>(bytes, 0);
  Put<int32_t>(bytes, -1);
  Put<uint64_t>(bytes, 0);
  NDArrayListData list = ParseNDArrayList(bytes, "mem");
  ASSERT_EQ(list.arrays.size(), 2u);
  EXPECT_EQ(list.arrays[0].version, 1);
  EXPECT_EQ(list.arrays[0].shape, Shape(2, 2));
  EXPECT_EQ(list.arrays[0].dtype, DType::kInt64);
  int64_t third;
  std::memcpy(&third, list.arrays[0].data.data() + 16, 8);
  EXPECT_EQ(third, 30);
  EXPECT_TRUE(list.arrays[1].none);
}

// A small valid file with names: every proper prefix of it must be rejected.
TEST(NDArrayFormat, RejectsTheFileTruncatedAtEveryOffset) {
  NDArrayListData list;
  list.arrays.push_back(MakeRecord(Shape(2, 3), DType::kFloat32, 7));
  list.arrays.push_back(MakeRecord(Shape(5), DType::kUint8, 8));
  list.names = {"a", "bias"};
  const auto bytes = SerializeNDArrayList(list);
  for (size_t len = 0; len < bytes.size(); ++len) {
    SCOPED_TRACE(len);
    std::span<const uint8_t> prefix(bytes.data(), len);
    const std::string msg = ErrorOf([&] { ParseNDArrayList(prefix, "cut.params"); });
    EXPECT_NE(msg.find("cut.params"), std::string::npos) << msg;
  }
  EXPECT_NO_THROW(ParseNDArrayList(bytes, "whole.params"));
  // A record cut short names its index.
  const std::string msg = ErrorOf([&] { ParseNDArrayList(std::span(bytes.data(), bytes.size() - 32), "cut.params"); });
  EXPECT_NE(msg.find("record 1 of 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
}

TEST(NDArrayFormat, RejectsHostileHeaders) {
  struct Case {
    std::string name;
    std::vector<uint8_t> bytes;
    std::string expect;
  };
  std::vector<Case> cases;
  {
    std::vector<uint8_t> b;
    Put<uint64_t>(b, 0x113);
    Put<uint64_t>(b, 0);
    Put<uint64_t>(b, 0);
    Put<uint64_t>(b, 0);
    cases.push_back({"unknown file magic", b, "unknown magic 0x113"});
  }
  {
    auto b = ListHeader(uint64_t{1} << 60);
    Put<uint64_t>(b, 0);
    cases.push_back({"absurd array count", b, "declares"});
  }
  {
    auto b = ListHeader(1);
    Put<uint32_t>(b, 0xF993FAC9u);
    Put<int32_t>(b, 0);
    Put<int32_t>(b, 1 << 30);
    Put<uint64_t>(b, 0);
    cases.push_back({"absurd ndim", b, "ndim 1073741824"});
  }
  {
    auto b = ListHeader(1);
    Put<uint32_t>(b, 0xDEADBEEFu);
    Put<uint64_t>(b, 0);
    cases.push_back({"unknown record magic", b, "magic is unknown"});
  }
  for (int64_t big : {int64_t{1} << 38, int64_t{1} << 40}) {
    // (2^38)^2 floats = terabytes; (2^40)^2 overflows 64 bits
    auto b = ListHeader(1);
    Put<uint32_t>(b, 0xF993FAC9u);
    Put<int32_t>(b, 0);
    Put<int32_t>(b, 2);
    Put<int64_t>(b, big);
    Put<int64_t>(b, big);
    Put<int32_t>(b, 1);
    Put<int32_t>(b, 0);
    Put<int32_t>(b, 0);
    for (int i = 0; i < 64; ++i) b.push_back(0);
    cases.push_back({"absurd extents", b, "needs more data"});
  }
  {
    auto b = ListHeader(1);
    Put<uint32_t>(b, 0xF993FAC9u);
    Put<int32_t>(b, 0);
    Put<int32_t>(b, 1);
    Put<int64_t>(b, -4);
    cases.push_back({"negative extent", b, "cannot be negative"});
  }
  {
    auto b = ListHeader(1);
    Put<uint32_t>(b, 0xF993FAC9u);
    Put<int32_t>(b, 1);  // row_sparse: the storage shape (2-d) comes first
    Put<int32_t>(b, 2);
    for (int64_t d : {1, -3}) Put<int64_t>(b, d);
    cases.push_back({"negative storage extent", b, "storage shape is -3"});
  }
  {
    auto b = ListHeader(1);
    Put<uint32_t>(b, 0xF993FAC9u);
    Put<int32_t>(b, 7);
    cases.push_back({"unknown storage type", b, "unknown storage type code 7"});
  }
  {
    auto b = ListHeader(1);
    Put<uint32_t>(b, 0xF993FAC9u);
    Put<int32_t>(b, 0);
    Put<int32_t>(b, 1);
    Put<int64_t>(b, 1);
    Put<int32_t>(b, 1);
    Put<int32_t>(b, 0);
    Put<int32_t>(b, 99);
    Put<uint32_t>(b, 0);
    Put<uint64_t>(b, 0);
    cases.push_back({"bad dtype", b, "dtype code 99"});
  }
  {
    auto b = ListHeader(0);
    Put<uint64_t>(b, 1);
    cases.push_back({"names without arrays", b, "1 names for 0 arrays"});
  }
  {
    auto b = ListHeader(0);
    Put<uint64_t>(b, 0);
    b.push_back(0);
    cases.push_back({"trailing bytes", b, "unexpected bytes"});
  }
  {
    auto b = ListHeader(0);
    Put<uint64_t>(b, 0);
    EXPECT_NO_THROW(ParseNDArrayList(b, "empty list"));
  }
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string msg = ErrorOf([&] { ParseNDArrayList(c.bytes, "hostile.params"); });
    EXPECT_NE(msg.find("hostile.params"), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
  }
}

TEST(NDArrayFormat, RejectsBadRecordsOnWrite) {
  NDArrayRecord r = MakeRecord(Shape(2), DType::kFloat32, 1);
  r.data.pop_back();
  EXPECT_THROW(SerializeNDArrayRecord(r), Error);
  NDArrayListData list;
  list.arrays.push_back(MakeRecord(Shape(2), DType::kFloat32, 1));
  list.names = {"a", "b"};
  EXPECT_THROW(SerializeNDArrayList(list), Error);
}

TEST(NDArrayFormat, FileWriteIsAtomicAndRoundTrips) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("weft-ndformat-{}", ::getpid());
  fs::create_directories(dir);
  const std::string path = (dir / "w.params").string();
  NDArrayListData list;
  list.arrays.push_back(MakeRecord(Shape(4, 4), DType::kFloat16, 3));
  list.names = {"arg:w"};
  WriteNDArrayListFile(path, list);
  list.arrays[0] = MakeRecord(Shape(8), DType::kFloat64, 4);
  WriteNDArrayListFile(path, list);  // replaces the file
  NDArrayListData back = ReadNDArrayListFile(path);
  ASSERT_EQ(back.arrays.size(), 1u);
  EXPECT_EQ(back.arrays[0].shape, Shape(8));
  EXPECT_EQ(back.arrays[0].data, list.arrays[0].data);
  EXPECT_EQ(back.names, list.names);
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1u) << "the temporary file was left behind";
  const std::string missing = (dir / "no" / "such.params").string();
  EXPECT_NE(ErrorOf([&] { WriteNDArrayListFile(missing, list); }).find(missing), std::string::npos);
  EXPECT_NE(ErrorOf([&] { ReadNDArrayListFile(missing); }).find(missing), std::string::npos);
  fs::remove_all(dir);
}

// Peak resident memory of this process so far, in MiB (Linux getrusage reports KiB).
double PeakRssMiB() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

// Bytes this process has read through read(2) and friends so far (/proc/self/io rchar): the work
// a reader did, independent of the machine's speed and load.
uint64_t BytesRead() {
  std::ifstream io("/proc/self/io");
  std::string key;
  uint64_t value = 0;
  while (io >> key >> value)
    if (key == "rchar:") return value;
  return 0;
}

// Issue 19: the magic is checked before the file is read, so devices and huge files of another
// kind are refused at once, without reading them.
TEST(NDArrayFormat, RefusesDevicesAndHugeSparseFilesAtOnce) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("weft-ndhostile-{}", ::getpid());
  fs::create_directories(dir);
  const double rss_before = PeakRssMiB();
  const uint64_t read_before = BytesRead();
  const auto t0 = std::chrono::steady_clock::now();
  if (fs::exists("/dev/zero")) {
    EXPECT_NE(ErrorOf([] { ReadNDArrayListFile("/dev/zero"); }).find("unknown magic 0x0"), std::string::npos);
  }
  // 40 GB of holes (no disk used): used to be read whole before the magic was checked.
  const std::string sparse = (dir / "sparse.params").string();
  {
    std::ofstream(sparse, std::ios::binary).put('\0');
    fs::resize_file(sparse, uint64_t{40} << 30);
  }
  EXPECT_NE(ErrorOf([&] { ReadNDArrayListFile(sparse); }).find("unknown magic"), std::string::npos);
  // A valid header on a huge file: only the records are touched, and the count is checked
  // against the file size before anything is reserved.
  {
    std::vector<uint8_t> head = ListHeader(uint64_t{1} << 60);
    std::fstream f(sparse, std::ios::binary | std::ios::in | std::ios::out);
    f.write(reinterpret_cast<const char*>(head.data()), static_cast<std::streamsize>(head.size()));
  }
  EXPECT_NE(ErrorOf([&] { ReadNDArrayListFile(sparse); }).find("declares"), std::string::npos);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(PeakRssMiB() - rss_before, 64.0) << "no large allocation";
  EXPECT_LT(BytesRead() - read_before, uint64_t{64} << 20) << "the 40 GiB file was read, not only its records";
  std::printf("refused in %.3f s\n", seconds);  // reported, not asserted
  // Short and empty files and directories name what is wrong.
  const std::string short_file = (dir / "short.params").string();
  std::ofstream(short_file, std::ios::binary).write("\x12\x01", 2);
  EXPECT_NE(ErrorOf([&] { ReadNDArrayListFile(short_file); }).find("only 2 bytes long"), std::string::npos);
  std::ofstream(short_file, std::ios::binary | std::ios::trunc).flush();
  EXPECT_NE(ErrorOf([&] { ReadNDArrayListFile(short_file); }).find("the file is empty"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { ReadNDArrayListFile(dir.string()); }).find("is a directory"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace weft
