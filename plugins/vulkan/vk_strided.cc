// vulkan plugin — vk_strided.h: the strided index space of shaders/broadcast_reduce.comp, and
// StridedCopy / StridedSum (vk_kernels.h) on it.
#include "vk_strided.h"

#include <string>

namespace weft::vk {

Dims ShapeOf(const sdk::TensorDesc& t) {
  Dims d;
  for (int i = 0; i < t.ndim(); ++i) d.push_back(t.dim(i));
  return d;
}
Dims ShapeOf(const sdk::DeviceTensor& t) { return Dims(t.shape().begin(), t.shape().end()); }

Dims RowMajor(const Dims& shape) {
  Dims s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

Dims BroadcastStrides(const Dims& operand, const Dims& full) {
  const Dims rm = RowMajor(operand);
  Dims s(full.size(), 0);
  const size_t lead = full.size() - operand.size();
  for (size_t i = 0; i < operand.size(); ++i) s[lead + i] = operand[i] == 1 ? 0 : rm[i];
  return s;
}

void CheckAxes(const sdk::KernelSetup& s, const Strided& p) {
  if (p.dims.size() > Strided::kMaxAxes)
    Unsupported(s, "this layout needs " + std::to_string(p.dims.size()) +
                       " axes after merging; the Vulkan strided kernel handles up to 4");
}

namespace {

struct StridedPush {
  uint32_t n, nd, rmask, add;
  float scale;
  uint32_t dims[4], xs[4], ls[4], rs[4], os[4];
  uint32_t xoff, ooff;
};

}  // namespace

void RunStrided(const sdk::DeviceCall& c, int32_t op, const Strided& p, Binding x, Binding l, Binding r, Binding o,
                int32_t req, float scale, uint32_t xoff, uint32_t ooff) {
  if (sdk::IsNull(req) || o.bytes == 0) return;
  if (p.dims.size() > Strided::kMaxAxes)
    throw sdk::Error(WEFT_ERR_UNSUPPORTED, "vulkan: strided kernel with more than 4 axes");
  StridedPush push{};
  push.n = static_cast<uint32_t>(p.Items());
  push.nd = static_cast<uint32_t>(p.dims.size());
  push.add = AddFlag(req);
  push.scale = scale;
  push.xoff = xoff;
  push.ooff = ooff;
  for (size_t d = 0; d < p.dims.size(); ++d) {
    push.rmask |= p.red[d] ? 1u << d : 0u;
    push.dims[d] = static_cast<uint32_t>(p.dims[d]);
    push.xs[d] = static_cast<uint32_t>(p.st[0][d]);
    push.ls[d] = static_cast<uint32_t>(p.st[1][d]);
    push.rs[d] = static_cast<uint32_t>(p.st[2][d]);
    push.os[d] = static_cast<uint32_t>(p.st[3][d]);
  }
  const Binding b[4] = {x, l, r, o};
  const int32_t spec[1] = {op};
  Dispatch(c, Launch{"broadcast_reduce", spec, Groups64(push.n)}, b, push);
}

Binding Shifted(const sdk::DeviceTensor& t, int64_t elements, bool write) {
  const uint64_t at = static_cast<uint64_t>(elements) * 4;
  return {t.data(), t.offset() + at, t.bytes() - at, write};
}

void StridedCopy(const sdk::DeviceCall& c, std::span<const int64_t> dims, const Binding& src,
                 std::span<const int64_t> src_strides, const Binding& dst, std::span<const int64_t> dst_strides,
                 int32_t req) {
  const Dims d(dims.begin(), dims.end()), ss(src_strides.begin(), src_strides.end());
  const Strided p(d, ss, ss, ss, Dims(dst_strides.begin(), dst_strides.end()), std::vector<bool>(d.size(), false));
  RunStrided(c, kCopy, p, src, src, src, dst, req);
}

void StridedSum(const sdk::DeviceCall& c, std::span<const int64_t> dims, const Binding& src,
                std::span<const int64_t> src_strides, const Binding& dst, std::span<const int64_t> dst_strides,
                std::span<const bool> reduced, int32_t req) {
  const Dims d(dims.begin(), dims.end()), ss(src_strides.begin(), src_strides.end());
  Dims ds(dst_strides.begin(), dst_strides.end());
  for (size_t i = 0; i < ds.size(); ++i)
    if (reduced[i]) ds[i] = 0;
  const Strided p(d, ss, ss, ss, ds, std::vector<bool>(reduced.begin(), reduced.end()));
  RunStrided(c, kCopy, p, src, src, src, dst, req);
}

}  // namespace weft::vk
