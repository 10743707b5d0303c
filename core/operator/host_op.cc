// Host operators (weft/host_op.h): registration as OpDefs, the thread pool that runs them, and one
// node's execution.
#include "operator/host_op.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include "operator/op_def.h"
#include "weft/logging.h"

namespace weft::host_op {
namespace {

struct Table {
  std::shared_mutex mu;
  std::map<std::string, std::shared_ptr<const HostOpDef>, std::less<>> defs;
};
Table& GetTable() {
  static auto* t = new Table;  // never destroyed: nodes may run during exit
  return *t;
}

HostOpAttrs Visible(const AttrMap& a) {
  HostOpAttrs out;
  for (const auto& [k, v] : a.values())
    if (!k.starts_with("__")) out.emplace(k, v);
  return out;
}

AttrSpec SpecOf(const OpAttrInfo& a) {
  AttrSpec s;
  s.name = a.name;
  s.type = a.type;
  s.default_value = a.default_value;
  s.doc = a.doc;
  s.choices = a.choices;
  return s;
}

OpDef ToOpDef(const std::shared_ptr<const HostOpDef>& h) {
  OpDef d;
  d.name = h->name;
  d.description = h->description;
  d.source = "host";
  for (const OpAttrInfo& a : h->attrs) d.attrs.push_back(SpecOf(a));
  d.any_attrs = h->any_attrs;
  d.list_inputs = [h](const AttrMap& a) { return h->list_inputs(Visible(a)); };
  d.list_outputs = [h](const AttrMap& a) { return h->list_outputs(Visible(a)); };
  if (h->list_aux) d.list_aux = [h](const AttrMap& a) { return h->list_aux(Visible(a)); };
  d.infer_shape = [h](const AttrMap& a, std::vector<ShapeSlot>& in, std::vector<ShapeSlot>& out,
                      std::vector<ShapeSlot>& aux) { h->infer_shape(Visible(a), in, out, aux); };
  if (h->infer_type) {
    d.infer_type = [h](const AttrMap& a, std::vector<int>& in, std::vector<int>& out, std::vector<int>& aux) {
      h->infer_type(Visible(a), in, out, aux);
    };
  }
  if (h->differentiable) {
    d.grad = GradKind::kOp;
    d.backward_op = "_backward_" + h->name;
    d.backward_uses = kUsesInputs | kUsesOutputs | kUsesAux;
  }
  return d;
}

// Threads that run host operators. A new thread starts whenever a job arrives while every thread
// is busy, so a host operator whose function runs another one (nested) never waits for itself.
class Pool {
 public:
  void Submit(std::function<void()> fn) {
    std::lock_guard lock(mu_);
    jobs_.push_back(std::move(fn));
    if (idle_ == 0) {
      std::thread([this] { Work(); }).detach();  // lives for the process, like the engine's workers
    } else {
      cv_.notify_one();
    }
  }

