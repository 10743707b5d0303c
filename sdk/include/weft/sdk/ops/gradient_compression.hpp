// weft SDK ops — the KVStore's 2-bit gradient compression as ops, _quantize_2bit and
// _dequantize_2bit (MXNet's quantize_2bit / dequantize_2bit kernels, src/kvstore/
// gradient_compression-inl.h): 16 two-bit codes per uint32 word.
#pragma once

#include <cmath>
#include <span>
#include <string>
#include <string_view>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

/// Words holding the codes of n values.
WEFT_SDK_HD inline int64_t TwoBitWords(int64_t n) { return (n + 15) / 16; }

namespace detail {
inline void CheckThreshold(float t) {
  CheckParam(t > 0.0f && std::isfinite(t), "threshold must be a finite number > 0, got " + std::to_string(t));
}
}  // namespace detail

/// _quantize_2bit: residual + data ≥ t → code 11, ≤ −t → code 10, else 00.
struct Quantize2BitParam {
  float threshold = 0.5f;

  template <class V>
  void Visit(V& v) {
    v(threshold, Attr("threshold").Default("0.5").Doc("t: values at or beyond ±t are sent as ±t"));
  }
  void Validate() const { detail::CheckThreshold(threshold); }
};

/// _dequantize_2bit: code 11 → t, 10 → −t, else 0, into an array of `shape`.
struct Dequantize2BitParam {
  Tuple shape;
  float threshold = 0.5f;

  template <class V>
  void Visit(V& v) {
    v(shape, Attr("shape").Doc("shape of the decoded array"));
    v(threshold, Attr("threshold").Default("0.5").Doc("t: values at or beyond ±t are sent as ±t"));
  }
  void Validate() const {
    detail::CheckThreshold(threshold);
    for (int64_t e : shape) CheckParam(e >= 0, "shape " + FormatTuple(shape) + " has a negative extent");
  }
};

/// The threshold of a codec kernel's `setup` (sdk::KernelSetup of either op).
template <class Setup>
float TwoBitThreshold(const Setup& setup) {
  if (setup.op_name == "_quantize_2bit") return setup.template Params<Quantize2BitParam>().threshold;
  return setup.template Params<Dequantize2BitParam>().threshold;
}

/// Checks the tensors of a codec kernel's `setup` (sdk::KernelSetup of _quantize_2bit: data ->
/// words, aux residual; of _dequantize_2bit: words -> output): values float32, words uint32
/// holding TwoBitWords(values) codes, the residual float32 of the data's size. Throws naming the
/// op: WEFT_ERR_UNSUPPORTED for other dtypes, WEFT_ERR_INVALID_ARGUMENT for counts and sizes.
template <class Setup>
void CheckTwoBitCodec(const Setup& setup) {
  const bool quantize = setup.op_name == "_quantize_2bit";
  setup.ExpectCounts(1, 1, quantize ? 1 : 0);
  const auto& values = quantize ? setup.inputs[0] : setup.outputs[0];
  const auto& words = quantize ? setup.outputs[0] : setup.inputs[0];
  if (values.dtype != WEFT_DTYPE_FLOAT32 || words.dtype != WEFT_DTYPE_UINT32)
    OpError(WEFT_ERR_UNSUPPORTED, setup.op_name, "values must be float32 and codes uint32");
  const int64_t n = values.size(), w = words.size();
  if (w != TwoBitWords(n))
    OpError(
        WEFT_ERR_INVALID_ARGUMENT, setup.op_name,
        std::to_string(w) + " words for " + std::to_string(n) + " values; they need " + std::to_string(TwoBitWords(n)));
  if (quantize && (setup.aux[0].dtype != WEFT_DTYPE_FLOAT32 || setup.aux[0].size() != n))
    OpError(WEFT_ERR_INVALID_ARGUMENT, setup.op_name,
            "residual " + ShapeText(setup.aux[0].shape) + " must be float32 like data " + ShapeText(values.shape));
}

}  // namespace weft::sdk
