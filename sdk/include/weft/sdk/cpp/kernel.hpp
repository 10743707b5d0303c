// weft SDK C++ helpers — kernels as ordinary C++ classes, for any device.
//
// A kernel author writes one class per (op, algorithm):
//
//   class ReluKernel {
//    public:
//     explicit ReluKernel(const weft::sdk::KernelSetup& setup);   // once per node: parse attrs,
//                                                                  // check shapes, pick algorithms
//     uint64_t WorkspaceBytes() const;                             // optional (default 0)
//     void Compute(const weft::sdk::DeviceCall& call) const;       // every run
//   };
//
// and registers it in a KernelTable:
//
//   weft::sdk::KernelTable table("cuda", host);              // the device type it runs on
//   table.Add<ReluKernel>("Activation", WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32));
//   const weft_operator_api* api = table.Api();               // hand to the host
//
// A DeviceCall gives the tensors as device allocations (weft_device_ptr + byte offset, dtype,
// shape, optional strides), the stream to queue work on, and — through the host — the native
// handles behind them (DeviceCall::NativeStream / NativeMemory: a cudaStream_t, a
// VkCommandBuffer, a device address). Compute queues its work on call.stream and returns (see
// sdk/operator.h "Where kernels run"); on the NULL stream it computes before returning.
//
// Kernels over host memory (the CPU plugin, and devices that reach their memory through host
// pointers) are written against host_kernel.hpp instead: `void Compute(const KernelCall&)` with
// typed host pointers. KernelTable::Add accepts both kinds; a host kernel is wrapped by
// HostKernelAdapter (host_kernel.hpp), which resolves every tensor to a host pointer with the
// table's PointerResolver before Compute sees it.
//
// The table makes the C `weft_kernel_def`s: create_state constructs the class from a KernelSetup
// (and records WorkspaceBytes()), compute builds the call, destroy_state deletes the object.
// Every trampoline runs inside Guard() (error.hpp), so a kernel reports bad input by throwing
// weft::sdk::Error; nothing crosses the C ABI as an exception. A setup error should use
// WEFT_ERR_UNSUPPORTED (attribute values or shapes the kernel cannot handle) or
// WEFT_ERR_INVALID_ARGUMENT (inconsistent shapes), naming the op and the value. The trampolines
// find their table through the def's kernel_data: no per-library globals.
//
// Threading contract: the host may create, compute and destroy different states concurrently and
// may call compute on one state from several threads at once (imperative calls, several
// executors sharing a cached state), so Compute is const and must not mutate the object (use
// per-call workspace, or a lock around any cache).
#pragma once

#include <algorithm>
#include <array>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <source_location>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/sdk/cpp/attrs.hpp"
#include "weft/sdk/cpp/error.hpp"
#include "weft/sdk/cpp/params.hpp"
#include "weft/sdk/device.h"
#include "weft/sdk/host.h"
#include "weft/sdk/operator.h"
#include "weft/sdk/types.h"

namespace weft::sdk {

class KernelTable;

/// Bytes of one element of dtype `d` (WEFT_DTYPE_*); throws WEFT_ERR_INVALID_ARGUMENT for an
/// unknown code.
inline size_t ElementSize(int32_t d) {
  switch (d) {
    case WEFT_DTYPE_FLOAT64:
    case WEFT_DTYPE_INT64:
    case WEFT_DTYPE_UINT64:
      return 8;
    case WEFT_DTYPE_FLOAT32:
    case WEFT_DTYPE_INT32:
    case WEFT_DTYPE_UINT32:
      return 4;
    case WEFT_DTYPE_FLOAT16:
    case WEFT_DTYPE_BFLOAT16:
    case WEFT_DTYPE_INT16:
    case WEFT_DTYPE_UINT16:
      return 2;
    case WEFT_DTYPE_UINT8:
    case WEFT_DTYPE_INT8:
    case WEFT_DTYPE_BOOL:
      return 1;
    default:
      throw Error(WEFT_ERR_INVALID_ARGUMENT, "unknown dtype code " + std::to_string(d));
  }
}

/// MXNet's name of dtype `d` ("float32", ...), for messages; "dtype(<code>)" when unknown.
inline std::string DTypeName(int32_t d) {
  static constexpr const char* kNames[WEFT_DTYPE_COUNT] = {"float32", "float64", "float16", "uint8", "int32",
                                                           "int8",    "int64",   "bool",    "int16", "uint16",
                                                           "uint32",  "uint64",  "bfloat16"};
  if (d >= 0 && d < WEFT_DTYPE_COUNT) return kNames[d];
  return "dtype(" + std::to_string(d) + ")";
}

/// The WEFT_DTYPE_* code of a C++ element type (float, double, int32_t, ...); -1 when none.
template <typename T>
constexpr int32_t DTypeOf() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, float>)
    return WEFT_DTYPE_FLOAT32;
  else if constexpr (std::is_same_v<U, double>)
    return WEFT_DTYPE_FLOAT64;
  else if constexpr (std::is_same_v<U, uint8_t>)
    return WEFT_DTYPE_UINT8;
  else if constexpr (std::is_same_v<U, int8_t>)
    return WEFT_DTYPE_INT8;
  else if constexpr (std::is_same_v<U, int16_t>)
    return WEFT_DTYPE_INT16;
  else if constexpr (std::is_same_v<U, uint16_t>)
    return WEFT_DTYPE_UINT16;
  else if constexpr (std::is_same_v<U, int32_t>)
    return WEFT_DTYPE_INT32;
  else if constexpr (std::is_same_v<U, uint32_t>)
    return WEFT_DTYPE_UINT32;
  else if constexpr (std::is_same_v<U, int64_t>)
    return WEFT_DTYPE_INT64;
  else if constexpr (std::is_same_v<U, uint64_t>)
    return WEFT_DTYPE_UINT64;
  else if constexpr (std::is_same_v<U, bool>)
    return WEFT_DTYPE_BOOL;
  else
    return -1;
}

