// weft SDK ops — the sort family: topk, sort, argsort (MXNet 1.9's TopKParam, SortParam,
// ArgSortParam).
#pragma once

#include <optional>
#include <string_view>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

inline constexpr std::string_view kSortIndexDTypes[] = {"float16", "float32", "float64", "int32", "int64", "uint8"};
enum class TopkReturn { kBoth, kIndices, kMask, kValue };
inline constexpr std::string_view kTopkReturns[] = {"both", "indices", "mask", "value"};

/// topk: the k largest (smallest with is_ascend) elements along `axis` (None: the flattened data).
struct TopkParam {
  std::optional<int64_t> axis = -1;
  int64_t k = 1;
  TopkReturn ret_typ = TopkReturn::kIndices;
  bool is_ascend = false;
  DTypeAttr dtype{WEFT_DTYPE_FLOAT32};

  template <class V>
  void Visit(V& v) {
    v(axis, Attr("axis").Default("-1").Doc("axis to order along; None = the flattened data"));
    v(k, Attr("k").Default("1").Doc("how many; < 1 = all"));
    v(ret_typ, Attr("ret_typ").Default("indices").Choices(kTopkReturns).Doc("what to return"));
    v(is_ascend, Attr("is_ascend").Default("False").Doc("smallest first"));
    v(dtype, Attr("dtype").Default("float32").Choices(kSortIndexDTypes).Doc("dtype of the indices"));
  }
};

/// sort: the elements sorted along `axis`.
struct SortParam {
  std::optional<int64_t> axis = -1;
  bool is_ascend = true;

  template <class V>
  void Visit(V& v) {
    v(axis, Attr("axis").Default("-1").Doc("axis to order along; None = the flattened data"));
    v(is_ascend, Attr("is_ascend").Default("True").Doc("smallest first"));
  }
};

/// argsort: the positions that sort the data along `axis`, as `dtype`.
struct ArgsortParam {
  std::optional<int64_t> axis = -1;
  bool is_ascend = true;
  DTypeAttr dtype{WEFT_DTYPE_FLOAT32};

  template <class V>
  void Visit(V& v) {
    v(axis, Attr("axis").Default("-1").Doc("axis to order along; None = the flattened data"));
    v(is_ascend, Attr("is_ascend").Default("True").Doc("smallest first"));
    v(dtype, Attr("dtype").Default("float32").Choices(kSortIndexDTypes).Doc("dtype of the positions"));
  }
};

}  // namespace weft::sdk
