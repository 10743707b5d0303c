// weft SDK C++ helpers — kernels as ordinary C++ classes.
//
// A kernel author writes one class per (op, algorithm):
//
//   class ReluKernel {
//    public:
//     explicit ReluKernel(const weft::sdk::KernelSetup& setup);   // once per node: parse attrs,
//                                                                  // check shapes, pick algorithms
//     uint64_t WorkspaceBytes() const;                             // optional (default 0)
//     void Compute(const weft::sdk::KernelCall& call) const;       // every run
//   };
//
// and registers it in a KernelTable:
//
//   weft::sdk::KernelTable table("cpu");                      // host-addressable device pointers
//   table.Add<ReluKernel>("Activation", WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32));
//   const weft_operator_api* api = table.Api();               // hand to the host
//
// The table makes the C `weft_kernel_def`s: create_state constructs the class from a KernelSetup
// (and records WorkspaceBytes()), compute resolves every tensor to a host pointer and calls
// Compute, destroy_state deletes the object. Every trampoline runs inside Guard() (error.hpp), so
// a kernel reports bad input by throwing weft::sdk::Error; nothing crosses the C ABI as an
// exception. A setup error should use WEFT_ERR_UNSUPPORTED (attribute values or shapes the kernel
// cannot handle) or WEFT_ERR_INVALID_ARGUMENT (inconsistent shapes), naming the op and the value.
//
// Pointer translation is pluggable, so one kernel class registers for several device types: a
// table built with a PointerResolver calls it to turn (device, ptr, offset, bytes) into a host
// pointer before Compute sees a tensor. Without one, device pointers are host pointers (the CPU
// plugin, WEFT_DEVICE_CAP_HOST_ADDRESSABLE). A device whose memory lives behind handles (e.g. the
// simulated device) registers the same classes with its own resolver.
//
// Threading contract: the host may create, compute and destroy different states concurrently and
// may call compute on one state from several threads at once (imperative calls, several
// executors sharing a cached state), so Compute is const and must not mutate the object (use
// per-call workspace, or a lock around any cache). Compute runs synchronously in the calling
// thread whatever `stream` says; asynchronous devices queue the whole call themselves.
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/sdk/cpp/attrs.hpp"
#include "weft/sdk/cpp/error.hpp"
#include "weft/sdk/operator.h"
#include "weft/sdk/types.h"

namespace weft::sdk {

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

/// Shape and dtype of one tensor at setup time (no data yet).
struct TensorDesc {
  int32_t dtype = WEFT_DTYPE_FLOAT32;
  std::vector<int64_t> shape;  // extents in elements; empty for a scalar

  int ndim() const { return static_cast<int>(shape.size()); }
  /// Extent of axis i; negative i counts from the end (-1 = last). Throws when out of range.
  int64_t dim(int i) const {
    int n = ndim();
    if (i < 0) i += n;
    if (i < 0 || i >= n) throw Error(WEFT_ERR_INVALID_ARGUMENT, "axis " + std::to_string(i) + " out of range");
    return shape[static_cast<size_t>(i)];
  }
  /// Number of elements (1 for a scalar).
  int64_t size() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  uint64_t bytes() const { return static_cast<uint64_t>(size()) * ElementSize(dtype); }
};

/// Everything a kernel's constructor sees: one per node, built by create_state.
struct KernelSetup {
  std::string op_name;  // e.g. "FullyConnected" or "_backward_FullyConnected"
  int32_t device = 0;   // device index within the plugin
  AttrMap attrs;        // every attribute, defaults filled in by the host
  std::vector<TensorDesc> inputs, outputs, aux;

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

/// A tensor during Compute: dtype, shape (borrowed for the call) and a resolved host pointer.
class Tensor {
 public:
  Tensor() = default;
  Tensor(void* host, int32_t dtype, std::span<const int64_t> shape) : host_(host), dtype_(dtype), shape_(shape) {}

