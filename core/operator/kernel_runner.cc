// weft core — KernelRunner (see kernel_runner.h).
#include "operator/kernel_runner.h"
#include "operator/workspace_pool.h"

#include "operator/host_op.h"

#include <array>
#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "weft/internal/plugin.h"
#include "weft/internal/runtime.h"
#include "weft/sdk/operator.h"
#include "weft/storage.h"

namespace weft {
namespace {

// splitmix64 (Steele, Lea, Flood 2014): turns a counter into well-mixed 64-bit seeds.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct SeedSequence {
  std::mutex mu;
  uint64_t base = 0;
  uint64_t counter = 0;
};
SeedSequence& Seeds() {
  static SeedSequence s;
  return s;
}

// The random generator resource of one Context, as MXNet's kRandom resource: every run of a
// random op writes its variable. The seeds need no ordering (drawn at push), but the failures do
// as in MXNet: a sampler that fails taints the resource, so the random ops after it are skipped
// and carry that one failure until a wait rethrows it (MXNet's test_exc_handling relies on it).
// Created on first use, kept for the process (the engine is too): the map is never destroyed,
// so the variables stay reachable to the end (a static map's destructor would drop the only
// pointers to them, which LeakSanitizer reports as leaks).
VarHandle RandomResourceVar(const Context& ctx) {
  static std::mutex mu;
  static auto* vars = new std::map<std::pair<std::string, int>, VarHandle>();
  std::lock_guard<std::mutex> lock(mu);
  VarHandle& v = (*vars)[{ctx.GetDeviceType(), ctx.GetDeviceId()}];
  if (v == nullptr) v = Engine::Get()->NewVariable();
  return v;
}

weft_shape ToWeftShape(const Shape& s, const std::string& what) {
  WEFT_CHECK(s.ndim() <= WEFT_MAX_NDIM, "{} has {} axes; kernels take at most {}", what, s.ndim(), WEFT_MAX_NDIM);
  weft_shape out{};
  out.ndim = static_cast<int32_t>(s.ndim());
  for (size_t i = 0; i < s.ndim(); ++i) out.dims[i] = s[i];
  return out;
}

// "cpu (float32, float64), simdev (float32)" — who has a kernel for `op`.
std::string KernelOwners(const std::string& op) {
  std::string list;
  Runtime& rt = Runtime::Get();
  for (const std::string& type : rt.DeviceTypes()) {
    std::string dtypes;
    for (int d = 0; d < WEFT_DTYPE_COUNT; ++d) {
      if (internal::FindKernel(rt, op, type, static_cast<DType>(d)) == nullptr) continue;
      if (!dtypes.empty()) dtypes += ", ";
      dtypes += DTypeName(static_cast<DType>(d));
    }
    if (dtypes.empty()) continue;
    if (!list.empty()) list += ", ";
    list += fmt::format("{} ({})", type, dtypes);
  }
  return list.empty() ? "no loaded plugin has one" : "kernels exist for " + list;
}

// Which plugin makes the devices of `type`, with its description, for the no-kernel error: a
// plugin built with part of its kernels says so there, with the fix (the cpu plugin of the main
// preset: WEFT_CPU_KERNELS=mnist).
std::string DevicePlugin(const std::string& type) {
  for (const Plugin* p : internal::Plugins(Runtime::Get()))
    if (p->device_type() == type)
      return fmt::format("; device type '{}' is plugin '{}' ({}): {}", type, p->name(), p->path(), p->description());
  return "";
}

std::vector<weft_shape> WeftShapes(const std::vector<Shape>& in, const std::string& label, const char* what) {
  std::vector<weft_shape> out;
  for (size_t i = 0; i < in.size(); ++i) out.push_back(ToWeftShape(in[i], fmt::format("{} {} {}", label, what, i)));
  return out;
}

template <typename E>
std::vector<int32_t> Codes(const std::vector<E>& in) {
  std::vector<int32_t> out;
  for (E d : in) out.push_back(static_cast<int32_t>(d));
  return out;
}

// "(csr, default) -> (row_sparse)"
std::string StypeList(const std::vector<int32_t>& in, const std::vector<int32_t>& out) {
  auto names = [](const std::vector<int32_t>& v) {
    std::string r;
    for (int32_t t : v) r += (r.empty() ? "" : ", ") + std::string(StorageTypeName(static_cast<StorageType>(t)));
    return "(" + r + ")";
  };
  return names(in) + " -> " + names(out);
}

}  // namespace

