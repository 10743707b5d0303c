// MXNet C API: DLPack (mx.nd.to_dlpack_for_read/write, mx.nd.from_dlpack) — zero-copy exchange of
// arrays with other frameworks. Layouts from dlpack.h (v0.3, the one MXNet 1.9 uses): DLContext
// {device_type, device_id}, DLDataType {code, bits, lanes}, DLTensor, DLManagedTensor.
#include <cstring>

#include "common.h"

using namespace weft;
using namespace weft::mx;

namespace {

struct DLContext {
  int device_type;  // kDLCPU = 1, kDLGPU = 2
  int device_id;
};
struct DLDataType {
  uint8_t code;  // kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLContext ctx;
  int ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

constexpr int kDLCPU = 1;

DLDataType ToDL(DType t) {
  switch (t) {
    case DType::kFloat32:
      return {2, 32, 1};
    case DType::kFloat64:
      return {2, 64, 1};
    case DType::kFloat16:
      return {2, 16, 1};
    case DType::kBfloat16:
      return {4, 16, 1};
    case DType::kUint8:
      return {1, 8, 1};
    case DType::kUint16:
      return {1, 16, 1};
    case DType::kUint32:
      return {1, 32, 1};
    case DType::kUint64:
      return {1, 64, 1};
    case DType::kInt8:
      return {0, 8, 1};
    case DType::kInt16:
      return {0, 16, 1};
    case DType::kInt32:
      return {0, 32, 1};
    case DType::kInt64:
      return {0, 64, 1};
    case DType::kBool:
      return {1, 8, 1};
  }
  Fail("DLPack: dtype {} has no DLPack type", static_cast<int>(t));
}

DType FromDL(const DLDataType& d) {
  if (d.lanes != 1) Fail("DLPack: vector types ({} lanes) are not supported", d.lanes);
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBfloat16, DType::kUint8, DType::kUint16,
                  DType::kUint32, DType::kUint64, DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64}) {
    const DLDataType x = ToDL(t);
    if (x.code == d.code && x.bits == d.bits) return t;
  }
  Fail("DLPack: type code {} with {} bits has no weft dtype", d.code, d.bits);
}

// What a tensor handed out keeps alive: the array and the shape the DLTensor points to.
struct Export {
  DLManagedTensor tensor{};
  NDArray array;
  std::vector<int64_t> shape;
};

void DeleteExport(DLManagedTensor* self) { delete static_cast<Export*>(self->manager_ctx); }

}  // namespace

extern "C" {

// A DLPack view of a cpu array (the frontend waits for pending writes first); the array stays
// alive until the consumer calls the tensor's deleter.
int MXNDArrayToDLPack(NDArrayHandle handle, DLManagedTensorHandle* out_dlpack) {
  API_BEGIN();
  const NDArray& a = ND(handle);
  if (a.is_none()) Fail("to_dlpack: the array is none");
  if (a.GetContext().GetDeviceType() != "cpu") {
    Fail("to_dlpack: only cpu arrays can be exported (the array is on {}; copy it to mx.cpu() first)", a.GetContext());
  }
  a.CheckAndAlloc();
  a.NoteUncountedWrites();  // the importer may write the memory (to_dlpack_for_write)
  auto e = std::make_unique<Export>();
  e->array = a;
  const Shape shape = a.GetShape();
  e->shape.assign(shape.begin(), shape.end());
  DLTensor& t = e->tensor.dl_tensor;
  t.data = reinterpret_cast<void*>(a.dptr());
  t.byte_offset = a.offset();
  t.ctx = {kDLCPU, a.GetContext().GetDeviceId()};
  t.ndim = static_cast<int>(e->shape.size());
  t.dtype = ToDL(a.GetDType());
  t.shape = e->shape.data();
  t.strides = nullptr;  // compact, row-major
  e->tensor.manager_ctx = e.get();
  e->tensor.deleter = DeleteExport;
  *NotNull(out_dlpack, "out_dlpack") = &e.release()->tensor;
  API_END();
}

// An array over the tensor's memory (zero copy). This library owns the tensor from now on and calls
// its deleter once the array and every operation on it are gone; with transient_handle the caller
// keeps ownership and the memory must outlive the array.
int MXNDArrayFromDLPackEx(DLManagedTensorHandle dlpack, const bool transient_handle, NDArrayHandle* out_handle) {
  API_BEGIN();
  auto* m = static_cast<DLManagedTensor*>(NotNull(dlpack, "dlpack"));
  const DLTensor& t = m->dl_tensor;
  if (t.ctx.device_type != kDLCPU)
    Fail("from_dlpack: only cpu tensors can be imported (device type {})", t.ctx.device_type);
  if (t.ndim < 0 || (t.ndim > 0 && t.shape == nullptr)) Fail("from_dlpack: bad shape (ndim {})", t.ndim);
  Shape shape(std::vector<int64_t>(t.shape, t.shape + t.ndim));
  if (t.strides) {  // only compact row-major tensors can be seen without a copy
    int64_t expect = 1;
    for (int i = t.ndim - 1; i >= 0; --i) {
      if (shape[static_cast<size_t>(i)] != 1 && t.strides[i] != expect) {
        Fail("from_dlpack: the tensor is not compact row-major (stride {} on axis {})", t.strides[i], i);
      }
      expect *= shape[static_cast<size_t>(i)];
    }
  }
  const DType dtype = FromDL(t.dtype);
  const uint64_t bytes = static_cast<uint64_t>(shape.Size()) * DTypeSize(dtype);
  auto* data = static_cast<char*>(t.data) + t.byte_offset;
  std::function<void()> release;
  if (!transient_handle)
    release = [m] {
      if (m->deleter) m->deleter(m);
    };
  *NotNull(out_handle, "out_handle") = NewND(NDArray::FromExternal(
      Context::cpu(t.ctx.device_id), reinterpret_cast<weft_device_ptr>(data), bytes, shape, dtype, std::move(release)));
  API_END();
}

int MXNDArrayFromDLPack(DLManagedTensorHandle dlpack, NDArrayHandle* out_handle) {
  return MXNDArrayFromDLPackEx(dlpack, false, out_handle);
}

int MXNDArrayCallDLPackDeleter(DLManagedTensorHandle dlpack) {
  API_BEGIN();
  auto* m = static_cast<DLManagedTensor*>(dlpack);
  if (m != nullptr && m->deleter != nullptr) m->deleter(m);
  API_END();
}

}  // extern "C"
