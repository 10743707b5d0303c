// weft SDK ops — CTCLoss (MXNet 1.9's CTCLossParam, src/operator/nn/ctc_loss-inl.h): the
// connectionist temporal classification loss of Graves et al. (ICML 2006), with the label
// conventions of MXNet's operator.
#pragma once

#include <string_view>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

enum class CTCBlankLabel { kFirst, kLast };
inline constexpr std::string_view kCTCBlankLabels[] = {"first", "last"};

/// CTCLoss: inputs data (T, N, C) activations (softmax is applied inside), label (N, L), then
/// data_lengths (N) when use_data_lengths and label_lengths (N) when use_label_lengths; outputs
/// the loss (N) and, hidden, d loss / d data (T, N, C), which the backward scales by out_grad.
///
/// blank_label 'first': the blank is class 0, labels are 1..C-1 and a label row ends at its first
/// 0 (padding); 'last': the blank is class C-1, labels are 0..C-2 and a row ends at its first -1.
/// With use_label_lengths the row's first label_lengths[n] values are the label, as given.
struct CTCLossParam {
  bool use_data_lengths = false, use_label_lengths = false;
  CTCBlankLabel blank_label = CTCBlankLabel::kFirst;

  template <class V>
  void Visit(V& v) {
    v(use_data_lengths,
      Attr("use_data_lengths").Default("False").Doc("take a data_lengths input: the frames of each sequence"));
    v(use_label_lengths,
      Attr("use_label_lengths").Default("False").Doc("take a label_lengths input instead of padded label rows"));
    v(blank_label, Attr("blank_label")
                       .Default("first")
                       .Choices(kCTCBlankLabels)
                       .Doc("the blank class: 0 (labels padded with 0) or C-1 (labels padded with -1)"));
  }
  /// The blank's class index for `classes` classes.
  int64_t Blank(int64_t classes) const { return blank_label == CTCBlankLabel::kFirst ? 0 : classes - 1; }
  /// The label value that ends a row when label lengths are not given.
  int64_t Padding() const { return blank_label == CTCBlankLabel::kFirst ? 0 : -1; }
};

}  // namespace weft::sdk
