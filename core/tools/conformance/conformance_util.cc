#include "conformance_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ndarray/dtype_convert.h"
#include "operator/infer.h"
#include "weft/ndarray.h"
#include "weft/sdk/operator.h"

namespace wconf {
namespace {

constexpr uint8_t kSentinel = 0xA5;
constexpr int64_t kPadElems = 5;  // odd: views start at unaligned offsets

// Every dtype through the ndarray module's converters (float16/bfloat16 rounded to nearest,
// integers converted as C++ does; the uint32 bit patterns of _dequantize_2bit are drawn below 2^32).
void Store(DType dt, double x, uint8_t* p) { weft::ndarray_detail::StoreFromDouble(x, dt, p); }
double Load(DType dt, const uint8_t* p) { return weft::ndarray_detail::LoadAsDouble(p, dt); }

// An NDArray view of `shape` at an odd offset inside a padded 1-d array.
struct Padded {
  weft::NDArray big, view;
  size_t elem = 0;
  int64_t n = 0;
  DType dtype = DType::kFloat32;
  Shape shape;
};

Padded MakePadded(const Context& ctx, const Shape& shape, DType dt, const std::vector<double>* values) {
  Padded p;
  p.elem = weft::DTypeSize(dt);
  p.n = shape.Size();
  p.dtype = dt;
  p.shape = shape;
  const int64_t total = p.n + 2 * kPadElems;
  p.big = weft::NDArray(Shape{total}, ctx, false, dt);
  std::vector<uint8_t> host(static_cast<size_t>(total) * p.elem, kSentinel);
  if (values != nullptr)
    for (int64_t i = 0; i < p.n; ++i)
      Store(dt, (*values)[static_cast<size_t>(i)], host.data() + static_cast<size_t>(kPadElems + i) * p.elem);
  p.big.SyncCopyFromCPUBytes(host.data(), host.size());
  p.view = p.big.Slice(static_cast<size_t>(kPadElems), static_cast<size_t>(kPadElems + p.n)).AsArray(shape, dt);
  return p;
}

// Reads the data back; appends to *error when a pad byte changed.
HostTensor ReadPadded(const Padded& p, const std::string& what, std::string* error) {
  std::vector<uint8_t> host(static_cast<size_t>(p.n + 2 * kPadElems) * p.elem);
  p.big.SyncCopyToCPUBytes(host.data(), host.size());
  const size_t pad_bytes = static_cast<size_t>(kPadElems) * p.elem;
  // Names the overwritten pad element nearest to the array on each side.
  for (size_t i = 0; i < pad_bytes; ++i) {
    if (host[pad_bytes - 1 - i] != kSentinel) {
      *error += fmt::format("{}: out-of-bounds write {} element(s) before the start; ", what, i / p.elem + 1);
      break;
    }
  }
  for (size_t i = 0; i < pad_bytes; ++i) {
    if (host[host.size() - pad_bytes + i] != kSentinel) {
      *error += fmt::format("{}: out-of-bounds write {} element(s) past the end; ", what, i / p.elem + 1);
      break;
    }
  }
  HostTensor t{p.shape, p.dtype, std::vector<double>(static_cast<size_t>(p.n))};
  for (int64_t i = 0; i < p.n; ++i) t.v[static_cast<size_t>(i)] = Load(p.dtype, host.data() + pad_bytes + i * p.elem);
  return t;
}

}  // namespace

double RoundTo(DType dtype, double x) {
  uint8_t bytes[16];
  Store(dtype, x, bytes);
  return Load(dtype, bytes);
}

double WrapTo(DType dtype, double x) {
  int bits = 0;
  bool is_signed = true;
  switch (dtype) {
    case DType::kUint8:
      bits = 8, is_signed = false;
      break;
    case DType::kInt8:
      bits = 8;
      break;
    case DType::kInt32:
      bits = 32;
      break;
    case DType::kInt64:
      bits = 64;
      break;
    default:
      return RoundTo(dtype, x);
  }
  if (!std::isfinite(x)) return 0;
  const double t = std::trunc(x);
  if (bits == 64) return RoundTo(dtype, t);  // exact in double only up to 2^53: no wrap to model
  const double span = std::ldexp(1.0, bits);
  double w = std::fmod(t, span);
  if (w < 0) w += span;                       // 0 .. 2^bits - 1
  if (is_signed && w >= span / 2) w -= span;  // two's complement
  return w;
}

HostTensor Random(std::mt19937_64& rng, const Shape& shape, const Domain& d) {
  HostTensor t{shape, d.dtype, std::vector<double>(static_cast<size_t>(shape.Size()))};
  if (d.distinct) {
    const double n = static_cast<double>(t.v.size());
    for (size_t i = 0; i < t.v.size(); ++i)
      t.v[i] = static_cast<float>(d.lo + (d.hi - d.lo) * (static_cast<double>(i) + 0.5) / n);
    std::shuffle(t.v.begin(), t.v.end(), rng);
    return t;
  }
  std::uniform_real_distribution<double> u(d.lo, d.hi);
  for (double& x : t.v) {
    do {
      x = d.integer ? std::floor(u(rng)) : static_cast<double>(static_cast<float>(u(rng)));
    } while (d.away_from > 0 && std::fabs(x) < d.away_from);
  }
  return t;
}

RunResult RunNode(const Context& ctx, const RunSpec& s) {
  RunResult r;
  try {
    weft::KernelRunner runner(s.op, s.attrs, ctx, s.sig);
    std::vector<Padded> in, out, aux;
    for (const HostTensor& t : s.in) in.push_back(MakePadded(ctx, t.shape, t.dtype, &t.v));
    for (const HostTensor& t : s.aux) aux.push_back(MakePadded(ctx, t.shape, t.dtype, &t.v));
    for (size_t o = 0; o < s.sig.out_shapes.size(); ++o) {
      if (static_cast<int>(o) == s.inplace_out) {
        out.push_back(in[static_cast<size_t>(s.inplace_in)]);
        continue;
      }
      const std::vector<double>* init = o < s.out_init.size() ? &s.out_init[o].v : nullptr;
      out.push_back(MakePadded(ctx, s.sig.out_shapes[o], s.sig.out_dtypes[o], init));
    }
    std::vector<weft::NDArray> in_v, out_v, aux_v;
    for (const Padded& p : in) in_v.push_back(p.view);
    for (const Padded& p : out) out_v.push_back(p.view);
    for (const Padded& p : aux) aux_v.push_back(p.view);
    std::vector<int32_t> req = s.req;
    if (req.empty()) req.assign(out.size(), WEFT_REQ_WRITE);
    weft::SetRandomSeed(s.seed);
    runner.Run(in_v, out_v, req, aux_v, s.is_train);
    for (size_t o = 0; o < out.size(); ++o)
      r.out.push_back(ReadPadded(out[o], "output " + std::to_string(o), &r.error));
    for (size_t a = 0; a < aux.size(); ++a) r.aux.push_back(ReadPadded(aux[a], "aux " + std::to_string(a), &r.error));
    for (size_t i = 0; i < in.size(); ++i) ReadPadded(in[i], "input " + std::to_string(i), &r.error);
  } catch (const std::exception& e) {
    r.error += e.what();
  }
  return r;
}

weft::NodeSignature InferSignature(const weft::OpDef& def, const AttrMap& attrs, const std::vector<HostTensor>& in,
                                   const std::vector<HostTensor>& aux, const weft::NodeSignature* given) {
  const size_t n_out = weft::OpOutputNames(def, attrs).size();
  std::vector<weft::ShapeSlot> in_s, out_s(n_out), aux_s;
  std::vector<int> in_t, out_t(n_out, -1), aux_t;
  for (const HostTensor& t : in) in_s.emplace_back(t.shape), in_t.push_back(static_cast<int>(t.dtype));
  for (const HostTensor& t : aux) aux_s.emplace_back(t.shape), aux_t.push_back(static_cast<int>(t.dtype));
  weft::InferShapes(def, attrs, in_s, out_s, aux_s);
  weft::InferTypes(def, attrs, in_t, out_t, aux_t);
  for (size_t o = 0; given != nullptr && o < n_out && o < given->out_shapes.size(); ++o) {
    if (!out_s[o].has_value()) out_s[o] = given->out_shapes[o];
    if (out_t[o] < 0) out_t[o] = static_cast<int>(given->out_dtypes[o]);
  }
  weft::NodeSignature sig;
  for (const HostTensor& t : in) sig.in_shapes.push_back(t.shape), sig.in_dtypes.push_back(t.dtype);
  for (const HostTensor& t : aux) sig.aux_shapes.push_back(t.shape), sig.aux_dtypes.push_back(t.dtype);
  for (size_t o = 0; o < n_out; ++o) {
    WEFT_CHECK(out_s[o].has_value() && out_t[o] >= 0, "{}: output {} not inferred", def.name, o);
    sig.out_shapes.push_back(*out_s[o]);
    sig.out_dtypes.push_back(static_cast<DType>(out_t[o]));
  }
  return sig;
}

double Nmse(const std::vector<double>& ref, const std::vector<double>& got) {
  if (ref.size() != got.size()) return std::numeric_limits<double>::infinity();
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (std::isfinite(ref[i]) != std::isfinite(got[i])) return std::numeric_limits<double>::infinity();
    if (!std::isfinite(ref[i])) continue;
    num += (ref[i] - got[i]) * (ref[i] - got[i]);
    den += ref[i] * ref[i];
  }
  return den > 0 ? num / den : num;
}

std::string Describe(const std::vector<HostTensor>& ts) {
  std::string s;
  for (const HostTensor& t : ts)
    s += (s.empty() ? "" : ", ") + t.shape.ToString() + " " + std::string(weft::DTypeName(t.dtype));
  return s;
}

}  // namespace wconf
