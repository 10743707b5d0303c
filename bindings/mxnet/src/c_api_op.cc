// MXNet C API: listing operators, their information (from which MXNet's Python generates mx.nd.*
// and mx.sym.*), the legacy function registry, and imperative calls.
#include "common.h"
#include "op_table.h"
#include "storage_fallback.h"
#include "weft/autograd.h"
#include "weft/imperative.h"
#include "weft/internal/runtime.h"

using namespace weft;
using namespace weft::mx;

namespace {

// MXNet's context text ("cpu(0)", "gpu(1)", "cpu_pinned(0)", "cpu_shared(0)"). Parsed by hand:
// GCC 12's <regex> trips -Werror=maybe-uninitialized in the sanitizer presets.
Context ParseMXNetContext(const std::string& text) {
  auto fail = [&] {
    Fail("cannot read the context '{}' (MXNet's forms: cpu(0), gpu(0), cpu_pinned(0), cpu_shared(0))", text);
  };
  auto trim = [](std::string s) {
    const auto b = s.find_first_not_of(" \t");
    const auto e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  };
  const auto open = text.find('(');
  const auto close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) fail();
  if (!trim(text.substr(close + 1)).empty()) fail();
  const std::string type = trim(text.substr(0, open));
  const std::string digits = trim(text.substr(open + 1, close - open - 1));
  if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos) fail();
  const int id = std::stoi(digits);
  int dev_type = 0;
  if (type == "cpu") {
    dev_type = kDevCPU;
  } else if (type == "gpu") {
    dev_type = kDevGPU;
  } else if (type == "cpu_pinned") {
    dev_type = kDevCPUPinned;
  } else if (type == "cpu_shared") {
    dev_type = kDevCPUShared;
  } else {
    fail();
  }
  return ToContext(dev_type, id);
}

std::vector<NDArray> Inputs(int num_inputs, NDArrayHandle* inputs) {
  if (num_inputs < 0) Fail("negative number of inputs {}", num_inputs);
  if (num_inputs > 0) NotNull(inputs, "inputs");
  std::vector<NDArray> in;
  in.reserve(static_cast<size_t>(num_inputs));
  for (int i = 0; i < num_inputs; ++i) in.push_back(ND(inputs[i]));
  return in;
}

// `_copyto`: MXNet's copy between two arrays of one shape (any devices). While autograd records,
// MXNet records it too (astype and copyto keep the graph); weft records a copy on one device.
void CopyTo(const std::vector<NDArray>& in, std::vector<NDArray>& out) {
  if (in.size() != 1 || out.size() != 1) Fail("_copyto takes one input and one output array (out=)");
  if (in[0].GetShape() != out[0].GetShape()) {
    Fail("_copyto: shapes differ: source {} and destination {}", in[0].GetShape(), out[0].GetShape());
  }
  if (in[0].SharesChunkWith(out[0]) && in[0].offset() == out[0].offset()) return;  // a copy onto itself
  NDArray source = in[0];
  if (in[0].GetDType() != out[0].GetDType()) {
    // MXNet's copyto converts: cast on the source's device, then copy.
    source = InvokeOne("Cast", {in[0]}, {{"dtype", std::string(DTypeName(out[0].GetDType()))}});
  }
  NDArray::CopyFromTo(source, out[0]);
  if (source.GetContext() == out[0].GetContext()) autograd::RecordView(source, &out[0], "_copy", {});
}

bool NeedsCpuFallback(const std::string& op, const Context& ctx, const std::map<std::string, std::string>& params) {
  if (ctx.GetDeviceType() == "cpu") return false;
  auto it = params.find("dtype");
  DType dtype = DType::kFloat32;
  if (it != params.end() && it->second != "None" && !it->second.empty()) dtype = DTypeFromName(it->second);
  Runtime& rt = Runtime::Get();
  return internal::FindKernel(rt, op, ctx.GetDeviceType(), dtype) == nullptr &&
         internal::FindKernel(rt, op, "cpu", dtype) != nullptr;
}

void InvokeDense(OpEntry& op, std::vector<NDArray> in, std::map<std::string, std::string> params,
                 std::vector<NDArray>* out);