  int32_t dtype() const { return dtype_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  std::span<const int64_t> shape() const { return shape_; }
  /// Extent of axis i; negative i counts from the end. Throws when out of range.
  int64_t dim(int i) const {
    int n = ndim();
    if (i < 0) i += n;
    if (i < 0 || i >= n) throw Error(WEFT_ERR_INVALID_ARGUMENT, "axis " + std::to_string(i) + " out of range");
    return shape_[static_cast<size_t>(i)];
  }
  /// Number of elements (1 for a scalar).
  int64_t size() const {
    int64_t n = 1;
    for (int64_t d : shape_) n *= d;
    return n;
  }
  uint64_t bytes() const { return static_cast<uint64_t>(size()) * ElementSize(dtype_); }
  /// Untyped host pointer (nullptr for an empty tensor).
  void* raw() const { return host_; }
  /// Typed host pointer; throws WEFT_ERR_UNSUPPORTED when T does not match the dtype.
  template <typename T>
  T* data() const {
    if (DTypeOf<T>() != dtype_)
      throw Error(WEFT_ERR_UNSUPPORTED,
                  "tensor holds " + DTypeName(dtype_) + ", kernel read it as " + DTypeName(DTypeOf<T>()));
    return static_cast<T*>(host_);
  }

 private:
  void* host_ = nullptr;
  int32_t dtype_ = WEFT_DTYPE_FLOAT32;
  std::span<const int64_t> shape_;
};

/// Everything Compute sees. Spans and tensors are valid for the duration of the call only.
struct KernelCall {
  std::span<const Tensor> inputs;
  std::span<const Tensor> outputs;
  std::span<const int32_t> req;  // one WEFT_REQ_* per output
  std::span<const Tensor> aux;   // forward kernels may update aux states (BatchNorm)
  void* workspace = nullptr;     // WorkspaceBytes() bytes of host-visible scratch (nullptr if 0)
  uint64_t workspace_bytes = 0;
  weft_stream stream = nullptr;
  int32_t device = 0;
  bool is_train = false;
  uint64_t seed = 0;  // per-call seed when the op asked for WEFT_OP_RESOURCE_RANDOM

