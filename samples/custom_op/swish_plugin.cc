// A third-party operator plugin, built against weft's SDK only (weft::sdk): it adds the op
// "Swish" (Ramachandran, Zoph, Le 2017, "Searching for Activation Functions"):
//
//     Swish(data, beta) = data * sigmoid(beta * data)            (element-wise, any shape)
//     d Swish / d data  = s + beta * data * s * (1 - s),  s = sigmoid(beta * data)
//
// with its definition (attributes, shape inference, gradient) and float32 CPU kernels for the
// forward op and for "_backward_Swish" (inputs: out_grad, data — WEFT_OP_BACKWARD_USES_INPUTS;
// output: the gradient of data). weft derives the backward node from the definition; the plugin
// only registers a kernel under the backward name.
//
// SWISH_PLUGIN_NAME (default "swish") names the plugin; weft's tests build this file a second
// time under another name to check that a duplicate op name is refused naming both plugins.
#include <cmath>
#include <cstdint>

#include "weft/sdk/cpp/kernel.hpp"
#include "weft/sdk/cpp/plugin.hpp"

#ifndef SWISH_PLUGIN_NAME
#define SWISH_PLUGIN_NAME "swish"
#endif

namespace swish {
namespace {

float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// Output shape = input shape (and back: a known output gives the input).
weft_error* InferShape(void*, weft_infer_args* a) {
  return weft::sdk::Guard([&] {
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
    WEFT_STRUCT_SIZE(weft_op_def, inplace_pairs),
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
};

class SwishForward {
 public:
  explicit SwishForward(const weft::sdk::KernelSetup& s) : beta_(static_cast<float>(s.attrs.GetFloat("beta", 1.0))) {
    s.ExpectCounts(1, 1);
  }
  void Compute(const weft::sdk::KernelCall& c) const {
    const float* x = c.inputs[0].data<float>();
    float* y = c.outputs[0].data<float>();
    const int64_t n = c.inputs[0].size();
    weft::sdk::WithReq(c.req[0], [&](auto assign) {
      for (int64_t i = 0; i < n; ++i) assign(y[i], x[i] * Sigmoid(beta_ * x[i]));
    });
  }

 private:
  float beta_;
};

class SwishBackward {
 public:
  explicit SwishBackward(const weft::sdk::KernelSetup& s) : beta_(static_cast<float>(s.attrs.GetFloat("beta", 1.0))) {
    s.ExpectCounts(2, 1);  // out_grad, data -> d data
  }
  void Compute(const weft::sdk::KernelCall& c) const {
    const float* g = c.inputs[0].data<float>();
    const float* x = c.inputs[1].data<float>();
    float* dx = c.outputs[0].data<float>();
    const int64_t n = c.inputs[1].size();
    weft::sdk::WithReq(c.req[0], [&](auto assign) {
      for (int64_t i = 0; i < n; ++i) {
        const float s = Sigmoid(beta_ * x[i]);
        assign(dx[i], g[i] * (s + beta_ * x[i] * s * (1.0f - s)));
      }
    });
  }

 private:
  float beta_;
};

class SwishPlugin final : public weft::sdk::Plugin {
 public:
  SwishPlugin() : table_("cpu") {
    table_.AddOpDef(&kSwishDef);
    table_.Add<SwishForward>("Swish", WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32));
    table_.Add<SwishBackward>("_backward_Swish", WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32));
    Provide(table_.Api());
  }

 private:
  weft::sdk::KernelTable table_;
};

}  // namespace
}  // namespace swish

WEFT_SDK_PLUGIN(swish::SwishPlugin, SWISH_PLUGIN_NAME, "1.0.0", "sample operator plugin: the Swish activation",
                WEFT_PLUGIN_PROVIDES_OPERATORS)