namespace detail {
/// Extent of axis i of `shape`; negative i counts from the end (-1 = last). Throws when out of
/// range. Shared by every tensor view.
inline int64_t AxisExtent(std::span<const int64_t> shape, int i) {
  const int n = static_cast<int>(shape.size());
  if (i < 0) i += n;
  if (i < 0 || i >= n) throw Error(WEFT_ERR_INVALID_ARGUMENT, "axis " + std::to_string(i) + " out of range");
  return shape[static_cast<size_t>(i)];
}
/// Number of elements of `shape` (1 for a scalar).
inline int64_t Elements(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}
}  // namespace detail

/// Shape and dtype of one tensor at setup time (no data yet).
struct TensorDesc {
  int32_t dtype = WEFT_DTYPE_FLOAT32;
  std::vector<int64_t> shape;  // extents in elements; empty for a scalar

  int ndim() const { return static_cast<int>(shape.size()); }
  /// Extent of axis i; negative i counts from the end (-1 = last). Throws when out of range.
  int64_t dim(int i) const { return detail::AxisExtent(shape, i); }
  /// Number of elements (1 for a scalar).
  int64_t size() const { return detail::Elements(shape); }
  uint64_t bytes() const { return static_cast<uint64_t>(size()) * ElementSize(dtype); }
};

/// What a sparse kernel's ClaimStorage sees (weft_storage_args; SDK 2.1).
struct StorageQuery {
  std::string op_name;
  AttrMap attrs;                       // every attribute, defaults filled in
  std::vector<int32_t> input_stypes;   // WEFT_STYPE_* per input
  std::vector<TensorDesc> inputs;      // full shapes and dtypes
  std::vector<int32_t> output_stypes;  // in: -1 free, else required; out: the claim
};

/// Everything a kernel's constructor sees: one per node, built by create_state.
struct KernelSetup {
  std::string op_name;  // e.g. "FullyConnected" or "_backward_FullyConnected"
  int32_t device = 0;   // device index within the plugin
  AttrMap attrs;        // every attribute, defaults filled in by the host
  std::vector<TensorDesc> inputs, outputs, aux;
  const weft_host_api* host = nullptr;  // the host's services (config, log), from the table
  const KernelTable* table = nullptr;   // the table that registered the kernel
  /// WEFT_STYPE_* of each input and output for a sparse kernel (AddSparse), empty for dense ones;
  /// `inputs` / `outputs` then hold the arrays' full shapes.
  std::vector<int32_t> input_stypes, output_stypes;

  /// The op's parameter struct (weft/sdk/ops/*.hpp, or the plugin's own) parsed from `attrs`:
  /// `const auto p = setup.Params<sdk::PoolingParam>();`. Throws as ParseParams, the message
  /// prefixed by the op's name.
  template <class P>
  P Params() const {
    try {
      return ParseParams<P>(attrs);
    } catch (const Error& e) {
      throw Error(e.code(), op_name + ": " + e.what());
    }
  }