struct KernelRunner::State {
  std::string op;
  std::string label;  // "FullyConnected on cpu(0)"
  // Prefix of run-time kernel errors: label, plus the graph node when one was named
  // ("take on cpu(0) (node 'tk')"), so a failure deep in a network points at its node.
  std::string compute_label;
  Context ctx;
  NodeSignature sig;
  const KernelInfo* kernel = nullptr;
  void* kernel_state = nullptr;
  std::shared_ptr<WorkspaceSlot> workspace;  // the device's shared temp space (workspace_pool.h), or null
  uint64_t workspace_bytes = 0;              // what the kernel asked for
  std::optional<host_op::Node> host;         // set for host operators (weft/host_op.h), which have no plugin kernel
  bool random = false;
  VarHandle var = nullptr;  // a host operator's own variable (serialises its runs)
  // Shapes as int64 arrays the weft_tensors borrow.
  std::vector<std::vector<int64_t>> in_dims, out_dims, aux_dims;
  // WEFT_STYPE_* of the inputs and outputs of a sparse node; both empty for a dense one.
  std::vector<int32_t> in_st, out_st;
  bool sparse() const { return !in_st.empty(); }

  ~State() {
    if (kernel != nullptr && kernel->def->destroy_state != nullptr && kernel_state != nullptr)
      kernel->def->destroy_state(kernel->plugin_state, kernel_state);
    if (var != nullptr) Engine::Get()->DeleteVariable(SyncFn(), ctx, var);
  }

  void Check(const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs, const std::vector<int32_t>& req,
             const std::vector<NDArray>& aux) const;
  void Compute(weft_stream stream, const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs,
               const std::vector<int32_t>& req, const std::vector<NDArray>& aux, bool is_train, uint64_t seed) const;
  // The 2.1 fields of a sparse node's args; `keep` holds what they point at for the call.
  struct SparseArgs;
  void AddSparseArgs(const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs, SparseArgs& keep,
                     weft_kernel_args& args) const;
};

namespace {

void CheckSlots(const KernelRunner::State& s, const char* kind, const std::vector<NDArray>& arrays,
                const std::vector<Shape>& shapes, const std::vector<DType>& dtypes, const std::vector<int32_t>* req) {
  WEFT_CHECK(arrays.size() == shapes.size(), "{}: expects {} {}, got {}", s.label, shapes.size(), kind, arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    const NDArray& a = arrays[i];
    if (a.is_none()) {
      WEFT_CHECK(req != nullptr && (*req)[i] == WEFT_REQ_NULL, "{}: {} {} is a none array", s.label, kind, i);
      continue;
    }
    WEFT_CHECK(a.GetContext() == s.ctx, "{}: {} {} lives on {}, the kernel runs on {}", s.label, kind, i,
               a.GetContext().ToString(), s.ctx.ToString());
    WEFT_CHECK(a.GetShape() == shapes[i], "{}: {} {} has shape {}, the node was prepared for {}", s.label, kind, i,
               a.GetShape().ToString(), shapes[i].ToString());
    WEFT_CHECK(a.GetDType() == dtypes[i], "{}: {} {} has dtype {}, the node was prepared for {}", s.label, kind, i,
               DTypeName(a.GetDType()), DTypeName(dtypes[i]));
  }
}

// A sparse array's parts have engine variables of their own: a run depends on them too, unless an
// operation pushed before it replaces them (PartsWritePending: the run is ordered after that one
// through the array's variable and reads the new parts; taking the old ones would wait for it).
void AddVars(const std::vector<NDArray>& arrays, std::vector<VarHandle>* vars) {
  for (const NDArray& a : arrays) {
    if (a.is_none()) continue;
    vars->push_back(a.var());
    if (a.storage_type() == StorageType::kDefault || a.PartsWritePending()) continue;
    vars->push_back(a.data_ndarray().var());
    for (size_t j = 0; j < a.num_aux_data(); ++j) vars->push_back(a.aux_ndarray(j).var());
  }
}

// Sparse arrays' parts were allocated when they were written (a sparse output gets new ones from
// the kernel).
void Alloc(const std::vector<NDArray>& arrays) {
  for (const NDArray& a : arrays)
    if (!a.is_none() && a.storage_type() == StorageType::kDefault) a.CheckAndAlloc();
}

// A none array (a req-null output nobody wants) goes to the kernel without memory but with the
// dtype the node was prepared for, so that a kernel that looks at it (typed access) is not told
// float32 in a float64 node.
std::vector<weft_tensor> Tensors(const std::vector<NDArray>& arrays, const std::vector<std::vector<int64_t>>& dims,
                                 const std::vector<DType>& dtypes, int32_t device, bool sparse_outputs = false) {
  std::vector<weft_tensor> out(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    weft_tensor& t = out[i];
    t.struct_size = WEFT_STRUCT_SIZE(weft_tensor, strides);
    t.device = device;
    t.ndim = static_cast<int32_t>(dims[i].size());
    t.shape = dims[i].data();
    t.dtype = static_cast<int32_t>(dtypes[i]);
    if (arrays[i].is_none()) continue;
    t.dtype = static_cast<int32_t>(arrays[i].GetDType());
    if (arrays[i].storage_type() != StorageType::kDefault) {
      // A sparse input is seen as its values under the full shape (sdk/operator.h); a sparse
      // output has no storage until the kernel asks for it (alloc_sparse_output).
      if (!sparse_outputs) {
        const NDArray values = arrays[i].data_ndarray();
        t.data = values.dptr();
        t.offset = values.offset();
      }
      continue;
    }
    t.data = arrays[i].dptr();
    t.offset = arrays[i].offset();
  }
  return out;
}

// A 1-d int64/int32 aux array as a kernel tensor; `len` holds its extent for the call.
weft_tensor AuxTensor(const NDArray& a, int32_t device, const int64_t* len) {
  weft_tensor t{};
  t.struct_size = WEFT_STRUCT_SIZE(weft_tensor, strides);
  t.data = a.dptr();
  t.offset = a.offset();
  t.dtype = static_cast<int32_t>(a.GetDType());
  t.device = device;
  t.ndim = 1;
  t.shape = len;
  return t;
}

// The sparse outputs a run writes, marked with BeginPartsWrite from the push until End, which the
// run calls before it completes. A run the engine skips (its inputs carry an error) never calls
// it: the last copy of the closure ends the marks then.
class PartsWrites {
 public:
  PartsWrites(const std::vector<NDArray>& outputs, const std::vector<int32_t>& req) {
    std::vector<NDArray> marked;
    for (size_t o = 0; o < outputs.size(); ++o)
      if (!outputs[o].is_none() && outputs[o].storage_type() != StorageType::kDefault && req[o] != WEFT_REQ_NULL)
        marked.push_back(outputs[o]);
    if (marked.empty()) return;
    for (const NDArray& a : marked) a.BeginPartsWrite();
    marks_ = std::make_shared<Marks>(std::move(marked));
  }
  void End() const noexcept {
    if (marks_) marks_->End();
  }

