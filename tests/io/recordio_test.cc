// RecordIO: MXNet-written files read by weft, weft writing MXNet's bytes, round trips, index
// seeks, partitions and corrupt input.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>

#include "io_test_util.h"
#include "weft/recordio.h"

namespace weft {
namespace {

using test::DataPath;
using test::ErrorOf;
using test::ReadFileBytes;
using test::TempDir;
using test::WriteFileBytes;

const std::string kMagic("\x0a\x23\xd7\xce", 4);

// records.bin: u32 length + bytes per record (what MXNet was given to write).
std::vector<std::string> ExpectedRecords() {
  const std::string all = ReadFileBytes(DataPath("records.bin"));
  std::vector<std::string> out;
  for (size_t pos = 0; pos < all.size();) {
    uint32_t n;
    std::memcpy(&n, all.data() + pos, 4);
    out.push_back(all.substr(pos + 4, n));
    pos += 4 + n;
  }
  return out;
}

TEST(RecordIO, ReadsMXNetFiles) {
  const auto expected = ExpectedRecords();
  ASSERT_EQ(expected.size(), 11u);
  const auto index = ReadRecordIOIndex(DataPath("mxnet_records.idx"));
  ASSERT_EQ(index.size(), expected.size());
  for (size_t buffer : {size_t{64}, size_t{4096}, size_t{1} << 20}) {  // records above and below the buffer
    RecordIOReader reader(DataPath("mxnet_records.rec"), buffer);
    std::string rec;
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(reader.Tell(), index[i].offset) << i;
      ASSERT_TRUE(reader.ReadRecord(&rec)) << i;
      EXPECT_EQ(rec, expected[i]) << "record " << i << ", buffer " << buffer;
    }
    EXPECT_FALSE(reader.ReadRecord(&rec));
    EXPECT_EQ(reader.Tell(), reader.file_size());
  }
  // By key, in any order (MXIndexedRecordIO.read_idx).
  IndexedRecordIOReader by_key(DataPath("mxnet_records.idx"), DataPath("mxnet_records.rec"));
  for (uint64_t k : {9u, 0u, 5u, 10u, 7u}) EXPECT_EQ(by_key.ReadIdx(k), expected[k]) << k;
  EXPECT_NE(ErrorOf([&] { by_key.ReadIdx(11); }).find("no record with key 11"), std::string::npos);
}

TEST(RecordIO, WritesMXNetsBytes) {
  // The same records written by weft give MXNet's file byte for byte, and the same index.
  TempDir dir("write");
  const auto expected = ExpectedRecords();
  {
    IndexedRecordIOWriter w(dir / "w.idx", dir / "w.rec");
    for (size_t i = 0; i < expected.size(); ++i) w.Write(i, expected[i]);
  }
  EXPECT_EQ(ReadFileBytes(dir / "w.rec"), ReadFileBytes(DataPath("mxnet_records.rec")));
  EXPECT_EQ(ReadFileBytes(dir / "w.idx"), ReadFileBytes(DataPath("mxnet_records.idx")));
  // Tell before each write is the offset MXNet's index holds.
  const auto index = ReadRecordIOIndex(DataPath("mxnet_records.idx"));
  RecordIOWriter w(dir / "t.rec");
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(w.Tell(), index[i].offset);
    w.WriteRecord(expected[i]);
  }
}