  /// Throws WEFT_ERR_INVALID_ARGUMENT "<op>: expects N inputs, got M" unless the counts match
  /// (pass -1 to skip a count). Kernels call it first so later indexing is safe.
  void ExpectCounts(int num_inputs, int num_outputs, int num_aux = 0) const {
    auto check = [&](const char* what, int want, size_t got) {
      if (want >= 0 && static_cast<size_t>(want) != got)
        throw Error(WEFT_ERR_INVALID_ARGUMENT,
                    op_name + ": expects " + std::to_string(want) + " " + what + ", got " + std::to_string(got));
    };
    check("inputs", num_inputs, inputs.size());
    check("outputs", num_outputs, outputs.size());
    check("aux states", num_aux, aux.size());
  }
};

/// A tensor during a device Compute: an allocation of the device's plugin plus a byte offset,
/// dtype, shape and optional strides (in elements; empty = contiguous row-major). Borrowed for
/// the duration of the call.
class DeviceTensor {
 public:
  DeviceTensor() = default;
  explicit DeviceTensor(const weft_tensor& t)
      : data_(t.data),
        offset_(t.offset),
        dtype_(t.dtype),
        device_(t.device),
        shape_(t.shape, t.ndim > 0 && t.shape != nullptr ? static_cast<size_t>(t.ndim) : 0) {
    if (t.struct_size >= WEFT_STRUCT_SIZE(weft_tensor, strides) && t.strides != nullptr && t.ndim > 0)
      strides_ = std::span<const int64_t>(t.strides, static_cast<size_t>(t.ndim));
  }

  weft_device_ptr data() const { return data_; }
  uint64_t offset() const { return offset_; }  // bytes
  int32_t dtype() const { return dtype_; }
  int32_t device() const { return device_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  std::span<const int64_t> shape() const { return shape_; }
  std::span<const int64_t> strides() const { return strides_; }
  bool contiguous() const { return strides_.empty(); }
  /// Extent of axis i; negative i counts from the end. Throws when out of range.
  int64_t dim(int i) const { return detail::AxisExtent(shape_, i); }
  /// Number of elements (1 for a scalar).
  int64_t size() const { return detail::Elements(shape_); }
  /// Bytes of a contiguous tensor of this shape.
  uint64_t bytes() const { return static_cast<uint64_t>(size()) * ElementSize(dtype_); }

 private:
  weft_device_ptr data_ = 0;
  uint64_t offset_ = 0;
  int32_t dtype_ = WEFT_DTYPE_FLOAT32;
  int32_t device_ = 0;
  std::span<const int64_t> shape_, strides_;
};

/// Everything a device Compute sees. Spans and tensors are valid for the duration of the call.
struct DeviceCall {
  std::span<const DeviceTensor> inputs;
  std::span<const DeviceTensor> outputs;
  std::span<const int32_t> req;  // one WEFT_REQ_* per output
  std::span<const DeviceTensor> aux;
  DeviceTensor workspace;  // WorkspaceBytes() bytes of device memory (data 0 when none)
  uint64_t workspace_bytes = 0;
  weft_stream stream = nullptr;  // queue the work here (NULL: compute before returning)
  int32_t device = 0;
  bool is_train = false;
  uint64_t seed = 0;  // per-call seed when the op asked for WEFT_OP_RESOURCE_RANDOM
  const weft_host_api* host = nullptr;
  const KernelTable* table = nullptr;
  /// Content stamps of the inputs (weft_kernel_args.input_stamps), empty when the host has none.
  std::span<const uint64_t> input_stamps;

  /// Stamp of input i, 0 (unknown: do not cache) when the host gave none.
  uint64_t InputStamp(size_t i) const { return i < input_stamps.size() ? input_stamps[i] : 0; }

  /// Sparse kernels (AddSparse; SDK 2.1): the call's storage types (empty for a dense call), the
  /// inputs' aux arrays and the host's allocator of sparse outputs.
  std::span<const int32_t> input_stypes, output_stypes;
  const weft_tensor* const* input_aux = nullptr;
  void* sparse_ctx = nullptr;
  weft_error* (*alloc_sparse_output)(void*, weft_sparse_alloc_args*) = nullptr;

  /// WEFT_STYPE_* of input i (WEFT_STYPE_DEFAULT for a dense call).
  int32_t InputStype(size_t i) const { return i < input_stypes.size() ? input_stypes[i] : WEFT_STYPE_DEFAULT; }
  /// Aux array j of sparse input i (row_sparse: 0 indices; csr: 0 indptr, 1 indices). Throws
  /// WEFT_ERR_INVALID_ARGUMENT for a dense input.
  DeviceTensor InputAux(size_t i, size_t j) const {
    if (input_aux == nullptr || InputStype(i) == WEFT_STYPE_DEFAULT || input_aux[i] == nullptr)
      throw Error(WEFT_ERR_INVALID_ARGUMENT, "input " + std::to_string(i) + " is not sparse: it has no aux arrays");
    return DeviceTensor(input_aux[i][j]);
  }
  /// Asks the host for the storage of sparse output `o` holding `num_stored` rows (row_sparse) or
  /// values (csr): the returned values and aux tensors (int64, contents undefined) are the
  /// output's from now on. Throws Error with the host's message.
  weft_sparse_alloc_args AllocSparseOutput(int32_t o, int64_t num_stored) const;