 private:
  struct Marks {
    explicit Marks(std::vector<NDArray> a) : arrays(std::move(a)) {}
    ~Marks() { End(); }
    void End() noexcept {
      if (ended.exchange(true)) return;
      for (const NDArray& a : arrays) a.EndPartsWrite();
    }
    std::vector<NDArray> arrays;
    std::atomic<bool> ended{false};
  };
  std::shared_ptr<Marks> marks_;
};

// What alloc_sparse_output needs during one Compute.
struct SparseCallCtx {
  const KernelRunner::State* s = nullptr;
  const std::vector<NDArray>* outputs = nullptr;
  int32_t device = 0;
  std::deque<int64_t> lens;  // extents the returned aux tensors borrow (deque: addresses stay put)
};

}  // namespace

struct KernelRunner::State::SparseArgs {
  std::vector<std::array<weft_tensor, WEFT_MAX_SPARSE_AUX>> aux;  // per input
  std::vector<const weft_tensor*> aux_ptrs;
  SparseCallCtx call;
};

namespace {

// weft_kernel_args.alloc_sparse_output: new parts for a sparse output, installed in the array at
// once (the run holds the array's write dependency; host readers wait for the run: PartsWrites).
weft_error* AllocSparseOutput(void* ctx, weft_sparse_alloc_args* a) noexcept {
  try {
    WEFT_CHECK(ctx != nullptr && a != nullptr && a->struct_size >= WEFT_STRUCT_SIZE(weft_sparse_alloc_args, aux),
               "alloc_sparse_output: called with NULL or a struct of {} bytes", a != nullptr ? a->struct_size : 0);
    auto& c = *static_cast<SparseCallCtx*>(ctx);
    const int32_t o = a->output;
    WEFT_CHECK(o >= 0 && static_cast<size_t>(o) < c.outputs->size() && c.s->out_st[static_cast<size_t>(o)] != 0,
               "alloc_sparse_output: output {} is not a sparse output of {}", o, c.s->label);
    const NDArray& out = (*c.outputs)[static_cast<size_t>(o)];
    const Shape& full = out.GetShape();
    const int64_t n = a->num_stored;
    const bool csr = out.storage_type() == StorageType::kCSR;
    WEFT_CHECK(n >= 0 && (csr || n <= full[0]), "alloc_sparse_output: {} stored entries asked for output {} of {} ({})",
               n, o, c.s->label, full);
    Shape values_shape = csr ? Shape{n} : full;
    if (!csr) values_shape[0] = n;
    NDArray values(values_shape, out.GetContext(), false, out.GetDType());
    std::vector<NDArray> aux;
    for (int j = 0; j < NumAuxData(out.storage_type()); ++j) {
      const int64_t len = csr && j == kCSRIndPtr ? full[0] + 1 : n;
      aux.emplace_back(Shape{len}, out.GetContext(), false, DType::kInt64);
      aux.back().CheckAndAlloc();
      a->aux[j] = AuxTensor(aux.back(), c.device, &c.lens.emplace_back(len));
    }
    values.CheckAndAlloc();
    a->values = AuxTensor(values, c.device, c.s->out_dims[static_cast<size_t>(o)].data());
    a->values.dtype = static_cast<int32_t>(out.GetDType());
    a->values.ndim = static_cast<int32_t>(full.ndim());  // the full shape, as for sparse inputs
    out.SetSparseParts(std::move(values), std::move(aux));
    return nullptr;
  } catch (const OutOfMemoryError& e) {
    return CreateError(WEFT_ERR_OUT_OF_MEMORY, e.what());
  } catch (const std::exception& e) {
    return CreateError(WEFT_ERR_INVALID_ARGUMENT, e.what());
  }
}

}  // namespace