TEST(RecordIO, RoundTripWithSeeks) {
  TempDir dir("roundtrip");
  std::mt19937 rng(5);
  std::vector<std::string> recs = {"", "", "x", kMagic, kMagic + kMagic, "ab" + kMagic + "cd", std::string(3, '\0')};
  for (int i = 0; i < 40; ++i) {
    // Sizes across the 4 KiB buffer used below, some far above it, magic words at random places.
    std::string r(std::uniform_int_distribution<size_t>(0, i % 5 == 0 ? 300000 : 5000)(rng), '\0');
    for (char& c : r) c = static_cast<char>(rng());
    for (int k = 0; k < 6 && r.size() >= 4; ++k) r.replace(rng() % (r.size() - 3), 4, kMagic);
    recs.push_back(r);
  }
  std::vector<uint64_t> offsets;
  {
    IndexedRecordIOWriter w(dir / "r.idx", dir / "r.rec");
    RecordIOWriter plain(dir / "p.rec");
    for (size_t i = 0; i < recs.size(); ++i) {
      offsets.push_back(plain.Tell());
      plain.WriteRecord(recs[i]);
      w.Write(1000 + i, recs[i]);
    }
  }
  EXPECT_EQ(ReadFileBytes(dir / "r.rec"), ReadFileBytes(dir / "p.rec"));
  RecordIOReader reader(dir / "r.rec", 4096);
  std::string got;
  for (const auto& r : recs) {
    ASSERT_TRUE(reader.ReadRecord(&got));
    ASSERT_EQ(got, r);
  }
  EXPECT_FALSE(reader.ReadRecord(&got));
  // Seeks to index offsets, backwards and forwards; ReadRecordAt does not move Tell.
  for (size_t i : {30u, 2u, 46u, 0u, 17u}) {
    reader.Seek(offsets[i]);
    ASSERT_TRUE(reader.ReadRecord(&got));
    EXPECT_EQ(got, recs[i]) << i;
    EXPECT_EQ(reader.ReadRecordAt(offsets[i], &got), i + 1 < offsets.size() ? offsets[i + 1] : reader.file_size());
    EXPECT_EQ(got, recs[i]);
    EXPECT_EQ(reader.SkipRecord(offsets[i]), i + 1 < offsets.size() ? offsets[i + 1] : reader.file_size());
  }
  IndexedRecordIOReader by_key(dir / "r.idx", dir / "r.rec");
  EXPECT_EQ(by_key.keys().size(), recs.size());
  EXPECT_EQ(by_key.ReadIdx(1005), recs[5]);
  // From any aligned offset, FindRecordStart lands on the next record (dmlc's SeekRecordBegin).
  for (size_t i = 1; i < offsets.size(); ++i) EXPECT_EQ(reader.FindRecordStart(offsets[i - 1] + 1), offsets[i]);
}

TEST(RecordIO, PartitionsCoverEveryRecordOnce) {
  for (const char* idx : {"", "jpg.idx"}) {
    const std::string idx_path = *idx ? DataPath(idx) : "";
    const auto all = RecordIOPartition(DataPath("jpg.rec"), idx_path, 1, 0);
    ASSERT_EQ(all.size(), 16u);
    for (int parts = 1; parts <= 20; ++parts) {
      std::vector<uint64_t> seen;
      for (int p = 0; p < parts; ++p)
        for (const auto& e : RecordIOPartition(DataPath("jpg.rec"), idx_path, parts, p)) seen.push_back(e.offset);
      ASSERT_EQ(seen.size(), all.size()) << parts << " parts, index '" << idx << "'";
      for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], all[i].offset) << parts;  // in order, once each
    }
  }
  EXPECT_NE(ErrorOf([] { RecordIOPartition(DataPath("jpg.rec"), "", 3, 3); }).find("part_index 3"), std::string::npos);
}