  /// The native handle of call.stream (a cudaStream_t, the VkCommandBuffer being recorded, ...)
  /// through the host (host.h native_handle). Throws Error with the host's error.
  weft_native_handle_args NativeStream() const;
  /// The native handle of tensor `t`'s memory (a device address, a VkBuffer + offset, ...).
  weft_native_handle_args NativeMemory(const DeviceTensor& t) const;
};

// ---------------------------------------------------------------------------------------------
// req: write / in-place / add-to / null, honoured with one line.
// ---------------------------------------------------------------------------------------------

/// Assigns for WEFT_REQ_WRITE and WEFT_REQ_WRITE_INPLACE.
struct AssignWrite {
  static constexpr bool kAdd = false;
  template <typename T, typename V>
  void operator()(T& dst, V v) const {
    dst = static_cast<T>(v);
  }
};
/// Accumulates for WEFT_REQ_ADD.
struct AssignAdd {
  static constexpr bool kAdd = true;
  template <typename T, typename V>
  void operator()(T& dst, V v) const {
    dst += static_cast<T>(v);
  }
};

/// Runs body(assign) with assign = AssignWrite{} (write, in-place) or AssignAdd{} (add); does
/// nothing for WEFT_REQ_NULL; throws WEFT_ERR_INVALID_ARGUMENT for another value. The assign
/// object is a distinct type per mode, so the loop inside body is compiled (and vectorised) once
/// per mode with no branch per element:
///   WithReq(call.req[0], [&](auto assign) { for (i...) assign(out[i], 2 * x[i]); });
/// In-place: an element may be read and written by the same iteration (out[i] aliasing x[i]) but
/// body must not read elements other iterations have already written.
template <typename F>
void WithReq(int32_t req, F&& body) {
  switch (req) {
    case WEFT_REQ_NULL:
      return;
    case WEFT_REQ_WRITE:
    case WEFT_REQ_WRITE_INPLACE:
      body(AssignWrite{});
      return;
    case WEFT_REQ_ADD:
      body(AssignAdd{});
      return;
    default:
      throw Error(WEFT_ERR_INVALID_ARGUMENT, "unknown write request " + std::to_string(req));
  }
}

/// The BLAS/oneDNN-style scale for the old contents: 0 for write/in-place, 1 for add. Callers
/// skip WEFT_REQ_NULL themselves (see IsNull).
inline float ReqBeta(int32_t req) { return req == WEFT_REQ_ADD ? 1.0f : 0.0f; }
/// True for WEFT_REQ_NULL (the output must not be touched).
inline bool IsNull(int32_t req) { return req == WEFT_REQ_NULL; }

// ---------------------------------------------------------------------------------------------
// Registration.
// ---------------------------------------------------------------------------------------------

/// Turns a device allocation plus a byte offset into a host pointer valid for `bytes` bytes for
/// the duration of the call (host kernels only). `resolver_data` is what the table was given.
/// Throws (weft::sdk::Error) when it cannot.
using PointerResolver = void* (*)(void* resolver_data, int32_t device, weft_device_ptr ptr, uint64_t offset,
                                  uint64_t bytes);

/// The resolver of host-addressable devices: ptr is a host address.
inline void* HostPointer(void*, int32_t, weft_device_ptr ptr, uint64_t offset, uint64_t) {
  return ptr == 0 ? nullptr : reinterpret_cast<char*>(static_cast<uintptr_t>(ptr)) + offset;
}

/// A kernel class over device memory: constructible from a KernelSetup, with
/// `void Compute(const DeviceCall&) const`.
template <typename K>
concept DeviceKernelClass = std::is_constructible_v<K, const KernelSetup&> &&
    requires(const K& k, const DeviceCall& c) {
  k.Compute(c);
};

/// Wraps a host-memory kernel class (host_kernel.hpp) as a device kernel class. Defined in
/// host_kernel.hpp; include it to register host kernels.
template <typename K>
class HostKernelAdapter;

namespace detail {

template <typename K>
concept HasWorkspace = requires(const K& k) {
  { k.WorkspaceBytes() } -> std::convertible_to<uint64_t>;
};

// What create_state hands out: the kernel plus facts the compute trampoline needs.
template <typename K>
struct Box {
  K kernel;
  uint64_t workspace_bytes;
  explicit Box(const KernelSetup& s) : kernel(s), workspace_bytes(0) {
    if constexpr (HasWorkspace<K>) workspace_bytes = kernel.WorkspaceBytes();
  }
};

inline std::vector<TensorDesc> Descs(int32_t n, const weft_shape* shapes, const int32_t* dtypes, const char* what) {
  if (n < 0) throw Error(WEFT_ERR_INVALID_ARGUMENT, std::string("negative number of ") + what);
  std::vector<TensorDesc> out(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    const weft_shape& s = shapes[i];
    if (s.ndim < 0 || s.ndim > WEFT_MAX_NDIM)
      throw Error(WEFT_ERR_INVALID_ARGUMENT, std::string(what) + " " + std::to_string(i) + " has no known shape");
    out[static_cast<size_t>(i)].shape.assign(s.dims, s.dims + s.ndim);
    out[static_cast<size_t>(i)].dtype = dtypes ? dtypes[i] : WEFT_DTYPE_FLOAT32;
  }
  return out;
}

inline const weft_host_api* TableHost(const void* kernel_data) noexcept;
inline const KernelTable* TableOf(const void* kernel_data);

template <typename K>
weft_error* CreateState(void*, weft_kernel_state_args* a) {
  return Guard(a != nullptr ? TableHost(a->kernel_data) : nullptr, [&] {
    if (a == nullptr) throw Error(WEFT_ERR_INVALID_ARGUMENT, "create_state: args is NULL");
    KernelSetup s;
    s.table = TableOf(a->kernel_data);
    s.host = TableHost(a->kernel_data);
    s.op_name = a->op_name ? a->op_name : "";
    s.device = a->device;
    s.attrs = AttrMap(a->attrs, a->num_attrs);
    s.inputs = Descs(a->num_inputs, a->input_shapes, a->input_dtypes, "input");
    s.outputs = Descs(a->num_outputs, a->output_shapes, a->output_dtypes, "output");
    s.aux = Descs(a->num_aux, a->aux_shapes, a->aux_dtypes, "aux state");
    if (WEFT_STRUCT_HAS(a, weft_kernel_state_args, output_stypes) && a->input_stypes != nullptr &&
        a->output_stypes != nullptr) {
      s.input_stypes.assign(a->input_stypes, a->input_stypes + a->num_inputs);
      s.output_stypes.assign(a->output_stypes, a->output_stypes + a->num_outputs);
    }
    auto box = std::make_unique<Box<K>>(s);
    a->workspace_bytes = box->workspace_bytes;
    a->state = box.release();
  });
}

template <typename K>
void DestroyState(void*, void* state) {
  delete static_cast<Box<K>*>(state);
}

// Views of up to kInline tensors live on the stack; more spill to the heap (Concat, add_n).
inline constexpr size_t kInline = 8;

struct DeviceViews {
  std::array<DeviceTensor, kInline> small;
  std::vector<DeviceTensor> big;
  std::span<const DeviceTensor> Make(int32_t n, const weft_tensor* ts) {
    if (n < 0) throw Error(WEFT_ERR_INVALID_ARGUMENT, "negative tensor count");
    if (n > 0 && ts == nullptr) throw Error(WEFT_ERR_INVALID_ARGUMENT, "tensor array is NULL");
    DeviceTensor* out = small.data();
    if (static_cast<size_t>(n) > kInline) {
      big.resize(static_cast<size_t>(n));
      out = big.data();
    }
    for (int32_t i = 0; i < n; ++i) out[i] = DeviceTensor(ts[i]);
    return {out, static_cast<size_t>(n)};
  }
};

template <typename K>
weft_error* Compute(void*, const weft_kernel_args* a) {
  return Guard(a != nullptr ? TableHost(a->kernel_data) : nullptr, [&] {
    if (a == nullptr || a->state == nullptr) throw Error(WEFT_ERR_INVALID_ARGUMENT, "kernel called without its state");
    const auto* box = static_cast<const Box<K>*>(a->state);
    if (a->num_outputs > 0 && a->req == nullptr) throw Error(WEFT_ERR_INVALID_ARGUMENT, "kernel called without req");
    DeviceViews in, out, aux;
    DeviceCall c;
    c.inputs = in.Make(a->num_inputs, a->inputs);
    c.outputs = out.Make(a->num_outputs, a->outputs);
    c.aux = aux.Make(a->num_aux, a->aux);
    c.req = std::span<const int32_t>(a->req, static_cast<size_t>(a->num_outputs));
    c.workspace_bytes = box->workspace_bytes;
    if (box->workspace_bytes > 0) {
      if (a->workspace.data == 0)
        throw Error(WEFT_ERR_INVALID_ARGUMENT,
                    "kernel asked for " + std::to_string(box->workspace_bytes) + " workspace bytes and got none");
      c.workspace = DeviceTensor(a->workspace);
    }
    c.stream = a->stream;
    c.device = a->device;
    c.is_train = a->is_train != 0;
    c.seed = a->seed;
    if (WEFT_STRUCT_HAS(a, weft_kernel_args, input_stamps) && a->input_stamps != nullptr)
      c.input_stamps = std::span<const uint64_t>(a->input_stamps, static_cast<size_t>(a->num_inputs));
    if (WEFT_STRUCT_HAS(a, weft_kernel_args, alloc_sparse_output) && a->input_stypes != nullptr) {
      c.input_stypes = std::span<const int32_t>(a->input_stypes, static_cast<size_t>(a->num_inputs));
      if (a->output_stypes != nullptr)
        c.output_stypes = std::span<const int32_t>(a->output_stypes, static_cast<size_t>(a->num_outputs));
      c.input_aux = a->input_aux;
      c.sparse_ctx = a->sparse_ctx;
      c.alloc_sparse_output = a->alloc_sparse_output;
    }
    c.host = TableHost(a->kernel_data);
    c.table = TableOf(a->kernel_data);
    box->kernel.Compute(c);
  });
}

template <typename K>
weft_error* InferStorage(void*, weft_storage_args* a) {
  return Guard(a != nullptr ? TableHost(a->kernel_data) : nullptr, [&] {
    if (a == nullptr || a->num_inputs < 0 || a->num_outputs < 0)
      throw Error(WEFT_ERR_INVALID_ARGUMENT, "infer_storage: bad arguments");
    StorageQuery q;
    q.op_name = a->op_name ? a->op_name : "";
    q.attrs = AttrMap(a->attrs, a->num_attrs);
    q.input_stypes.assign(a->input_stypes, a->input_stypes + a->num_inputs);
    q.inputs = Descs(a->num_inputs, a->input_shapes, a->input_dtypes, "input");
    q.output_stypes.assign(a->output_stypes, a->output_stypes + a->num_outputs);
    if (!K::ClaimStorage(q)) return;
    std::copy(q.output_stypes.begin(), q.output_stypes.end(), a->output_stypes);
    a->claimed = 1;
  });
}

}  // namespace detail

/// A sparse kernel class (KernelTable::AddSparse): a device kernel class with
/// `static bool ClaimStorage(StorageQuery&)`, which returns true and sets every output_stypes
/// entry when the kernel computes a call with those input storage types and attributes (keeping
/// entries the caller fixed, or declining), false to decline.
template <typename K>
concept SparseKernelClass = DeviceKernelClass<K> && requires(StorageQuery& q) {
  { K::ClaimStorage(q) } -> std::convertible_to<bool>;
};

/// The file of the call, as a default argument: `const char* source_file = WEFT_SDK_CALLER_FILE`
/// (KernelTable::Add, and helpers that register for their callers and pass it on). clang before 16
/// evaluates std::source_location::current() in a function template's default argument where the
/// template is declared (this header), not at the call; its __builtin_FILE() is right there.
#if defined(__clang__) && __clang_major__ < 16
#define WEFT_SDK_CALLER_FILE __builtin_FILE()
#else
#define WEFT_SDK_CALLER_FILE std::source_location::current().file_name()
#endif

/// Builds and owns the C tables of one device type. Not thread-safe while being filled; after
/// Api() it is read-only and may be shared. Keep it alive until the plugin shuts down (the C
/// structs point into it): a member of the plugin object is the usual home.
class KernelTable {
 public:
  /// `device_type` as the device plugin names it ("cpu"); `host`: the host's services (the
  /// plugin's init argument; may be NULL in tests that need no errors); `resolver` and
  /// `resolver_data` translate device pointers for host kernels (HostPointer for
  /// host-addressable devices).
  explicit KernelTable(std::string device_type, const weft_host_api* host = nullptr,
                       PointerResolver resolver = &HostPointer, void* resolver_data = nullptr)
      : device_type_(std::move(device_type)), host_(host), resolver_(resolver), resolver_data_(resolver_data) {}
  KernelTable(const KernelTable&) = delete;
  KernelTable& operator=(const KernelTable&) = delete;

