// MXNet C API: NDArray handles — creation, copies, views, waits, files, shape/dtype/context.
#include <cstring>

#include "common.h"
#include "weft/autograd.h"
#include "weft/imperative.h"
#include "weft/op_info.h"
#include "weft/runtime.h"

using namespace weft;
using namespace weft::mx;

namespace {

NDArrayHandle Create(const Shape& shape, int dev_type, int dev_id, int delay_alloc, int dtype) {
  for (int64_t d : shape) {
    if (d < 0) Fail("cannot create an NDArray of shape {}: negative extent", shape);
  }
  // cpu_shared: POSIX shared memory, for arrays that DataLoader's workers hand to the main process.
  if (dev_type == kDevCPUShared) return NewND(NDArray::CreateSharedMem(shape, static_cast<DType>(dtype)));
  return NewND(NDArray(shape, ToContext(dev_type, dev_id), delay_alloc != 0, static_cast<DType>(dtype)));
}

// Views made while autograd records are recorded as the op they equal (MXNet's SliceWithRecord,
// AtWithRecord, ReshapeWithRecord), so gradients flow through x[1:3] and x.reshape(...).
NDArray Slice(const NDArray& a, int64_t begin, int64_t end) {
  const Shape& s = a.GetShape();
  if (s.ndim() == 0) Fail("NDArray slice: the array has no axis to slice");
  if (begin < 0 || begin > end || end > s[0]) {
    Fail("NDArray slice [{}, {}) is out of range for axis 0 of extent {}", begin, end, s[0]);
  }
  NDArray view = a.Slice(static_cast<size_t>(begin), static_cast<size_t>(end));
  autograd::RecordView(a, &view, "slice_axis",
                       {{"axis", "0"}, {"begin", std::to_string(begin)}, {"end", std::to_string(end)}});
  return view;
}

NDArray RecordedReshape(const NDArray& a, const Shape& shape) {
  NDArray view = a.Reshape(shape);
  autograd::RecordView(a, &view, "Reshape", {{"shape", shape.ToString()}});
  return view;
}

// MXNet's NDArray::At: row `idx` of the first axis, that axis dropped (a 1-d array keeps (1,)).
NDArray At(const NDArray& a, int64_t idx) {
  const Shape& s = a.GetShape();
  if (s.ndim() == 0) Fail("NDArray.at: the array has no axis to index");
  if (idx < 0 || idx >= s[0]) Fail("NDArray.at: index {} is out of range for axis 0 of extent {}", idx, s[0]);
  NDArray row = Slice(a, idx, idx + 1);
  if (s.ndim() == 1) return row;
  return RecordedReshape(row, Shape(std::vector<int64_t>(s.dims().begin() + 1, s.dims().end())));
}

// MXNet's reshape codes (0 copy, -1 infer, -2 copy the rest, -3 merge two, -4 split) resolved by the
// Reshape op's own shape inference, so the rules live in one place.
NDArray ReshapeCodes(const NDArray& a, const std::vector<int64_t>& codes, bool reverse) {
  // No codes: the 0-d shape () (mx.nd.array of a NumPy scalar reshapes its (1,) array so); the
  // Reshape op reads an empty shape as "not given" instead.
  if (codes.empty()) {
    if (a.GetShape().Size() != 1)
      Fail("NDArray.reshape: cannot reshape an array of shape {} ({} elements) to () (1 element)",
           a.GetShape().ToString(), a.GetShape().Size());
    return RecordedReshape(a, Shape(std::vector<int64_t>{}));
  }
  std::string text = "(";
  for (size_t i = 0; i < codes.size(); ++i) text += (i ? "," : "") + std::to_string(codes[i]);
  text += codes.size() == 1 ? ",)" : ")";
  std::vector<std::vector<int64_t>> out =
      InferOpOutputShapes("Reshape", {{"shape", text}, {"reverse", reverse ? "True" : "False"}}, {a.GetShape().dims()});
  return RecordedReshape(a, Shape(out.at(0)));
}

template <typename T>
const T* ShapeData(const NDArray& a, const char* buffer, int* out_dim) {
  thread_local std::vector<T> dims;
  const Shape shape = a.GetShape();  // by value: one object for both iterators
  dims.assign(shape.begin(), shape.end());
  (void)buffer;
  // A none array's shape is unknown: ndim 0 in MXNet's classic shape mode, -1 in NumPy shape mode.
  *out_dim = a.is_none() && IsNumpyShape() ? -1 : static_cast<int>(dims.size());
  return dims.data();
}

void CopyFromHost(NDArray& a, const void* data, size_t size) {
  if (size != a.Size()) {
    Fail("SyncCopyFromCPU: {} elements given for an array of shape {} ({} elements)", size, a.GetShape(), a.Size());
  }
  if (size > 0) a.SyncCopyFromCPUBytes(NotNull(data, "data"), a.Bytes());
}

void ReturnArrays(std::vector<NDArray> arrays, std::vector<std::string> names, uint32_t* out_size,
                  NDArrayHandle** out_arr, uint32_t* out_name_size, const char*** out_names) {
  std::vector<void*>& handles = ThreadHandles("MXNDArrayLoad");
  handles.clear();
  for (NDArray& a : arrays) handles.push_back(NewND(std::move(a)));
  *NotNull(out_size, "out_size") = static_cast<uint32_t>(handles.size());
  *NotNull(out_arr, "out_arr") = handles.data();
  *NotNull(out_name_size, "out_name_size") = static_cast<uint32_t>(names.size());
  *NotNull(out_names, "out_names") = ThreadStrings("MXNDArrayLoad").Set(std::move(names));
}

// MXNDArrayLoad's result: a list, or a dict (names in file order with their arrays).
void LoadResult(const std::vector<NDArray>& list, const std::map<std::string, NDArray>& map, uint32_t* out_size,
                NDArrayHandle** out_arr, uint32_t* out_name_size, const char*** out_names) {
  std::vector<NDArray> arrays;
  std::vector<std::string> names;
  if (map.empty()) {
    arrays = list;
  } else {
    for (const auto& [name, a] : map) {
      names.push_back(name);
      arrays.push_back(a);
    }
  }
  ReturnArrays(std::move(arrays), std::move(names), out_size, out_arr, out_name_size, out_names);
}

}  // namespace

