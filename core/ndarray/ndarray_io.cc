// NDArray Save/Load over the MXNet NDArray list format, and printing.
#include <ostream>

#include "base/untrusted.h"
#include "dtype_convert.h"
#include "sparse_parts.h"
#include "weft/ndarray.h"
#include "weft/ndarray_format.h"
#include "weft/runtime.h"
#include "weft/sparse.h"

namespace weft {
namespace {

using ndarray_detail::HostBytes;

NDArray HostArray(const Shape& shape, DType dtype, const std::vector<uint8_t>& bytes) {
  NDArray cpu(shape, Context::cpu(0), false, dtype);
  if (!bytes.empty()) cpu.SyncCopyFromCPUBytes(bytes.data(), bytes.size());
  return cpu;
}

NDArrayRecord ToRecord(const NDArray& a) {
  NDArrayRecord r;
  if (a.is_none()) {
    r.none = true;
    return r;
  }
  r.shape = a.GetShape();
  r.dtype = a.GetDType();
  const Context ctx = a.GetContext();
  // MXNet knows cpu and gpu only; arrays of other device types are recorded as cpu(0) so that
  // MXNet can read the file.
  const std::string& type = ctx.GetDeviceType();
  if (type == "cpu") {
    r.dev_type = static_cast<int32_t>(SavedDeviceType::kCPU);
    r.dev_id = ctx.GetDeviceId();
  } else if (type == "cuda" || type == "hip") {
    r.dev_type = static_cast<int32_t>(SavedDeviceType::kGPU);
    r.dev_id = ctx.GetDeviceId();
  } else {
    r.dev_type = static_cast<int32_t>(SavedDeviceType::kCPU);
    r.dev_id = 0;
  }
  if (a.storage_type() != StorageType::kDefault) {
    // MXNet writes the parts as they are (it does not check them on save).
    r.stype = a.storage_type();
    const NDArray values = a.data_ndarray();
    r.storage_shape = values.GetShape();
    r.data = HostBytes(values);
    for (size_t i = 0; i < a.num_aux_data(); ++i) {
      const NDArray aux = a.aux_ndarray(i);
      r.aux.push_back({aux.GetDType(), aux.GetShape(), HostBytes(aux)});
    }
    return r;
  }
  r.data = HostBytes(a);
  return r;
}

// The device a record goes to: the one it was saved from when it exists here, else cpu(0).
Context TargetContext(const NDArrayRecord& r) {
  Context want = Context::cpu(0);
  if (r.dev_type == static_cast<int32_t>(SavedDeviceType::kGPU)) {
    want = Context::gpu(r.dev_id);
  } else if (r.dev_type == static_cast<int32_t>(SavedDeviceType::kCPU)) {
    want = Context::cpu(r.dev_id);
  }
  return Runtime::Get().HasDevice(want) ? want : Context::cpu(0);
}

NDArray FromRecord(const NDArrayRecord& r) {
  if (r.none) return NDArray();
  NDArray cpu;
  if (r.stype != StorageType::kDefault) {
    std::vector<NDArray> aux;
    for (const auto& a : r.aux) aux.push_back(HostArray(a.shape, a.dtype, a.data));
    cpu = NDArray::FromSparseParts(r.stype, r.shape, HostArray(r.storage_shape, r.dtype, r.data), aux);
  } else {
    cpu = HostArray(r.shape, r.dtype, r.data);
  }
  const Context target = TargetContext(r);
  return target == Context::cpu(0) ? cpu : cpu.Copy(target);
}

void Distribute(NDArrayListData&& list, std::vector<NDArray>* array_list, std::map<std::string, NDArray>* array_map,
                std::string_view source) {
  if (array_map) {
    // A map keeps one array per name: a second record of a name would silently replace the first.
    std::map<std::string_view, size_t> seen;
    for (size_t i = 0; i < list.names.size(); ++i) {
      auto [it, fresh] = seen.emplace(list.names[i], i);
      WEFT_CHECK(fresh,
                 "{}: the name '{}' appears twice (records {} and {}); the file is corrupt or was merged by hand",
                 source, detail::Excerpt(list.names[i]), it->second, i);
    }
  }
  std::vector<NDArray> arrays;
  arrays.reserve(list.arrays.size());
  for (auto& r : list.arrays) {
    arrays.push_back(FromRecord(r));
    r.data = {};  // the host copies are no longer needed
    r.aux = {};
  }
  if (array_map) {
    for (size_t i = 0; i < list.names.size(); ++i) (*array_map)[list.names[i]] = arrays[i];
  }
  if (array_list) *array_list = std::move(arrays);
}

std::map<std::string, NDArray> ToMap(NDArrayListData&& list, std::string_view source) {
  WEFT_CHECK(list.arrays.empty() || !list.names.empty(),
             "{}: the file holds {} unnamed arrays; load it with LoadToList (or Load with a list)", source,
             list.arrays.size());
  std::map<std::string, NDArray> out;
  Distribute(std::move(list), nullptr, &out, source);
  return out;
}

}  // namespace

void NDArray::Save(const std::string& file_name, const std::map<std::string, NDArray>& array_map) {
  NDArrayListData list;
  for (const auto& [name, array] : array_map) {
    list.names.push_back(name);
    list.arrays.push_back(ToRecord(array));
  }
  WriteNDArrayListFile(file_name, list);
}

void NDArray::Save(const std::string& file_name, const std::vector<NDArray>& array_list) {
  NDArrayListData list;
  for (const auto& array : array_list) list.arrays.push_back(ToRecord(array));
  WriteNDArrayListFile(file_name, list);
}

void NDArray::Load(const std::string& file_name, std::vector<NDArray>* array_list,
                   std::map<std::string, NDArray>* array_map) {
  Distribute(ReadNDArrayListFile(file_name), array_list, array_map, file_name);
}

std::map<std::string, NDArray> NDArray::LoadToMap(const std::string& file_name) {
  return ToMap(ReadNDArrayListFile(file_name), file_name);
}

std::vector<NDArray> NDArray::LoadToList(const std::string& file_name) {
  std::vector<NDArray> out;
  Load(file_name, &out, nullptr);
  return out;
}

void NDArray::LoadFromBuffer(const void* buffer, size_t size, std::vector<NDArray>* array_list,
                             std::map<std::string, NDArray>* array_map) {
  WEFT_CHECK(buffer != nullptr || size == 0, "LoadFromBuffer: the buffer is null");
  Distribute(ParseNDArrayList({static_cast<const uint8_t*>(buffer), size}, "<buffer>"), array_list, array_map,
             "<buffer>");
}

std::map<std::string, NDArray> NDArray::LoadFromBufferToMap(const void* buffer, size_t size) {
  WEFT_CHECK(buffer != nullptr || size == 0, "LoadFromBufferToMap: the buffer is null");
  return ToMap(ParseNDArrayList({static_cast<const uint8_t*>(buffer), size}, "<buffer>"), "<buffer>");
}

std::vector<NDArray> NDArray::LoadFromBufferToList(const void* buffer, size_t size) {
  std::vector<NDArray> out;
  LoadFromBuffer(buffer, size, &out, nullptr);
  return out;
}

std::vector<uint8_t> NDArray::SaveToRawBytes() const { return SerializeNDArrayRecord(ToRecord(*this)); }

NDArray NDArray::LoadFromRawBytes(const void* buffer, size_t size) {
  WEFT_CHECK(buffer != nullptr || size == 0, "LoadFromRawBytes: the buffer is null");
  return FromRecord(ParseNDArrayRecord({static_cast<const uint8_t*>(buffer), size}, "<raw bytes>"));
}

std::ostream& operator<<(std::ostream& out, const NDArray& array) {
  out << '[';
  if (!array.is_none()) {
    const NDArray dense =
        array.storage_type() == StorageType::kDefault ? array : CastStorage(array, StorageType::kDefault);
    const std::vector<uint8_t> host = HostBytes(dense);
    const size_t elem = DTypeSize(array.GetDType());
    for (size_t i = 0; i < dense.Size(); ++i)
      out << ndarray_detail::LoadAsDouble(host.data() + i * elem, array.GetDType()) << ", ";
  }
  return out << ']';
}

}  // namespace weft