  const std::string& device_type() const { return device_type_; }
  const weft_host_api* host() const { return host_; }
  /// Host memory behind a tensor's bytes, through the resolver (host kernels).
  void* Resolve(int32_t device, weft_device_ptr ptr, uint64_t offset, uint64_t bytes) const {
    return resolver_(resolver_data_, device, ptr, offset, bytes);
  }

  /// Registers K for `op_name` and the dtype mask `dtypes` (WEFT_DTYPE_BIT of the first input's
  /// dtypes), with WEFT_KERNEL_FLAG_* `flags`. K is a device kernel class (Compute(const
  /// DeviceCall&)) or a host kernel class (Compute(const KernelCall&), host_kernel.hpp). Several
  /// classes may serve one op name with disjoint dtype masks. `source_file` (left to its default)
  /// is the registering call's file: it becomes weft_kernel_def.source_file, and the files of
  /// every open SourceScope its math_files. A helper that registers for its callers takes a
  /// `const char* source_file = WEFT_SDK_CALLER_FILE` and passes it on, so the caller is named.
  /// An explicit source_file must outlive the table (a string literal).
  template <typename K>
  KernelTable& Add(std::string op_name, uint64_t dtypes, uint32_t flags = 0,
                   const char* source_file = WEFT_SDK_CALLER_FILE) {
    if constexpr (DeviceKernelClass<K>) {
      // Copied, not moved: GCC 12 at -O3 reports a false -Warray-bounds in the inlined move of a
      // long name into the deque (it failed the `main` preset's -Werror build). Registration
      // runs once per kernel, so the copy costs nothing.
      names_.emplace_back(op_name);
      weft_kernel_def d{};
      d.struct_size = WEFT_STRUCT_SIZE(weft_kernel_def, math_files);
      d.op_name = names_.back().c_str();
      d.device_type = device_type_.c_str();
      d.dtypes = dtypes;
      d.flags = flags;
      d.kernel_data = this;
      d.create_state = &detail::CreateState<K>;
      d.destroy_state = &detail::DestroyState<K>;
      d.compute = &detail::Compute<K>;
      d.source_file = source_file;
      d.math_files = CurrentMathFiles();
      defs_.push_back(d);
      finished_ = false;
      return *this;
    } else {
      return Add<HostKernelAdapter<K>>(std::move(op_name), dtypes, flags, source_file);
    }
  }

