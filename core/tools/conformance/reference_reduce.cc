// References of the reductions (sum, mean, max, min, nansum, prod, nanprod, norm, _square_sum, argmax, argmin,
// argmax_channel), the ordering ops
// (topk, sort, argsort: stable orders, ties keep the earlier position first), the matrix products
// (dot, batch_dot, the LQ factorisation _linalg_gelqf) and the arrays made from attributes (_zeros, _ones, _full,
// _arange).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "reference.h"
#include "weft/base.h"

namespace wconf::ref {
namespace {

// The axes to reduce: the attribute's (negative from the end), all when absent or empty.
std::vector<bool> ReducedAxes(const Call& c, size_t nd) {
  std::vector<bool> reduced(nd, true);
  const std::string* a = c.attrs().Find("axis");
  if (a == nullptr || weft::sdk::IsNone(*a)) return reduced;
  const std::vector<int64_t> axes = weft::sdk::ParseTuple(*a, "axis");
  if (axes.empty()) return reduced;
  reduced.assign(nd, false);
  for (int64_t x : axes) reduced[Axis(x, nd)] = true;
  return reduced;
}

// Output position of every input element: its indices on the kept axes, in order (the same flat
// position whether the reduced axes are kept as 1s or removed).
std::vector<size_t> OutputSlots(const Shape& s, const std::vector<bool>& reduced) {
  std::vector<int64_t> kept;
  for (size_t a = 0; a < s.ndim(); ++a)
    if (!reduced[a]) kept.push_back(s[a]);
  std::vector<size_t> slot(static_cast<size_t>(s.Size()));
  for (int64_t i = 0; i < s.Size(); ++i) {
    const std::vector<int64_t> idx = Unravel(i, s);
    int64_t o = 0;
    for (size_t a = 0, k = 0; a < s.ndim(); ++a)
      if (!reduced[a]) o = o * kept[k++] + idx[a];
    slot[static_cast<size_t>(i)] = static_cast<size_t>(o);
  }
  return slot;
}

void Reduce(Call& c, const std::string& op) {
  const HostTensor& x = c.in(0);
  const std::vector<size_t> slot = OutputSlots(x.shape, ReducedAxes(c, x.shape.ndim()));
  std::vector<double>& y = c.out[0].v;
  const double init = op == "max" ? -INFINITY : op == "min" ? INFINITY : op == "prod" || op == "nanprod" ? 1.0 : 0.0;
  std::fill(y.begin(), y.end(), init);
  std::vector<double> count(y.size(), 0);
  const bool l1 = op == "norm" && c.attrs().GetInt("ord", 2) == 1;
  for (size_t i = 0; i < x.v.size(); ++i) {
    double& r = y[slot[i]];
    const double v = x.v[i];
    if (op == "sum" || op == "mean") r += v;
    if (op == "nansum" && !std::isnan(v)) r += v;
    if (op == "max") r = std::max(r, v);
    if (op == "min") r = std::min(r, v);
    if (op == "prod") r *= v;
    if (op == "nanprod" && !std::isnan(v)) r *= v;
    if (op == "norm") r += l1 ? std::fabs(v) : v * v;
    if (op == "_square_sum") r += v * v;
    count[slot[i]] += 1;
  }
  for (size_t o = 0; o < y.size(); ++o) {
    if (op == "mean") y[o] /= count[o];
    if (op == "norm" && !l1) y[o] = std::sqrt(y[o]);
  }
}

// Lanes along an axis: data as (outer, n, inner); axis None: the flattened data as one lane.
struct Lanes {
  int64_t outer = 1, n = 1, inner = 1;
  size_t At(int64_t o, int64_t k, int64_t i) const { return static_cast<size_t>((o * n + k) * inner + i); }
};

Lanes LanesOf(const Call& c, const Shape& s, int64_t default_axis) {
  const std::string* a = c.attrs().Find("axis");
  if (a != nullptr && weft::sdk::IsNone(*a)) return Lanes{1, s.Size(), 1};
  const size_t axis = Axis(a != nullptr ? weft::sdk::ParseInt(*a, "axis") : default_axis, s.ndim());
  return Lanes{Prod(s, 0, axis), s[axis], Prod(s, axis + 1, s.ndim())};
}

// The positions of lane (o, i) in sorted order (stable: ties keep the earlier position first).
std::vector<int64_t> Order(const std::vector<double>& x, const Lanes& l, int64_t o, int64_t i, bool ascend) {
  std::vector<int64_t> pos(static_cast<size_t>(l.n));
  std::iota(pos.begin(), pos.end(), 0);
  std::stable_sort(pos.begin(), pos.end(), [&](int64_t a, int64_t b) {
    return ascend ? x[l.At(o, a, i)] < x[l.At(o, b, i)] : x[l.At(o, a, i)] > x[l.At(o, b, i)];
  });
  return pos;
}

// sort (values, hidden positions), argsort (positions), topk (values / positions / mask): the
// first k of each lane's order (k < 1: all).
void Ordering(Call& c, const std::string& op) {
  const HostTensor& x = c.in(0);
  const Lanes l = LanesOf(c, x.shape, -1);
  const bool ascend = c.attrs().GetBool("is_ascend", op != "topk");
  const int64_t k_attr = op == "topk" ? c.attrs().GetInt("k", 1) : 0;
  const int64_t k = k_attr < 1 ? l.n : k_attr;
  const std::string ret = op == "topk" ? c.attrs().GetString("ret_typ", "indices") : op == "sort" ? "both" : "indices";
  const Lanes out{l.outer, k, l.inner};
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t i = 0; i < l.inner; ++i) {
      const std::vector<int64_t> pos = Order(x.v, l, o, i, ascend);
      for (int64_t j = 0; j < k; ++j) {
        const double value = x.v[l.At(o, pos[static_cast<size_t>(j)], i)];
        const double where = static_cast<double>(pos[static_cast<size_t>(j)]);
        if (ret == "mask") {
          c.out[0].v[l.At(o, pos[static_cast<size_t>(j)], i)] = 1;
        } else if (ret == "indices") {
          c.out[0].v[out.At(o, j, i)] = where;
        } else {
          c.out[0].v[out.At(o, j, i)] = value;
          c.out[1].v[out.At(o, j, i)] = where;
        }
      }
    }
}

// argmax / argmin: the first position of the largest / smallest element along `axis` (None: of
// the flattened data); argmax_channel: argmax along the last axis.
void Argmax(Call& c, bool smallest = false) {
  const HostTensor& x = c.in(0);
  const std::string* a = c.attrs().Find("axis");
  const Lanes l = c.spec.op == "argmax_channel"           ? LanesOf(c, x.shape, -1)
                  : a == nullptr || weft::sdk::IsNone(*a) ? Lanes{1, x.shape.Size(), 1}
                                                          : LanesOf(c, x.shape, 0);
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t i = 0; i < l.inner; ++i) {
      int64_t best = 0;
      for (int64_t k = 1; k < l.n; ++k)
        if (smallest ? x.v[l.At(o, k, i)] < x.v[l.At(o, best, i)] : x.v[l.At(o, k, i)] > x.v[l.At(o, best, i)])
          best = k;
      c.out[0].v[static_cast<size_t>(o * l.inner + i)] = static_cast<double>(best);
    }
}