void Invoke(OpEntry& op, std::vector<NDArray> in, std::map<std::string, std::string> params,
            std::vector<NDArray>* out) {
  if (op.run) {
    op.run(in, params, out);
    return;
  }
  for (const auto& [k, v] : op.fixed_attrs) params[k] = v;
  if (op.is_copyto && in.size() == 1 && out->size() == 1 && (IsSparse(in[0]) || IsSparse((*out)[0])) &&
      in[0].GetDType() == (*out)[0].GetDType()) {
    // MXNet's copy of a sparse array into one of its storage type keeps the stored indices (an
    // explicitly stored zero stays stored); NDArray's copy does that, and converts otherwise.
    NDArray::CopyFromTo(in[0], (*out)[0]);
    return;
  }
  if (RunLazyUpdate(op, params, in, out) || RunCsrRowSlice(op, params, in, out) || RunSparseZeros(op, params, in, out))
    return;
  if (RunSparseKernel(op, params, in, out)) return;
  StorageFallback fallback(op, params, &in, out);
  InvokeDense(op, std::move(in), std::move(params), out);
  fallback.Finish(out);
}

void InvokeDense(OpEntry& op, std::vector<NDArray> in, std::map<std::string, std::string> params,
                 std::vector<NDArray>* out) {
  if (op.is_copyto) {
    CopyTo(in, *out);
    return;
  }
  if (op.is_numpy || op.is_missing) Fail("{}: {}", op.name, op.description);
  ImperativeCall call;
  call.op = op.info.name;
  call.inputs = std::move(in);
  bool shared = false;
  if (auto it = params.find("ctx"); it != params.end()) {
    if (call.inputs.empty() && !it->second.empty()) call.context = ParseMXNetContext(it->second);
    shared = call.context && it->second.starts_with("cpu_shared");
    params.erase(it);  // weft's definitions accept `ctx` but the call carries it
  }
  call.params = std::move(params);
  if (call.inputs.empty() && out->empty() && shared) {
    // A creation op asked for cpu_shared (mx.nd.zeros(ctx=mx.Context('cpu_shared', 0))): made on
    // the cpu, then moved into POSIX shared memory, as MXNDArrayCreate makes such arrays.
    std::vector<NDArray> made;
    weft::Invoke(call, &made);
    for (const NDArray& m : made) {
      out->push_back(NDArray::CreateSharedMem(m.GetShape(), m.GetDType()));
      NDArray::CopyFromTo(m, out->back());
    }
    return;
  }
  if (call.inputs.empty() && call.context && out->empty() &&
      NeedsCpuFallback(op.info.name, *call.context, call.params)) {
    // A creation op (zeros, ones, full, arange, random samplers) the device has no kernel for is
    // made on the cpu and copied there, as MXNet's frontend expects mx.nd.ones(ctx=gpu) to work.
    const Context target = *call.context;
    call.context = Context::cpu(0);
    std::vector<NDArray> made;
    weft::Invoke(call, &made);
    for (NDArray& m : made) out->push_back(m.Copy(target));
    return;
  }
  weft::Invoke(call, out);
}

}  // namespace

