// MXNet C API: imperative autograd (MXAutograd*, the per-array gradient state, detach,
// mx.autograd.Function's MXCustomFunctionRecord over autograd::RecordFunction), cached ops
// (MXCreateCachedOpEx / MXInvokeCachedOpEx: gluon's hybridize) and shared-memory arrays
// (cpu_shared: gluon.data.DataLoader's workers), over weft/autograd.h, weft/cached_op.h and
// NDArray::CreateSharedMem / FromSharedMem.
#include "frontend_callback.h"
#include "symbol_handle.h"
#include "weft/autograd.h"
#include "weft/cached_op.h"

using namespace weft;
using namespace weft::mx;

namespace {

struct CachedOpH : Handle<HandleKind::kCachedOp> {
  explicit CachedOpH(std::unique_ptr<CachedOp> o) : op(std::move(o)) {}
  std::unique_ptr<CachedOp> op;
};
CachedOp& Op(CachedOpHandle h) { return *Handle<HandleKind::kCachedOp>::From<CachedOpH>(h)->op; }

// MXNet's grad_req codes (0 null, 1 write, 2 inplace, 3 add).
OpReqType GradReq(uint32_t code, uint32_t i) {
  if (code > 3) Fail("mark_variables: grad_req code {} of variable {} is not 0 (null), 1 (write), 3 (add)", code, i);
  return static_cast<OpReqType>(code);
}

std::vector<NDArray> Arrays(uint32_t n, NDArrayHandle* handles, const char* what, bool allow_null) {
  std::vector<NDArray> out;
  if (n > 0) NotNull(handles, what);
  for (uint32_t i = 0; i < n; ++i) {
    if (handles[i] == nullptr && allow_null) {
      out.emplace_back();
      continue;
    }
    out.push_back(ND(NotNull(handles[i], what)));
  }
  return out;
}

// The storage type of every returned array: MXNet's kDefaultStorage (0).
const int* DefaultStypes(size_t n, const char* buffer) {
  thread_local std::map<std::string, std::vector<int>> buffers;
  std::vector<int>& v = buffers[buffer];
  v.assign(n, 0);
  return v.data();
}

// The backward of one mx.autograd.Function call, owned by the tape's node. The callback list
// belongs to the frontend and is freed by its own delete callback, so the two callbacks are
// copied out first; the destructor calls delete exactly once.
class FrontendFunction final : public autograd::FunctionGradient {
 public:
  using BackwardFn = int (*)(int, int, void**, const int*, const int, void*);
  using DeleteFn = int (*)(void*);

  explicit FrontendFunction(const MXCallbackList& cb) {
    if (cb.num_callbacks <= kCustomFunctionDelete || cb.callbacks == nullptr ||
        cb.callbacks[kCustomFunctionBackward] == nullptr || cb.callbacks[kCustomFunctionDelete] == nullptr)
      Fail("MXCustomFunctionRecord: the callback list has no backward and delete callbacks ({} given)",
           cb.num_callbacks);
    backward_ = CallbackAs<BackwardFn>(cb.callbacks[kCustomFunctionBackward]);
    delete_ = CallbackAs<DeleteFn>(cb.callbacks[kCustomFunctionDelete]);
    if (cb.contexts != nullptr) {
      backward_state_ = cb.contexts[kCustomFunctionBackward];
      delete_state_ = cb.contexts[kCustomFunctionDelete];
    }
  }
  ~FrontendFunction() override {
    // A destructor must not throw; the frontend prints its own error.
    try {
      CallFrontend("autograd.Function's delete callback", [&] { delete_(delete_state_); });
    } catch (...) {
    }
  }
  FrontendFunction(const FrontendFunction&) = delete;
  FrontendFunction& operator=(const FrontendFunction&) = delete;