void KernelRunner::State::Check(const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs,
                                const std::vector<int32_t>& req, const std::vector<NDArray>& aux) const {
  WEFT_CHECK(req.size() == sig.out_shapes.size(), "{}: expects {} write requests (one per output), got {}", label,
             sig.out_shapes.size(), req.size());
  for (size_t i = 0; i < req.size(); ++i)
    WEFT_CHECK(req[i] >= WEFT_REQ_NULL && req[i] <= WEFT_REQ_ADD,
               "{}: write request {} of output {} is not one of null (0), write (1), inplace (2), add (3)", label,
               req[i], i);
  CheckSlots(*this, "inputs", inputs, sig.in_shapes, sig.in_dtypes, nullptr);
  CheckSlots(*this, "outputs", outputs, sig.out_shapes, sig.out_dtypes, &req);
  CheckSlots(*this, "aux states", aux, sig.aux_shapes, sig.aux_dtypes, nullptr);
  // A dense kernel must never see a sparse array as if it were dense, nor a sparse kernel other
  // storage types than it claimed.
  auto check_stypes = [&](const std::vector<NDArray>& arrays, const std::vector<int32_t>& want, const char* kind) {
    for (size_t i = 0; i < arrays.size(); ++i) {
      if (arrays[i].is_none()) continue;
      const auto st = static_cast<int32_t>(arrays[i].storage_type());
      const int32_t expect = want.empty() ? WEFT_STYPE_DEFAULT : want[i];
      WEFT_CHECK(st == expect, "{}: {} {} has storage type {}, the node was prepared for {}", label, kind, i,
                 StorageTypeName(static_cast<StorageType>(st)), StorageTypeName(static_cast<StorageType>(expect)));
    }
  };
  check_stypes(inputs, in_st, "input");
  check_stypes(outputs, out_st, "output");
  check_stypes(aux, {}, "aux state");
  if (sparse())
    for (size_t o = 0; o < outputs.size(); ++o)
      WEFT_CHECK(out_st[o] == WEFT_STYPE_DEFAULT || req[o] == WEFT_REQ_WRITE,
                 "{}: sparse output {} takes write requests only (kWriteTo), got {}", label, o, req[o]);
}

void KernelRunner::State::AddSparseArgs(const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs,
                                        SparseArgs& keep, weft_kernel_args& args) const {
  const int32_t device = static_cast<int32_t>(ctx.GetDeviceId());
  keep.aux.resize(inputs.size());
  keep.aux_ptrs.assign(inputs.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (in_st[i] == WEFT_STYPE_DEFAULT) continue;
    for (size_t j = 0; j < inputs[i].num_aux_data(); ++j) {
      const NDArray a = inputs[i].aux_ndarray(j);
      keep.aux[i][j] = AuxTensor(a, device, &keep.call.lens.emplace_back(a.GetShape()[0]));
    }
    keep.aux_ptrs[i] = keep.aux[i].data();
  }
  keep.call.s = this;
  keep.call.outputs = &outputs;
  keep.call.device = device;
  args.struct_size = WEFT_STRUCT_SIZE(weft_kernel_args, alloc_sparse_output);
  args.input_stypes = in_st.data();
  args.output_stypes = out_st.data();
  args.input_aux = keep.aux_ptrs.data();
  args.sparse_ctx = &keep.call;
  args.alloc_sparse_output = &AllocSparseOutput;
}

