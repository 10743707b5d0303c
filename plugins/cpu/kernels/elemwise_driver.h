// weft CPU kernels — the element-wise drivers shared by every unary, binary, scalar, broadcast
// and reduction-backward kernel. Both run in the variant of isa_dispatch.h for the machine's ISA.
//
//   Map(out, n, req, f, in...)             out[i] (=|+=) f(in[i]...) over n contiguous elements
//   MapBroadcast(out, out_dims, req, f, {in, dims}...)
//                                          the same with numpy broadcasting of every input to
//                                          out_dims (shapes right-aligned, extent 1 repeats)
//
// The functor sees values, never indices, so the loops stay simple enough for GCC to vectorise.
// Outputs may alias an input exactly (in-place), never partially. Thread-safe: no state.
//
// Both take a leading template flag kIsa (default true). Map<false>(...) / MapBroadcast<false>(...)
// compile the loop once, for the baseline ISA, and MapBroadcast<false> walks every input through a
// run-time stride instead of one loop per Run/Repeat pattern: for the ops off the training hot path
// (comparisons, rarely used math, indexing), whose three ISA copies would only lengthen the build
// (issue 34: the dispatched element-wise files dominate it).
#pragma once

#include <cstdint>
#include <tuple>
#include <utility>

#include "isa_dispatch.h"
#include "tensor_util.h"

namespace weft::cpu::tensor {

/// f() in the variant of isa_dispatch.h for the machine (kIsa) or in the baseline copy only.
template <bool kIsa, typename F>
inline void MaybeDispatch(const F& f) {
  if constexpr (kIsa) {
    isa::Dispatch(f);
  } else {
    f();
  }
}

/// out[i] = f(in[i]...) for req write / write-inplace, out[i] += ... for add, nothing for null.
/// Throws WEFT_ERR_INVALID_ARGUMENT for a req value that is none of WEFT_REQ_*.
template <bool kIsa = true, typename T, typename F, typename... In>
void Map(T* out, int64_t n, int32_t req, F f, const In*... in) {
  MaybeDispatch<kIsa>([&] {
    sdk::WithReq(req, [&](auto assign) {
      for (int64_t i = 0; i < n; ++i) assign(out[i], f(in[i]...));
    });
  });
}

/// Broadcast input: a pointer and its shape (right-aligned against the output's).
template <typename T>
struct BroadcastIn {
  const T* data;
  const Dims& dims;
};

namespace detail {

// How an output shape is walked for K broadcast inputs: axes of extent 1 dropped, neighbours
// that every input walks contiguously (or repeats together) merged, so that the innermost axis
// is as long as possible. Strides are in elements, 0 where an input repeats.
template <int K>
struct BroadcastPlan {
  int ndim = 0;
  int64_t shape[WEFT_MAX_NDIM] = {};
  int64_t stride[K][WEFT_MAX_NDIM] = {};
};

template <int K>
BroadcastPlan<K> PlanBroadcast(const Dims& out, const Dims* const* in) {
  BroadcastPlan<K> full;
  full.ndim = out.ndim;
  for (int k = 0; k < K; ++k) {
    const Dims& s = *in[k];
    if (s.ndim > out.ndim) {
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT,
                       "cannot broadcast shape " + s.Str() + " to " + out.Str() + ": it has more dimensions");
    }
    int64_t stride = 1;
    for (int a = out.ndim - 1; a >= 0; --a) {
      const int sa = a - (out.ndim - s.ndim);
      const int64_t e = sa >= 0 ? s.d[sa] : 1;
      if (e != out.d[a] && e != 1) {
        throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "cannot broadcast shape " + s.Str() + " to " + out.Str() +
                                                        ": axis " + std::to_string(a) + " differs");
      }
      full.stride[k][a] = e == 1 ? 0 : stride;
      stride *= e;
    }
  }
  BroadcastPlan<K> p;
  for (int a = 0; a < full.ndim; ++a) {
    if (out.d[a] == 1) continue;
    bool merge = p.ndim > 0;
    for (int k = 0; k < K && merge; ++k) {
      merge = p.stride[k][p.ndim - 1] == full.stride[k][a] * out.d[a];
    }
    if (merge) {
      p.shape[p.ndim - 1] *= out.d[a];
      for (int k = 0; k < K; ++k) p.stride[k][p.ndim - 1] = full.stride[k][a];
    } else {
      p.shape[p.ndim] = out.d[a];
      for (int k = 0; k < K; ++k) p.stride[k][p.ndim] = full.stride[k][a];
      ++p.ndim;
    }
  }
  if (p.ndim == 0) {  // a scalar, or all extents 1
    p.ndim = 1;
    p.shape[0] = 1;
    for (int k = 0; k < K; ++k) p.stride[k][0] = 1;
  }
  return p;
}

