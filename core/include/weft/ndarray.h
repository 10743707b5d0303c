// weft core — NDArray: an n-dimensional array on a device, in the style of mxnet-cpp's NDArray
// (include/mxnet-cpp/ndarray.h; method names match it so ported programs compile unchanged).
//
// Model (MXNet's): an NDArray is a view — shape, dtype and a byte offset — of a shared *chunk*:
// one storage block (weft/storage.h) on one Context plus one engine variable (weft/engine.h).
// Copying an NDArray object copies the view, not the data. Slice and Reshape make new views of
// the same chunk, so writes through one are seen through the others. The chunk's memory is
// returned to the storage pool after the last view is gone *and* every engine operation
// pushed on it has completed (Engine::DeleteVariable orders this).
//
// Every read or write of the data goes through the engine: copies are pushed as engine
// operations that read the source's variable and write the destination's, and return at once
// (CopyTo, Copy); the Sync* functions and WaitToRead/WaitToWrite block until the data is
// ready. An error raised by an operation that wrote the array (a failed copy, a failed kernel)
// is rethrown by the next Sync* read or Wait call on it, as the engine describes.
//
// Layout: C order (row-major), densely packed; element type `GetDType()`. Sizes are in elements
// unless a name says bytes.
//
// Storage types (weft/storage_type.h): an array is dense (kDefault) unless made by CreateSparse,
// FromSparseParts, CastStorage (weft/sparse.h) or loaded from a sparse record. A sparse array
// keeps its values and aux arrays as dense NDArrays (data_ndarray(), aux_ndarray(i)) on its
// Context; all views of one sparse array share them, and SyncCopyFromNDArray / CastStorage into
// it replace them for every view (the number of stored rows or elements may change). Functions
// that address the data directly (SyncCopy*CPU*, At, GetData, dptr, Slice, Reshape, AsArray,
// CopyRowsFromHostAsync, operator=) are for dense arrays and throw weft::Error naming the
// storage type for a sparse one; operators take dense arrays (convert with CastStorage).
//
// Thread-safety: distinct NDArray objects may be used from distinct threads, also when they
// view the same chunk (the engine orders their operations). One NDArray object must not be
// assigned to while another thread uses it (as for any C++ value).
//
// Arithmetic (operator+, ...) and random sampling from mxnet-cpp are operators: they live in the
// operator module and are not declared here.
#pragma once

#include "weft/export.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "weft/base.h"
#include "weft/context.h"
#include "weft/engine.h"
#include "weft/storage.h"
#include "weft/storage_type.h"

namespace weft {

namespace ndarray_detail {
struct Chunk;
}
namespace autograd_detail {
struct Node;  // a node of the autograd tape (core/autograd/tape.h)
}

class WEFT_API NDArray {
 public:
  /// The "none" array: no shape, no data, no device (MXNet's empty NDArray). is_none() is true;
  /// every data access throws weft::Error.
  NDArray();
  /// An array of `shape` and `dtype` on `context`. With delay_alloc (the default, as in
  /// mxnet-cpp) memory is taken from the pool on first use (CheckAndAlloc); otherwise now.
  /// Contents are unspecified until written. Throws weft::Error for a negative extent or a
  /// Context without a loaded device (now, or at first use with delay_alloc).
  NDArray(const Shape& shape, const Context& context, bool delay_alloc = true, DType dtype = DType::kFloat32);
  /// A float32 array of `shape` on `context` holding `data` (shape.Size() elements, C order).
  /// Blocks until the copy is done. Throws weft::Error when data.size() != shape.Size().
  NDArray(const std::vector<float>& data, const Shape& shape, const Context& context);
  /// Same, from shape.Size() floats at `data`.
  NDArray(const float* data, const Shape& shape, const Context& context);
  /// A 1-d float32 array on cpu(0) holding `size` floats from `data` (mxnet-cpp's form).
  NDArray(const float* data, size_t size);
  /// A 1-d float32 array on cpu(0) holding `data`.
  explicit NDArray(const std::vector<float>& data);