// C (m, n) = op(A) · op(B) with A, B row-major: element (r, k) of op(A) at a[ta ? k·m + r : r·K + k].
void MatMul(const double* a, const double* b, double* out, int64_t m, int64_t n, int64_t kk, bool ta, bool tb) {
  for (int64_t r = 0; r < m; ++r)
    for (int64_t col = 0; col < n; ++col) {
      double s = 0;
      for (int64_t k = 0; k < kk; ++k) s += a[ta ? k * m + r : r * kk + k] * b[tb ? col * kk + k : k * n + col];
      out[r * n + col] = s;
    }
}

// dot: lhs (…, K) · rhs (K, …); transpose_a contracts lhs's first axis, transpose_b rhs's last.
void Dot(Call& c) {
  const HostTensor &a = c.in(0), &b = c.in(1);
  const bool ta = c.attrs().GetBool("transpose_a", false), tb = c.attrs().GetBool("transpose_b", false);
  const int64_t k = ta ? a.shape[0] : a.shape[a.shape.ndim() - 1];
  MatMul(a.v.data(), b.v.data(), c.out[0].v.data(), a.shape.Size() / k, b.shape.Size() / k, k, ta, tb);
}

void BatchDot(Call& c) {
  const HostTensor &a = c.in(0), &b = c.in(1);
  const bool ta = c.attrs().GetBool("transpose_a", false), tb = c.attrs().GetBool("transpose_b", false);
  const int64_t batch = a.shape[0], m = ta ? a.shape[2] : a.shape[1], k = ta ? a.shape[1] : a.shape[2];
  const int64_t n = tb ? b.shape[1] : b.shape[2];
  for (int64_t i = 0; i < batch; ++i)
    MatMul(a.v.data() + i * m * k, b.v.data() + i * k * n, c.out[0].v.data() + i * m * n, m, n, k, ta, tb);
}

