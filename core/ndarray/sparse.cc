// NDArray's sparse storage: creation, the parts, check_format and SyncCopyFromNDArray.
// Conversions are in sparse_cast.cc.
#include <cstring>

#include "chunk.h"
#include "sparse_parts.h"
#include "weft/ndarray.h"
#include "weft/ndarray_format.h"

namespace weft {

using ndarray_detail::Chunk;
using ndarray_detail::SparseParts;

namespace {

void CheckIndexDType(DType dtype, const char* what) {
  WEFT_CHECK(dtype == DType::kInt64 || dtype == DType::kInt32, "{}: sparse index arrays are int64 or int32, not {}",
             what, DTypeName(dtype));
}

// The shape of the values of a sparse array of `shape` holding `n` rows (row_sparse) or
// elements (csr).
Shape ValuesShape(StorageType stype, const Shape& shape, int64_t n) {
  if (stype == StorageType::kCSR) return Shape{n};
  Shape s = shape;
  s[0] = n;
  return s;
}

}  // namespace

std::vector<uint8_t> ndarray_detail::HostBytes(const NDArray& a) {
  std::vector<uint8_t> out(a.Bytes());
  if (!out.empty()) a.SyncCopyToCPUBytes(out.data(), out.size());
  return out;
}

StorageType NDArray::storage_type() const noexcept {
  if (!chunk_) return StorageType::kUndefined;
  return chunk_->sparse ? chunk_->sparse->stype : StorageType::kDefault;
}

size_t NDArray::num_aux_data() const noexcept { return static_cast<size_t>(NumAuxData(storage_type())); }

NDArray NDArray::CreateSparse(StorageType stype, const Shape& shape, const Context& context, DType dtype,
                              const std::vector<DType>& aux_types) {
  WEFT_CHECK(stype == StorageType::kRowSparse || stype == StorageType::kCSR,
             "NDArray::CreateSparse: storage type {} is not sparse (row_sparse or csr)", StorageTypeName(stype));
  uint64_t elements = 1;  // not allocated, but Size() must be representable
  for (int64_t d : shape) {
    WEFT_CHECK(d >= 0, "NDArray::CreateSparse: shape {} has a negative extent", shape);
    WEFT_CHECK(d == 0 || elements <= (uint64_t{1} << 62) / static_cast<uint64_t>(d),
               "NDArray::CreateSparse: shape {} has more than 2^62 elements", shape);
    elements *= static_cast<uint64_t>(d);
  }
  WEFT_CHECK(stype != StorageType::kCSR || shape.ndim() == 2, "NDArray::CreateSparse: a csr array is 2-d, not {}",
             shape);
  WEFT_CHECK(shape.ndim() >= 1, "NDArray::CreateSparse: a row_sparse array needs at least one dimension");
  const size_t naux = static_cast<size_t>(NumAuxData(stype));
  std::vector<DType> types = aux_types.empty() ? std::vector<DType>(naux, DType::kInt64) : aux_types;
  WEFT_CHECK(types.size() == naux, "NDArray::CreateSparse: {} aux types given, a {} array has {}", types.size(),
             StorageTypeName(stype), naux);
  for (DType t : types) CheckIndexDType(t, "NDArray::CreateSparse");
  auto parts = std::make_shared<SparseParts>();
  parts->stype = stype;
  parts->data = NDArray(ValuesShape(stype, shape, 0), context, false, dtype);
  for (size_t i = 0; i < naux; ++i) {
    const bool indptr = stype == StorageType::kCSR && static_cast<int>(i) == kCSRIndPtr;
    NDArray a(Shape{indptr ? shape[0] + 1 : 0}, context, false, types[i]);
    if (indptr) {
      std::vector<uint8_t> zeros(a.Bytes(), 0);
      a.SyncCopyFromCPUBytes(zeros.data(), zeros.size());
    }
    parts->aux.push_back(std::move(a));
  }
  auto chunk = std::make_shared<Chunk>(context, 0, true);
  chunk->sparse = std::move(parts);
  return NDArray(std::move(chunk), shape, dtype, 0);
}

NDArray NDArray::FromSparseParts(StorageType stype, const Shape& shape, const NDArray& data,
                                 const std::vector<NDArray>& aux) {
  data.CheckDense("NDArray::FromSparseParts (data)");
  WEFT_CHECK(aux.size() == static_cast<size_t>(NumAuxData(stype)),
             "NDArray::FromSparseParts: {} aux arrays given, a {} array has {}", aux.size(), StorageTypeName(stype),
             NumAuxData(stype));
  std::vector<DType> types;
  for (const NDArray& a : aux) {
    a.CheckDense("NDArray::FromSparseParts (aux)");
    types.push_back(a.GetDType());
  }
  NDArray out = CreateSparse(stype, shape, data.GetContext(), data.GetDType(), types);
  out.SyncCopyFromNDArray(data, -1);
  for (size_t i = 0; i < aux.size(); ++i) out.SyncCopyFromNDArray(aux[i], static_cast<int>(i));
  out.SyncCheckFormat(false);
  return out;
}

// Waits for the array's pending writes when an operation that replaces its parts is pushed and has
// not ended (BeginPartsWrite): the parts held now are the ones it replaces. An operation ordered
// after that one (any engine reader of the array) finds it ended and does not wait.
static void WaitForPendingParts(const NDArray& a, const SparseParts& parts) {
  if (parts.pending_writes.load(std::memory_order_acquire) > 0) Engine::Get()->WaitForVar(a.var());
}

NDArray NDArray::data_ndarray() const {
  CheckNotNone("data_ndarray");
  WEFT_CHECK(chunk_->sparse, "data_ndarray: the array is dense; only row_sparse and csr arrays have separate values");
  WaitForPendingParts(*this, *chunk_->sparse);
  std::lock_guard lock(chunk_->sparse->mu);
  return chunk_->sparse->data;
}

NDArray NDArray::aux_ndarray(size_t i) const {
  CheckNotNone("aux_ndarray");
  WEFT_CHECK(chunk_->sparse, "aux_ndarray: the array is dense; only row_sparse and csr arrays have aux arrays");
  WaitForPendingParts(*this, *chunk_->sparse);
  std::lock_guard lock(chunk_->sparse->mu);
  WEFT_CHECK(i < chunk_->sparse->aux.size(), "aux_ndarray: index {} is out of range; a {} array has {} aux arrays", i,
             StorageTypeName(chunk_->sparse->stype), chunk_->sparse->aux.size());
  return chunk_->sparse->aux[i];
}

DType NDArray::aux_type(size_t i) const { return aux_ndarray(i).GetDType(); }

Shape NDArray::aux_shape(size_t i) const { return aux_ndarray(i).GetShape(); }

Shape NDArray::storage_shape() const { return chunk_ && chunk_->sparse ? data_ndarray().GetShape() : shape_; }

void NDArray::SyncCheckFormat(bool full_check) const {
  if (storage_type() != StorageType::kRowSparse && storage_type() != StorageType::kCSR) {
    if (!is_none()) WaitToRead();
    return;
  }
  std::vector<NDArrayAuxRecord> aux;
  for (size_t i = 0; i < num_aux_data(); ++i) {
    const NDArray a = aux_ndarray(i);
    NDArrayAuxRecord& r = aux.emplace_back();
    r.dtype = a.GetDType();
    r.shape = a.GetShape();
    r.data = ndarray_detail::HostBytes(a);
  }
  CheckSparseFormat(storage_type(), shape_, storage_shape(), aux, full_check,
                    fmt::format("check_format of a {} array of shape {}", StorageTypeName(storage_type()), shape_));
}

void NDArray::SetSparseParts(NDArray data, std::vector<NDArray> aux) const {
  CheckNotNone("SetSparseParts");
  WEFT_CHECK(chunk_->sparse, "SetSparseParts: the array is dense");
  WEFT_CHECK(aux.size() == num_aux_data(), "SetSparseParts: {} aux arrays given, a {} array has {}", aux.size(),
             StorageTypeName(storage_type()), num_aux_data());
  // Not a write of its own: the push of the operation that calls this noted it, and a second
  // count here, whenever the kernel runs, would make a reader that saw the first (autograd's
  // record of an input) take the array as overwritten.
  std::lock_guard lock(chunk_->sparse->mu);
  chunk_->sparse->data = std::move(data);
  chunk_->sparse->aux = std::move(aux);
}

void NDArray::BeginPartsWrite() const {
  CheckNotNone("BeginPartsWrite");
  if (chunk_->sparse) chunk_->sparse->pending_writes.fetch_add(1, std::memory_order_acq_rel);
}

void NDArray::EndPartsWrite() const noexcept {
  if (chunk_ && chunk_->sparse) chunk_->sparse->pending_writes.fetch_sub(1, std::memory_order_acq_rel);
}

bool NDArray::PartsWritePending() const noexcept {
  return chunk_ && chunk_->sparse && chunk_->sparse->pending_writes.load(std::memory_order_acquire) > 0;
}

void NDArray::SyncCopyFromNDArray(const NDArray& src, int i) {
  CheckNotNone("SyncCopyFromNDArray");
  src.CheckDense("SyncCopyFromNDArray (source)");
  if (!chunk_->sparse) {
    WEFT_CHECK(i == -1, "SyncCopyFromNDArray: aux index {} given for a dense array (it has no aux arrays)", i);
    CopyFromTo(src, *this);
    WaitToRead();
    return;
  }
  const StorageType stype = storage_type();
  WEFT_CHECK(i >= -1 && i < static_cast<int>(num_aux_data()),
             "SyncCopyFromNDArray: index {} is out of range for a {} array (-1 for the values, 0..{} for aux)", i,
             StorageTypeName(stype), num_aux_data() - 1);
  const Shape& s = src.GetShape();
  if (i == -1) {
    WEFT_CHECK(src.GetDType() == dtype_, "SyncCopyFromNDArray: values of dtype {} given for a {} array of dtype {}",
               DTypeName(src.GetDType()), StorageTypeName(stype), DTypeName(dtype_));
    WEFT_CHECK(s.ndim() >= 1 && s == ValuesShape(stype, shape_, s[0]),
               "SyncCopyFromNDArray: values of shape {} do not fit a {} array of shape {} (expected {})", s,
               StorageTypeName(stype), shape_, ValuesShape(stype, shape_, s.ndim() >= 1 ? s[0] : 0));
  } else {
    const DType want = aux_type(static_cast<size_t>(i));
    WEFT_CHECK(src.GetDType() == want, "SyncCopyFromNDArray: aux array {} of a {} array is {}, {} given", i,
               StorageTypeName(stype), DTypeName(want), DTypeName(src.GetDType()));
    WEFT_CHECK(s.ndim() == 1, "SyncCopyFromNDArray: aux arrays are 1-d, shape {} given", s);
  }
  NDArray part(s, chunk_->ctx, false, src.GetDType());
  CopyFromTo(src, part);
  part.WaitToRead();
  NoteWrite();
  std::lock_guard lock(chunk_->sparse->mu);
  (i == -1 ? chunk_->sparse->data : chunk_->sparse->aux[static_cast<size_t>(i)]) = std::move(part);
}

}  // namespace weft
