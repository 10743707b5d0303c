// Symbol::SimpleBind / Symbol::Bind (mxnet-cpp's), defined here because they make Executors.
#include <fmt/ranges.h>

#include <algorithm>

#include "weft/executor.h"
#include "weft/symbol.h"

namespace weft {

Executor* Symbol::Bind(const Context& context, const std::vector<NDArray>& arg_arrays,
                       const std::vector<NDArray>& grad_arrays, const std::vector<OpReqType>& grad_reqs,
                       const std::vector<NDArray>& aux_arrays, const std::map<std::string, Context>& group_to_ctx,
                       Executor* shared_exec) const {
  return new Executor(*this, context, arg_arrays, grad_arrays, grad_reqs, aux_arrays, group_to_ctx, shared_exec);
}

Executor* Symbol::SimpleBind(const Context& context, const std::map<std::string, NDArray>& args_map,
                             const std::map<std::string, NDArray>& arg_grad_store,
                             const std::map<std::string, OpReqType>& grad_req_type,
                             const std::map<std::string, NDArray>& aux_map) const {
  const std::vector<std::string> args = ListArguments(), auxs = ListAuxiliaryStates();
  auto check = [](const char* what, const auto& m, const std::vector<std::string>& names) {
    for (const auto& [name, v] : m) {
      (void)v;
      WEFT_CHECK(std::find(names.begin(), names.end(), name) != names.end(),
                 "Symbol::SimpleBind: {} names '{}', which the symbol does not have; it has: {}", what, name,
                 fmt::join(names, ", "));
    }
  };
  check("args_map", args_map, args);
  check("arg_grad_store", arg_grad_store, args);
  check("grad_req_type", grad_req_type, args);
  check("aux_map", aux_map, auxs);
  std::map<std::string, Shape> shapes;
  std::map<std::string, int> types;
  for (const auto* m : {&args_map, &aux_map}) {
    for (const auto& [name, a] : *m) {
      WEFT_CHECK(!a.is_none(), "Symbol::SimpleBind: the array given for '{}' is a none array", name);
      shapes[name] = a.GetShape();
      types[name] = static_cast<int>(a.GetDType());
    }
  }
  ShapeInference si = InferShapePartial(shapes);
  WEFT_CHECK(si.complete, "Symbol::SimpleBind: cannot infer the shapes of {}; give arrays for them in args_map",
             fmt::join(si.unknown_args, ", "));
  TypeInference ti = InferTypePartial(types);
  auto dtype_of = [](int t) { return t < 0 ? DType::kFloat32 : static_cast<DType>(t); };
  auto zeros = [&](const Shape& s, int t) {
    NDArray a(s, context, false, dtype_of(t));
    a = 0.0f;
    return a;
  };
  auto ends_with = [](const std::string& s, const char* suffix) { return s.ends_with(suffix); };
  std::vector<NDArray> a, g, x;
  std::vector<OpReqType> reqs;
  for (size_t i = 0; i < args.size(); ++i) {
    auto it = args_map.find(args[i]);
    a.push_back(it != args_map.end() ? it->second : zeros(*si.arg_shapes[i], ti.arg_types[i]));
    auto gt = arg_grad_store.find(args[i]);
    g.push_back(gt != arg_grad_store.end() ? gt->second : zeros(*si.arg_shapes[i], ti.arg_types[i]));
    auto rt = grad_req_type.find(args[i]);
    reqs.push_back(rt != grad_req_type.end()                                   ? rt->second
                   : ends_with(args[i], "data") || ends_with(args[i], "label") ? kNullOp
                                                                               : kWriteTo);
  }
  for (size_t i = 0; i < auxs.size(); ++i) {
    auto it = aux_map.find(auxs[i]);
    x.push_back(it != aux_map.end() ? it->second : zeros(*si.aux_shapes[i], ti.aux_types[i]));
  }
  return new Executor(*this, context, a, g, reqs, x);
}

}  // namespace weft
