// MXNet C API: data iterators (mx.io.MNISTIter and the other registered iterators).
#include "common.h"
#include "weft/io.h"

using namespace weft;
using namespace weft::mx;

namespace {

struct IterParam {
  const char* name;
  const char* type;  // MXNet's type text
  const char* doc;
};

// An iterator type MXListDataIters lists; the handle Python keeps for it.
struct IterEntry {
  std::string name;
  std::string description;
  std::vector<IterParam> params;
  std::vector<const char*> names, types, docs;
};

std::vector<IterEntry>& Entries() {
  static std::vector<IterEntry> entries = [] {
    std::vector<IterEntry> e(1);
    e[0].name = "MNISTIter";
    e[0].description =
        "Iterates over the MNIST idx files (plain or gzip): data (batch, 1, 28, 28) or (batch, 784) with flat, "
        "pixels scaled to [0, 1]; label (batch,). Only whole batches.";
    e[0].params = {
        {"image", "string, optional, default='./train-images-idx3-ubyte'", "Dataset Param: Mnist image path."},
        {"label", "string, optional, default='./train-labels-idx1-ubyte'", "Dataset Param: Mnist label path."},
        {"batch_size", "int, optional, default='128'", "Batch Param: Batch Size."},
        {"shuffle", "boolean, optional, default=1", "Augmentation Param: Whether to shuffle data."},
        {"flat", "boolean, optional, default=0", "Augmentation Param: Whether to flat the data into 1D."},
        {"seed", "int, optional, default='0'", "Augmentation Param: Random Seed."},
        {"silent", "boolean, optional, default=0", "Auxiliary Param: Whether to print out data info."},
        {"num_parts", "int, optional, default='1'", "partition the data into multiple parts"},
        {"part_index", "int, optional, default='0'", "the index of the part will read"},
        {"prefetch_buffer", "long (non-negative), optional, default=4", "Maximum number of batches to prefetch."},
        {"ctx", "{'cpu', 'gpu'},optional, default='gpu'", "Context data loader optimized for."},
        {"dtype",
         "{None, 'float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8'},optional, "
         "default='None'",
         "Output data type. None means no change."},
    };
    // MXNet's other iterator types: mxnet.io imports each by name, so they are listed; creating
    // one says what weft has instead (issue 31 adds them).
    for (const char* name : {"CSVIter", "ImageDetRecordIter", "ImageRecordInt8Iter", "ImageRecordIter",
                             "ImageRecordIter_v1", "ImageRecordUInt8Iter", "ImageRecordUInt8Iter_v1", "LibSVMIter"}) {
      IterEntry other;
      other.name = name;
      other.description = std::string(name) + " (not available in this weft build: only MNISTIter is)";
      e.push_back(std::move(other));
    }
    for (IterEntry& it : e) {
      for (const IterParam& p : it.params) {
        it.names.push_back(p.name);
        it.types.push_back(p.type);
        it.docs.push_back(p.doc);
      }
    }
    return e;
  }();
  return entries;
}

IterEntry& EntryFromHandle(DataIterCreator handle) {
  for (IterEntry& e : Entries())
    if (&e == handle) return e;
  Fail("invalid DataIterCreator {}: not one listed by MXListDataIters", handle);
}

struct DataIterH : Handle<HandleKind::kDataIter> {
  std::unique_ptr<DataIter> iter;
  std::vector<uint64_t> index;  // MXDataIterGetIndex's array
};
DataIterH& Iter(DataIterHandle h) { return *Handle<HandleKind::kDataIter>::From<DataIterH>(h); }

std::unique_ptr<DataIter> Create(const IterEntry& entry, std::map<std::string, std::string> params) {
  // Parameters MXNet's frontends pass that only select its own loader's behaviour.
  for (const char* ignored : {"ctx", "dtype"}) {
    auto it = params.find(ignored);
    if (it == params.end()) continue;
    if (std::string(ignored) == "dtype" && it->second != "None" && it->second != "float32") {
      Fail("{}: dtype '{}' is not supported (float32 batches only)", entry.name, it->second);
    }
    params.erase(it);
  }
  if (entry.name != "MNISTIter") {
    Fail(
        "data iterator {} is not available in this weft build (only MNISTIter is); mx.io.NDArrayIter works on "
        "arrays in memory",
        entry.name);
  }
  auto iter = std::make_unique<MXDataIter>(entry.name);
  for (const auto& [k, v] : params) iter->SetParam(k, v);
  return std::make_unique<MXDataIter>(iter->CreateDataIter());
}

}  // namespace

extern "C" {

int MXListDataIters(uint32_t* out_size, DataIterCreator** out_array) {
  API_BEGIN();
  std::vector<void*>& handles = ThreadHandles("MXListDataIters");
  handles.clear();
  for (IterEntry& e : Entries()) handles.push_back(&e);
  *NotNull(out_size, "out_size") = static_cast<uint32_t>(handles.size());
  *NotNull(out_array, "out_array") = handles.data();
  API_END();
}

int MXDataIterGetIterInfo(DataIterCreator creator, const char** name, const char** description, uint32_t* num_args,
                          const char*** arg_names, const char*** arg_type_infos, const char*** arg_descriptions) {
  API_BEGIN();
  IterEntry& e = EntryFromHandle(creator);
  *NotNull(name, "name") = e.name.c_str();
  *NotNull(description, "description") = e.description.c_str();
  *NotNull(num_args, "num_args") = static_cast<uint32_t>(e.names.size());
  *NotNull(arg_names, "arg_names") = e.names.data();
  *NotNull(arg_type_infos, "arg_type_infos") = e.types.data();
  *NotNull(arg_descriptions, "arg_descriptions") = e.docs.data();
  API_END();
}

int MXDataIterCreateIter(DataIterCreator creator, uint32_t num_param, const char** keys, const char** vals,
                         DataIterHandle* out) {
  API_BEGIN();
  IterEntry& e = EntryFromHandle(creator);
  auto h = std::make_unique<DataIterH>();
  h->iter = Create(e, KeyValues(static_cast<int>(num_param), keys, vals, e.name.c_str()));
  *NotNull(out, "out") = h.release();
  API_END();
}

int MXDataIterFree(DataIterHandle handle) {
  API_BEGIN();
  delete &Iter(handle);
  API_END();
}

int MXDataIterNext(DataIterHandle handle, int* out) {
  API_BEGIN();
  *NotNull(out, "out") = Iter(handle).iter->Next() ? 1 : 0;
  API_END();
}

int MXDataIterBeforeFirst(DataIterHandle handle) {
  API_BEGIN();
  Iter(handle).iter->BeforeFirst();
  API_END();
}

int MXDataIterGetData(DataIterHandle handle, NDArrayHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = NewND(Iter(handle).iter->GetData());
  API_END();
}

int MXDataIterGetLabel(DataIterHandle handle, NDArrayHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = NewND(Iter(handle).iter->GetLabel());
  API_END();
}

int MXDataIterGetPadNum(DataIterHandle handle, int* pad) {
  API_BEGIN();
  *NotNull(pad, "pad") = Iter(handle).iter->GetPadNum();
  API_END();
}

int MXDataIterGetIndex(DataIterHandle handle, uint64_t** out_index, uint64_t* out_size) {
  API_BEGIN();
  DataIterH& h = Iter(handle);
  const std::vector<int> index = h.iter->GetIndex();
  h.index.assign(index.begin(), index.end());
  *NotNull(out_index, "out_index") = h.index.data();
  *NotNull(out_size, "out_size") = h.index.size();
  API_END();
}

}  // extern "C"
