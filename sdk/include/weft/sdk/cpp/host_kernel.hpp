// weft SDK C++ helpers — kernels over host memory (the CPU plugin, and devices whose memory the
// plugin reaches through host pointers, such as the simulated test device).
//
// A host kernel class has the same shape as a device kernel class (kernel.hpp) but computes on
// typed host pointers:
//
//   class ReluKernel {
//    public:
//     explicit ReluKernel(const weft::sdk::KernelSetup& setup);
//     uint64_t WorkspaceBytes() const;                         // optional (default 0)
//     void Compute(const weft::sdk::KernelCall& call) const;   // host pointers in call.inputs...
//   };
//   weft::sdk::KernelTable table("cpu", host);                // HostPointer resolver by default
//   table.Add<ReluKernel>("Activation", WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32));
//
// KernelTable::Add wraps it in HostKernelAdapter, which resolves every tensor (and the
// workspace) to a host pointer with the table's PointerResolver and then calls Compute in the
// calling thread, whatever the stream: a device whose streams are host queues runs the whole
// call on its queue instead (queued_kernels.hpp). Host kernels get contiguous tensors only.
#pragma once

#include "weft/sdk/cpp/kernel.hpp"

namespace weft::sdk {

/// A tensor during Compute: dtype, shape (borrowed for the call) and a resolved host pointer.
class Tensor {
 public:
  Tensor() = default;
  Tensor(void* host, int32_t dtype, std::span<const int64_t> shape) : host_(host), dtype_(dtype), shape_(shape) {}

  int32_t dtype() const { return dtype_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  std::span<const int64_t> shape() const { return shape_; }
  /// Extent of axis i; negative i counts from the end. Throws when out of range.
  int64_t dim(int i) const { return detail::AxisExtent(shape_, i); }
  /// Number of elements (1 for a scalar).
  int64_t size() const { return detail::Elements(shape_); }
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
  const weft_host_api* host = nullptr;  // the host's services
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
  /// Content stamps of the inputs (weft_kernel_args.input_stamps), empty when the host has none.
  std::span<const uint64_t> input_stamps;

  /// Stamp of input i, 0 (unknown: do not cache) when the host gave none.
  uint64_t InputStamp(size_t i) const { return i < input_stamps.size() ? input_stamps[i] : 0; }

  /// Workspace as T*, checking that `count` elements fit; throws WEFT_ERR_INTERNAL otherwise.
  template <typename T>
  T* Workspace(size_t count) const {
    if (count * sizeof(T) > workspace_bytes)
      throw Error(WEFT_ERR_INTERNAL, "kernel workspace too small: need " + std::to_string(count * sizeof(T)) +
                                         " bytes, have " + std::to_string(workspace_bytes));
    return static_cast<T*>(workspace);
  }
};

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

/// A host kernel class: constructible from a KernelSetup, with `void Compute(const KernelCall&) const`.
template <typename K>
concept KernelClass = std::is_constructible_v<K, const KernelSetup&> && requires(const K& k, const KernelCall& c) {
  k.Compute(c);
};

namespace detail {

// Views of host tensors: up to kInline on the stack, more on the heap.
struct HostViews {
  std::array<Tensor, kInline> small;
  std::vector<Tensor> big;
  // `req` (outputs only, may be NULL): an output the caller does not want (req null) may come
  // without memory (data 0); it gets a null view instead of a pointer lookup.
  std::span<const Tensor> Make(const KernelTable& table, std::span<const DeviceTensor> ts,
                               std::span<const int32_t> req = {}) {
    Tensor* out = small.data();
    if (ts.size() > kInline) {
      big.resize(ts.size());
      out = big.data();
    }
    for (size_t i = 0; i < ts.size(); ++i) {
      const DeviceTensor& t = ts[i];
      if (!t.contiguous())
        throw Error(WEFT_ERR_INTERNAL,
                    "host kernel given a strided tensor (registered without WEFT_KERNEL_FLAG_STRIDED)");
      const uint64_t bytes = t.bytes();
      const bool absent = t.data() == 0 && (bytes == 0 || (i < req.size() && req[i] == WEFT_REQ_NULL));
      void* host = absent ? nullptr : table.Resolve(t.device(), t.data(), t.offset(), bytes);
      out[i] = Tensor(host, t.dtype(), t.shape());
    }
    return {out, ts.size()};
  }
};

}  // namespace detail

template <typename K>
class HostKernelAdapter {
  static_assert(KernelClass<K>,
                "KernelTable::Add<K>: K needs a constructor from const KernelSetup& and a const Compute taking "
                "const DeviceCall& (kernel.hpp) or const KernelCall& (host_kernel.hpp)");

 public:
  explicit HostKernelAdapter(const KernelSetup& setup) : kernel_(setup) {}
  uint64_t WorkspaceBytes() const {
    if constexpr (detail::HasWorkspace<K>) {
      return kernel_.WorkspaceBytes();
    } else {
      return 0;
    }
  }
  void Compute(const DeviceCall& c) const {
    detail::HostViews in, out, aux;
    KernelCall k;
    k.inputs = in.Make(*c.table, c.inputs);
    k.outputs = out.Make(*c.table, c.outputs, c.req);
    k.aux = aux.Make(*c.table, c.aux);
    k.req = c.req;
    k.workspace_bytes = c.workspace_bytes;
    if (c.workspace_bytes > 0)
      k.workspace = c.table->Resolve(c.workspace.device(), c.workspace.data(), c.workspace.offset(), c.workspace_bytes);
    k.stream = c.stream;
    k.device = c.device;
    k.is_train = c.is_train;
    k.seed = c.seed;
    k.input_stamps = c.input_stamps;
    k.host = c.host;
    kernel_.Compute(k);
  }

 private:
  K kernel_;
};

}  // namespace weft::sdk