void KernelRunner::State::Compute(weft_stream stream, const std::vector<NDArray>& inputs,
                                  const std::vector<NDArray>& outputs, const std::vector<int32_t>& req,
                                  const std::vector<NDArray>& aux, bool is_train, uint64_t seed) const {
  const int32_t device = static_cast<int32_t>(ctx.GetDeviceId());
  std::vector<weft_tensor> in = Tensors(inputs, in_dims, sig.in_dtypes, device);
  std::vector<weft_tensor> out = Tensors(outputs, out_dims, sig.out_dtypes, device, true);
  std::vector<weft_tensor> ax = Tensors(aux, aux_dims, sig.aux_dtypes, device);
  // Content stamps only for a call that computes before returning: a kernel queued on a stream
  // runs after this function has freed the array (the SDK allows NULL: "unknown, never cache").
  std::vector<uint64_t> stamps;
  if (stream == nullptr) {
    stamps.resize(inputs.size(), 0);
    for (size_t i = 0; i < inputs.size(); ++i)
      if (!inputs[i].is_none()) stamps[i] = inputs[i].var()->stamp();
  }
  weft_kernel_args args{};
  args.struct_size = WEFT_STRUCT_SIZE(weft_kernel_args, input_stamps);
  args.kernel_data = kernel->def->kernel_data;
  args.state = kernel_state;
  args.device = device;
  args.num_inputs = static_cast<int32_t>(in.size());
  args.inputs = in.data();
  args.num_outputs = static_cast<int32_t>(out.size());
  args.outputs = out.data();
  args.req = req.data();
  args.num_aux = static_cast<int32_t>(ax.size());
  args.aux = ax.data();
  static const int64_t kWorkspaceDims[1] = {0};
  int64_t ws_dims[1] = {static_cast<int64_t>(workspace_bytes)};
  // The slot's block now (this run holds the slot's variable): at least workspace_bytes long.
  const Storage::Handle ws = workspace ? workspace->Current() : Storage::Handle{};
  args.workspace.struct_size = WEFT_STRUCT_SIZE(weft_tensor, strides);
  args.workspace.data = ws.dptr;
  args.workspace.dtype = WEFT_DTYPE_UINT8;
  args.workspace.device = device;
  args.workspace.ndim = 1;
  args.workspace.shape = workspace ? ws_dims : kWorkspaceDims;
  args.stream = stream;
  args.is_train = is_train ? 1 : 0;
  args.seed = seed;
  args.input_stamps = stamps.empty() ? nullptr : stamps.data();
  SparseArgs keep;
  if (sparse()) AddSparseArgs(inputs, outputs, keep, args);
  ThrowIfError(kernel->def->compute(kernel->plugin_state, &args), compute_label);
}

namespace {

// The first sparse kernel of ctx's device claiming a node with these inputs; `out` holds the
// outputs' requested storage types (-1: free) and receives the claim. nullptr when none claims.
const KernelInfo* QueryStorage(const std::string& op, const std::vector<weft_kv>& kv, const Context& ctx,
                               const NodeSignature& sig, const std::vector<int32_t>& in_st, DType key,
                               std::vector<int32_t>& out) {
  std::vector<weft_shape> shapes = WeftShapes(sig.in_shapes, op, "input");
  std::vector<int32_t> dtypes = Codes(sig.in_dtypes);
  weft_storage_args q{};
  q.struct_size = WEFT_STRUCT_SIZE(weft_storage_args, claimed);
  q.op_name = op.c_str();
  q.num_attrs = static_cast<int32_t>(kv.size());
  q.attrs = kv.data();
  q.num_inputs = static_cast<int32_t>(in_st.size());
  q.input_stypes = in_st.data();
  q.input_shapes = shapes.data();
  q.input_dtypes = dtypes.data();
  q.num_outputs = static_cast<int32_t>(out.size());
  q.output_stypes = out.data();
  return internal::FindSparseKernel(Runtime::Get(), op, ctx.GetDeviceType(), key, q);
}

DType KeyDType(const NodeSignature& sig) {
  return !sig.in_dtypes.empty() ? sig.in_dtypes[0] : !sig.out_dtypes.empty() ? sig.out_dtypes[0] : DType::kFloat32;
}

std::vector<weft_kv> VisibleAttrs(const AttrMap& attrs) {
  std::vector<weft_kv> kv;
  for (const auto& [k, v] : attrs.values())
    if (!k.starts_with("__")) kv.push_back(weft_kv{k.c_str(), v.c_str()});
  return kv;
}

}  // namespace