  /// Registers sparse kernel K (SparseKernelClass) for `op_name`, the dtype mask `dtypes` and the
  /// storage-type mask `storage_types` (WEFT_STYPE_BIT of every storage type its inputs and
  /// outputs may have; include a sparse one). The host offers it only calls with sparse arrays
  /// that K::ClaimStorage claims (weft_kernel_def.infer_storage).
  template <SparseKernelClass K>
  KernelTable& AddSparse(std::string op_name, uint64_t dtypes, uint32_t storage_types,
                         const char* source_file = WEFT_SDK_CALLER_FILE) {
    Add<K>(std::move(op_name), dtypes, 0, source_file);
    defs_.back().struct_size = WEFT_STRUCT_SIZE(weft_kernel_def, infer_storage);
    defs_.back().storage_types = storage_types;
    defs_.back().infer_storage = &detail::InferStorage<K>;
    return *this;
  }

  /// While a SourceScope lives, every kernel its table adds lists `files` as math_files: the
  /// functor header or GPU shaders that hold the math the registering file's kernel classes run
  /// (a cuDNN kernel's GPU-layer fallback, a Vulkan op's shaders). Paths as in weft_kernel_def.source_file
  /// (__FILE__ of the file, or a path built from it). Scopes nest; an inner one adds to the outer.
  class SourceScope {
   public:
    SourceScope(KernelTable& table, std::vector<std::string> files) : table_(table) {
      table_.scopes_.push_back(std::move(files));
      table_.math_lists_valid_ = false;
    }
    ~SourceScope() {
      table_.scopes_.pop_back();
      table_.math_lists_valid_ = false;
    }
    SourceScope(const SourceScope&) = delete;
    SourceScope& operator=(const SourceScope&) = delete;

