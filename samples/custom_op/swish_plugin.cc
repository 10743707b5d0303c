// A third-party operator plugin, built against weft's SDK only (weft::sdk): it adds the op
// "Swish" (Ramachandran, Zoph, Le 2017, "Searching for Activation Functions"):
//
//     Swish(data, beta) = data * sigmoid(beta * data)            (element-wise, any shape)
//     d Swish / d data  = s + beta * data * s * (1 - s),  s = sigmoid(beta * data)
//
// with its definition (attributes, shape inference, gradient) and float32 kernels for the
// forward op and for "_backward_Swish" (inputs: out_grad, data — WEFT_OP_BACKWARD_USES_INPUTS;
// output: the gradient of data). weft derives the backward node from the definition; the plugin
// only registers a kernel under the backward name.
//
// Two kinds of kernel show the two ways an operator plugin computes:
//   - on "cpu", host kernels (host_kernel.hpp): typed host pointers, computed in the call;
//   - on "simdev" (weft's simulated asynchronous device, whose memory the host cannot address),
//     device kernels (kernel.hpp) that ask the host for the native handles of the stream and of
//     the tensors they were given — the way a CUDA kernel gets its cudaStream_t and device
//     pointers — and queue their work on that stream instead of computing in the call.
// Both run the same loops (SwishForwardLoop / SwishBackwardLoop).
//
// SWISH_PLUGIN_NAME (default "swish") names the plugin; weft's tests build this file a second
// time under another name to check that a duplicate op name is refused naming both plugins.
#include <cmath>
#include <cstdint>

#include <memory>
#include <string>

#include "weft/sdk/cpp/host_kernel.hpp"
#include "weft/sdk/cpp/plugin.hpp"

#ifndef SWISH_PLUGIN_NAME
#define SWISH_PLUGIN_NAME "swish"
#endif

namespace swish {
namespace {

float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// Output shape = input shape (and back: a known output gives the input).
weft_error* InferShape(void* plugin_state, weft_infer_args* a) {
  return weft::sdk::Guard(weft::sdk::HostOf(plugin_state), [&] {
    if (a->num_inputs != 1 || a->num_outputs != 1)
      throw weft::sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "Swish takes one input and makes one output");
    weft_shape& in = a->input_shapes[0];
    weft_shape& out = a->output_shapes[0];
    if (in.ndim >= 0 && out.ndim >= 0) {
      bool same = in.ndim == out.ndim;
      for (int i = 0; same && i < in.ndim; ++i) same = in.dims[i] < 0 || out.dims[i] < 0 || in.dims[i] == out.dims[i];
      if (!same)
        throw weft::sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "Swish: input 'data' and the output differ in shape");
    }
    if (in.ndim >= 0)
      out = in;
    else if (out.ndim >= 0)
      in = out;
  });
}

const char* const kInputs[] = {"data"};
const char* const kOutputs[] = {"output"};
const weft_attr_def kAttrs[] = {
    {WEFT_STRUCT_SIZE(weft_attr_def, doc), "beta", "float", "1.0", "slope of the sigmoid gate"},
};
const int32_t kInplace[] = {0, 0};

const weft_op_def kSwishDef = {
    WEFT_STRUCT_SIZE(weft_op_def, def_data),
    "Swish",
    "Swish activation: data * sigmoid(beta * data), element-wise.",
    1,
    kInputs,
    1,
    kOutputs,
    0,
    nullptr,
    1,
    kAttrs,
    0,  // flags
    0,  // resources
    &InferShape,
    nullptr,  // dtype: the input's
    "_backward_Swish",
    WEFT_OP_BACKWARD_USES_INPUTS,
    1,
    kInplace,
    nullptr,  // def_data: InferShape needs none
};

// y = x * sigmoid(beta x), honouring the write request (MXNet's OpReqType).
void SwishForwardLoop(const float* x, float* y, int64_t n, float beta, int32_t req) {
  weft::sdk::WithReq(req, [&](auto assign) {
    for (int64_t i = 0; i < n; ++i) assign(y[i], x[i] * Sigmoid(beta * x[i]));
  });
}

// dx = g * (s + beta x s (1 - s)), s = sigmoid(beta x).
void SwishBackwardLoop(const float* g, const float* x, float* dx, int64_t n, float beta, int32_t req) {
  weft::sdk::WithReq(req, [&](auto assign) {
    for (int64_t i = 0; i < n; ++i) {
      const float s = Sigmoid(beta * x[i]);
      assign(dx[i], g[i] * (s + beta * x[i] * s * (1.0f - s)));
    }
  });
}

float Beta(const weft::sdk::KernelSetup& s) { return static_cast<float>(s.attrs.GetFloat("beta", 1.0)); }

class SwishForward {
 public:
  explicit SwishForward(const weft::sdk::KernelSetup& s) : beta_(Beta(s)) { s.ExpectCounts(1, 1); }
  void Compute(const weft::sdk::KernelCall& c) const {
    SwishForwardLoop(c.inputs[0].data<float>(), c.outputs[0].data<float>(), c.inputs[0].size(), beta_, c.req[0]);
  }

 private:
  float beta_;
};