  // ---- what it is -------------------------------------------------------------------------
  /// True for NDArray() (and arrays loaded from MXNet's empty records).
  bool is_none() const noexcept { return chunk_ == nullptr; }
  /// The shape (mxnet-cpp returns std::vector<mx_uint>; weft::Shape indexes and iterates the
  /// same way). Empty Shape for a none array.
  Shape GetShape() const { return shape_; }
  /// The element type (of the values, for a sparse array).
  DType GetDType() const noexcept { return dtype_; }
  /// The device the data lives on. Throws weft::Error for a none array.
  Context GetContext() const;
  /// Number of elements (shape.Size(), counting a sparse array's zeros; 0 for a none array).
  size_t Size() const noexcept;
  /// Number of bytes of dense data: Size() * DTypeSize(GetDType()) (0 for a sparse array).
  size_t Bytes() const noexcept;

  // ---- copies -------------------------------------------------------------------------------
  /// Writes Size() float32 elements from `data` into the array and waits until done. Throws
  /// weft::Error when `size` != Size() or the dtype is not float32 (use SyncCopyFromCPUBytes).
  void SyncCopyFromCPU(const float* data, size_t size);
  void SyncCopyFromCPU(const std::vector<float>& data);
  /// Writes exactly Bytes() bytes (elements of GetDType(), C order) and waits until done.
  void SyncCopyFromCPUBytes(const void* data, size_t bytes);
  /// Waits for pending writes, then copies Size() float32 elements to `data`. `size` 0 means
  /// Size(); any other value must equal Size(). Throws weft::Error for another dtype, or the
  /// error of a failed operation that wrote this array. On the cpu the calling thread copies as
  /// soon as the writes are done (no queued op), unless the memory may also be written through
  /// another array (shared, borrowed or external memory: then the read is queued on the device).
  void SyncCopyToCPU(float* data, size_t size = 0) const;
  /// Resizes *data to Size() and fills it (same rules).
  void SyncCopyToCPU(std::vector<float>* data, size_t size = 0) const;
  /// Copies exactly Bytes() bytes (elements of GetDType()) to `data`.
  void SyncCopyToCPUBytes(void* data, size_t bytes) const;
  /// Pushes a copy of this array into *other (same shape and dtype required; any two devices:
  /// when either is sparse the copy converts to the destination's storage type, synchronously;
  /// a device copy within one plugin, through host memory between plugins) and returns *other
  /// at once; the engine orders later uses of either array after the copy. Throws weft::Error
  /// naming both shapes/dtypes on a mismatch, or when either array is none.
  NDArray CopyTo(NDArray* other) const;
  /// A new array on `context` with a copy of this array's data (pushed; returns at once), of the
  /// same storage type.
  NDArray Copy(const Context& context) const;
  /// Pushes a copy from `from` to `to` (same rules as CopyTo). `priority` as Engine::Push.
  static void CopyFromTo(const NDArray& from, const NDArray& to, int priority = 0);
  /// Sets every element to `scalar` (converted to the dtype) — pushed, returns at once.
  NDArray& operator=(float scalar);

