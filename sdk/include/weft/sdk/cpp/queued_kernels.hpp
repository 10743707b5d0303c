// weft SDK C++ helpers — running synchronous host-code kernels on a HostQueueDevice's streams.
//
// Kernels written with kernel.hpp compute in the calling thread whatever weft_kernel_args.stream
// says. A device whose streams are HostStreams (host_queue.hpp) must still order a kernel after
// the copies queued before it on the same stream. QueuedKernels wraps an operator table so that
// a compute call with a non-NULL stream is deep-copied and queued on that stream (NULL stream:
// it runs at once, as before). Errors of queued kernels are reported by stream_synchronize with
// the kernel's own error object (ForwardedError).
//
// Wrapping: create_state of the wrapper finds the original kernel by (op name, dtype of the first
// input, else of the first output) and keeps {original def, original state} as its state; compute
// and destroy_state unwrap it. Op definitions pass through unchanged.
//
// Limits: one QueuedKernels per plugin shared object (the C trampolines find it through a
// per-object slot). The host must not destroy a state while work using it is queued (it
// synchronises the stream first, as for any device).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "weft/sdk/cpp/host_queue.hpp"
#include "weft/sdk/operator.h"

namespace weft::sdk {

class QueuedKernels;

namespace detail {
inline QueuedKernels*& QueuedKernelsSlot() noexcept {
  static QueuedKernels* slot = nullptr;
  return slot;
}
}  // namespace detail

class QueuedKernels {
 public:
  /// Wraps `kernels` (borrowed; must outlive this object; NULL = no kernels) for `device`, whose
  /// streams the wrapped kernels use. Wrapped defs claim `device_type` (a device reusing another
  /// device's kernels, e.g. simdev running CPU kernels whose PointerResolver translates its
  /// handles, passes its own type).
  QueuedKernels(const weft_operator_api* kernels, HostQueueDevice* device, std::string device_type)
      : device_(device), device_type_(std::move(device_type)) {
    if (kernels != nullptr) {
      for (int32_t i = 0; i < kernels->num_op_defs; ++i) op_defs_.push_back(kernels->op_defs[i]);
      entries_.reserve(static_cast<size_t>(kernels->num_kernels));
      for (int32_t i = 0; i < kernels->num_kernels; ++i) {
        const weft_kernel_def* orig = kernels->kernels[i];
        weft_kernel_def d = *orig;
        d.struct_size = WEFT_STRUCT_SIZE(weft_kernel_def, compute);
        d.device_type = device_type_.c_str();
        d.create_state = &CreateState;
        d.destroy_state = &DestroyState;
        d.compute = &Compute;
        entries_.push_back(std::make_unique<Entry>(Entry{orig, d}));
      }
    }
    for (const auto& e : entries_) defs_.push_back(&e->wrapped);
    api_.struct_size = WEFT_STRUCT_SIZE(weft_operator_api, kernels);
    api_.num_op_defs = static_cast<int32_t>(op_defs_.size());
    api_.op_defs = op_defs_.data();
    api_.num_kernels = static_cast<int32_t>(defs_.size());
    api_.kernels = defs_.data();
    detail::QueuedKernelsSlot() = this;
  }
  ~QueuedKernels() {
    if (detail::QueuedKernelsSlot() == this) detail::QueuedKernelsSlot() = nullptr;
  }
  QueuedKernels(const QueuedKernels&) = delete;
  QueuedKernels& operator=(const QueuedKernels&) = delete;

  /// The wrapped operator table (valid as long as this object).
  const weft_operator_api* api() const noexcept { return &api_; }

 private:
  struct Entry {
    const weft_kernel_def* orig;
    weft_kernel_def wrapped;
  };
  struct State {
    const weft_kernel_def* orig;
    void* state;
  };
  // A weft_kernel_args with everything it points to owned, so it can outlive the caller's call.
  struct OwnedArgs {
    weft_kernel_args args;
    std::vector<weft_tensor> tensors;
    std::vector<std::vector<int64_t>> shapes;
    std::vector<int32_t> req;