KernelRunner::KernelRunner(const std::string& op, const AttrMap& attrs, const Context& ctx, const NodeSignature& sig,
                           uint32_t resources)
    : state_(std::make_shared<State>()) {
  State& s = *state_;
  const OpDef* def = OpRegistry::Get().Find(op);
  s.op = def != nullptr ? def->name : op;
  if (def != nullptr) resources |= def->resources;
  s.ctx = ctx;
  s.sig = sig;
  s.label = fmt::format("{} on {}", s.op, ctx.ToString());
  s.compute_label = s.label;
  s.random = (resources & kResourceRandom) != 0;
  WEFT_CHECK(sig.in_shapes.size() == sig.in_dtypes.size() && sig.out_shapes.size() == sig.out_dtypes.size() &&
                 sig.aux_shapes.size() == sig.aux_dtypes.size(),
             "{}: shape and dtype lists differ in length (inputs {}/{}, outputs {}/{}, aux {}/{})", s.label,
             sig.in_shapes.size(), sig.in_dtypes.size(), sig.out_shapes.size(), sig.out_dtypes.size(),
             sig.aux_shapes.size(), sig.aux_dtypes.size());
  Runtime& rt = Runtime::Get();
  internal::GetDevice(rt, ctx);  // a clear error for a missing device comes before "no kernel"
  bool backward = false;
  if (auto host = host_op::Find(s.op, &backward)) {
    HostOpAttrs visible;
    for (const auto& [k, v] : attrs.values())
      if (!k.starts_with("__")) visible.emplace(k, v);
    s.host = host_op::Prepare(*host, backward, visible, ctx, sig.in_shapes, sig.in_dtypes);
    s.var = Engine::Get()->NewVariable();
    return;
  }
  const DType key = KeyDType(sig);
  const std::vector<weft_kv> kv = VisibleAttrs(attrs);
  auto is_sparse = [](StorageType t) { return t != StorageType::kDefault; };
  if (std::any_of(sig.in_stypes.begin(), sig.in_stypes.end(), is_sparse) ||
      std::any_of(sig.out_stypes.begin(), sig.out_stypes.end(), is_sparse)) {
    WEFT_CHECK(sig.in_stypes.size() == sig.in_shapes.size() && sig.out_stypes.size() == sig.out_shapes.size(),
               "{}: {} input and {} output storage types given for {} inputs and {} outputs", s.label,
               sig.in_stypes.size(), sig.out_stypes.size(), sig.in_shapes.size(), sig.out_shapes.size());
    for (StorageType t : sig.in_stypes) s.in_st.push_back(static_cast<int32_t>(t));
    for (StorageType t : sig.out_stypes) s.out_st.push_back(static_cast<int32_t>(t));
    std::vector<int32_t> claim = s.out_st;
    s.kernel = QueryStorage(s.op, kv, ctx, sig, s.in_st, key, claim);
    if (s.kernel == nullptr)
      Fail(
          "no kernel for operator '{}' on device type '{}' with dtype {} takes the storage types {}: convert the "
          "sparse arrays to dense (cast_storage) or run the op where a plugin claims them",
          s.op, ctx.GetDeviceType(), DTypeName(key), StypeList(s.in_st, s.out_st));
  } else {
    s.kernel = internal::FindKernel(rt, s.op, ctx.GetDeviceType(), key);
    if (s.kernel == nullptr)
      Fail("no kernel for operator '{}' on device type '{}' with dtype {}: {}{}", s.op, ctx.GetDeviceType(),
           DTypeName(key), KernelOwners(s.op), DevicePlugin(ctx.GetDeviceType()));
  }

  auto dims = [](const std::vector<Shape>& shapes) {
    std::vector<std::vector<int64_t>> d;
    for (const Shape& x : shapes) d.push_back(x.dims());
    return d;
  };
  s.in_dims = dims(sig.in_shapes);
  s.out_dims = dims(sig.out_shapes);
  s.aux_dims = dims(sig.aux_shapes);

  if (s.kernel->def->create_state != nullptr) {
    std::vector<weft_shape> is = WeftShapes(sig.in_shapes, s.label, "input"),
                            os = WeftShapes(sig.out_shapes, s.label, "output"),
                            as = WeftShapes(sig.aux_shapes, s.label, "aux state");
    std::vector<int32_t> id = Codes(sig.in_dtypes), od = Codes(sig.out_dtypes), ad = Codes(sig.aux_dtypes);
    weft_kernel_state_args a{};
    a.struct_size = WEFT_STRUCT_SIZE(weft_kernel_state_args, workspace_bytes);
    if (s.sparse()) {
      a.struct_size = WEFT_STRUCT_SIZE(weft_kernel_state_args, output_stypes);
      a.input_stypes = s.in_st.data();
      a.output_stypes = s.out_st.data();
    }
    a.kernel_data = s.kernel->def->kernel_data;
    a.op_name = s.op.c_str();
    a.device = static_cast<int32_t>(ctx.GetDeviceId());
    a.num_attrs = static_cast<int32_t>(kv.size());
    a.attrs = kv.data();
    a.num_inputs = static_cast<int32_t>(is.size());
    a.input_shapes = is.data();
    a.input_dtypes = id.data();
    a.num_outputs = static_cast<int32_t>(os.size());
    a.output_shapes = os.data();
    a.output_dtypes = od.data();
    a.num_aux = static_cast<int32_t>(as.size());
    a.aux_shapes = as.data();
    a.aux_dtypes = ad.data();
    ThrowIfError(s.kernel->def->create_state(s.kernel->plugin_state, &a), s.label);
    s.kernel_state = a.state;
    if (a.workspace_bytes > 0) {
      s.workspace = ReserveWorkspace(ctx, a.workspace_bytes);
      s.workspace_bytes = a.workspace_bytes;
    }
  }
  // Only runs that share a workspace need serialising (compute on one kernel state may run on
  // several threads at once: weft/sdk/cpp/kernel.hpp); they write their slot's variable. Other
  // runners, shared by every imperative call of an op with one signature, take no variable: a
  // failed run would taint it and so skip the later, unrelated calls until someone waited (MXNet's
  // take or gather_nd have no such shared variable either; random ops share the generator's,
  // RandomResourceVar).
}