   private:
    KernelTable& table_;
  };

  /// Adds an op definition owned by the caller (operator plugins); it must outlive the table.
  KernelTable& AddOpDef(const weft_op_def* def) {
    op_defs_.push_back(def);
    finished_ = false;
    return *this;
  }

  /// Makes this table's Api() also list every kernel of `other` (a table for another device
  /// type: one plugin, kernels for several devices). `other` must outlive this table.
  KernelTable& Include(const KernelTable& other) {
    included_.push_back(&other);
    finished_ = false;
    return *this;
  }

  /// The dense kernel def registered for `op_name` whose mask has `dtype`, or nullptr.
  const weft_kernel_def* Find(std::string_view op_name, int32_t dtype = WEFT_DTYPE_FLOAT32) const {
    for (const weft_kernel_def& d : defs_)
      if (op_name == d.op_name && (d.dtypes & WEFT_DTYPE_BIT(dtype)) && d.infer_storage == nullptr) return &d;
    return nullptr;
  }

  /// The operator API over everything added so far. The pointer stays valid while the table
  /// lives; adding more later rebuilds it.
  const weft_operator_api* Api() {
    if (!finished_) {
      kernel_ptrs_.clear();
      for (const weft_kernel_def& d : defs_) kernel_ptrs_.push_back(&d);
      for (const KernelTable* t : included_)
        for (const weft_kernel_def& d : t->defs_) kernel_ptrs_.push_back(&d);
      api_ = weft_operator_api{};
      api_.struct_size = WEFT_STRUCT_SIZE(weft_operator_api, kernels);
      api_.num_op_defs = static_cast<int32_t>(op_defs_.size());
      api_.op_defs = op_defs_.data();
      api_.num_kernels = static_cast<int32_t>(kernel_ptrs_.size());
      api_.kernels = kernel_ptrs_.data();
      finished_ = true;
    }
    return &api_;
  }