extern "C" {

int MXListAllOpNames(uint32_t* out_size, const char*** out_array) {
  API_BEGIN();
  const std::vector<std::string>& names = AllOpNames();
  *NotNull(out_size, "out_size") = static_cast<uint32_t>(names.size());
  *NotNull(out_array, "out_array") = ThreadStrings("MXListAllOpNames").Set(names);
  API_END();
}

int NNGetOpHandle(const char* op_name, OpHandle* op_out) {
  API_BEGIN();
  *NotNull(op_out, "op_out") = &LookupOpEntry(NotNull(op_name, "op_name"));
  API_END();
}

int MXSymbolListAtomicSymbolCreators(uint32_t* out_size, AtomicSymbolCreator** out_array) {
  API_BEGIN();
  std::vector<void*>& handles = ThreadHandles("MXSymbolListAtomicSymbolCreators");
  handles.clear();
  for (const std::string& n : AllOpNames()) handles.push_back(&LookupOpEntry(n));
  *NotNull(out_size, "out_size") = static_cast<uint32_t>(handles.size());
  *NotNull(out_array, "out_array") = handles.data();
  API_END();
}

int MXSymbolGetAtomicSymbolName(AtomicSymbolCreator creator, const char** name) {
  API_BEGIN();
  *NotNull(name, "name") = OpFromHandle(creator).name.c_str();
  API_END();
}

// The op's description and its arguments: inputs (type "NDArray-or-Symbol", or
// "NDArray-or-Symbol[]" for a variadic op) then attributes with MXNet's type text.
int MXSymbolGetAtomicSymbolInfo(AtomicSymbolCreator creator, const char** name, const char** description,
                                uint32_t* num_args, const char*** arg_names, const char*** arg_type_infos,
                                const char*** arg_descriptions, const char** key_var_num_args,
                                const char** return_type) {
  API_BEGIN();
  OpEntry& op = OpFromHandle(creator);
  *NotNull(name, "name") = op.name.c_str();
  *NotNull(description, "description") = op.description.c_str();
  *NotNull(num_args, "num_args") = static_cast<uint32_t>(op.arg_names.size());
  *NotNull(arg_names, "arg_names") = op.arg_name_ptrs.data();
  *NotNull(arg_type_infos, "arg_type_infos") = op.arg_type_ptrs.data();
  *NotNull(arg_descriptions, "arg_descriptions") = op.arg_desc_ptrs.data();
  // MXNet names a count attribute only for the num_args ops: its multi-tensor updates
  // (num_weights, num_arrays) take a variadic "data" whose count the caller always passes.
  static const char* const kNone = "";
  *NotNull(key_var_num_args, "key_var_num_args") =
      op.info.variadic_attr == "num_args" ? op.info.variadic_attr.c_str() : kNone;
  if (return_type) *return_type = nullptr;
  API_END();
}

// MXNet's legacy NDArray function registry (mx.torch's functions) has no entries in weft.
int MXListFunctions(uint32_t* out_size, FunctionHandle** out_array) {
  API_BEGIN();
  static FunctionHandle none[1] = {nullptr};
  *NotNull(out_size, "out_size") = 0;
  *NotNull(out_array, "out_array") = none;
  API_END();
}

int MXGetFunction(const char* name, FunctionHandle* out) {
  API_BEGIN();
  NotNull(out, "out");
  Fail("no legacy NDArray function '{}': weft's operators are listed by MXListAllOpNames", name ? name : "(null)");
  API_END();
}

int MXFuncGetInfo(FunctionHandle, const char**, const char**, uint32_t*, const char***, const char***, const char***,
                  const char**) {
  API_BEGIN();
  Fail("MXFuncGetInfo: weft has no legacy NDArray functions (MXListFunctions lists none)");
  API_END();
}

int MXFuncDescribe(FunctionHandle, uint32_t*, uint32_t*, uint32_t*, int*) {
  API_BEGIN();
  Fail("MXFuncDescribe: weft has no legacy NDArray functions (MXListFunctions lists none)");
  API_END();
}

int MXFuncInvoke(FunctionHandle, NDArrayHandle*, float*, NDArrayHandle*) {
  API_BEGIN();
  Fail("MXFuncInvoke: weft has no legacy NDArray functions (MXListFunctions lists none)");
  API_END();
}

int MXFuncInvokeEx(FunctionHandle, NDArrayHandle*, float*, NDArrayHandle*, int, char**, char**) {
  API_BEGIN();
  Fail("MXFuncInvokeEx: weft has no legacy NDArray functions (MXListFunctions lists none)");
  API_END();
}

int MXImperativeInvoke(AtomicSymbolCreator creator, int num_inputs, NDArrayHandle* inputs, int* num_outputs,
                       NDArrayHandle** outputs, int num_params, const char** param_keys, const char** param_vals) {
  return MXImperativeInvokeEx(creator, num_inputs, inputs, num_outputs, outputs, num_params, param_keys, param_vals,
                              nullptr);
}

// Runs op `creator` on the inputs. With *outputs non-NULL the results go into those arrays
// (Python's out=); otherwise new arrays are returned in a thread-local array of handles the caller
// takes ownership of (each one freed with MXNDArrayFree). *out_stypes: one storage type per output.
int MXImperativeInvokeEx(AtomicSymbolCreator creator, int num_inputs, NDArrayHandle* inputs, int* num_outputs,
                         NDArrayHandle** outputs, int num_params, const char** param_keys, const char** param_vals,
                         const int** out_stypes) {
  API_BEGIN();
  OpEntry& op = OpFromHandle(creator);
  NotNull(num_outputs, "num_outputs");
  NotNull(outputs, "outputs");
  std::vector<NDArray> out;
  const bool given = *outputs != nullptr && *num_outputs > 0;
  if (given)
    for (int i = 0; i < *num_outputs; ++i) out.push_back(ND((*outputs)[i]));
  Invoke(op, Inputs(num_inputs, inputs), KeyValues(num_params, param_keys, param_vals, op.name.c_str()), &out);
  if (out_stypes) {
    thread_local std::vector<int> stypes;
    stypes.clear();
    for (const NDArray& a : out) stypes.push_back(static_cast<int>(a.storage_type()));
    *out_stypes = stypes.data();
  }
  if (given) {
    // The arrays given now carry the recorded graph entry, when autograd recorded the call.
    for (int i = 0; i < *num_outputs; ++i) ND((*outputs)[i]) = out[static_cast<size_t>(i)];
  } else {
    std::vector<void*>& handles = ThreadHandles("MXImperativeInvoke");
    handles.clear();
    for (NDArray& a : out) handles.push_back(NewND(std::move(a)));
    *num_outputs = static_cast<int>(handles.size());
    *outputs = handles.data();
  }
  API_END();
}

}  // extern "C"