KernelRunner::~KernelRunner() = default;

void KernelRunner::Run(const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs,
                       const std::vector<int32_t>& req, const std::vector<NDArray>& aux, bool is_train,
                       int priority) const {
  state_->Check(inputs, outputs, req, aux);
  Alloc(inputs);
  Alloc(outputs);
  Alloc(aux);
  std::vector<VarHandle> reads, writes;
  AddVars(inputs, &reads);
  AddVars(outputs, &writes);
  AddVars(aux, &writes);
  if (state_->var != nullptr) writes.push_back(state_->var);
  if (state_->workspace) writes.push_back(state_->workspace->var());
  if (state_->random) writes.push_back(RandomResourceVar(state_->ctx));
  for (size_t o = 0; o < outputs.size(); ++o)
    if (req[o] != WEFT_REQ_NULL) outputs[o].NoteWrite();
  for (const NDArray& a : aux) a.NoteWrite();
  const uint64_t seed = state_->random ? NextRandomSeed() : 0;
  std::shared_ptr<const State> s = state_;
  // A sparse output gets new parts while the kernel runs: host readers of its parts wait for the
  // run (NDArray::BeginPartsWrite), and the caller does not have to.
  const PartsWrites parts(outputs, req);
  if (s->host) {
    // Host operators run on their own threads; the engine operation completes when they are done.
    Engine::Get()->PushAsync(
        [s, inputs, outputs, req, aux, is_train, parts](RunContext, CallbackOnComplete done) {
          host_op::Submit([s, inputs, outputs, req, aux, is_train, parts, done] {
            std::exception_ptr error;
            try {
              host_op::Execute(*s->host, s->compute_label, inputs, outputs, req, aux, is_train);
            } catch (...) {
              error = std::current_exception();
            }
            parts.End();
            done(error);
          });
        },
        state_->ctx, reads, writes, FnProperty::kAsync, priority, state_->op.c_str());
    return;
  }
  Engine::Get()->PushSync(
      [s, inputs, outputs, req, aux, is_train, seed, parts](RunContext rctx) {
        try {
          s->Compute(rctx.stream, inputs, outputs, req, aux, is_train, seed);
        } catch (...) {
          parts.End();
          throw;
        }
        parts.End();
      },
      state_->ctx, reads, writes, FnProperty::kNormal, priority, state_->op.c_str());
}