  // ---- sparse storage (MXNet's NDArray names; layouts in weft/storage_type.h) -----------------
  /// The storage type: kUndefined for a none array, kDefault for a dense one.
  StorageType storage_type() const noexcept;
  /// A sparse array of `shape` with no stored values (all zeros): row_sparse with 0 indices,
  /// csr with indptr of shape[0] + 1 zeros and 0 indices. `aux_types` (default int64 each)
  /// gives the index dtypes, int32 or int64. Throws weft::Error for kDefault/kUndefined, a csr
  /// shape that is not 2-d, a row_sparse shape of ndim 0, a negative extent, a shape of more
  /// than 2^62 elements, another index dtype or a Context without a loaded device.
  static NDArray CreateSparse(StorageType stype, const Shape& shape, const Context& context,
                              DType dtype = DType::kFloat32, const std::vector<DType>& aux_types = {});
  /// A sparse array from its parts (MXNet's row_sparse_array((data, indices)) and
  /// csr_matrix((data, indices, indptr))): `data` the values ((nnz_rows, d1...) or (nnz,)),
  /// `aux` the aux arrays in MXNet's order (row_sparse: indices; csr: indptr, indices), all on
  /// `data`'s Context (others are copied there). The parts are copied, so later writes to them
  /// do not change the result. Blocks until the copies are done. The format is checked as
  /// SyncCheckFormat(false) does (shapes only); call SyncCheckFormat(true) to check the indices.
  /// Throws weft::Error for a none or sparse part, a dense `stype`, or a shape mismatch.
  static NDArray FromSparseParts(StorageType stype, const Shape& shape, const NDArray& data,
                                 const std::vector<NDArray>& aux);
  /// The number of aux arrays (NumAuxData(storage_type())).
  size_t num_aux_data() const noexcept;
  /// The values of a sparse array: a dense array of storage_shape() sharing their memory
  /// (writes through it change the sparse array). Throws weft::Error for a dense or none array.
  NDArray data_ndarray() const;
  /// Aux array `i` (see num_aux_data) of a sparse array, sharing its memory. Throws weft::Error
  /// for a dense array or i out of range.
  NDArray aux_ndarray(size_t i) const;
  /// The dtype / shape of aux array `i` (errors as aux_ndarray).
  DType aux_type(size_t i) const;
  Shape aux_shape(size_t i) const;
  /// The shape of the stored values ((nnz_rows, d1, ...) for row_sparse, (nnz,) for csr).
  Shape storage_shape() const;
  /// MXNet's check_format: waits for pending writes, then checks the parts as CheckSparseFormat
  /// (weft/ndarray_format.h) describes; with full_check also every index. Throws weft::Error
  /// with MXNet's message and the position that is wrong. A dense array always passes.
  void SyncCheckFormat(bool full_check) const;
  /// MXNet's SyncCopyFromNDArray: with i == -1 copies `src` (dense) into the values of this
  /// sparse array, else into its aux array i; the part takes `src`'s shape (so the number of
  /// stored rows can change; for a dense destination with i == -1 it is a plain copy, shapes
  /// equal). Blocks until done. The caller sets all parts before using the array. Throws
  /// weft::Error for a sparse or none `src`, i out of range, or a dtype that differs from the
  /// part's.
  void SyncCopyFromNDArray(const NDArray& src, int i = -1);

  // ---- element access (host reads; they wait for pending writes) ------------------------------
  /// Offset in elements of [h][w] of a 2-d array, and of [c][h][w] of a 3-d array.
  size_t Offset(size_t h, size_t w) const;
  size_t Offset(size_t c, size_t h, size_t w) const;
  /// The element at flat `index` / [h][w] / [c][h][w], converted to float. Waits for pending
  /// writes; works on any device (non-host devices copy the one element). Throws weft::Error for
  /// an index out of range.
  float At(size_t index) const;
  float At(size_t h, size_t w) const;
  float At(size_t c, size_t h, size_t w) const;
  /// Host pointer to the float32 data, for host-addressable devices (cpu) only; does not wait
  /// (call WaitToRead first, as in mxnet-cpp). Throws weft::Error naming the device otherwise,
  /// or for another dtype (use GetRawData).
  const float* GetData() const;
  /// Host pointer to the data of any dtype (host-addressable devices only; does not wait).
  const void* GetRawData() const;

  // ---- views ----------------------------------------------------------------------------------
  /// Rows [begin, end) along the first axis, sharing memory. Throws weft::Error unless
  /// begin <= end <= GetShape()[0] and ndim >= 1.
  NDArray Slice(size_t begin, size_t end) const;
  /// The same data seen with `new_shape` (sharing memory). One extent may be -1 (inferred).
  /// Throws weft::Error when the sizes differ.
  NDArray Reshape(const Shape& new_shape) const;
  /// A view of the chunk from this array's offset with another shape and dtype (MXNet's
  /// NDArray::AsArray; executors carve planned memory this way). Throws weft::Error when the view
  /// needs more bytes than the chunk has past the offset.
  NDArray AsArray(const Shape& shape, DType dtype) const;

  // ---- waiting --------------------------------------------------------------------------------
  /// Blocks until every pending write to the array has completed; rethrows its error, if any.
  void WaitToRead() const;
  /// Blocks until every pending read and write has completed; rethrows an error, if any.
  void WaitToWrite() const;
  /// Engine::WaitForAll.
  static void WaitAll();

