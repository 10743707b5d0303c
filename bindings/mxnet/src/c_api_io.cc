// MXNet C API: data iterators (mx.io.MNISTIter, ImageRecordIter, CSVIter ...: weft's iterator
// registry, weft/io.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common.h"
#include "weft/io.h"

using namespace weft;
using namespace weft::mx;

namespace {

// An iterator type MXListDataIters lists; the handle Python keeps for it.
struct IterEntry {
  std::string name;
  std::string description;
  bool registered = false;  // false: a name MXNet lists that weft has no iterator for
  std::vector<std::string> param_names, param_types, param_docs;
  std::vector<const char*> names, types, docs;
};

// MXNet 1.9.1's iterator names: mxnet.io makes a class for each one listed, so those weft lacks are
// listed too and fail at creation naming what weft has.
constexpr const char* kMXNetIterNames[] = {"CSVIter",
                                           "ImageDetRecordIter",
                                           "ImageRecordInt8Iter",
                                           "ImageRecordIter",
                                           "ImageRecordIter_v1",
                                           "ImageRecordUInt8Iter",
                                           "ImageRecordUInt8Iter_v1",
                                           "LibSVMIter",
                                           "MNISTIter"};

std::vector<IterEntry>& Entries() {
  static std::vector<IterEntry> entries = [] {
    std::vector<IterEntry> e;
    for (const DataIterInfo& info : ListDataIters()) {
      IterEntry entry;
      entry.name = info.name;
      entry.description = info.description;
      entry.registered = true;
      for (const DataIterParamInfo& p : info.params) {
        entry.param_names.push_back(p.name);
        entry.param_types.push_back(p.type);
        entry.param_docs.push_back(p.doc);
      }
      e.push_back(std::move(entry));
    }
    for (const char* name : kMXNetIterNames) {
      if (FindDataIter(name)) continue;
      IterEntry other;
      other.name = name;
      other.description = std::string(name) + " (not available in weft)";
      e.push_back(std::move(other));
    }
    for (IterEntry& it : e) {
      for (size_t i = 0; i < it.param_names.size(); ++i) {
        it.names.push_back(it.param_names[i].c_str());
        it.types.push_back(it.param_types[i].c_str());
        it.docs.push_back(it.param_docs[i].c_str());
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

std::unique_ptr<DataIter> Create(const IterEntry& entry, const std::map<std::string, std::string>& params) {
  if (!entry.registered) {
    std::vector<std::string> known;
    for (const DataIterInfo& info : ListDataIters()) known.push_back(info.name);
    Fail("data iterator {} is not available in weft; its iterators are {} (and mx.io.NDArrayIter over arrays)",
         entry.name, fmt::join(known, ", "));
  }
  return CreateDataIter(entry.name, params);
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