  std::vector<NDArray> Backward(const std::vector<NDArray>& out_grads, const std::vector<bool>& need,
                                bool is_train) override {
    std::vector<void*> handles;  // each freed by the frontend's NDArray wrapper
    for (const NDArray& g : out_grads) handles.push_back(NewND(g));
    std::vector<NDArray> grads;
    for (size_t i = 0; i < need.size(); ++i) {
      grads.emplace_back(shapes_[i], ctx_, true, dtypes_[i]);
      handles.push_back(NewND(grads.back()));
    }
    // Every gradient is asked for with "write": MXNet 1.9.1's Function stops writing at the first
    // input whose req is null, which would leave the later inputs' gradients unwritten.
    const std::vector<int> reqs(need.size(), static_cast<int>(kWriteTo));
    int ok = 0;
    CallFrontend("autograd.Function.backward", [&] {
      ok = backward_(static_cast<int>(out_grads.size()), static_cast<int>(need.size()), handles.data(), reqs.data(),
                     is_train ? 1 : 0, backward_state_);
    });
    if (ok == 0) Fail("autograd.Function.backward failed (the frontend printed the traceback)");
    return grads;
  }

  std::string Describe() const override { return "autograd.Function"; }

  // The inputs' shapes, dtypes and device: the gradient arrays handed to the frontend.
  void SetInputs(const std::vector<NDArray>& inputs) {
    for (const NDArray& a : inputs) {
      shapes_.push_back(a.GetShape());
      dtypes_.push_back(a.GetDType());
    }
    ctx_ = inputs.at(0).GetContext();
  }

 private:
  BackwardFn backward_ = nullptr;
  DeleteFn delete_ = nullptr;
  void* backward_state_ = nullptr;
  void* delete_state_ = nullptr;
  std::vector<Shape> shapes_;
  std::vector<DType> dtypes_;
  Context ctx_;
};

}  // namespace

