// MXNet's PlanMemory heuristic: reference-counted simulation with in-place and best-fit reuse.
#include "executor/plan_memory.h"

#include <map>
#include <set>

#include "weft/sdk/operator.h"

namespace weft::exec {

uint64_t MemoryPlan::total_bytes() const {
  uint64_t t = 0;
  for (uint64_t b : block_bytes) t += b;
  return t;
}

namespace {

class Planner {
 public:
  Planner(ExecGraph& g, bool sharing, uint64_t match) : g_(g), sharing_(sharing), match_(match) {}

  MemoryPlan Run() {
    plan_.storage.assign(g_.entries.size(), -1);
    ref_.assign(g_.entries.size(), 0);
    for (const ExecNode& x : g_.nodes) {
      for (uint32_t e : x.inputs) ++ref_[e];
      for (uint32_t e : x.aux) ++ref_[e];
    }
    for (uint32_t h : g_.heads) ++ref_[h];  // outputs stay readable after Backward
    for (ExecNode& x : g_.nodes) {
      std::set<int32_t> taken;
      for (size_t k = 0; k < x.outputs.size(); ++k) {
        const uint32_t o = x.outputs[k];
        if (o == kNoEntry || g_.entries[o].kind != EntryKind::kInternal) continue;
        const uint64_t bytes = g_.entries[o].bytes();
        if (bytes == 0) continue;
        if (g_.entries[o].view_of != kNoEntry) {  // a slice of a later node's output (concat_view.h)
          Assign(o, ParentBlock(g_.entries[o].view_of));
          continue;
        }
        if (plan_.storage[o] >= 0) continue;  // placed by its first slice's writer
        plan_.unshared_bytes += bytes;
        const int32_t dev = g_.entries[o].dev;
        if (!sharing_) {
          Assign(o, NewBlock(bytes, dev));
          continue;
        }
        if (int32_t sid = InplaceBlock(x, k, taken); sid >= 0) {
          Assign(o, sid);
          x.req[k] = WEFT_REQ_WRITE_INPLACE;
        } else {
          Assign(o, Allocate(bytes, dev));
        }
        taken.insert(plan_.storage[o]);
      }
      for (uint32_t e : x.inputs) Release(e);
      for (uint32_t e : x.aux) Release(e);
      for (uint32_t o : x.outputs)
        if (o != kNoEntry && ref_[o] == 0) Drop(o);  // nobody reads it (hidden outputs)
    }
    return std::move(plan_);
  }

 private:
  int32_t InplaceBlock(const ExecNode& x, size_t k, const std::set<int32_t>& taken) const {
    if (x.req[k] != WEFT_REQ_WRITE) return -1;
    for (const auto& [i, out] : x.inplace) {
      if (static_cast<size_t>(out) != k || static_cast<size_t>(i) >= x.inputs.size()) continue;
      const uint32_t in = x.inputs[static_cast<size_t>(i)];
      const int32_t sid = plan_.storage[in];
      if (sid < 0 || ref_[in] != 1 || live_[sid] != 1 || taken.count(sid)) continue;
      if (g_.entries[in].bytes() != g_.entries[x.outputs[k]].bytes()) continue;
      return sid;
    }
    return -1;
  }

  // The block of entry `parent`, whose slices are written before it: planned when the first of
  // them is, so it stays live from then until its own last reader (each live slice counts too).
  int32_t ParentBlock(uint32_t parent) {
    if (plan_.storage[parent] < 0) {
      const uint64_t bytes = g_.entries[parent].bytes();
      const int32_t dev = g_.entries[parent].dev;
      plan_.unshared_bytes += bytes;
      Assign(parent, sharing_ ? Allocate(bytes, dev) : NewBlock(bytes, dev));
    }
    return plan_.storage[parent];
  }

  int32_t NewBlock(uint64_t bytes, int32_t dev) {
    plan_.block_bytes.push_back(bytes);
    plan_.block_dev.push_back(dev);
    live_.push_back(0);
    return static_cast<int32_t>(plan_.block_bytes.size() - 1);
  }

  // Best fit among freed blocks: the smallest one at least `bytes` (up to bytes*match), else the
  // largest smaller one (down to bytes/match), which then grows.
  int32_t Allocate(uint64_t bytes, int32_t dev) {
    auto& free = free_[dev];
    auto it = free.lower_bound(bytes);
    if (it != free.end() && it->first <= bytes * match_) {
      const int32_t sid = it->second;
      free.erase(it);
      return sid;
    }
    if (it != free.begin()) {
      auto smaller = std::prev(it);
      if (smaller->first * match_ >= bytes) {
        const int32_t sid = smaller->second;
        free.erase(smaller);
        plan_.block_bytes[static_cast<size_t>(sid)] = bytes;
        return sid;
      }
    }
    return NewBlock(bytes, dev);
  }

  void Assign(uint32_t e, int32_t sid) {
    plan_.storage[e] = sid;
    ++live_[static_cast<size_t>(sid)];
  }

  void Release(uint32_t e) {
    if (ref_[e] == 0) return;
    if (--ref_[e] == 0) Drop(e);
  }

  void Drop(uint32_t e) {
    const int32_t sid = plan_.storage[e];
    if (sid < 0) return;
    if (--live_[static_cast<size_t>(sid)] == 0)
      free_[plan_.block_dev[static_cast<size_t>(sid)]].emplace(plan_.block_bytes[static_cast<size_t>(sid)], sid);
  }

  ExecGraph& g_;
  bool sharing_;
  uint64_t match_;
  MemoryPlan plan_;
  std::vector<uint32_t> ref_;
  std::vector<uint32_t> live_;                                // live entries per block
  std::map<int32_t, std::multimap<uint64_t, int32_t>> free_;  // freed blocks by device, then size
};

}  // namespace

MemoryPlan PlanMemory(ExecGraph& g, bool allow_sharing, uint64_t match_range) {
  return Planner(g, allow_sharing, match_range).Run();
}

}  // namespace weft::exec
