// weft SDK ops — the index family: one_hot, Embedding, argmax, take, pick, where (MXNet 1.9's
// OneHotParam, EmbeddingParam, ReduceAxisParam, TakeParam, PickParam; where has none).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

inline constexpr std::string_view kIndexedDTypes[] = {"float32", "float64", "float16", "bfloat16",
                                                      "uint8",   "int8",    "int32",   "int64"};

/// one_hot: output[..., j] = on_value if j == indices[...] else off_value.
struct OneHotParam {
  int64_t depth = 0;
  double on_value = 1.0, off_value = 0.0;
  DTypeAttr dtype{WEFT_DTYPE_FLOAT32};

  template <class V>
  void Visit(V& v) {
    v(depth, Attr("depth").Min(0).MxType("int").Doc("length of the new last axis"));
    v(on_value, Attr("on_value").Default("1").Doc("value at the index"));
    v(off_value, Attr("off_value").Default("0").Doc("value elsewhere"));
    v(dtype, Attr("dtype").Default("float32").Choices(kIndexedDTypes).Doc("output dtype"));
  }
  /// Throws naming `op` unless the output holds depth values per index.
  void CheckShapes(std::string_view op, std::span<const int64_t> indices, std::span<const int64_t> output) const {
    if (ShapeSize(output) != ShapeSize(indices) * depth)
      OpError(WEFT_ERR_INVALID_ARGUMENT, op,
              "output " + ShapeText(output) + " has " + std::to_string(ShapeSize(output)) +
                  " elements, expected indices x depth = " + std::to_string(ShapeSize(indices) * depth));
  }
};

/// Embedding: output[..., :] = weight[data[...], :], indices clipped to [0, input_dim − 1].
struct EmbeddingParam {
  int64_t input_dim = 0, output_dim = 0;
  DTypeAttr dtype{WEFT_DTYPE_FLOAT32};
  bool sparse_grad = false;

  template <class V>
  void Visit(V& v) {
    v(input_dim, Attr("input_dim").Min(1).Doc("number of rows of weight (vocabulary size)"));
    v(output_dim, Attr("output_dim").Min(1).Doc("length of each row"));
    v(dtype, Attr("dtype").Default("float32").Choices(kIndexedDTypes).Doc("dtype of weight and output"));
    v(sparse_grad,
      Attr("sparse_grad")
          .Default("False")
          .Doc("row_sparse weight gradient storing the rows data names (the MXNet C API's executors; the kernel's "
               "dense gradient has the same values)"));
  }
};

/// argmax: the index of the largest element along `axis` (of the flattened input when None).
struct ArgmaxParam {
  std::optional<int64_t> axis;
  bool keepdims = false;

  template <class V>
  void Visit(V& v) {
    v(axis, Attr("axis").Default("None").Doc("axis to search; None = all elements"));
    v(keepdims, Attr("keepdims").Default("False").Doc("keep the axis with length 1"));
  }
};

enum class TakeMode { kClip, kRaise, kWrap };
inline constexpr std::string_view kTakeModes[] = {"clip", "raise", "wrap"};
enum class PickMode { kClip, kWrap };
inline constexpr std::string_view kPickModes[] = {"clip", "wrap"};

/// take: slices of `a` along `axis` at the positions in `indices`.
struct TakeParam {
  int64_t axis = 0;
  TakeMode mode = TakeMode::kClip;

  template <class V>
  void Visit(V& v) {
    v(axis, Attr("axis").Default("0").Doc("axis of a to take along"));
    v(mode, Attr("mode").Default("clip").Choices(kTakeModes).Doc("out-of-range positions"));
  }
};

/// pick: one element along `axis` per position, chosen by `index`.
struct PickParam {
  std::optional<int64_t> axis = -1;
  bool keepdims = false;
  PickMode mode = PickMode::kClip;

  template <class V>
  void Visit(V& v) {
    v(axis, Attr("axis").Default("-1").Doc("axis to pick along (None is refused, as MXNet 1.9)"));
    v(keepdims, Attr("keepdims").Default("False").Doc("keep the axis with length 1"));
    v(mode, Attr("mode").Default("clip").Choices(kPickModes).Doc("out-of-range indices"));
  }
  void Validate() const {
    CheckParam(axis.has_value(), "axis=None is not supported by pick (as MXNet 1.9); give an axis");
  }
};

}  // namespace weft::sdk