 private:
  std::string device_type_;
  const weft_host_api* host_;
  PointerResolver resolver_;
  void* resolver_data_;
  std::deque<std::string> names_;     // deque: c_str() pointers stay put as names are added
  std::deque<weft_kernel_def> defs_;  // deque: def addresses stay put
  std::vector<const weft_kernel_def*> kernel_ptrs_;
  std::vector<const weft_op_def*> op_defs_;
  std::vector<const KernelTable*> included_;
  weft_operator_api api_{};
  bool finished_ = false;

  // The NULL-terminated math_files list of the open SourceScopes (NULL when none). One list per
  // distinct set of scopes, kept for the table's life: kernels added under the same scopes share it.
  const char* const* CurrentMathFiles() {
    if (scopes_.empty()) return nullptr;
    if (!math_lists_valid_) {
      std::vector<const char*>& list = math_lists_.emplace_back();
      for (const std::vector<std::string>& files : scopes_)
        for (const std::string& f : files) list.push_back(math_names_.emplace_back(f).c_str());
      list.push_back(nullptr);
      math_lists_valid_ = true;
    }
    return math_lists_.back().data();
  }
  std::vector<std::vector<std::string>> scopes_;  // the open SourceScopes' files, outermost first
  std::deque<std::string> math_names_;            // deque: c_str() pointers stay put
  std::deque<std::vector<const char*>> math_lists_;
  bool math_lists_valid_ = false;
};

namespace detail {
inline const KernelTable* TableOf(const void* kernel_data) {
  if (kernel_data == nullptr) throw Error(WEFT_ERR_INVALID_ARGUMENT, "kernel called without its kernel_data");
  return static_cast<const KernelTable*>(kernel_data);
}
inline const weft_host_api* TableHost(const void* kernel_data) noexcept {
  return kernel_data == nullptr ? nullptr : static_cast<const KernelTable*>(kernel_data)->host();
}
inline weft_native_handle_args AskNative(const weft_host_api* host, const KernelTable* table,
                                         weft_native_handle_args args) {
  if (host == nullptr || host->native_handle == nullptr || table == nullptr)
    throw Error(WEFT_ERR_UNSUPPORTED, "the host offers no native handles");
  ThrowIfError(host, host->native_handle(host->host_ctx, table->device_type().c_str(), &args));
  return args;
}
}  // namespace detail

inline weft_sparse_alloc_args DeviceCall::AllocSparseOutput(int32_t o, int64_t num_stored) const {
  if (alloc_sparse_output == nullptr)
    throw Error(WEFT_ERR_INVALID_ARGUMENT, "the host gave no sparse output allocator (a dense call)");
  weft_sparse_alloc_args a{};
  a.struct_size = WEFT_STRUCT_SIZE(weft_sparse_alloc_args, aux);
  a.output = o;
  a.num_stored = num_stored;
  ThrowIfError(host, alloc_sparse_output(sparse_ctx, &a));
  return a;
}

inline weft_native_handle_args DeviceCall::NativeStream() const {
  weft_native_handle_args a{};
  a.struct_size = WEFT_STRUCT_SIZE(weft_native_handle_args, size);
  a.what = WEFT_NATIVE_STREAM;
  a.device = device;
  a.stream = stream;
  return detail::AskNative(host, table, a);
}

inline weft_native_handle_args DeviceCall::NativeMemory(const DeviceTensor& t) const {
  weft_native_handle_args a{};
  a.struct_size = WEFT_STRUCT_SIZE(weft_native_handle_args, size);
  a.what = WEFT_NATIVE_MEMORY;
  a.device = t.device();
  a.ptr = t.data();
  a.offset = t.offset();
  return detail::AskNative(host, table, a);
}

}  // namespace weft::sdk