TEST(RecordIO, CorruptInputNamesFileAndOffset) {
  TempDir dir("corrupt");
  const std::string good = ReadFileBytes(DataPath("mxnet_records.rec"));
  const auto index = ReadRecordIOIndex(DataPath("mxnet_records.idx"));
  auto read_all = [&](const std::string& path) {
    RecordIOReader r(path);
    std::string rec;
    while (r.ReadRecord(&rec)) {
    }
  };
  // Truncated inside the last record (at a multiple of 4): the offset of that record.
  WriteFileBytes(dir / "trunc.rec", good.substr(0, index[9].offset + 1000));
  std::string msg = ErrorOf([&] { read_all(dir / "trunc.rec"); });
  EXPECT_NE(msg.find("trunc.rec"), std::string::npos) << msg;
  EXPECT_NE(msg.find(fmt::format("byte offset {}", index[9].offset)), std::string::npos) << msg;
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  // A size that is not a multiple of 4 is refused at once.
  WriteFileBytes(dir / "odd.rec", good.substr(0, 18));
  EXPECT_NE(ErrorOf([&] { RecordIOReader r(dir / "odd.rec"); }).find("not a multiple of 4"), std::string::npos);
  // A damaged magic number.
  std::string bad = good;
  bad[index[3].offset] ^= 0x40;
  WriteFileBytes(dir / "magic.rec", bad);
  msg = ErrorOf([&] { read_all(dir / "magic.rec"); });
  EXPECT_NE(msg.find(fmt::format("byte offset {}", index[3].offset)), std::string::npos) << msg;
  EXPECT_NE(msg.find("magic"), std::string::npos) << msg;
  // A length running past the end of the file.
  bad = good;
  bad[index[10].offset + 6] = 0x7f;
  WriteFileBytes(dir / "len.rec", bad);
  msg = ErrorOf([&] { read_all(dir / "len.rec"); });
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  // A continuation part where a record must start.
  bad = good;
  bad[index[4].offset + 7] = static_cast<char>(0x40);  // cflag 2 on a whole record
  WriteFileBytes(dir / "flag.rec", bad);
  msg = ErrorOf([&] { read_all(dir / "flag.rec"); });
  EXPECT_NE(msg.find("continuation flag 2"), std::string::npos) << msg;
  // An index pointing past the end, and a line that is not an index line.
  WriteFileBytes(dir / "past.idx", "0\t0\n1\t999999\n");
  msg = ErrorOf([&] { ReadRecordIOIndex(dir / "past.idx", good.size()); });
  EXPECT_NE(msg.find("line 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("key 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("999999"), std::string::npos) << msg;
  EXPECT_NE(
      ErrorOf([&] { IndexedRecordIOReader r(dir / "past.idx", DataPath("mxnet_records.rec")); }).find("past the end"),
      std::string::npos);
  WriteFileBytes(dir / "junk.idx", "0\t0\nhello world\n");
  EXPECT_NE(ErrorOf([&] { ReadRecordIOIndex(dir / "junk.idx"); }).find("line 2"), std::string::npos);
  // An index offset in the middle of a record.
  WriteFileBytes(dir / "mid.idx", fmt::format("0\t{}\n", index[9].offset + 8));
  msg = ErrorOf([&] { IndexedRecordIOReader(dir / "mid.idx", DataPath("mxnet_records.rec")).ReadIdx(0); });
  EXPECT_NE(msg.find(fmt::format("byte offset {}", index[9].offset + 8)), std::string::npos) << msg;
  RecordIOReader r(DataPath("mxnet_records.rec"));
  EXPECT_NE(ErrorOf([&] { r.Seek(good.size() + 4); }).find("past the end"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { r.Seek(2); }).find("multiple of 4"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { RecordIOReader x(dir / "missing.rec"); }).find("missing.rec"), std::string::npos);
}

TEST(RecordIO, WriterPublishesOnlyOnClose) {
  TempDir dir("close");
  {
    RecordIOWriter w(dir / "a.rec");
    w.WriteRecord("hello");
    EXPECT_FALSE(std::filesystem::exists(dir / "a.rec"));  // still the temporary file
    w.Close();
    EXPECT_TRUE(std::filesystem::exists(dir / "a.rec"));
    EXPECT_NE(ErrorOf([&] { w.WriteRecord("more"); }).find("closed"), std::string::npos);
  }
  EXPECT_NE(ErrorOf([&] { RecordIOWriter w(dir / "no/such/dir/b.rec"); }).find("b.rec"), std::string::npos);
}

TEST(RecordIO, ImageRecordHeader) {
  const std::vector<uint8_t> payload = {1, 2, 3};
  ImageRecordHeader h;
  h.label = 4.5f;
  h.id = 77;
  h.id2 = 3;
  std::string rec = PackImageRecord(h, payload);
  ASSERT_EQ(rec.size(), 24u + 3u);
  std::span<const uint8_t> rest;
  ImageRecordHeader back = UnpackImageRecord({reinterpret_cast<const uint8_t*>(rec.data()), rec.size()}, &rest);
  EXPECT_EQ(back.flag, 0u);
  EXPECT_EQ(back.label, 4.5f);
  EXPECT_EQ(back.id, 77u);
  EXPECT_EQ(back.id2, 3u);
  EXPECT_EQ(std::vector<uint8_t>(rest.begin(), rest.end()), payload);
  h.labels = {1.f, 2.f, 3.f};
  rec = PackImageRecord(h, payload);
  back = UnpackImageRecord({reinterpret_cast<const uint8_t*>(rec.data()), rec.size()}, &rest);
  EXPECT_EQ(back.flag, 3u);
  EXPECT_EQ(back.label, 0.f);
  EXPECT_EQ(back.labels, h.labels);
  EXPECT_EQ(rest.size(), 3u);
  // The multi-label records MXNet packed (flag 2).
  IndexedRecordIOReader mx(DataPath("multilabel.idx"), DataPath("multilabel.rec"));
  const std::string r5 = mx.ReadIdx(mx.keys()[5]);
  back = UnpackImageRecord({reinterpret_cast<const uint8_t*>(r5.data()), r5.size()}, &rest);
  EXPECT_EQ(back.flag, 2u);
  EXPECT_EQ(back.labels[1], static_cast<float>(back.id) * 0.5f);
  // Too short for the header, or for the labels it announces.
  EXPECT_NE(ErrorOf([] { UnpackImageRecord(std::span<const uint8_t>(), nullptr); }).find("shorter than its header"),
            std::string::npos);
  rec[0] = 100;
  EXPECT_NE(ErrorOf([&] {
              UnpackImageRecord({reinterpret_cast<const uint8_t*>(rec.data()), rec.size()}, nullptr);
            }).find("100 labels"),
            std::string::npos);
}

}  // namespace
}  // namespace weft