 private:
  void Work() {
    std::unique_lock lock(mu_);
    for (;;) {
      ++idle_;
      cv_.wait(lock, [&] { return !jobs_.empty(); });
      --idle_;
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  int idle_ = 0;
};

std::vector<OpReqType> Reqs(const std::vector<int32_t>& req) {
  std::vector<OpReqType> out;
  for (int32_t r : req) out.push_back(static_cast<OpReqType>(r));
  return out;
}

std::vector<NDArray> Own(const std::vector<NDArray>& arrays) {
  std::vector<NDArray> out;
  for (const NDArray& a : arrays) out.push_back(a.is_none() ? NDArray() : a.WithOwnVariable());
  return out;
}

std::vector<NDArray> Part(const std::vector<NDArray>& v, size_t begin, size_t n) {
  return {v.begin() + static_cast<std::ptrdiff_t>(begin), v.begin() + static_cast<std::ptrdiff_t>(begin + n)};
}

}  // namespace

std::shared_ptr<const HostOpDef> Find(std::string_view op, bool* backward) {
  Table& t = GetTable();
  std::shared_lock lock(t.mu);
  *backward = false;
  if (auto it = t.defs.find(op); it != t.defs.end()) return it->second;
  constexpr std::string_view kPrefix = "_backward_";
  if (op.starts_with(kPrefix)) {
    if (auto it = t.defs.find(op.substr(kPrefix.size())); it != t.defs.end()) {
      *backward = true;
      return it->second;
    }
  }
  return nullptr;
}

Node Prepare(const HostOpDef& def, bool backward, const HostOpAttrs& attrs, const Context& ctx,
             const std::vector<Shape>& in_shapes, const std::vector<DType>& in_dtypes) {
  Node n;
  n.backward = backward;
  n.num_in = def.list_inputs(attrs).size();
  n.num_out = def.list_outputs(attrs).size();
  std::vector<Shape> fwd_shapes = in_shapes;
  std::vector<DType> fwd_dtypes = in_dtypes;
  if (backward) {  // inputs: output gradients, then the forward inputs, outputs and aux states
    WEFT_CHECK(in_shapes.size() >= n.num_out + n.num_in, "_backward_{}: {} inputs, expected at least {}", def.name,
               in_shapes.size(), n.num_out + n.num_in);
    fwd_shapes.assign(in_shapes.begin() + static_cast<std::ptrdiff_t>(n.num_out),
                      in_shapes.begin() + static_cast<std::ptrdiff_t>(n.num_out + n.num_in));
    fwd_dtypes.assign(in_dtypes.begin() + static_cast<std::ptrdiff_t>(n.num_out),
                      in_dtypes.begin() + static_cast<std::ptrdiff_t>(n.num_out + n.num_in));
  }
  n.kernel = def.create(attrs, ctx, fwd_shapes, fwd_dtypes);
  WEFT_CHECK(n.kernel != nullptr, "host operator '{}': create returned no kernel", def.name);
  return n;
}

void Submit(std::function<void()> fn) {
  static auto* pool = new Pool;  // never destroyed: its threads outlive static destruction
  pool->Submit(std::move(fn));
}

void Execute(const Node& node, const std::string& label, const std::vector<NDArray>& inputs,
             const std::vector<NDArray>& outputs, const std::vector<int32_t>& req, const std::vector<NDArray>& aux,
             bool is_train) {
  const std::vector<NDArray> in = Own(inputs), out = Own(outputs), ax = Own(aux);
  try {
    if (!node.backward) {
      node.kernel->Forward(is_train, in, out, Reqs(req), ax);
    } else {
      // Inputs: output gradients, forward inputs, forward outputs; aux states come separately.
      node.kernel->Backward(is_train, Part(in, 0, node.num_out), Part(in, node.num_out, node.num_in),
                            Part(in, node.num_out + node.num_in, node.num_out), out, Reqs(req), ax);
    }
    for (const auto* group : {&in, &out, &ax})
      for (const NDArray& a : *group)
        if (!a.is_none()) a.WaitToWrite();
  } catch (const std::exception& e) {
    // Let what the kernel pushed finish before the node's memory may be reused.
    for (const auto* group : {&in, &out, &ax})
      for (const NDArray& a : *group) {
        try {
          if (!a.is_none()) a.WaitToWrite();
        } catch (const std::exception&) {
        }
      }
    Fail("{}: {}", label, e.what());
  }
}

}  // namespace weft::host_op

namespace weft {

void RegisterHostOp(HostOpDef def) {
  WEFT_CHECK(!def.name.empty(), "RegisterHostOp: the operator has no name");
  WEFT_CHECK(def.list_inputs && def.list_outputs && def.infer_shape && def.create,
             "RegisterHostOp('{}'): list_inputs, list_outputs, infer_shape and create are required", def.name);
  auto shared = std::make_shared<const HostOpDef>(std::move(def));
  OpRegistry::Get().Register(host_op::ToOpDef(shared));  // throws when the name is taken
  host_op::Table& t = host_op::GetTable();
  std::unique_lock lock(t.mu);
  t.defs[shared->name] = shared;
}

}  // namespace weft