// _linalg_gelqf: LAPACK's Householder reflections (dlarfg's choice beta = −sign(alpha)·‖x‖, none
// when the rest of the row is already zero) applied to A's rows from the right:
// A·H₀···H₍m−1₎ = [L 0], so Q is the first m rows of H₍m−1₎···H₀. These are the reflections the
// QR of Aᵀ (geqrf) uses, so the signs are MXNet's.
void Gelqf(Call& c) {
  const HostTensor& a = c.in(0);
  const int64_t nd = a.shape.ndim(), m = a.shape[nd - 2], n = a.shape[nd - 1];
  const int64_t batch = m * n == 0 ? 0 : a.shape.Size() / (m * n);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<double> w(a.v.begin() + b * m * n, a.v.begin() + (b + 1) * m * n);
    std::vector<std::vector<double>> vs;
    std::vector<double> taus;
    for (int64_t k = 0; k < m; ++k) {
      double rest = 0;
      for (int64_t j = k + 1; j < n; ++j) rest += w[k * n + j] * w[k * n + j];
      const double alpha = w[k * n + k];
      std::vector<double> v(static_cast<size_t>(n), 0.0);
      double tau = 0;
      if (rest > 0) {
        const double norm = std::sqrt(alpha * alpha + rest), beta = alpha >= 0 ? -norm : norm;
        tau = (beta - alpha) / beta;
        v[static_cast<size_t>(k)] = 1;
        for (int64_t j = k + 1; j < n; ++j) v[static_cast<size_t>(j)] = w[k * n + j] / (alpha - beta);
      }
      for (int64_t i = k; i < m && tau != 0; ++i) {  // rows k.. of W times H_k
        double dot = 0;
        for (int64_t j = k; j < n; ++j) dot += w[i * n + j] * v[static_cast<size_t>(j)];
        for (int64_t j = k; j < n; ++j) w[i * n + j] -= tau * dot * v[static_cast<size_t>(j)];
      }
      vs.push_back(std::move(v));
      taus.push_back(tau);
    }
    double* q = c.out[0].v.data() + b * m * n;
    double* l = c.out[1].v.data() + b * m * m;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < m; ++j) l[i * m + j] = j <= i ? w[i * n + j] : 0.0;
    for (int64_t i = 0; i < m; ++i) {
      std::vector<double> e(static_cast<size_t>(n), 0.0);
      e[static_cast<size_t>(i)] = 1;
      for (int64_t k = m - 1; k >= 0; --k) {
        const std::vector<double>& v = vs[static_cast<size_t>(k)];
        double dot = 0;
        for (int64_t j = 0; j < n; ++j) dot += e[static_cast<size_t>(j)] * v[static_cast<size_t>(j)];
        for (int64_t j = 0; j < n; ++j)
          e[static_cast<size_t>(j)] -= taus[static_cast<size_t>(k)] * dot * v[static_cast<size_t>(j)];
      }
      std::copy(e.begin(), e.end(), q + i * n);
    }
  }
}

// _arange: element i = start + step·⌊i / repeat⌋ (stop None: the range runs from 0 to start).
void Arange(Call& c) {
  double start = c.attrs().GetFloat("start");
  if (!c.attrs().GetOptionalFloat("stop")) start = 0;
  const double step = c.attrs().GetFloat("step", 1.0);
  const int64_t repeat = c.attrs().GetInt("repeat", 1);
  for (size_t i = 0; i < c.out[0].v.size(); ++i)
    c.out[0].v[i] = start + step * static_cast<double>(static_cast<int64_t>(i) / repeat);
}

}  // namespace

void RegisterReduceReferences(Table& t) {
  for (const char* op : {"sum", "mean", "max", "min", "nansum", "prod", "nanprod", "norm", "_square_sum"})
    t[op] = [op = std::string(op)](Call& c) { Reduce(c, op); };
  for (const char* op : {"topk", "sort", "argsort"}) t[op] = [op = std::string(op)](Call& c) { Ordering(c, op); };
  t["argmax"] = [](Call& c) { Argmax(c); };
  t["argmax_channel"] = [](Call& c) { Argmax(c); };
  t["argmin"] = [](Call& c) { Argmax(c, true); };
  t["dot"] = Dot;
  t["batch_dot"] = BatchDot;
  t["_linalg_gelqf"] = Gelqf;
  t["_zeros"] = [](Call&) {};
  t["_ones"] = [](Call& c) { std::fill(c.out[0].v.begin(), c.out[0].v.end(), 1.0); };
  t["_full"] = [](Call& c) { std::fill(c.out[0].v.begin(), c.out[0].v.end(), c.attrs().GetFloat("value")); };
  t["_arange"] = Arange;
}

}  // namespace wconf::ref
