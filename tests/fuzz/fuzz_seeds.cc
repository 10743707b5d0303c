// Writes the generated part of the fuzzers' seed corpora: files as weft itself writes them, so the
// repository holds no binary seeds. scripts/fuzz.sh runs it before every run and adds the test
// suite's data files (MXNet-written files among them) next to these.
//   usage: fuzz_seeds <dir>    writes <dir>/params/*, <dir>/states/*, <dir>/idx/*, <dir>/recordio/*
// Every seed is small (< 1 KiB): a fuzzer's speed falls with the size of what it mutates.
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "weft/image.h"
#include "weft/ndarray_format.h"
#include "weft/optimizer.h"
#include "weft/recordio.h"

namespace {

namespace fs = std::filesystem;

weft::NDArrayRecord Record(weft::Shape shape, weft::DType dtype) {
  weft::NDArrayRecord r;
  r.shape = shape;
  r.dtype = dtype;
  r.data.resize(static_cast<size_t>(shape.Size()) * weft::DTypeSize(dtype));
  for (size_t i = 0; i < r.data.size(); ++i) r.data[i] = static_cast<uint8_t>(i * 37 + 11);
  return r;
}

void WriteBytes(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

weft::NDArrayAuxRecord Indices(std::vector<int64_t> v) {
  weft::NDArrayAuxRecord a;
  a.shape = weft::Shape{static_cast<int64_t>(v.size())};
  a.data.resize(v.size() * sizeof(int64_t));
  if (!v.empty()) std::memcpy(a.data.data(), v.data(), a.data.size());
  return a;
}

// A row_sparse (rows 1 and 3 of 4x2) and a csr (3x4, an empty middle row) array, as MXNet writes
// them.
void WriteSparseParams(const fs::path& dir) {
  weft::NDArrayRecord rsp = Record({2, 2}, weft::DType::kFloat32);
  rsp.stype = weft::StorageType::kRowSparse;
  rsp.storage_shape = rsp.shape;
  rsp.shape = {4, 2};
  rsp.aux = {Indices({1, 3})};
  weft::NDArrayRecord csr = Record({3}, weft::DType::kFloat64);
  csr.stype = weft::StorageType::kCSR;
  csr.storage_shape = csr.shape;
  csr.shape = {3, 4};
  csr.aux = {Indices({0, 2, 2, 3}), Indices({0, 3, 1})};
  weft::NDArrayListData list;
  list.arrays = {rsp, csr};
  list.names = {"rsp", "csr"};
  WriteBytes(dir / "sparse.params", weft::SerializeNDArrayList(list));
}

void WriteParams(const fs::path& dir) {
  // The shapes of a small network's checkpoint: weights, a bias, BatchNorm aux states.
  weft::NDArrayListData net;
  net.arrays = {Record({4, 3}, weft::DType::kFloat32), Record({4}, weft::DType::kFloat32),
                Record({2, 1, 2, 2}, weft::DType::kFloat16), Record({4}, weft::DType::kFloat32),
                Record({4}, weft::DType::kFloat32)};
  net.names = {"arg:fc1_weight", "arg:fc1_bias", "arg:conv0_weight", "aux:bn0_moving_mean", "aux:bn0_moving_var"};
  WriteBytes(dir / "net.params", weft::SerializeNDArrayList(net));
  // Every dtype once, an empty NDArray() and v3 records (a scalar, an extent 0), without names.
  weft::NDArrayListData kinds;
  for (int code = 0; code <= static_cast<int>(weft::DType::kBfloat16); ++code)
    kinds.arrays.push_back(Record({2}, static_cast<weft::DType>(code)));
  weft::NDArrayRecord none;
  none.none = true;
  kinds.arrays.push_back(none);
  kinds.arrays.push_back(Record(weft::Shape(std::vector<int64_t>{}), weft::DType::kFloat32));
  kinds.arrays.push_back(Record({3, 0}, weft::DType::kInt64));
  WriteBytes(dir / "kinds.params", weft::SerializeNDArrayList(kinds));
  WriteBytes(dir / "record.nd", weft::SerializeNDArrayRecord(Record({2, 2}, weft::DType::kFloat32)));
  WriteSparseParams(dir);
}

// What KVStore::SaveOptimizerStates writes: "<index>:<k>" state arrays and a "__meta__" uint8
// record holding Optimizer::Serialize() (the JSON alone is a seed too: the target parses it as well).
void WriteStates(const fs::path& dir) {
  struct Case {
    const char* type;
    int num_states;
  };
  for (const Case& c : {Case{"sgd", 1}, Case{"adam", 2}, Case{"rmsprop", 1}}) {
    auto opt = weft::OptimizerRegistry::Create(c.type);
    opt->SetParamString("lr", "0.05");
    opt->SetParamString("wd", "0.0001");
    if (std::strcmp(c.type, "sgd") == 0) opt->SetParamString("momentum", "0.9");
    opt->SetLRMult({{0, 2.0f}});
    const std::string meta = opt->Serialize();
    weft::NDArrayListData list;
    for (int index : {0, 3})
      for (int k = 0; k < c.num_states; ++k) {
        list.arrays.push_back(Record({3}, weft::DType::kFloat32));
        list.names.push_back(std::to_string(index) + ":" + std::to_string(k));
      }
    weft::NDArrayRecord blob = Record({static_cast<int64_t>(meta.size())}, weft::DType::kUint8);
    blob.data.assign(meta.begin(), meta.end());
    list.arrays.push_back(blob);
    list.names.push_back("__meta__");
    WriteBytes(dir / (std::string(c.type) + ".states"), weft::SerializeNDArrayList(list));
    WriteBytes(dir / (std::string(c.type) + "_meta.json"), std::vector<uint8_t>(meta.begin(), meta.end()));
  }
}

std::vector<uint8_t> Idx(const std::vector<uint32_t>& dims) {
  std::vector<uint8_t> out = {0, 0, 0x08, static_cast<uint8_t>(dims.size())};
  uint64_t total = 1;
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(d >> shift));
    total *= d;
  }
  for (uint64_t i = 0; i < total; ++i) out.push_back(static_cast<uint8_t>(i * 7));
  return out;
}

