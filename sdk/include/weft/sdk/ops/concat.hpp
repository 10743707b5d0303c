// weft SDK ops — the concat family: Concat, SliceChannel (split), _split_v2 and stack (MXNet
// 1.9's ConcatParam, SliceChannelParam, SplitParam, StackParam).
#pragma once

#include "weft/sdk/cpp/params.hpp"
#include "weft/sdk/ops/convolution.hpp"

namespace weft::sdk {

/// Concat: num_args arrays joined along `dim`. Inference executors may join activations in
/// oneDNN's blocked layout (data_format, the inputs' and the output's; core/executor/fuse_conv.h):
/// along the channels of 4-D arrays with whole blocks of channels each, where the blocked join is
/// the same copy as the plain one (each image's part is one contiguous run in both).
struct ConcatParam {
  int64_t num_args = 1, dim = 1;
  ActFormat data_format = ActFormat::kPlain;

  template <class V>
  void Visit(V& v) {
    v(num_args, Attr("num_args").Min(1).Doc("number of inputs"));
    v(dim, Attr("dim").Default("1").Doc("axis to join along"));
    v(data_format,
      Attr("data_format").Default("plain").Choices(kActFormats).Doc("memory layout of the inputs and the output"));
  }
};

/// SliceChannel: `axis` split into num_outputs equal parts.
struct SliceChannelParam {
  int64_t num_outputs = 1, axis = 1;
  bool squeeze_axis = false;

  template <class V>
  void Visit(V& v) {
    v(num_outputs, Attr("num_outputs").Min(1).Doc("number of parts"));
    v(axis, Attr("axis").Default("1").Doc("axis to split"));
    v(squeeze_axis, Attr("squeeze_axis").Default("False").Doc("drop the split axis (its parts must have length 1)"));
  }
};

/// stack: num_args arrays of one shape joined along a new axis.
struct StackParam {
  int64_t axis = 0, num_args = 1;

  template <class V>
  void Visit(V& v) {
    v(axis, Attr("axis").Default("0").Doc("position of the new axis"));
    v(num_args, Attr("num_args").Min(1).Doc("number of inputs"));
  }
};

/// _split_v2: `axis` split into `sections` equal parts, or (sections 0) into the parts that start
/// at each of `indices`.
struct SplitV2Param {
  Tuple indices;
  int64_t axis = 1;
  bool squeeze_axis = false;
  int64_t sections = 0;

  template <class V>
  void Visit(V& v) {
    v(indices, Attr("indices").Doc("start of each part (sections = 0)"));
    v(axis, Attr("axis").Default("1").Doc("axis to split"));
    v(squeeze_axis,
      Attr("squeeze_axis").Default("False").Doc("remove the axis from each part (each must have extent 1)"));
    v(sections, Attr("sections").Default("0").Min(0).Doc("number of equal parts; 0 = use indices"));
  }
  /// Number of parts (outputs).
  int64_t Parts() const { return sections > 0 ? sections : static_cast<int64_t>(indices.size()); }
};

}  // namespace weft::sdk