class SwishBackward {
 public:
  explicit SwishBackward(const weft::sdk::KernelSetup& s) : beta_(Beta(s)) {
    s.ExpectCounts(2, 1);  // out_grad, data -> d data
  }
  void Compute(const weft::sdk::KernelCall& c) const {
    SwishBackwardLoop(c.inputs[0].data<float>(), c.inputs[1].data<float>(), c.outputs[0].data<float>(),
                      c.inputs[1].size(), beta_, c.req[0]);
  }

 private:
  float beta_;
};

// ---- the simulated device: native handles, work queued on the stream -------------------------

// One queued run: host addresses of the tensors (from their native handles) and the attributes.
struct QueuedRun {
  const float* g = nullptr;  // backward only
  const float* x = nullptr;
  float* out = nullptr;
  int64_t n = 0;
  float beta = 1.0f;
  int32_t req = WEFT_REQ_WRITE;
  static weft_error* Run(void* self) {
    std::unique_ptr<QueuedRun> r(static_cast<QueuedRun*>(self));
    if (r->g == nullptr) {
      SwishForwardLoop(r->x, r->out, r->n, r->beta, r->req);
    } else {
      SwishBackwardLoop(r->g, r->x, r->out, r->n, r->beta, r->req);
    }
    return nullptr;
  }
};

// The host address of a tensor of a device whose native memory is host memory.
float* HostAddressOf(const weft::sdk::DeviceCall& c, const weft::sdk::DeviceTensor& t) {
  const weft_native_handle_args m = c.NativeMemory(t);
  if (m.kind != WEFT_NATIVE_KIND_HOST_POINTER)
    throw weft::sdk::Error(WEFT_ERR_UNSUPPORTED, "Swish: the device's memory is not host memory (native kind " +
                                                     std::to_string(m.kind) + ")");
  if (m.size != 0 && m.size < t.bytes()) throw weft::sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "Swish: tensor too small");
  return static_cast<float*>(m.handle);
}

// Runs `run` on the call's stream: queued on the native host queue, or now for the NULL stream.
void Launch(const weft::sdk::DeviceCall& c, std::unique_ptr<QueuedRun> run) {
  const weft_native_handle_args s = c.NativeStream();
  if (s.kind != WEFT_NATIVE_KIND_HOST_QUEUE)
    throw weft::sdk::Error(WEFT_ERR_UNSUPPORTED, "Swish: the device's streams are not host queues (native kind " +
                                                     std::to_string(s.kind) + ")");
  if (s.handle == nullptr) {
    weft::sdk::ThrowIfError(c.host, QueuedRun::Run(run.release()));
    return;
  }
  auto* queue = static_cast<weft_host_queue*>(s.handle);
  QueuedRun* raw = run.release();  // Run takes it back
  if (weft_error* err = queue->enqueue(queue->queue, &QueuedRun::Run, raw)) {
    delete raw;
    weft::sdk::ThrowIfError(c.host, err);
  }
}

class SwishForwardQueued {
 public:
  explicit SwishForwardQueued(const weft::sdk::KernelSetup& s) : beta_(Beta(s)) { s.ExpectCounts(1, 1); }
  void Compute(const weft::sdk::DeviceCall& c) const {
    auto run = std::make_unique<QueuedRun>();
    run->x = HostAddressOf(c, c.inputs[0]);
    run->req = c.req[0];
    run->out = run->req == WEFT_REQ_NULL ? nullptr : HostAddressOf(c, c.outputs[0]);
    run->n = c.inputs[0].size();
    run->beta = beta_;
    Launch(c, std::move(run));
  }

 private:
  float beta_;
};

class SwishBackwardQueued {
 public:
  explicit SwishBackwardQueued(const weft::sdk::KernelSetup& s) : beta_(Beta(s)) { s.ExpectCounts(2, 1); }
  void Compute(const weft::sdk::DeviceCall& c) const {
    auto run = std::make_unique<QueuedRun>();
    run->g = HostAddressOf(c, c.inputs[0]);
    run->x = HostAddressOf(c, c.inputs[1]);
    run->req = c.req[0];
    run->out = run->req == WEFT_REQ_NULL ? nullptr : HostAddressOf(c, c.outputs[0]);
    run->n = c.inputs[1].size();
    run->beta = beta_;
    Launch(c, std::move(run));
  }

 private:
  float beta_;
};

class SwishPlugin final : public weft::sdk::Plugin {
 public:
  explicit SwishPlugin(const weft_host_api* host) : Plugin(host), simdev_("simdev", host), cpu_("cpu", host) {
    const uint64_t f32 = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32);
    simdev_.Add<SwishForwardQueued>("Swish", f32);
    simdev_.Add<SwishBackwardQueued>("_backward_Swish", f32);
    cpu_.AddOpDef(&kSwishDef);
    cpu_.Add<SwishForward>("Swish", f32);
    cpu_.Add<SwishBackward>("_backward_Swish", f32);
    cpu_.Include(simdev_);  // one operator table for both device types
    Provide(cpu_.Api());
  }

 private:
  weft::sdk::KernelTable simdev_, cpu_;  // simdev_ first: cpu_ refers to it
};

}  // namespace
}  // namespace swish

WEFT_SDK_PLUGIN(swish::SwishPlugin, SWISH_PLUGIN_NAME, "1.0.0", "sample operator plugin: the Swish activation",
                WEFT_PLUGIN_PROVIDES_OPERATORS)