extern "C" {

int MXNDArrayCreateNone(NDArrayHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = NewND(NDArray());
  API_END();
}

int MXNDArrayCreate(const uint32_t* shape, uint32_t ndim, int dev_type, int dev_id, int delay_alloc,
                    NDArrayHandle* out) {
  return MXNDArrayCreateEx(shape, ndim, dev_type, dev_id, delay_alloc, 0, out);
}

int MXNDArrayCreateEx(const uint32_t* shape, uint32_t ndim, int dev_type, int dev_id, int delay_alloc, int dtype,
                      NDArrayHandle* out) {
  API_BEGIN();
  if (ndim > 0) NotNull(shape, "shape");
  std::vector<int64_t> dims(shape, shape + ndim);
  *NotNull(out, "out") = Create(Shape(dims), dev_type, dev_id, delay_alloc, dtype);
  API_END();
}

int MXNDArrayCreateEx64(const int64_t* shape, int ndim, int dev_type, int dev_id, int delay_alloc, int dtype,
                        NDArrayHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = Create(ToShape(shape, ndim), dev_type, dev_id, delay_alloc, dtype);
  API_END();
}

int MXNDArrayLoadFromRawBytes(const void* buf, size_t size, NDArrayHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = NewND(NDArray::LoadFromRawBytes(NotNull(buf, "buf"), size));
  API_END();
}

int MXNDArraySaveRawBytes(NDArrayHandle handle, size_t* out_size, const char** out_buf) {
  API_BEGIN();
  const std::vector<uint8_t> bytes = ND(handle).SaveToRawBytes();
  std::string& buf = ThreadString("MXNDArraySaveRawBytes");
  buf.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  *NotNull(out_size, "out_size") = buf.size();
  *NotNull(out_buf, "out_buf") = buf.data();
  API_END();
}

int MXNDArraySave(const char* fname, uint32_t num_args, NDArrayHandle* args, const char** keys) {
  API_BEGIN();
  NotNull(fname, "fname");
  if (num_args > 0) NotNull(args, "args");
  if (keys == nullptr) {
    std::vector<NDArray> list;
    for (uint32_t i = 0; i < num_args; ++i) list.push_back(ND(args[i]));
    NDArray::Save(fname, list);
  } else {
    std::map<std::string, NDArray> map;
    for (uint32_t i = 0; i < num_args; ++i) {
      const std::string key = NotNull(keys[i], "key");
      if (!map.emplace(key, ND(args[i])).second) Fail("MXNDArraySave('{}'): the name '{}' is given twice", fname, key);
    }
    NDArray::Save(fname, map);
  }
  API_END();
}

int MXNDArrayLoad(const char* fname, uint32_t* out_size, NDArrayHandle** out_arr, uint32_t* out_name_size,
                  const char*** out_names) {
  API_BEGIN();
  std::vector<NDArray> list;
  std::map<std::string, NDArray> map;
  NDArray::Load(NotNull(fname, "fname"), &list, &map);
  LoadResult(list, map, out_size, out_arr, out_name_size, out_names);
  API_END();
}

int MXNDArrayLoadFromBuffer(const void* ndarray_buffer, size_t size, uint32_t* out_size, NDArrayHandle** out_arr,
                            uint32_t* out_name_size, const char*** out_names) {
  API_BEGIN();
  std::vector<NDArray> list;
  std::map<std::string, NDArray> map;
  NDArray::LoadFromBuffer(NotNull(ndarray_buffer, "ndarray_buffer"), size, &list, &map);
  LoadResult(list, map, out_size, out_arr, out_name_size, out_names);
  API_END();
}

// `size` counts elements (MXNet's convention), not bytes.
int MXNDArraySyncCopyFromCPU(NDArrayHandle handle, const void* data, size_t size) {
  API_BEGIN();
  CopyFromHost(ND(handle), data, size);
  API_END();
}

int MXNDArraySyncCopyToCPU(NDArrayHandle handle, void* data, size_t size) {
  API_BEGIN();
  const NDArray& a = ND(handle);
  if (size != a.Size()) {
    Fail("SyncCopyToCPU: room for {} elements given for an array of shape {} ({} elements)", size, a.GetShape(),
         a.Size());
  }
  if (size > 0) a.SyncCopyToCPUBytes(NotNull(data, "data"), a.Bytes());
  API_END();
}

// i == -1 copies the data (the values of a sparse array); i >= 0 an aux array of a sparse array.
// A source of another dtype is converted first (Cast: C++ conversions), as MXNet's copy casts
// element by element: its frontend relies on it (csr_matrix((float32 data, indices, indptr),
// dtype='int32') copies the float values into the int32 array).
int MXNDArraySyncCopyFromNDArray(NDArrayHandle handle_dst, const NDArrayHandle handle_src, const int i) {
  API_BEGIN();
  NDArray src = ND(handle_src);
  NDArray& dst = ND(handle_dst);
  const bool dense = dst.storage_type() == StorageType::kDefault;
  if (dense && src.GetShape() != dst.GetShape())
    Fail("SyncCopyFromNDArray: shapes differ: {} vs {}", src.GetShape(), dst.GetShape());
  const bool aux = !dense && i >= 0 && static_cast<size_t>(i) < dst.num_aux_data();
  const DType want = aux ? dst.aux_type(static_cast<size_t>(i)) : dst.GetDType();
  if (src.storage_type() == StorageType::kDefault && src.GetDType() != want) {
    auto paused = autograd::Pause(autograd::IsTraining());
    src = InvokeOne("Cast", {src}, {{"dtype", std::string(DTypeName(want))}});
  }
  dst.SyncCopyFromNDArray(src, i);
  API_END();
}

int MXNDArraySyncCheckFormat(NDArrayHandle handle, const bool full_check) {
  API_BEGIN();
  ND(handle).SyncCheckFormat(full_check);
  API_END();
}

int MXNDArrayWaitToRead(NDArrayHandle handle) {
  API_BEGIN();
  const NDArray& a = ND(handle);
  if (!a.is_none()) a.WaitToRead();
  API_END();
}

int MXNDArrayWaitToWrite(NDArrayHandle handle) {
  API_BEGIN();
  const NDArray& a = ND(handle);
  if (!a.is_none()) a.WaitToWrite();
  API_END();
}

int MXNDArrayWaitAll() {
  API_BEGIN();
  NDArray::WaitAll();
  API_END();
}

int MXNDArrayFree(NDArrayHandle handle) {
  API_BEGIN();
  delete Handle<HandleKind::kNDArray>::From<NDArrayH>(handle);
  API_END();
}

int MXShallowCopyNDArray(NDArrayHandle src, NDArrayHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = NewND(ND(src));
  API_END();
}

int MXNDArraySlice(NDArrayHandle handle, uint32_t slice_begin, uint32_t slice_end, NDArrayHandle* out) {
  return MXNDArraySlice64(handle, slice_begin, slice_end, out);
}

int MXNDArraySlice64(NDArrayHandle handle, int64_t slice_begin, int64_t slice_end, NDArrayHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = NewND(Slice(ND(handle), slice_begin, slice_end));
  API_END();
}

int MXNDArrayAt(NDArrayHandle handle, uint32_t idx, NDArrayHandle* out) { return MXNDArrayAt64(handle, idx, out); }

int MXNDArrayAt64(NDArrayHandle handle, int64_t idx, NDArrayHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = NewND(At(ND(handle), idx));
  API_END();
}

int MXNDArrayGetStorageType(NDArrayHandle handle, int* out_storage_type) {
  API_BEGIN();
  *NotNull(out_storage_type, "out_storage_type") = static_cast<int>(ND(handle).storage_type());
  API_END();
}

int MXNDArrayReshape(NDArrayHandle handle, int ndim, int* dims, NDArrayHandle* out) {
  API_BEGIN();
  if (ndim > 0) NotNull(dims, "dims");
  std::vector<int64_t> codes(dims, dims + std::max(ndim, 0));
  *NotNull(out, "out") = NewND(ReshapeCodes(ND(handle), codes, false));
  API_END();
}

int MXNDArrayReshape64(NDArrayHandle handle, int ndim, dim_t* dims, bool reverse, NDArrayHandle* out) {
  API_BEGIN();
  if (ndim > 0) NotNull(dims, "dims");
  std::vector<int64_t> codes(dims, dims + std::max(ndim, 0));
  *NotNull(out, "out") = NewND(ReshapeCodes(ND(handle), codes, reverse));
  API_END();
}

int MXNDArrayGetShape(NDArrayHandle handle, uint32_t* out_dim, const uint32_t** out_pdata) {
  API_BEGIN();
  int ndim = 0;
  const uint32_t* data = ShapeData<uint32_t>(ND(handle), "shape32", &ndim);
  *NotNull(out_dim, "out_dim") = static_cast<uint32_t>(ndim);
  *NotNull(out_pdata, "out_pdata") = data;
  API_END();
}

int MXNDArrayGetShapeEx(NDArrayHandle handle, int* out_dim, const int** out_pdata) {
  API_BEGIN();
  *NotNull(out_pdata, "out_pdata") = ShapeData<int>(ND(handle), "shape", NotNull(out_dim, "out_dim"));
  API_END();
}

int MXNDArrayGetShapeEx64(NDArrayHandle handle, int* out_dim, const int64_t** out_pdata) {
  API_BEGIN();
  *NotNull(out_pdata, "out_pdata") = ShapeData<int64_t>(ND(handle), "shape64", NotNull(out_dim, "out_dim"));
  API_END();
}

// The host address of the data (cpu arrays only); does not wait, as in MXNet.
int MXNDArrayGetData(NDArrayHandle handle, void** out_pdata) {
  API_BEGIN();
  const NDArray& a = ND(handle);
  if (a.is_none()) {
    *NotNull(out_pdata, "out_pdata") = nullptr;
  } else {
    a.CheckAndAlloc();
    a.NoteUncountedWrites();  // the caller may write through the pointer
    *NotNull(out_pdata, "out_pdata") = const_cast<void*>(a.GetRawData());
  }
  API_END();
}

int MXNDArrayGetDType(NDArrayHandle handle, int* out_dtype) {
  API_BEGIN();
  const NDArray& a = ND(handle);
  *NotNull(out_dtype, "out_dtype") = a.is_none() ? -1 : static_cast<int>(a.GetDType());
  API_END();
}

int MXNDArrayGetContext(NDArrayHandle handle, int* out_dev_type, int* out_dev_id) {
  API_BEGIN();
  const NDArray& a = ND(handle);
  auto [type, id] = a.is_none() ? std::pair<int, int>{0, 0} : FromContext(a.GetContext());
  if (a.IsSharedMem()) type = kDevCPUShared;
  *NotNull(out_dev_type, "out_dev_type") = type;
  *NotNull(out_dev_id, "out_dev_id") = id;
  API_END();
}

}  // extern "C"