void KernelRunner::RunInline(const RunContext& rctx, const std::vector<NDArray>& inputs,
                             const std::vector<NDArray>& outputs, const std::vector<int32_t>& req,
                             const std::vector<NDArray>& aux, bool is_train, uint64_t seed) const {
  state_->Check(inputs, outputs, req, aux);
  WEFT_CHECK(!state_->host, "{}: a host operator cannot run inside another engine operation (bulked)", state_->label);
  WEFT_CHECK(!state_->sparse(), "{}: a sparse kernel cannot run inside another engine operation (bulked)",
             state_->label);
  auto check_alloc = [&](const std::vector<NDArray>& arrays, const char* kind) {
    for (size_t i = 0; i < arrays.size(); ++i)
      WEFT_CHECK(arrays[i].is_none() || arrays[i].Size() == 0 || arrays[i].dptr() != 0,
                 "{}: {} {} is not allocated (call CheckAndAlloc before pushing the enclosing operation)",
                 state_->label, kind, i);
  };
  check_alloc(inputs, "input");
  check_alloc(outputs, "output");
  check_alloc(aux, "aux state");
  state_->Compute(rctx.stream, inputs, outputs, req, aux, is_train, state_->random ? seed : 0);
}

std::shared_ptr<KernelRunner> SharedKernelRunner(const std::string& op, const AttrMap& attrs, const Context& ctx,
                                                 const NodeSignature& sig, uint32_t resources) {
  // Never destroyed: a runner freed at exit would call into plugins that have shut down.
  static std::mutex& mu = *new std::mutex;
  static auto& cache = *new std::unordered_map<std::string, std::shared_ptr<KernelRunner>>;
  std::string key = fmt::format("{}|{}|{}|", op, ctx, resources);
  for (const auto& [k, v] : attrs.values()) key += k + "=" + v + ";";
  for (const auto* shapes : {&sig.in_shapes, &sig.out_shapes, &sig.aux_shapes}) {
    key += "|";
    for (const Shape& s : *shapes) key += s.ToString();
  }
  for (const auto* types : {&sig.in_dtypes, &sig.out_dtypes, &sig.aux_dtypes}) {
    key += "|";
    for (DType t : *types) key += std::to_string(static_cast<int>(t)) + ",";
  }
  for (const auto* stypes : {&sig.in_stypes, &sig.out_stypes}) {
    key += "|";
    for (StorageType t : *stypes) key += std::to_string(static_cast<int>(t)) + ",";
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  auto runner = std::make_shared<KernelRunner>(op, attrs, ctx, sig, resources);
  std::lock_guard<std::mutex> lock(mu);
  // Bounded: shapes that keep changing must not hold kernel states for ever. (Workspace is not
  // counted: runners share their device's workspace slots, workspace_pool.h.)
  if (cache.size() >= 256) cache.clear();
  return cache.emplace(std::move(key), std::move(runner)).first->second;
}

void KernelRunner::SetNodeName(const std::string& node) {
  state_->compute_label = fmt::format("{} (node '{}')", state_->label, node);
}

const std::string& KernelRunner::op() const { return state_->op; }
const Context& KernelRunner::context() const { return state_->ctx; }
const NodeSignature& KernelRunner::signature() const { return state_->sig; }
uint64_t KernelRunner::workspace_bytes() const { return state_->workspace_bytes; }
VarHandle KernelRunner::workspace_var() const { return state_->workspace ? state_->workspace->var() : nullptr; }
const std::string& KernelRunner::plugin_name() const {
  static const std::string host = "host";
  return state_->host ? host : state_->kernel->plugin->name();
}
bool KernelRunner::is_host() const { return state_->host.has_value(); }
bool KernelRunner::uses_random() const { return state_->random; }

bool ClaimStorageTypes(const std::string& op, const AttrMap& attrs, const Context& ctx, const NodeSignature& sig,
                       std::vector<StorageType>* out_stypes) {
  const OpDef* def = OpRegistry::Get().Find(op);
  const std::string name = def != nullptr ? def->name : op;
  std::vector<int32_t> in = Codes(sig.in_stypes), out = Codes(*out_stypes);
  if (QueryStorage(name, VisibleAttrs(attrs), ctx, sig, in, KeyDType(sig), out) == nullptr) return false;
  for (size_t o = 0; o < out.size(); ++o) (*out_stypes)[o] = static_cast<StorageType>(out[o]);
  return true;
}

bool HasKernel(const std::string& op, const std::string& device_type, DType dtype) {
  return internal::FindKernel(Runtime::Get(), op, device_type, dtype) != nullptr;
}

void SetRandomSeed(uint64_t seed) {
  SeedSequence& s = Seeds();
  std::lock_guard<std::mutex> lock(s.mu);
  s.base = seed;
  s.counter = 0;
}

uint64_t NextRandomSeed() {
  SeedSequence& s = Seeds();
  std::lock_guard<std::mutex> lock(s.mu);
  return Mix(s.base ^ Mix(s.counter++));
}

}  // namespace weft
