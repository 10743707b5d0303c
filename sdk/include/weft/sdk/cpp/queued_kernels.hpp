// weft SDK C++ helpers — running synchronous host-code kernels on a HostQueueDevice's streams.
//
// Host kernels (host_kernel.hpp) compute in the calling thread whatever weft_kernel_args.stream
// says. A device whose streams are HostStreams (host_queue.hpp) must still order a kernel after
// the copies queued before it on the same stream, and must not compute in the caller's thread
// when the caller gave a stream (sdk/operator.h: compute queues its work and returns).
// QueuedKernels wraps an operator table so that a compute call with a non-NULL stream is
// deep-copied and queued on that stream (NULL stream: it runs at once). A failure of a queued
// kernel becomes the stream's sticky error (reported by stream_synchronize and by events
// recorded after it, sdk/device.h).
//
// Wrapping: create_state of the wrapper finds the original kernel by (op name, dtype of the first
// input, else of the first output) and keeps {original def, original state} as its state; compute
// and destroy_state unwrap it. Op definitions pass through unchanged. Each wrapped def's
// kernel_data points at its entry, which points back at the QueuedKernels: no globals, so several
// QueuedKernels may live in one library.
//
// The host must not destroy a state while work using it is queued (it waits for the work's event
// first, as for any device).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "weft/sdk/cpp/host_queue.hpp"
#include "weft/sdk/operator.h"

namespace weft::sdk {

class QueuedKernels {
 public:
  /// Wraps `kernels` (borrowed; must outlive this object; NULL = no kernels) for `device`, whose
  /// streams the wrapped kernels use. Wrapped defs claim `device_type` (a device reusing another
  /// device's kernels, e.g. simdev running CPU kernels whose PointerResolver translates its
  /// handles, passes its own type). `host`: the plugin's host table (errors).
  QueuedKernels(const weft_operator_api* kernels, HostQueueDevice* device, std::string device_type,
                const weft_host_api* host)
      : device_(device), device_type_(std::move(device_type)), host_(host) {
    if (kernels != nullptr) {
      for (int32_t i = 0; i < kernels->num_op_defs; ++i) op_defs_.push_back(kernels->op_defs[i]);
      entries_.reserve(static_cast<size_t>(kernels->num_kernels));
      for (int32_t i = 0; i < kernels->num_kernels; ++i) {
        const weft_kernel_def* orig = kernels->kernels[i];
        auto e = std::make_unique<Entry>(Entry{orig, *orig, this});
        weft_kernel_def& d = e->wrapped;
        // The wrapped kernel's source_file / math_files (appended to SDK 2.0) stay when it has them.
        if (!WEFT_STRUCT_HAS(orig, weft_kernel_def, math_files)) {
          d.source_file = nullptr;
          d.math_files = nullptr;
        }
        d.struct_size = WEFT_STRUCT_SIZE(weft_kernel_def, math_files);
        // A sparse kernel (SDK 2.1) stays one: its storage claim goes to the original.
        if (WEFT_STRUCT_HAS(orig, weft_kernel_def, infer_storage) && orig->infer_storage != nullptr) {
          d.struct_size = WEFT_STRUCT_SIZE(weft_kernel_def, infer_storage);
          d.infer_storage = &InferStorage;
        }
        d.device_type = device_type_.c_str();
        d.kernel_data = e.get();
        d.create_state = &CreateState;
        d.destroy_state = &DestroyState;
        d.compute = &Compute;
        entries_.push_back(std::move(e));
      }
    }
    for (const auto& e : entries_) defs_.push_back(&e->wrapped);
    api_.struct_size = WEFT_STRUCT_SIZE(weft_operator_api, kernels);
    api_.num_op_defs = static_cast<int32_t>(op_defs_.size());
    api_.op_defs = op_defs_.data();
    api_.num_kernels = static_cast<int32_t>(defs_.size());
    api_.kernels = defs_.data();
  }
  QueuedKernels(const QueuedKernels&) = delete;
  QueuedKernels& operator=(const QueuedKernels&) = delete;

  /// The wrapped operator table (valid as long as this object).
  const weft_operator_api* api() const noexcept { return &api_; }

