// LibSVMIter: csr batches, MXNet's round-batch wrap and epoch carry, labels from a second file,
// byte-range parts, directories, and errors naming file and line. The expected batches of the
// four-line file are the ones MXNet 1.9.1's LibSVMIter gives for it (its documented example, run on
// libmxnet: indptr, indices, labels, pad and index per batch).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <random>
#include <set>

#include "io_test_util.h"
#include "weft/libsvm_iter.h"
#include "weft/storage_type.h"

namespace weft {
namespace {

using test::ErrorOf;
using test::TempDir;
using test::WriteFileBytes;

// MXNet's documented example (LibSVMIter's docstring and test_io.py).
constexpr const char* kData = "1.0 0:0.5 2:1.2\n-2.0\n-3.0 0:0.6 1:2.4 2:1.2\n4 2:-1.2\n";
constexpr const char* kLabel = "1.0\n-2.0 0:0.125\n-3.0 2:1.2\n4 1:1.0 2:-1.2\n";

template <typename T>
std::vector<T> Values(const NDArray& a) {
  std::vector<T> v(a.GetShape().Size());
  a.SyncCopyToCPUBytes(v.data(), v.size() * sizeof(T));
  return v;
}

struct Csr {
  std::vector<int64_t> indptr, indices;
  std::vector<float> values;
  bool operator==(const Csr&) const = default;
};

Csr PartsOf(const NDArray& a) {
  EXPECT_EQ(a.storage_type(), StorageType::kCSR);
  a.SyncCheckFormat(true);
  return {Values<int64_t>(a.aux_ndarray(0)), Values<int64_t>(a.aux_ndarray(1)), Values<float>(a.data_ndarray())};
}

struct Batch {
  Csr data;
  std::vector<float> label;
  int pad;
  std::vector<int> index;
};

Batch Take(DataIter& it) {
  EXPECT_TRUE(it.Next());
  return {PartsOf(it.GetData()), Values<float>(it.GetLabel()), it.GetPadNum(), it.GetIndex()};
}

TEST(LibSVMIter, MXNetsExampleBatchesAndEpochs) {
  TempDir dir("libsvm");
  WriteFileBytes(dir / "data.t", kData);
  LibSVMIter it({.data_libsvm = dir / "data.t", .data_shape = Shape(3), .batch_size = 3});
  EXPECT_EQ(it.ProvideData()[0].shape, Shape(3, 3));
  EXPECT_EQ(it.ProvideLabel()[0].shape, Shape(3));
  Batch b = Take(it);
  EXPECT_EQ(b.data, (Csr{{0, 2, 2, 5}, {0, 2, 0, 1, 2}, {0.5f, 1.2f, 0.6f, 2.4f, 1.2f}}));
  EXPECT_EQ(b.label, (std::vector<float>{1, -2, -3}));
  EXPECT_EQ(b.pad, 0);
  EXPECT_EQ(b.index, (std::vector<int>{0, 1, 2}));
  b = Take(it);  // line 3, then lines 0 and 1 again
  EXPECT_EQ(b.data, (Csr{{0, 1, 3, 3}, {2, 0, 2}, {-1.2f, 0.5f, 1.2f}}));
  EXPECT_EQ(b.label, (std::vector<float>{4, 1, -2}));
  EXPECT_EQ(b.pad, 2);
  EXPECT_EQ(b.index, (std::vector<int>{3, 0, 1}));
  EXPECT_FALSE(it.Next());
  // The next epoch goes on after the two lines the wrapped batch took, as MXNet's does.
  it.BeforeFirst();
  b = Take(it);
  EXPECT_EQ(b.label, (std::vector<float>{-3, 4, 1}));
  EXPECT_EQ(b.pad, 1);
  EXPECT_FALSE(it.Next());
  it.BeforeFirst();
  b = Take(it);
  EXPECT_EQ(b.label, (std::vector<float>{-2, -3, 4}));
  EXPECT_EQ(b.pad, 0);
  EXPECT_FALSE(it.Next());
}

TEST(LibSVMIter, LabelsFromASecondFileAreCsr) {
  TempDir dir("libsvm");
  WriteFileBytes(dir / "data.t", kData);
  WriteFileBytes(dir / "label.t", kLabel);
  LibSVMIter it({.data_libsvm = dir / "data.t",
                 .data_shape = Shape(3),
                 .label_libsvm = dir / "label.t",
                 .label_shape = Shape(3),
                 .batch_size = 3});
  EXPECT_EQ(it.ProvideLabel()[0].shape, Shape(3, 3));
  ASSERT_TRUE(it.Next());
  EXPECT_EQ(PartsOf(it.GetLabel()), (Csr{{0, 0, 1, 2}, {0, 2}, {0.125f, 1.2f}}));
  ASSERT_TRUE(it.Next());
  EXPECT_EQ(PartsOf(it.GetLabel()), (Csr{{0, 2, 2, 3}, {1, 2, 0}, {1.0f, -1.2f, 0.125f}}));
  EXPECT_EQ(it.GetPadNum(), 2);
}

// Lines of different lengths; line i has label i. Each part's examples, read with batch_size 1
// (no wrap), must together be every line exactly once.
TEST(LibSVMIter, PartsCoverEveryLineOnce) {
  TempDir dir("libsvm");
  std::string text;
  for (int i = 0; i < 101; ++i) {
    text += std::to_string(i);
    for (int j = 0; j < i % 7; ++j) text += fmt::format(" {}:{}", j * 3, i);
    text += i % 10 == 5 ? "\n\n" : "\n";  // blank lines are skipped
  }
  WriteFileBytes(dir / "data.t", text);
  for (int parts : {1, 2, 3, 8}) {
    std::multiset<float> seen;
    for (int p = 0; p < parts; ++p) {
      LibSVMIter it({.data_libsvm = dir / "data.t",
                     .data_shape = Shape(20),
                     .num_parts = parts,
                     .part_index = p,
                     .batch_size = 1});
      while (it.Next()) seen.insert(Values<float>(it.GetLabel())[0]);
    }
    ASSERT_EQ(seen.size(), 101u) << parts << " parts";
    for (int i = 0; i < 101; ++i) EXPECT_EQ(seen.count(static_cast<float>(i)), 1u) << i << " of " << parts;
  }
  // MXNet's split of the four-line file in two: the second part holds only the last line.
  WriteFileBytes(dir / "four.t", kData);
  LibSVMIter second(
      {.data_libsvm = dir / "four.t", .data_shape = Shape(3), .num_parts = 2, .part_index = 1, .batch_size = 2});
  Batch b = Take(second);
  EXPECT_EQ(b.label, (std::vector<float>{4, 4}));
  EXPECT_EQ(b.pad, 1);
}

TEST(LibSVMIter, ADirectoryIsItsFilesInNameOrder) {
  TempDir dir("libsvm");
  std::filesystem::create_directories(dir / "d");
  WriteFileBytes(dir / "d/b.t", "3 1:1\n4\n");
  WriteFileBytes(dir / "d/a.t", "1 0:1\n2 2:5");  // no newline at the end
  LibSVMIter it({.data_libsvm = dir / "d", .data_shape = Shape(3), .batch_size = 4});
  Batch b = Take(it);
  EXPECT_EQ(b.label, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(b.data, (Csr{{0, 1, 2, 3, 3}, {0, 2, 1}, {1, 5, 1}}));
}

// The reader splits lines in blocks of 1 MiB: a line longer than a block, lines that straddle
// block ends, CRLF endings and blank lines must read as if line by line.
TEST(LibSVMIter, LinesLongerThanTheReadBlockAndAcrossBlockEnds) {
  TempDir dir("libsvm");
  const int64_t features = 200000;  // "i:1 " of each: about 1.3 MB in one line
  std::string text = "7";
  for (int64_t i = 0; i < features; ++i) text += " " + std::to_string(i) + ":1";
  text += "\r\n\n";
  std::vector<float> labels{7};
  for (int r = 0; r < 40000; ++r) {  // short lines over the next blocks
    text += std::to_string(r % 5) + " " + std::to_string(r % features) + ":2\n";
    labels.push_back(static_cast<float>(r % 5));
  }
  WriteFileBytes(dir / "long.t", text);
  LibSVMIter it({.data_libsvm = dir / "long.t", .data_shape = Shape(features), .batch_size = 40001});
  const Batch b = Take(it);
  EXPECT_EQ(b.label, labels);
  ASSERT_EQ(b.data.indptr.size(), 40002u);
  EXPECT_EQ(b.data.indptr[1], features);
  EXPECT_EQ(b.data.indptr.back(), features + 40000);
  EXPECT_EQ(b.data.indices[features - 1], features - 1);
  EXPECT_EQ(b.data.indices[features + 39999], 39999);
  EXPECT_EQ(b.data.values[features + 39999], 2.0f);
}

// The reader parses the common "index:value" shapes itself and hands the rest to from_chars: every
// value must still be the float from_chars gives for its text, bit for bit (sign of zero included),
// whichever path reads it: short decimals, ones with too many digits for the fast path, exponents,
// leading zeros, ".5" and "5.", negative values, indices with leading zeros.
TEST(LibSVMIter, ValuesAreFromCharsBitForBit) {
  TempDir dir("libsvm");
  std::mt19937_64 rng(7);
  auto digits = [&](int n) {
    std::string d;
    for (int i = 0; i < n; ++i) d += static_cast<char>('0' + rng() % 10);
    return d;
  };
  std::vector<std::string> texts = {
      "0",        "-0",       "0.0",       "-0.000",  ".5",       "5.",           "-.25",          "007.5",
      "16777215", "16777216", "16777217",  "0.1",     "0.3",      "0.7",          "1e-3",          "2.5E2",
      "-1e+1",    "inf",      "1.0000001", "9999999", "9.999999", "0.0000000001", "0.00000000001", "123456.7"};
  for (int i = 0; i < 60000; ++i) {
    std::string t = digits(static_cast<int>(rng() % 6));
    if (rng() % 4 != 0) t += "." + digits(static_cast<int>(rng() % 12));
    if (t.empty() || t == ".") t = "1" + t;
    if (rng() % 3 == 0) t = "-" + t;
    if (rng() % 50 == 0) t += "e" + std::to_string(static_cast<int>(rng() % 9) - 4);
    texts.push_back(t);
  }
  std::string file;
  std::vector<float> want;
  const size_t per_line = 37;
  for (size_t i = 0; i < texts.size(); i += per_line) {
    file += "1";
    for (size_t j = i; j < std::min(texts.size(), i + per_line); ++j) {
      file += (j % 5 == 0 ? " 00" : " ") + std::to_string(j - i) + ":" + texts[j];
      float v = 0;
      const auto r = std::from_chars(texts[j].data(), texts[j].data() + texts[j].size(), v);
      ASSERT_TRUE(r.ec == std::errc() && r.ptr == texts[j].data() + texts[j].size()) << texts[j];
      want.push_back(v);
    }
    file += "\n";
  }
  WriteFileBytes(dir / "values.t", file);
  const auto lines = static_cast<int>((texts.size() + per_line - 1) / per_line);
  LibSVMIter it(
      {.data_libsvm = dir / "values.t", .data_shape = Shape(static_cast<int64_t>(per_line)), .batch_size = lines});
  const Batch b = Take(it);
  ASSERT_EQ(b.data.values.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(b.data.values[i]), std::bit_cast<uint32_t>(want[i]))
        << "'" << texts[i] << "' read as " << b.data.values[i] << ", from_chars gives " << want[i];
  EXPECT_EQ(b.data.indices[5], 5);  // "005:..."
}

TEST(LibSVMIter, BadInputNamesFileLineAndToken) {
  TempDir dir("libsvm");
  auto first_error = [&](const std::string& text, int64_t columns = 3) {
    WriteFileBytes(dir / "bad.t", text);
    return ErrorOf([&] {
      LibSVMIter it({.data_libsvm = dir / "bad.t", .data_shape = Shape(columns), .batch_size = 1});
      while (it.Next()) {
      }
    });
  };
  // MXNet's test_io.py: a negative index is an error.
  EXPECT_NE(first_error("1 0:1\n-3.0 -1:0.6 1:2.4\n").find("bad.t' line 2 token '-1:0.6'"), std::string::npos);
  EXPECT_NE(first_error("1 3:1\n").find("outside [0, 3)"), std::string::npos);
  EXPECT_NE(first_error("1 2:1 1:1\n").find("ascending"), std::string::npos);
  EXPECT_NE(first_error("1 2=1\n").find("is not index:value"), std::string::npos);
  // Shapes the fast path must not take for numbers (from_chars refuses them too).
  for (const char* token : {"2:+1", "2:", "2:-", ":5", "2:1.2.3", "2:1.5x", "2:0.5:1", "99999999999999999999:1"})
    EXPECT_NE(first_error(fmt::format("1 {}\n", token)).find(fmt::format("token '{}' is not index:value", token)),
              std::string::npos)
        << token;
  EXPECT_NE(first_error("1 1:1 1:2\n").find("token '1:2' does not follow"), std::string::npos);
  EXPECT_NE(first_error("1 0:1 3:0.25 \n").find("token '3:0.25' has an index outside [0, 3)"), std::string::npos);
  EXPECT_NE(first_error("x 0:1\n").find("is not a label"), std::string::npos);
  WriteFileBytes(dir / "data.t", kData);
  WriteFileBytes(dir / "short.t", "1\n2\n");
  EXPECT_NE(ErrorOf([&] {
              LibSVMIter it({.data_libsvm = dir / "data.t",
                             .data_shape = Shape(3),
                             .label_libsvm = dir / "short.t",
                             .label_shape = Shape(3),
                             .batch_size = 3});
              it.Next();
            }).find("has fewer lines than"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              LibSVMIter({.data_libsvm = dir / "data.t", .data_shape = Shape(3, 2), .batch_size = 1});
            }).find("must be 1-d"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf([&] {
        LibSVMIter({.data_libsvm = dir / "data.t", .data_shape = Shape(3), .batch_size = 1, .round_batch = false});
      }).find("round_batch"),
      std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              LibSVMIter({.data_libsvm = dir / "none.t", .data_shape = Shape(3), .batch_size = 1});
            }).find("does not exist"),
            std::string::npos);
  // After an error the iterator works again from the start (ThreadedDataIter's rule).
  WriteFileBytes(dir / "bad.t", "1 0:1\n2 5:1\n");
  LibSVMIter it({.data_libsvm = dir / "bad.t", .data_shape = Shape(3), .batch_size = 1});
  ASSERT_TRUE(it.Next());
  EXPECT_NE(ErrorOf([&] { it.Next(); }).find("line 2"), std::string::npos);
  it.BeforeFirst();
  ASSERT_TRUE(it.Next());
  EXPECT_EQ(Values<float>(it.GetLabel())[0], 1.0f);
}

// A file of `lines` examples: line i has label i and 0 to 60 features below `features` (varied
// value texts, some for the fast path, some for from_chars), a blank line now and then, some CRLF
// ends.
std::string ManyLines(int lines, int64_t features, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string text;
  for (int i = 0; i < lines; ++i) {
    text += std::to_string(i);
    int64_t index = -1;
    const int nnz = static_cast<int>(rng() % 61);
    for (int j = 0; j < nnz && index + 1 < features; ++j) {
      index += 1 + static_cast<int64_t>(rng() % static_cast<uint32_t>(std::max<int64_t>(1, features / 64)));
      if (index >= features) break;
      const float v = static_cast<float>(rng() % 100000) / 997;
      text += rng() % 9 == 0 ? fmt::format(" {}:{:.9g}", index, v) : fmt::format(" {}:{:.3f}", index, v);
    }
    text += rng() % 50 == 0 ? "\r\n" : "\n";
    if (rng() % 200 == 0) text += "\n";
  }
  return text;
}

// A batch as plain values (data and csr labels as their parts, dense labels as values).
struct Snap {
  Csr data, label_csr;
  std::vector<float> label;
  int pad;
  std::vector<int> index;
  bool operator==(const Snap&) const = default;
};

Snap SnapOf(DataIter& it) {
  Snap s{PartsOf(it.GetData()), {}, {}, it.GetPadNum(), it.GetIndex()};
  if (it.GetLabel().storage_type() == StorageType::kCSR)
    s.label_csr = PartsOf(it.GetLabel());
  else
    s.label = Values<float>(it.GetLabel());
  return s;
}

// The batches an iterator gives with `threads` parse workers: `first` batches, BeforeFirst mid-epoch,
// then two whole epochs (the second goes on after the lines the first one's padded batch took).
std::vector<Snap> ParsedBatches(LibSVMIterOptions o, int threads, size_t first) {
  o.parse_threads = threads;
  LibSVMIter it(o);
  std::vector<Snap> out;
  for (size_t i = 0; i < first && it.Next(); ++i) out.push_back(SnapOf(it));
  for (int epoch = 0; epoch < 2; ++epoch) {
    it.BeforeFirst();
    while (it.Next()) out.push_back(SnapOf(it));
  }
  return out;
}

// Several workers parse batches at once (lines cut in batch order, batches delivered in order): every
// batch must be the one-thread batch, over read blocks (1 MiB) and epochs, for parts, dense and csr
// labels, and a reset in the middle of an epoch.
TEST(LibSVMIter, ParseWorkersGiveTheOneThreadBatches) {
  TempDir dir("libsvm");
  const int lines = 15000;
  const int64_t features = 5000;
  const std::string text = ManyLines(lines, features, 1);
  ASSERT_GT(text.size(), size_t{4} << 20);  // several read blocks per part
  WriteFileBytes(dir / "data.t", text);
  WriteFileBytes(dir / "label.t", ManyLines(lines, 8, 2));
  const size_t first = 50;
  struct Config {
    int parts, part;
    bool csr_labels;
  };
  // A label file is split into parts by its own bytes (its parts' lines would not match the data's):
  // csr labels with one part only.
  for (const auto& [parts, part, csr_labels] : {Config{1, 0, false}, {1, 0, true}, {3, 0, false}, {3, 2, false}}) {
    {
      LibSVMIterOptions o{.data_libsvm = dir / "data.t",
                          .data_shape = Shape(features),
                          .num_parts = parts,
                          .part_index = part,
                          .batch_size = 37,
                          .prefetch_buffer = 2};
      if (csr_labels) {
        o.label_libsvm = dir / "label.t";
        o.label_shape = Shape(8);
      }
      const std::vector<Snap> one = ParsedBatches(o, 1, first);
      if (parts == 1 && !csr_labels) {  // the one-thread batches themselves: every line once, in order
        std::vector<float> seen;
        for (size_t b = first; b < one.size() && seen.size() < static_cast<size_t>(lines); ++b)
          seen.insert(seen.end(), one[b].label.begin(), one[b].label.end() - one[b].pad);
        ASSERT_EQ(seen.size(), static_cast<size_t>(lines));
        for (int i = 0; i < lines; ++i) ASSERT_EQ(seen[static_cast<size_t>(i)], static_cast<float>(i));
      }
      for (const int threads : {2, 4}) {
        const std::vector<Snap> many = ParsedBatches(o, threads, first);
        ASSERT_EQ(many.size(), one.size()) << threads << " threads, part " << part << "/" << parts;
        for (size_t b = 0; b < one.size(); ++b)
          ASSERT_TRUE(many[b] == one[b]) << "batch " << b << " of " << one.size() << " (" << threads
                                         << " threads, part " << part << "/" << parts << ", csr labels " << csr_labels
                                         << "): first index " << many[b].index[0] << ", one thread's "
                                         << one[b].index[0];
      }
    }
  }
}

// A batch with a bad token and, later in it, a data line without its label line: every number of
// workers reports the token (the first error of one thread reading line by line), after the same
// batches, and the iterator works again after BeforeFirst.
TEST(LibSVMIter, ParseWorkersReportTheOneThreadError) {
  TempDir dir("libsvm");
  std::string text = ManyLines(12000, 100, 3);
  size_t at = text.find("\n9001");  // example 9001 is in batch 243 of 37
  while (at != std::string::npos && std::isdigit(static_cast<unsigned char>(text[at + 5])))
    at = text.find("\n9001", at + 1);
  ASSERT_NE(at, std::string::npos);
  text.insert(at + 5, " 5:x");
  const auto line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at) + 1, '\n') + 1;
  ASSERT_GT(line, 9002);  // blank lines before it
  WriteFileBytes(dir / "data.t", text);
  std::string labels;
  for (int i = 0; i < 9010; ++i) labels += "0 1:1\n";
  WriteFileBytes(dir / "label.t", labels);
  for (const bool with_labels : {false, true}) {
    std::string want;
    for (const int threads : {1, 2, 4}) {
      LibSVMIterOptions o{
          .data_libsvm = dir / "data.t", .data_shape = Shape(100), .batch_size = 37, .parse_threads = threads};
      if (with_labels) {
        o.label_libsvm = dir / "label.t";
        o.label_shape = Shape(2);
      }
      LibSVMIter it(o);
      int delivered = 0;
      const std::string error = ErrorOf([&] {
        while (it.Next()) ++delivered;
      });
      EXPECT_EQ(delivered, 243) << threads << " threads";
      EXPECT_NE(error.find(fmt::format("data.t' line {} token '5:x' is not index:value", line)), std::string::npos)
          << error;
      if (threads == 1) want = error;
      EXPECT_EQ(error, want) << threads << " threads";
      EXPECT_FALSE(it.Next());  // the epoch ended at the error
      it.BeforeFirst();
      ASSERT_TRUE(it.Next());
      EXPECT_EQ(it.GetIndex()[0], 0);
    }
  }
  EXPECT_NE(
      ErrorOf([&] {
        LibSVMIter({.data_libsvm = dir / "data.t", .data_shape = Shape(100), .batch_size = 1, .parse_threads = 65});
      }).find("parse_threads 65 must be in [1, 64]"),
      std::string::npos);
  // Without parse_threads, the environment's number; a bad one is an error naming the variable.
  ::setenv("WEFT_LIBSVM_PARSE_THREADS", "0", 1);
  EXPECT_NE(ErrorOf([&] {
              LibSVMIter({.data_libsvm = dir / "data.t", .data_shape = Shape(100), .batch_size = 1});
            }).find("WEFT_LIBSVM_PARSE_THREADS=0 is out of range"),
            std::string::npos);
  ::setenv("WEFT_LIBSVM_PARSE_THREADS", "3", 1);
  EXPECT_EQ(ErrorOf([&] {
              LibSVMIter it({.data_libsvm = dir / "data.t", .data_shape = Shape(100), .batch_size = 1});
              EXPECT_TRUE(it.Next());
            }),
            "");
  ::unsetenv("WEFT_LIBSVM_PARSE_THREADS");
}

TEST(LibSVMIter, CreatedFromTextParameters) {
  TempDir dir("libsvm");
  WriteFileBytes(dir / "data.t", kData);
  auto it =
      CreateDataIter("LibSVMIter", {{"data_libsvm", dir / "data.t"}, {"data_shape", "(3,)"}, {"batch_size", "2"}});
  ASSERT_TRUE(it->Next());
  EXPECT_EQ(it->GetData().GetShape(), Shape(2, 3));
  EXPECT_EQ(it->GetData().storage_type(), StorageType::kCSR);
  EXPECT_NE(ErrorOf([&] {
              CreateDataIter(
                  "LibSVMIter",
                  {{"data_libsvm", dir / "data.t"}, {"data_shape", "(3,)"}, {"batch_size", "2"}, {"dtype", "float64"}});
            }).find("dtype must be float32"),
            std::string::npos);
}

}  // namespace
}  // namespace weft
