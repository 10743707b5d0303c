// Concat inputs written in place (concat_view.h): which inputs qualify, the attributes that tell
// their writers and readers, and the monitor's copies.
#include "executor/concat_view.h"

#include <algorithm>
#include <string>
#include <vector>

#include "executor/fuse_conv.h"
#include "weft/env.h"
#include "weft/sdk/operator.h"

namespace weft::exec {
namespace {

struct Reader {
  uint32_t node, input;
};

// Who reads each entry as an op input; graph outputs and aux states read as node kNoEntry.
std::vector<std::vector<Reader>> FindReaders(const ExecGraph& g) {
  std::vector<std::vector<Reader>> readers(g.entries.size());
  for (uint32_t k = 0; k < g.nodes.size(); ++k) {
    for (uint32_t i = 0; i < g.nodes[k].inputs.size(); ++i) readers[g.nodes[k].inputs[i]].push_back({k, i});
    for (uint32_t e : g.nodes[k].aux) readers[e].push_back({kNoEntry, 0});
  }
  for (uint32_t h : g.heads) readers[h].push_back({kNoEntry, 0});
  return readers;
}

bool Float32Image(const EntryInfo& e) { return e.dtype == DType::kFloat32 && e.shape.ndim() == 4; }

// Whether Concat node `x` joins 4-D float32 arrays along the channels on the cpu into planned
// memory, with write request.
bool ChannelConcat(const ExecGraph& g, const ExecNode& x) {
  if (x.op != "Concat" || x.is_copy || x.backward || x.outputs.size() != 1 || x.req[0] != WEFT_REQ_WRITE) return false;
  const EntryInfo& out = g.entries[x.outputs[0]];
  const int64_t dim = x.params.GetInt("dim", 1);
  return (dim == 1 || dim == -3) && out.kind == EntryKind::kInternal && Float32Image(out) &&
         g.contexts[static_cast<size_t>(x.dev)].GetDeviceType() == "cpu";
}

// Whether node `p` can write its output 0 as a channel slice of a wider array: a fused
// convolution without sum or depthwise stage (nn_conv_fused.cc), or a channel Concat.
bool SliceWriter(const ExecGraph& g, const ExecNode& p) {
  if (p.op == "Concat") return ChannelConcat(g, p);
  return p.op == "_sg_conv" && !p.backward && p.req[0] == WEFT_REQ_WRITE && !p.params.GetBool("with_sum", false) &&
         !p.params.GetBool("with_dw", false);
}

// Whether input `i` (entry `e`) of Concat node `x` may be written in place by its producer: it
// reads it once, and any other reader is a fused BatchNorm reading it as its data, which takes a
// slice too (DenseNet's layers read each Concat's output there and join it into the next one).
bool Qualifies(const ExecGraph& g, const ExecNode& x, uint32_t i, uint32_t e,
               const std::vector<std::vector<Reader>>& readers) {
  const EntryInfo& in = g.entries[e];
  if (in.kind != EntryKind::kInternal || in.producer == kNoEntry || in.out_index != 0 || in.view_of != kNoEntry ||
      !Float32Image(in))
    return false;
  const ExecNode& p = g.nodes[in.producer];
  // The producer writes the layout the Concat reads (CheckBlockedLayouts holds them equal; a
  // mismatch keeps the copy rather than misplacing a slice).
  if (p.dev != x.dev || !SliceWriter(g, p) ||
      ActivationBlock(p.op, p.params, -1) != ActivationBlock(x.op, x.params, static_cast<int>(i)))
    return false;
  size_t by_x = 0;
  for (const Reader& r : readers[e]) {
    if (r.node == kNoEntry) return false;
    const ExecNode& n = g.nodes[r.node];
    if (&n == &x) {
      ++by_x;
    } else if (n.op != "_sg_batch_norm" || r.input != 0 || n.dev != x.dev) {
      return false;
    }
  }
  return by_x == 1;
}

// Tells the writer and the readers of each view its image stride (concat_view.h).
void SetStrides(ExecGraph& g, const std::vector<std::vector<Reader>>& readers) {
  for (uint32_t e = 0; e < g.entries.size(); ++e) {
    const EntryInfo& v = g.entries[e];
    if (v.view_of == kNoEntry) continue;
    const std::string stride = std::to_string(ImageStride(g, e));
    g.nodes[v.producer].params.Set("out_image_stride", stride);
    for (const Reader& r : readers[e])
      if (g.nodes[r.node].op == "_sg_batch_norm") g.nodes[r.node].params.Set("in_image_stride", stride);
  }
}

}  // namespace

bool ConcatInPlaceEnabled() { return GetEnvBool("WEFT_CONCAT_IN_PLACE", true); }

size_t PlaceConcatInputs(ExecGraph& g) {
  if (g.nodes.size() != g.num_forward) return 0;  // training graphs keep their copies
  const std::vector<std::vector<Reader>> readers = FindReaders(g);
  size_t placed = 0;
  // Last Concat first: when a Concat's inputs are placed, whether its own output is a slice of a
  // later one (and where) is known, and every view names the array that has the memory (`root`).
  for (size_t k = g.num_forward; k-- > 0;) {
    const ExecNode& x = g.nodes[k];
    if (!ChannelConcat(g, x)) continue;
    const EntryInfo& out = g.entries[x.outputs[0]];
    const uint32_t root = out.view_of != kNoEntry ? out.view_of : x.outputs[0];
    const int64_t base = out.view_of != kNoEntry ? out.view_channel : 0;
    const int64_t block = std::max<int64_t>(ActivationBlock(x.op, x.params, 0), 1);
    int64_t channel = 0;
    for (uint32_t i = 0; i < x.inputs.size(); channel += g.entries[x.inputs[i]].shape[1], ++i) {
      const uint32_t e = x.inputs[i];
      if (channel % block != 0 || !Qualifies(g, x, i, e, readers)) continue;
      g.entries[e].view_of = root;
      g.entries[e].view_channel = base + channel;
      ++placed;
    }
  }
  SetStrides(g, readers);
  return placed;
}

int64_t ImageStride(const ExecGraph& g, uint32_t eid) {
  const EntryInfo& e = g.entries[eid];
  const Shape& s = e.view_of != kNoEntry ? g.entries[e.view_of].shape : e.shape;
  return s.Size() / std::max<int64_t>(s[0], 1);
}

NDArray ContiguousCopy(const ExecGraph& g, uint32_t eid, const NDArray& root) {
  const EntryInfo& e = g.entries[eid];
  std::vector<float> whole, out(static_cast<size_t>(e.shape.Size()));
  root.SyncCopyToCPU(&whole);
  const int64_t n = e.shape[0], image = e.shape.Size() / std::max<int64_t>(n, 1), stride = ImageStride(g, eid);
  const int64_t first = e.view_channel * e.shape[2] * e.shape[3];
  for (int64_t i = 0; i < n; ++i) std::copy_n(whole.begin() + first + i * stride, image, out.begin() + i * image);
  return NDArray(out, e.shape, root.GetContext());
}

}  // namespace weft::exec