 private:
  struct Entry {
    const weft_kernel_def* orig;
    weft_kernel_def wrapped;
    QueuedKernels* self;
  };
  static Entry& EntryOf(const void* kernel_data) {
    if (kernel_data == nullptr) throw Error(WEFT_ERR_INVALID_ARGUMENT, "queued kernel called without kernel_data");
    return *static_cast<Entry*>(const_cast<void*>(kernel_data));
  }
  static const weft_host_api* HostOfData(const void* kernel_data) noexcept {
    return kernel_data == nullptr ? nullptr : static_cast<const Entry*>(kernel_data)->self->host_;
  }
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
      shapes.reserve(2 * n + 2);  // shape and strides of every tensor and the workspace
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
      if (t.struct_size >= WEFT_STRUCT_SIZE(weft_tensor, strides) && t.strides != nullptr && t.ndim > 0) {
        shapes.emplace_back(t.strides, t.strides + t.ndim);
        c.strides = shapes.back().data();
      }
      return c;
    }
  };

  // The original def for (op, dtype); the entry's own def when it serves that dtype (the usual
  // case), else another registration of the op (several classes may split one op's dtypes).
  const weft_kernel_def* Find(const Entry& entry, std::string_view op, int32_t dtype) const {
    if (dtype < 0 || (entry.orig->dtypes & WEFT_DTYPE_BIT(dtype)) != 0) return entry.orig;
    for (const auto& e : entries_)
      if (op == e->orig->op_name && (e->orig->dtypes & WEFT_DTYPE_BIT(dtype)) != 0) return e->orig;
    throw Error(WEFT_ERR_UNSUPPORTED,
                device_type_ + ": no kernel for op '" + std::string(op) + "' and dtype code " + std::to_string(dtype));
  }

  static weft_error* CreateState(void* ps, weft_kernel_state_args* a) {
    return Guard(a != nullptr ? HostOfData(a->kernel_data) : nullptr, [&]() -> weft_error* {
      if (a == nullptr || a->op_name == nullptr) throw Error(WEFT_ERR_INVALID_ARGUMENT, "create_state: no op name");
      Entry& entry = EntryOf(a->kernel_data);
      int32_t dtype = -1;
      if (a->num_inputs > 0 && a->input_dtypes != nullptr) {
        dtype = a->input_dtypes[0];
      } else if (a->num_outputs > 0 && a->output_dtypes != nullptr) {
        dtype = a->output_dtypes[0];
      }
      auto st = std::make_unique<State>(State{entry.self->Find(entry, a->op_name, dtype), nullptr});
      a->state = nullptr;
      a->workspace_bytes = 0;
      if (st->orig->create_state != nullptr) {
        weft_kernel_state_args inner = *a;
        inner.kernel_data = st->orig->kernel_data;
        if (weft_error* err = st->orig->create_state(ps, &inner)) return err;
        st->state = inner.state;
        a->workspace_bytes = inner.workspace_bytes;
      }
      a->state = st.release();
      return nullptr;
    });
  }

  static weft_error* InferStorage(void* ps, weft_storage_args* a) {
    return Guard(a != nullptr ? HostOfData(a->kernel_data) : nullptr, [&]() -> weft_error* {
      if (a == nullptr) throw Error(WEFT_ERR_INVALID_ARGUMENT, "infer_storage: args is NULL");
      const weft_kernel_def* orig = EntryOf(a->kernel_data).orig;
      weft_storage_args inner = *a;
      inner.kernel_data = orig->kernel_data;
      if (weft_error* err = orig->infer_storage(ps, &inner)) return err;
      std::copy(inner.output_stypes, inner.output_stypes + inner.num_outputs, a->output_stypes);
      a->claimed = inner.claimed;
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
    return Guard(a != nullptr ? HostOfData(a->kernel_data) : nullptr, [&]() -> weft_error* {
      if (a == nullptr || a->state == nullptr)
        throw Error(WEFT_ERR_INVALID_ARGUMENT, "compute: kernel called without its state");
      QueuedKernels* self = EntryOf(a->kernel_data).self;
      const auto* st = static_cast<const State*>(a->state);
      if (a->stream == nullptr) {
        weft_kernel_args call = *a;
        call.state = st->state;
        call.kernel_data = st->orig->kernel_data;
        return st->orig->compute(ps, &call);
      }
      // A sparse call's aux arrays and output allocator belong to the caller's frame: it cannot
      // be queued. Hosts compute sparse kernels of host devices on the NULL stream.
      if (WEFT_STRUCT_HAS(a, weft_kernel_args, alloc_sparse_output) && a->input_stypes != nullptr)
        throw Error(WEFT_ERR_UNSUPPORTED, self->device_type_ + ": sparse kernels run on the NULL stream only");
      auto owned = std::make_shared<OwnedArgs>(*a);
      owned->args.state = st->state;
      owned->args.kernel_data = st->orig->kernel_data;
      const weft_kernel_def* orig = st->orig;
      const weft_host_api* host = self->host_;
      self->device_->Submit(
          a->stream,
          [ps, orig, owned, host] {
            // The kernel's error object becomes an exception: the stream's sticky error.
            ThrowIfError(host, orig->compute(ps, &owned->args));
          },
          HostQueueDevice::TaskKind::kKernel);
      return nullptr;
    });
  }

  HostQueueDevice* device_;
  std::string device_type_;
  const weft_host_api* host_;
  std::vector<std::unique_ptr<Entry>> entries_;
  std::vector<const weft_kernel_def*> defs_;
  std::vector<const weft_op_def*> op_defs_;
  weft_operator_api api_{};
};

}  // namespace weft::sdk