  /// Workspace as T*, checking that `count` elements fit; throws WEFT_ERR_INTERNAL otherwise.
  template <typename T>
  T* Workspace(size_t count) const {
    if (count * sizeof(T) > workspace_bytes)
      throw Error(WEFT_ERR_INTERNAL, "kernel workspace too small: need " + std::to_string(count * sizeof(T)) +
                                         " bytes, have " + std::to_string(workspace_bytes));
    return static_cast<T*>(workspace);
  }
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

/// dst[i] = src[i] (write, in-place) or dst[i] += src[i] (add) for n elements; nothing for null.
template <typename T>
void StoreReq(int32_t req, T* dst, const T* src, int64_t n) {
  WithReq(req, [&](auto assign) {
    if constexpr (!decltype(assign)::kAdd) {
      if (dst != src) std::memmove(dst, src, static_cast<size_t>(n) * sizeof(T));
    } else {
      for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
    }
  });
}

/// dst[i] = v (write) or dst[i] += v (add) for n elements; nothing for null.
template <typename T>
void FillReq(int32_t req, T* dst, T v, int64_t n) {
  WithReq(req, [&](auto assign) {
    for (int64_t i = 0; i < n; ++i) assign(dst[i], v);
  });
}

// ---------------------------------------------------------------------------------------------
// Registration.
// ---------------------------------------------------------------------------------------------

/// Turns a device allocation plus a byte offset into a host pointer valid for `bytes` bytes for
/// the duration of the call. `plugin_state` is the state the host passes to every kernel entry
/// of the plugin that registered the table. Throws (weft::sdk::Error) when it cannot.
using PointerResolver = void* (*)(void* plugin_state, int32_t device, weft_device_ptr ptr, uint64_t offset,
                                  uint64_t bytes);

/// The resolver of host-addressable devices: ptr is a host address.
inline void* HostPointer(void*, int32_t, weft_device_ptr ptr, uint64_t offset, uint64_t) {
  return ptr == 0 ? nullptr : reinterpret_cast<char*>(static_cast<uintptr_t>(ptr)) + offset;
}

namespace detail {

// The C trampolines must be plain functions, yet tables with different resolvers share kernel
// classes. Each distinct resolver of this shared object gets a slot; the trampolines are
// instantiated once per slot and read their resolver from it.
inline constexpr int kMaxResolvers = 4;

inline std::array<PointerResolver, kMaxResolvers>& ResolverSlots() {
  static std::array<PointerResolver, kMaxResolvers> slots{};
  return slots;
}

inline int ClaimResolverSlot(PointerResolver r) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  auto& slots = ResolverSlots();
  for (int i = 0; i < kMaxResolvers; ++i) {
    if (slots[static_cast<size_t>(i)] == r) return i;
    if (slots[static_cast<size_t>(i)] == nullptr) {
      slots[static_cast<size_t>(i)] = r;
      return i;
    }
  }
  throw Error(WEFT_ERR_INTERNAL, "more than " + std::to_string(kMaxResolvers) +
                                     " pointer resolvers in one plugin; raise detail::kMaxResolvers");
}

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

template <typename K>
weft_error* CreateState(void*, weft_kernel_state_args* a) {
  return Guard([&] {
    KernelSetup s;
    s.op_name = a->op_name ? a->op_name : "";
    s.device = a->device;
    s.attrs = AttrMap(a->attrs, a->num_attrs);
    s.inputs = Descs(a->num_inputs, a->input_shapes, a->input_dtypes, "input");
    s.outputs = Descs(a->num_outputs, a->output_shapes, a->output_dtypes, "output");
    s.aux = Descs(a->num_aux, a->aux_shapes, a->aux_dtypes, "aux state");
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

struct Views {
  std::array<Tensor, kInline> small;
  std::vector<Tensor> big;
  // `req` (outputs only, may be NULL): an output the caller does not want (req null) may come
  // without memory (data 0); it gets a null view instead of a pointer lookup.
  std::span<const Tensor> Make(PointerResolver r, void* ps, int32_t n, const weft_tensor* ts,
                               const int32_t* req = nullptr) {
    if (n < 0) throw Error(WEFT_ERR_INVALID_ARGUMENT, "negative tensor count");
    Tensor* out = small.data();
    if (static_cast<size_t>(n) > kInline) {
      big.resize(static_cast<size_t>(n));
      out = big.data();
    }
    for (int32_t i = 0; i < n; ++i) {
      const weft_tensor& t = ts[i];
      std::span<const int64_t> shape(t.shape, t.ndim > 0 ? static_cast<size_t>(t.ndim) : 0);
      Tensor probe(nullptr, t.dtype, shape);
      uint64_t bytes = probe.bytes();
      bool absent = t.data == 0 && (bytes == 0 || (req != nullptr && req[i] == WEFT_REQ_NULL));
      void* host = absent ? nullptr : r(ps, t.device, t.data, t.offset, bytes);
      out[i] = Tensor(host, t.dtype, shape);
    }
    return {out, static_cast<size_t>(n)};
  }
};

template <typename K, int Slot>
weft_error* Compute(void* ps, const weft_kernel_args* a) {
  return Guard([&] {
    if (a->state == nullptr) throw Error(WEFT_ERR_INVALID_ARGUMENT, "kernel called without its state");
    const auto* box = static_cast<const Box<K>*>(a->state);
    PointerResolver r = ResolverSlots()[Slot];
    Views in, out, aux;
    KernelCall c;
    if (a->num_outputs > 0 && a->req == nullptr) throw Error(WEFT_ERR_INVALID_ARGUMENT, "kernel called without req");
    c.inputs = in.Make(r, ps, a->num_inputs, a->inputs);
    c.outputs = out.Make(r, ps, a->num_outputs, a->outputs, a->req);
    c.aux = aux.Make(r, ps, a->num_aux, a->aux);
    c.req = std::span<const int32_t>(a->req, static_cast<size_t>(a->num_outputs));
    c.workspace_bytes = box->workspace_bytes;
    if (box->workspace_bytes > 0) {
      if (a->workspace.data == 0)
        throw Error(WEFT_ERR_INVALID_ARGUMENT,
                    "kernel asked for " + std::to_string(box->workspace_bytes) + " workspace bytes and got none");
      c.workspace = r(ps, a->workspace.device, a->workspace.data, a->workspace.offset, box->workspace_bytes);
    }
    c.stream = a->stream;
    c.device = a->device;
    c.is_train = a->is_train != 0;
    c.seed = a->seed;
    box->kernel.Compute(c);
  });
}

template <typename K, size_t... I>
constexpr auto ComputeTable(std::index_sequence<I...>) {
  return std::array<weft_error* (*)(void*, const weft_kernel_args*), sizeof...(I)>{&Compute<K, int(I)>...};
}

}  // namespace detail

/// A kernel class: constructible from a KernelSetup, with `void Compute(const KernelCall&) const`.
template <typename K>
concept KernelClass = std::is_constructible_v<K, const KernelSetup&> && requires(const K& k, const KernelCall& c) {
  k.Compute(c);
};

/// Builds and owns the C tables of one device type. Not thread-safe while being filled; after
/// Api() it is read-only and may be shared. Keep it alive until the plugin shuts down (the C
/// structs point into it); a function-local static is the usual home.
class KernelTable {
 public:
  /// `device_type` as the device plugin names it ("cpu"); `resolver` translates device pointers
  /// (HostPointer for host-addressable devices).
  explicit KernelTable(std::string device_type, PointerResolver resolver = &HostPointer)
      : device_type_(std::move(device_type)), slot_(detail::ClaimResolverSlot(resolver)) {}
  KernelTable(const KernelTable&) = delete;
  KernelTable& operator=(const KernelTable&) = delete;

  const std::string& device_type() const { return device_type_; }

  /// Registers K for `op_name` and the dtype mask `dtypes` (WEFT_DTYPE_BIT of the first input's
  /// dtypes). Several classes may serve one op name with disjoint dtype masks.
  template <KernelClass K>
  KernelTable& Add(std::string op_name, uint64_t dtypes) {
    static constexpr auto kCompute = detail::ComputeTable<K>(std::make_index_sequence<detail::kMaxResolvers>{});
    names_.push_back(std::move(op_name));
    weft_kernel_def d{};
    d.struct_size = WEFT_STRUCT_SIZE(weft_kernel_def, compute);
    d.op_name = names_.back().c_str();
    d.device_type = device_type_.c_str();
    d.dtypes = dtypes;
    d.create_state = &detail::CreateState<K>;
    d.destroy_state = &detail::DestroyState<K>;
    d.compute = kCompute[static_cast<size_t>(slot_)];
    defs_.push_back(d);
    finished_ = false;
    return *this;
  }

  /// Adds an op definition owned by the caller (operator plugins); it must outlive the table.
  KernelTable& AddOpDef(const weft_op_def* def) {
    op_defs_.push_back(def);
    finished_ = false;
    return *this;
  }

  /// The kernel def registered for `op_name` whose mask has `dtype`, or nullptr.
  const weft_kernel_def* Find(std::string_view op_name, int32_t dtype = WEFT_DTYPE_FLOAT32) const {
    for (const weft_kernel_def& d : defs_)
      if (op_name == d.op_name && (d.dtypes & WEFT_DTYPE_BIT(dtype))) return &d;
    return nullptr;
  }

  /// The operator API over everything added so far. The pointer stays valid while the table
  /// lives; adding more later rebuilds it.
  const weft_operator_api* Api() {
    if (!finished_) {
      kernel_ptrs_.clear();
      for (const weft_kernel_def& d : defs_) kernel_ptrs_.push_back(&d);
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
  int slot_;
  std::deque<std::string> names_;     // deque: c_str() pointers stay put as names are added
  std::deque<weft_kernel_def> defs_;  // deque: def addresses stay put
  std::vector<const weft_kernel_def*> kernel_ptrs_;
  std::vector<const weft_op_def*> op_defs_;
  weft_operator_api api_{};
  bool finished_ = false;
};

}  // namespace weft::sdk