    explicit OwnedArgs(const weft_kernel_args& a) : args(a) {
      const size_t n = static_cast<size_t>(a.num_inputs + a.num_outputs + a.num_aux);
      tensors.reserve(n);
      shapes.reserve(n + 1);
      auto own = [&](int32_t count, const weft_tensor* src) -> const weft_tensor* {
        const size_t first = tensors.size();
        for (int32_t i = 0; i < count; ++i) tensors.push_back(OwnShape(src[i]));
        return count > 0 ? tensors.data() + first : nullptr;
      };
      args.inputs = own(a.num_inputs, a.inputs);
      args.outputs = own(a.num_outputs, a.outputs);
      args.aux = own(a.num_aux, a.aux);
      args.workspace = OwnShape(a.workspace);
      if (a.req != nullptr) req.assign(a.req, a.req + a.num_outputs);
      args.req = a.req != nullptr ? req.data() : nullptr;
    }
    weft_tensor OwnShape(const weft_tensor& t) {
      weft_tensor c = t;
      if (t.shape != nullptr && t.ndim > 0) {
        shapes.emplace_back(t.shape, t.shape + t.ndim);
        c.shape = shapes.back().data();  // reserve() above keeps these addresses stable
      }
      return c;
    }
  };

  static const weft_kernel_def* Find(std::string_view op, int32_t dtype) {
    QueuedKernels* self = detail::QueuedKernelsSlot();
    if (self == nullptr) throw Error(WEFT_ERR_INTERNAL, "queued kernels used after their table was destroyed");
    const weft_kernel_def* only = nullptr;
    int matches = 0;
    for (const auto& e : self->entries_) {
      if (op != e->orig->op_name) continue;
      if (dtype >= 0 && (e->orig->dtypes & WEFT_DTYPE_BIT(dtype)) != 0) return e->orig;
      only = e->orig;
      ++matches;
    }
    if (matches == 1 && dtype < 0) return only;
    throw Error(WEFT_ERR_UNSUPPORTED, self->device_type_ + ": no kernel for op '" + std::string(op) +
                                          "' and dtype code " + std::to_string(dtype));
  }

  static weft_error* CreateState(void* ps, weft_kernel_state_args* a) {
    return Guard([&]() -> weft_error* {
      if (a == nullptr || a->op_name == nullptr) throw Error(WEFT_ERR_INVALID_ARGUMENT, "create_state: no op name");
      int32_t dtype = -1;
      if (a->num_inputs > 0 && a->input_dtypes != nullptr) {
        dtype = a->input_dtypes[0];
      } else if (a->num_outputs > 0 && a->output_dtypes != nullptr) {
        dtype = a->output_dtypes[0];
      }
      auto st = std::make_unique<State>(State{Find(a->op_name, dtype), nullptr});
      a->state = nullptr;
      a->workspace_bytes = 0;
      if (st->orig->create_state != nullptr) {
        if (weft_error* err = st->orig->create_state(ps, a)) return err;
        st->state = a->state;
      }
      a->state = st.release();
      return nullptr;
    });
  }

  static void DestroyState(void* ps, void* state) {
    auto* st = static_cast<State*>(state);
    if (st == nullptr) return;
    if (st->orig->destroy_state != nullptr && st->state != nullptr) st->orig->destroy_state(ps, st->state);
    delete st;
  }

  static weft_error* Compute(void* ps, const weft_kernel_args* a) {
    return Guard([&]() -> weft_error* {
      if (a == nullptr || a->state == nullptr)
        throw Error(WEFT_ERR_INVALID_ARGUMENT, "compute: kernel called without its state");
      const auto* st = static_cast<const State*>(a->state);
      if (a->stream == nullptr) {
        weft_kernel_args call = *a;
        call.state = st->state;
        return st->orig->compute(ps, &call);
      }
      QueuedKernels* self = detail::QueuedKernelsSlot();
      if (self == nullptr) throw Error(WEFT_ERR_INTERNAL, "queued kernels used after their table was destroyed");
      auto owned = std::make_shared<OwnedArgs>(*a);
      owned->args.state = st->state;
      const weft_kernel_def* orig = st->orig;
      self->device_->Submit(a->stream, [ps, orig, owned] {
        if (weft_error* err = orig->compute(ps, &owned->args)) throw ForwardedError(err);
      });
      return nullptr;
    });
  }

  HostQueueDevice* device_;
  std::string device_type_;
  std::vector<std::unique_ptr<Entry>> entries_;
  std::vector<const weft_kernel_def*> defs_;
  std::vector<const weft_op_def*> op_defs_;
  weft_operator_api api_{};
};

}  // namespace weft::sdk