  // ---- files (the MXNet NDArray list format, weft/ndarray_format.h) ----------------------------
  /// Saves the arrays with names (mx.nd.save of a dict; checkpoints use "arg:x"/"aux:x").
  /// Waits for pending writes. Records say the array's device as MXNet would: cpu(i), gpu(i) for
  /// cuda/hip, cpu(0) for other device types. Writes atomically (temp file + rename). Throws
  /// weft::Error naming the file on I/O errors or a none array.
  static void Save(const std::string& file_name, const std::map<std::string, NDArray>& array_map);
  /// Saves the arrays without names.
  static void Save(const std::string& file_name, const std::vector<NDArray>& array_list);
  /// Loads a file written by weft or MXNet (record versions 0..3, dense only). Arrays land on
  /// cpu(0), or on the device they were saved from when that device exists here (a gpu(0)
  /// record loads onto cpu(0) on a machine without GPUs). Fills *array_list with every array
  /// (when given) and *array_map with name -> array (when given and the file has names).
  /// Throws weft::Error naming the file, record and problem (see ParseNDArrayList).
  static void Load(const std::string& file_name, std::vector<NDArray>* array_list = nullptr,
                   std::map<std::string, NDArray>* array_map = nullptr);
  /// Loads a file with names. Throws weft::Error when it holds unnamed arrays (use LoadToList).
  static std::map<std::string, NDArray> LoadToMap(const std::string& file_name);
  static std::vector<NDArray> LoadToList(const std::string& file_name);
  /// As Load, from a whole file's bytes in memory.
  static void LoadFromBuffer(const void* buffer, size_t size, std::vector<NDArray>* array_list = nullptr,
                             std::map<std::string, NDArray>* array_map = nullptr);
  static std::map<std::string, NDArray> LoadFromBufferToMap(const void* buffer, size_t size);
  static std::vector<NDArray> LoadFromBufferToList(const void* buffer, size_t size);
  /// One array as a single record (MXNet's MXNDArraySaveRawBytes; used when pickling), and back.
  std::vector<uint8_t> SaveToRawBytes() const;
  static NDArray LoadFromRawBytes(const void* buffer, size_t size);