extern "C" {

// ---- recording and training switches (thread-local, as MXNet's) ---------------------------------

int MXAutogradSetIsRecording(int is_recording, int* prev) {
  API_BEGIN();
  const bool was = autograd::SetIsRecording(is_recording != 0);
  if (prev != nullptr) *prev = was ? 1 : 0;
  API_END();
}

int MXAutogradSetIsTraining(int is_training, int* prev) {
  API_BEGIN();
  const bool was = autograd::SetIsTraining(is_training != 0);
  if (prev != nullptr) *prev = was ? 1 : 0;
  API_END();
}

int MXAutogradIsRecording(bool* curr) {
  API_BEGIN();
  *NotNull(curr, "curr") = autograd::IsRecording();
  API_END();
}

int MXAutogradIsTraining(bool* curr) {
  API_BEGIN();
  *NotNull(curr, "curr") = autograd::IsTraining();
  API_END();
}

// ---- variables and per-array state -----------------------------------------------------------

int MXAutogradMarkVariables(uint32_t num_var, NDArrayHandle* var_handles, uint32_t* reqs_array,
                            NDArrayHandle* grad_handles) {
  API_BEGIN();
  std::vector<NDArray*> vars;
  std::vector<OpReqType> reqs;
  if (num_var > 0) {
    NotNull(var_handles, "var_handles");
    NotNull(reqs_array, "reqs_array");
  }
  for (uint32_t i = 0; i < num_var; ++i) {
    vars.push_back(&ND(var_handles[i]));
    reqs.push_back(GradReq(reqs_array[i], i));
  }
  autograd::MarkVariables(vars, reqs, Arrays(num_var, grad_handles, "grad_handles", true));
  API_END();
}

// The gradient buffer of a marked variable; *out is NULL otherwise (Python's NDArray.grad is None).
int MXNDArrayGetGrad(NDArrayHandle handle, NDArrayHandle* out) {
  API_BEGIN();
  const NDArray g = autograd::GetGrad(ND(handle));
  *NotNull(out, "out") = g.is_none() ? nullptr : NewND(g);
  API_END();
}

int MXNDArrayDetach(NDArrayHandle handle, NDArrayHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = NewND(ND(handle).Detach());
  API_END();
}

int MXNDArraySetGradState(NDArrayHandle handle, int state) {
  API_BEGIN();
  autograd::SetGradState(ND(handle), state != 0);
  API_END();
}

int MXNDArrayGetGradState(NDArrayHandle handle, int* out) {
  API_BEGIN();
  *NotNull(out, "out") = autograd::GetGradState(ND(handle)) ? 1 : 0;
  API_END();
}

// ---- backward ----------------------------------------------------------------------------------

// MXNet's full form: `ograd_handles` may be NULL (ones for every head) or hold NULL entries;
// with variables (autograd.grad) their gradients come back in *grad_handles (new handles owned by
// the caller) and *grad_stypes (all default storage).
int MXAutogradBackwardEx(uint32_t num_output, NDArrayHandle* output_handles, NDArrayHandle* ograd_handles,
                         uint32_t num_variables, NDArrayHandle* var_handles, int retain_graph, int create_graph,
                         int is_train, NDArrayHandle** grad_handles, int** grad_stypes) {
  API_BEGIN();
  const std::vector<NDArray> heads = Arrays(num_output, output_handles, "output_handles", false);
  const std::vector<NDArray> ograds =
      ograd_handles == nullptr ? std::vector<NDArray>() : Arrays(num_output, ograd_handles, "ograd_handles", true);
  const std::vector<NDArray> vars = Arrays(num_variables, var_handles, "var_handles", false);
  std::vector<NDArray> grads =
      autograd::BackwardEx(heads, ograds, vars, retain_graph != 0, create_graph != 0, is_train != 0);
  if (num_variables > 0) {
    std::vector<void*>& out = ThreadHandles("MXAutogradBackwardEx");
    out.clear();
    for (NDArray& g : grads) out.push_back(NewND(std::move(g)));
    *NotNull(grad_handles, "grad_handles") = out.data();
    if (grad_stypes != nullptr) *grad_stypes = const_cast<int*>(DefaultStypes(out.size(), "MXAutogradBackwardEx"));
  }
  API_END();
}

int MXAutogradBackward(uint32_t num_output, NDArrayHandle* output_handles, NDArrayHandle* ograd_handles,
                       int retain_graph) {
  return MXAutogradBackwardEx(num_output, output_handles, ograd_handles, 0, nullptr, retain_graph, 0, 1, nullptr,
                              nullptr);
}

int MXAutogradComputeGradient(uint32_t num_output, NDArrayHandle* output_handles) {
  return MXAutogradBackward(num_output, output_handles, nullptr, 0);
}

int MXAutogradGetSymbol(NDArrayHandle handle, SymbolHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = NewSym(autograd::GetSymbol(ND(handle)));
  API_END();
}

// ---- mx.autograd.Function ----------------------------------------------------------------------

int MXCustomFunctionRecord(int num_inputs, NDArrayHandle* inputs, int num_outputs, NDArrayHandle* outputs,
                           struct MXCallbackList* callbacks) {
  API_BEGIN();
  if (num_inputs < 1 || num_outputs < 1)
    Fail("MXCustomFunctionRecord: {} inputs and {} outputs; a Function takes and returns at least one array",
         num_inputs, num_outputs);
  const std::vector<NDArray> in = Arrays(static_cast<uint32_t>(num_inputs), inputs, "inputs", false);
  NotNull(outputs, "outputs");
  std::vector<NDArray*> out;
  for (int k = 0; k < num_outputs; ++k) out.push_back(&ND(outputs[k]));
  auto fn = std::make_unique<FrontendFunction>(*NotNull(callbacks, "callbacks"));
  fn->SetInputs(in);
  autograd::RecordFunction(in, out, std::move(fn));
  API_END();
}

// ---- cached ops --------------------------------------------------------------------------------

int MXCreateCachedOpEX(SymbolHandle handle, int num_flags, const char** keys, const char** vals, CachedOpHandle* out,
                       bool /*thread_safe: weft's CachedOp is always safe to call from several threads*/) {
  API_BEGIN();
  std::vector<std::pair<std::string, std::string>> flags;
  for (const auto& [k, v] : KeyValues(num_flags, keys, vals, "CachedOp flag")) flags.emplace_back(k, v);
  *NotNull(out, "out") = new CachedOpH(std::make_unique<CachedOp>(Sym(handle).Get(), flags));
  API_END();
}

int MXCreateCachedOpEx(SymbolHandle handle, int num_flags, const char** keys, const char** vals, CachedOpHandle* out) {
  return MXCreateCachedOpEX(handle, num_flags, keys, vals, out, false);
}

int MXCreateCachedOp(SymbolHandle handle, CachedOpHandle* out) {
  return MXCreateCachedOpEX(handle, 0, nullptr, nullptr, out, false);
}

int MXFreeCachedOp(CachedOpHandle handle) {
  API_BEGIN();
  delete Handle<HandleKind::kCachedOp>::From<CachedOpH>(handle);
  API_END();
}

// *outputs NULL: new output handles (owned by the caller, in a thread-local array); otherwise the
// *num_outputs arrays given are written (Python's out=).
int MXInvokeCachedOpEx(CachedOpHandle handle, int num_inputs, NDArrayHandle* inputs, int* num_outputs,
                       NDArrayHandle** outputs, const int** out_stypes) {
  API_BEGIN();
  CachedOp& op = Op(handle);
  NotNull(num_outputs, "num_outputs");
  NotNull(outputs, "outputs");
  const std::vector<NDArray> in = Arrays(static_cast<uint32_t>(std::max(num_inputs, 0)), inputs, "inputs", false);
  if (*outputs != nullptr && *num_outputs > 0) {
    std::vector<NDArray> out = Arrays(static_cast<uint32_t>(*num_outputs), *outputs, "outputs", false);
    op.Invoke(in, &out);
    for (int i = 0; i < *num_outputs; ++i) ND((*outputs)[i]) = out[static_cast<size_t>(i)];
  } else {
    std::vector<NDArray> out = op.Invoke(in);
    std::vector<void*>& handles = ThreadHandles("MXInvokeCachedOpEx");
    handles.clear();
    for (NDArray& a : out) handles.push_back(NewND(std::move(a)));
    *num_outputs = static_cast<int>(handles.size());
    *outputs = handles.data();
  }
  if (out_stypes != nullptr) *out_stypes = DefaultStypes(static_cast<size_t>(*num_outputs), "MXInvokeCachedOpEx");
  API_END();
}

int MXInvokeCachedOp(CachedOpHandle handle, int num_inputs, NDArrayHandle* inputs, int* num_outputs,
                     NDArrayHandle** outputs) {
  return MXInvokeCachedOpEx(handle, num_inputs, inputs, num_outputs, outputs, nullptr);
}

// The hook gets (node name, op name, a new handle to the array) after each node (and, with
// monitor_all, before it for its inputs); a NULL callback removes it.
int MXCachedOpRegisterOpHook(NDArrayHandle handle, CachedOpMonitorCallback callback, bool monitor_all) {
  API_BEGIN();
  CachedOp& op = Op(handle);
  if (callback == nullptr) {
    op.RegisterOpHook({}, false);
  } else {
    op.RegisterOpHook(
        [callback](const std::string& node, const std::string& op_name, const NDArray& a) {
          CallFrontend("the cached op's hook", [&] { callback(node.c_str(), op_name.c_str(), NewND(a)); });
        },
        monitor_all);
  }
  API_END();
}

// ---- shared memory (cpu_shared) ----------------------------------------------------------------

int MXNDArrayGetSharedMemHandle(NDArrayHandle handle, int* shared_pid, int* shared_id) {
  API_BEGIN();
  ND(handle).GetSharedMemHandle(NotNull(shared_pid, "shared_pid"), NotNull(shared_id, "shared_id"));
  API_END();
}

int MXNDArrayCreateFromSharedMemEx(int shared_pid, int shared_id, const int* shape, int ndim, int dtype,
                                   NDArrayHandle* out) {
  API_BEGIN();
  if (ndim > 0) NotNull(shape, "shape");
  std::vector<int64_t> dims(shape, shape + std::max(ndim, 0));
  *NotNull(out, "out") = NewND(NDArray::FromSharedMem(shared_pid, shared_id, Shape(dims), static_cast<DType>(dtype)));
  API_END();
}

int MXNDArrayCreateFromSharedMem(int shared_pid, int shared_id, const uint32_t* shape, uint32_t ndim, int dtype,
                                 NDArrayHandle* out) {
  std::vector<int> dims(shape, shape + ndim);
  return MXNDArrayCreateFromSharedMemEx(shared_pid, shared_id, dims.data(), static_cast<int>(ndim), dtype, out);
}

}  // extern "C"