// Accessors for the innermost axis: a contiguous run, or one value repeated.
template <typename T>
struct Run {
  const T* p;
  T operator[](int64_t i) const { return p[i]; }
};
template <typename T>
struct Repeat {
  T v;
  T operator[](int64_t) const { return v; }
};
// Either of the above through a run-time stride (1 or 0).
template <typename T>
struct Strided {
  const T* p;
  int64_t s;
  T operator[](int64_t i) const { return p[i * s]; }
};

template <typename T, typename F, typename... A>
void MapAccess(T* out, int64_t n, int32_t req, const F& f, A... a) {
  sdk::WithReq(req, [&](auto assign) {
    for (int64_t i = 0; i < n; ++i) assign(out[i], f(a[i]...));
  });
}

// Turns each (pointer, innermost stride) into a Run or a Repeat, then runs the loop; one
// instantiation per stride pattern keeps every loop a plain vectorisable one.
template <typename A>
inline constexpr bool kIsRepeat = false;
template <typename P>
inline constexpr bool kIsRepeat<Repeat<P>> = true;

template <typename T, typename F, typename Done>
void Inner(T* out, int64_t n, int32_t req, const F& f, Done done) {
  std::apply(
      [&](auto... a) {
        if constexpr (sizeof...(a) >= 2 && (kIsRepeat<decltype(a)> && ...)) {
          // Every input repeats along the innermost axis (never so for a binary op's own broadcast
          // shape, whose innermost extent comes from an input): one value, a plain fill, instead
          // of another copy of the op's loop per ISA and req (issue 34: the build).
          const T v = f(a[0]...);
          sdk::WithReq(req, [&](auto assign) {
            for (int64_t i = 0; i < n; ++i) assign(out[i], v);
          });
        } else {
          MapAccess(out, n, req, f, a...);
        }
      },
      done);
}
template <typename T, typename F, typename Done, typename P, typename... Rest>
void Inner(T* out, int64_t n, int32_t req, const F& f, Done done, std::pair<const P*, int64_t> first, Rest... rest) {
  if (first.second == 0) {
    Inner(out, n, req, f, std::tuple_cat(done, std::make_tuple(Repeat<P>{*first.first})), rest...);
  } else {
    Inner(out, n, req, f, std::tuple_cat(done, std::make_tuple(Run<P>{first.first})), rest...);
  }
}

template <bool kIsa, typename T, typename F, size_t... I, typename... In>
void MapBroadcastImpl(T* out, const Dims& out_dims, int32_t req, const F& f, std::index_sequence<I...>,
                      BroadcastIn<In>... in) {
  constexpr int K = sizeof...(In);
  const Dims* dims[K] = {&in.dims...};
  const BroadcastPlan<K> p = PlanBroadcast<K>(out_dims, dims);
  const int last = p.ndim - 1;
  const int64_t n = p.shape[last];
  int64_t idx[WEFT_MAX_NDIM] = {};
  int64_t off[K] = {};
  const int64_t outer = out_dims.Size() / n;
  for (int64_t o = 0; o < outer; ++o) {
    if constexpr (K >= 3 || !kIsa) {
      // Three operands are the backward of mul/div/maximum/minimum, off the training hot path, and
      // !kIsa marks a cold op: one strided loop instead of 2^K Run/Repeat copies (x req x dtype x
      // ISA), which made elemwise_binary.cc the slowest file of the build by far.
      MapAccess(out + o * n, n, req, f, Strided<In>{in.data + off[I], p.stride[I][last]}...);
    } else {
      Inner(out + o * n, n, req, f, std::tuple<>(),
            std::pair<const In*, int64_t>(in.data + off[I], p.stride[I][last])...);
    }
    // Odometer over the outer axes.
    for (int a = last - 1; a >= 0; --a) {
      for (int j = 0; j < K; ++j) off[j] += p.stride[j][a];
      if (++idx[a] < p.shape[a]) break;
      for (int j = 0; j < K; ++j) off[j] -= p.stride[j][a] * p.shape[a];
      idx[a] = 0;
    }
  }
}

}  // namespace detail

/// out (shape out_dims, contiguous) (=|+=) f(in...) with each input broadcast to out_dims.
/// Throws WEFT_ERR_INVALID_ARGUMENT when an input does not broadcast or req is unknown.
template <bool kIsa = true, typename T, typename F, typename... In>
void MapBroadcast(T* out, const Dims& out_dims, int32_t req, F f, BroadcastIn<In>... in) {
  if (req == WEFT_REQ_NULL || out_dims.Size() == 0) return;
  MaybeDispatch<kIsa>(
      [&] { detail::MapBroadcastImpl<kIsa>(out, out_dims, req, f, std::index_sequence_for<In...>(), in...); });
}

}  // namespace weft::cpu::tensor