  // ---- internals for operators and executors ------------------------------------------------
  /// The engine variable guarding the data (shared by all views of the chunk). Push operations
  /// reading the array with it in const_vars, writing it in mutable_vars. Null for none.
  VarHandle var() const;
  /// Allocates the chunk's memory now if it was delayed. Thread-safe; no-op when allocated.
  /// Call before pushing an operation that uses dptr() (pushing code must not allocate inside
  /// the engine function). Throws weft::Error / OutOfMemoryError from Storage::Alloc.
  void CheckAndAlloc() const;
  /// The chunk's device address (after CheckAndAlloc; 0 before, and for empty arrays) and this
  /// view's byte offset into it: the data starts at dptr() + offset() on the device.
  weft_device_ptr dptr() const;
  uint64_t offset() const noexcept { return offset_; }
  /// The chunk's storage block (null before allocation).
  Storage::Handle storage_handle() const;
  /// Asynchronous gather from host memory, for data iterators that own their samples: row i of
  /// this array (rows along axis 0, each `row_bytes` bytes) is copied from
  /// `src + rows[i] * row_bytes`; runs of consecutive rows are copied as one block. Returns at
  /// once: the copy is queued as a write of this array (ordered after its pending reads and
  /// writes), so there is neither a staging copy on the calling thread nor a wait as with
  /// SyncCopyFromCPU. Devices that are not host-addressable get the rows gathered into a staging
  /// buffer here first. The caller keeps `src` alive and unchanged until the copy completed
  /// (WaitToRead). Throws weft::Error when rows.size() * row_bytes != Bytes().
  void CopyRowsFromHostAsync(const void* src, std::vector<uint32_t> rows, size_t row_bytes);
  /// A new (float32 unless `dtype`) array of `shape` on `context` holding rows gathered from
  /// host memory as CopyRowsFromHostAsync does. On host-addressable devices the rows are copied
  /// on the calling thread before it returns: a new array has no pending operations, so the
  /// gather neither waits nor queues behind the engine's work (a data iterator's gather then
  /// overlaps the previous step's compute); `src` may change once it returned. Elsewhere it is
  /// CopyRowsFromHostAsync on a new array. Throws weft::Error as CopyRowsFromHostAsync.
  static NDArray FromHostRows(const void* src, std::vector<uint32_t> rows, size_t row_bytes, const Shape& shape,
                              const Context& context, DType dtype = DType::kFloat32);
  /// The same data (same memory, shape, dtype and offset) under an engine variable of its own:
  /// operations pushed on the result are not ordered with those on this array, and waiting for
  /// the result does not wait for them. For code that works on an array from inside an operation
  /// that already holds its dependencies (host operators, weft/host_op.h); the caller orders the
  /// two. The memory stays alive while the result does. Throws weft::Error for a none array.
  WEFT_HIDDEN NDArray WithOwnVariable() const;
  /// Replaces the parts of this sparse array (every view shares them) with `data` and `aux`, which
  /// it then holds, without copying: for a kernel that allocates a sparse output while it computes
  /// (weft_kernel_args.alloc_sparse_output), from inside the operation that writes this array.
  /// The parts must be dense, on this array's Context, with this array's dtype and aux types,
  /// `data` of the values' shape for aux[kRowSparseIndices] / aux[kCSRIndices]'s length; not
  /// checked beyond that (the kernel writes them next). Throws weft::Error for a dense array or
  /// a wrong number of aux arrays.
  WEFT_HIDDEN void SetSparseParts(NDArray data, std::vector<NDArray> aux) const;
  /// A pushed operation will replace the parts of this sparse array (SetSparseParts while it
  /// runs): until it calls EndPartsWrite (on its engine thread, also when it fails, before it
  /// completes), data_ndarray, aux_ndarray and what reads through them wait for the array's
  /// pending writes first, so a host reader never sees the parts it is replacing. The caller need
  /// not wait for the operation (MXNet's sparse outputs are asynchronous as well). No-op for a
  /// dense array.
  WEFT_HIDDEN void BeginPartsWrite() const;
  WEFT_HIDDEN void EndPartsWrite() const noexcept;
  /// True while an operation marked with BeginPartsWrite has not ended: the current parts are
  /// about to be replaced (for code that collects dependencies and must not wait).
  WEFT_HIDDEN bool PartsWritePending() const noexcept;
  /// An array over memory the caller owns (zero copy; DLPack's from_dlpack): `bytes` bytes at `ptr`
  /// on `context` (a host pointer for cpu), seen as `shape` and `dtype` (C order, packed). The array
  /// has an engine variable of its own; `release` (may be empty) runs once, after the last view is
  /// gone and every operation on the array has completed, and is where the caller frees the
  /// memory. Throws weft::Error when shape and dtype need more than `bytes`, or for a Context
  /// without a loaded device (then `release` is not called).
  static NDArray FromExternal(const Context& context, weft_device_ptr ptr, uint64_t bytes, const Shape& shape,
                              DType dtype, std::function<void()> release);
  /// True when both arrays view the same chunk.
  bool SharesChunkWith(const NDArray& other) const noexcept { return chunk_ && chunk_ == other.chunk_; }
  /// Counts a write to the chunk that is about to be pushed (every path that pushes a write to an
  /// array calls it: copies, fills, kernels). Autograd compares the count of an array it saved for
  /// backward with the count at saving time to refuse gradients from overwritten values. Views of
  /// one chunk share the count. Thread-safe; no-op for a none array.
  void NoteWrite() const noexcept;
  /// The number of writes noted so far (0 for a none array). Thread-safe.
  uint64_t write_count() const noexcept;
  /// True unless the array's memory may change without a noted write: memory the caller owns
  /// (FromExternal, shared memory), memory another array borrows with a variable of its own, or
  /// memory whose pointer was handed out for writing (NoteUncountedWrites). A KVStore pull copies
  /// only the changed rows into an out whose writes are all counted. Thread-safe.
  bool WritesCounted() const noexcept;
  /// Marks the memory as written outside the engine from now on (for C APIs that hand out its
  /// pointer: MXNDArrayGetData, DLPack). Thread-safe; no-op for a none array.
  void NoteUncountedWrites() const noexcept;

