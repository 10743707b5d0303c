// Converting one element between a dtype's bytes and double (for fills, At() and printing).
// Internal to the ndarray module.
#pragma once

#include "weft/base.h"

namespace weft::ndarray_detail {

/// The element of `dtype` at `p`, as double. float16/bfloat16 are decoded exactly.
double LoadAsDouble(const void* p, DType dtype);
/// Writes `v` converted to `dtype` at `p` (round to nearest for floats; C++ conversion for
/// integers, with NaN -> 0 and out-of-range values clamped; bool is v != 0).
void StoreFromDouble(double v, DType dtype, void* p);

}  // namespace weft::ndarray_detail