void WriteGzip(const fs::path& path, const std::vector<uint8_t>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb9");
  if (!f || gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) != static_cast<int>(bytes.size()) ||
      gzclose(f) != Z_OK)
    throw std::runtime_error("cannot write " + path.string());
}

void WriteIdx(const fs::path& dir) {
  WriteBytes(dir / "labels.idx1", Idx({10}));
  WriteBytes(dir / "images.idx3", Idx({2, 4, 4}));
  WriteGzip(dir / "labels.idx1.gz", Idx({10}));
  WriteGzip(dir / "images.idx3.gz", Idx({3, 5, 5}));
}

// Small .rec files: plain and multi-part records, and image records holding a tiny JPEG and PNG.
void WriteRecordIO(const fs::path& dir) {
  const std::string magic("\x0a\x23\xd7\xce", 4);
  {
    weft::RecordIOWriter w((dir / "records.rec").string());
    for (const std::string& r : {std::string(), std::string("abc"), magic, "ab" + magic + "cd" + magic})
      w.WriteRecord(r);
  }
  weft::Image im{6, 8, 3, std::vector<uint8_t>(6 * 8 * 3)};
  for (size_t i = 0; i < im.data.size(); ++i) im.data[i] = static_cast<uint8_t>(i * 5);
  weft::ImageRecordHeader h;
  h.label = 3;
  weft::RecordIOWriter jpg((dir / "jpeg.rec").string());
  jpg.WriteRecord(weft::PackImageRecord(h, weft::EncodeJpeg(im, 80)));
  h.labels = {1, 2};
  weft::RecordIOWriter png((dir / "png.rec").string());
  png.WriteRecord(weft::PackImageRecord(h, weft::EncodePng(im)));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <dir>  (writes <dir>/params, <dir>/states, <dir>/idx, <dir>/recordio)\n", argv[0]);
    return 2;
  }
  try {
    const fs::path root = argv[1];
    for (const char* sub : {"params", "states", "idx", "recordio"}) fs::create_directories(root / sub);
    WriteParams(root / "params");
    WriteStates(root / "states");
    WriteIdx(root / "idx");
    WriteRecordIO(root / "recordio");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