  // ---- autograd (weft/autograd.h) -----------------------------------------------------------------
  /// This view without its place in a recorded graph (MXNet's NDArray::Detach, MXNDArrayDetach):
  /// the same data, shape and dtype, but autograd treats it as a constant; a marked variable's
  /// detached copy is not a variable. Views (Slice, Reshape, AsArray) are always detached.
  NDArray Detach() const;
  /// The recorded node that produced this array (or the variable node of a marked array) and
  /// the output index; null when the array is not part of a recorded graph. Set by autograd
  /// (core/autograd); copying an NDArray copies the reference, as MXNet's NDArray copies entry_.
  const std::shared_ptr<autograd_detail::Node>& autograd_node() const noexcept { return ag_node_; }
  uint32_t autograd_index() const noexcept { return ag_index_; }
  void SetAutogradEntry(std::shared_ptr<autograd_detail::Node> node, uint32_t index) noexcept {
    ag_node_ = std::move(node);
    ag_index_ = index;
  }

  // ---- shared memory (MXNet's cpu_shared arrays: gluon.data.DataLoader's worker processes) --------
  /// A new array of `shape` and `dtype` in POSIX shared memory on the host, usable as a cpu(0)
  /// array by every op (GetContext() is cpu(0); IsSharedMem() tells it apart). The segment is
  /// created with shm_open and unlinked at once, so it lives exactly as long as some process maps
  /// it or holds its descriptor (no name is left behind after a crash). Contents are zeros.
  /// Throws weft::Error naming the system call and errno text when the segment cannot be made.
  static NDArray CreateSharedMem(const Shape& shape, DType dtype = DType::kFloat32);
  /// Maps a segment made by CreateSharedMem (MXNDArrayCreateFromSharedMemEx): `shared_pid` is the
  /// creating process, `shared_id` a file descriptor *in this process* for the segment: one
  /// received from the creator over a Unix socket (SCM_RIGHTS, what Python's
  /// multiprocessing.reduction.DupFd does for DataLoader), or, when `shared_pid` is this process,
  /// the creator's own descriptor. The array takes ownership of a received descriptor (closed
  /// when the memory is freed); the creator's own is duplicated. The data is shared: writes on
  /// either side are seen by the other (order them across processes yourself). Throws weft::Error
  /// when the descriptor is not open, or the segment holds fewer bytes than shape and dtype need.
  static NDArray FromSharedMem(int shared_pid, int shared_id, const Shape& shape, DType dtype = DType::kFloat32);
  /// True for arrays made by CreateSharedMem / FromSharedMem (and their views).
  bool IsSharedMem() const noexcept;
  /// The (creating process id, file descriptor in this process) of a shared-memory array
  /// (MXNDArrayGetSharedMemHandle). Waits for pending writes first, so the other process sees the
  /// data once it has the handle. Throws weft::Error for an array not in shared memory or a view
  /// that does not start at the segment's first byte.
  void GetSharedMemHandle(int* shared_pid, int* shared_id) const;

 private:
  WEFT_HIDDEN NDArray(std::shared_ptr<ndarray_detail::Chunk> chunk, Shape shape, DType dtype, uint64_t offset);
  void CheckNotNone(const char* what) const;
  void CheckDense(const char* what) const;
  void CopyFromHostSync(const void* data, size_t bytes);
  void CopyToHostSync(void* data, size_t bytes, uint64_t extra_offset) const;

  std::shared_ptr<ndarray_detail::Chunk> chunk_;
  Shape shape_;
  DType dtype_ = DType::kFloat32;
  uint64_t offset_ = 0;                             // bytes into the chunk
  std::shared_ptr<autograd_detail::Node> ag_node_;  // see autograd_node()
  uint32_t ag_index_ = 0;
};

/// Prints the data like mxnet-cpp: "[1, 2, 3, ]" (every element followed by ", "; waits for
/// pending writes; a none array prints "[]"; a sparse array prints its dense elements).
WEFT_API std::ostream& operator<<(std::ostream& out, const NDArray& array);

}  // namespace weft
