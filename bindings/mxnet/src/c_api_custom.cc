// MXNet C API: operators written in the frontend's language (mx.operator.CustomOp / CustomOpProp).
//
// The frontend registers a property creator per op_type (MXCustomOpRegister). weft's "Custom" op
// is a host operator (weft/host_op.h) whose every function asks the property object made for the
// node's attributes: its inputs, outputs and aux states, shape and dtype inference, and the
// operator it creates for a node, whose forward and backward then run on weft's host-operator
// threads with the node's arrays (the frontend's code may run NDArray operations and wait).
// Protocol (MXNet's include/mxnet/c_api.h): callbacks are C functions returning nonzero on
// success; lists come back NULL-terminated; every NDArray handle passed in is the frontend's to free.
#include <mutex>

#include "common.h"
#include "custom_op.h"
#include "frontend_callback.h"
#include "weft/host_op.h"

using namespace weft;
using namespace weft::mx;

namespace {

enum PropCallback {
  kPropDelete,
  kPropListArguments,
  kPropListOutputs,
  kPropListAuxiliaryStates,
  kPropInferShape,
  kPropDeclareBackwardDependency,
  kPropCreateOperator,
  kPropInferType,
};
enum OpCallback { kOpDelete, kOpForward, kOpBackward };
// Tags of the arrays handed to forward/backward.
enum Tag { kInData = 0, kOutData = 1, kInGrad = 2, kOutGrad = 3, kAux = 4 };

using ListFn = int (*)(char***, void*);
using InferShapeFn = int (*)(int, int*, int**, void*);
using InferTypeFn = int (*)(int, int*, void*);
using CreateFn = int (*)(const char*, int, unsigned**, const int*, const int*, MXCallbackList*, void*);
using FBFn = int (*)(int, void**, int*, const int*, const int, void*);
using DelFn = int (*)(void*);

struct CustomRegistry {
  std::mutex mu;
  std::map<std::string, CustomOpPropCreator> creators;
};
CustomRegistry& Registry() {
  static auto* r = new CustomRegistry;  // never destroyed: the frontend may register during exit
  return *r;
}

template <typename F>
F Fn(const MXCallbackList& cb, int index, const char* what) {
  if (index >= cb.num_callbacks || cb.callbacks[index] == nullptr)
    Fail("Custom: the frontend gave no {} callback", what);
  return CallbackAs<F>(cb.callbacks[index]);
}

// One CustomOpProp instance of the frontend.
class Prop {
 public:
  Prop(const std::string& op_type, const HostOpAttrs& attrs) : op_type_(op_type) {
    CustomOpPropCreator creator;
    {
      std::lock_guard lock(Registry().mu);
      auto it = Registry().creators.find(op_type);
      if (it == Registry().creators.end()) {
        Fail("Custom: no operator registered as op_type '{}' (register it with mx.operator.register)", op_type);
      }
      creator = it->second;
    }
    std::vector<const char*> keys, vals;
    for (const auto& [k, v] : attrs) {
      if (k == "op_type") continue;
      keys.push_back(k.c_str());
      vals.push_back(v.c_str());
    }
    if (!creator(op_type.c_str(), static_cast<int>(keys.size()), keys.data(), vals.data(), &cb_)) {
      Fail("Custom: creating the property of op_type '{}' failed (the frontend printed why)", op_type);
    }
  }
  ~Prop() {
    if (cb_.num_callbacks > kPropDelete && cb_.callbacks[kPropDelete])
      CallbackAs<DelFn>(cb_.callbacks[kPropDelete])(cb_.contexts[kPropDelete]);
  }
  Prop(const Prop&) = delete;
  Prop& operator=(const Prop&) = delete;

  std::vector<std::string> List(int which, const char* what) const {
    char** out = nullptr;
    if (!Fn<ListFn>(cb_, which, what)(&out, cb_.contexts[which])) Fail("Custom '{}': {} failed", op_type_, what);
    std::vector<std::string> names;
    for (char** p = out; p && *p; ++p) names.emplace_back(*p);
    return names;
  }

  // shapes: inputs, outputs, aux (known inputs); fills all.
  void InferShape(std::vector<std::vector<int>>& shapes) const {
    std::vector<int> ndims;
    std::vector<int*> ptrs;
    for (auto& s : shapes) {
      ndims.push_back(static_cast<int>(s.size()));
      ptrs.push_back(s.data());
    }
    if (!Fn<InferShapeFn>(cb_, kPropInferShape, "infer_shape")(static_cast<int>(shapes.size()), ndims.data(),
                                                               ptrs.data(), cb_.contexts[kPropInferShape])) {
      Fail("Custom '{}': infer_shape failed (the frontend printed why)", op_type_);
    }
    for (size_t i = 0; i < shapes.size(); ++i) shapes[i].assign(ptrs[i], ptrs[i] + ndims[i]);
  }

  void InferType(std::vector<int>& types) const {
    if (!Fn<InferTypeFn>(cb_, kPropInferType, "infer_type")(static_cast<int>(types.size()), types.data(),
                                                            cb_.contexts[kPropInferType])) {
      Fail("Custom '{}': infer_type failed (the frontend printed why)", op_type_);
    }
  }

  MXCallbackList CreateOperator(const std::string& ctx, const std::vector<Shape>& shapes,
                                const std::vector<DType>& dtypes) const {
    std::vector<std::vector<unsigned>> dims;
    std::vector<unsigned*> ptrs;
    std::vector<int> ndims, types;
    for (size_t i = 0; i < shapes.size(); ++i) {
      dims.emplace_back(shapes[i].begin(), shapes[i].end());
      ndims.push_back(static_cast<int>(shapes[i].ndim()));
      types.push_back(static_cast<int>(dtypes[i]));
    }
    for (auto& d : dims) ptrs.push_back(d.data());
    MXCallbackList op{};
    if (!Fn<CreateFn>(cb_, kPropCreateOperator, "create_operator")(ctx.c_str(), static_cast<int>(shapes.size()),
                                                                   ptrs.data(), ndims.data(), types.data(), &op,
                                                                   cb_.contexts[kPropCreateOperator])) {
      Fail("Custom '{}': create_operator failed (the frontend printed why)", op_type_);
    }
    return op;
  }

  const std::string& op_type() const { return op_type_; }

 private:
  std::string op_type_;
  MXCallbackList cb_{};
};

// One property object per distinct attribute set, kept for the process (as MXNet keeps one per node).
std::shared_ptr<Prop> PropFor(const HostOpAttrs& attrs) {
  static std::mutex mu;
  static auto* cache = new std::map<HostOpAttrs, std::shared_ptr<Prop>>;
  auto it = attrs.find("op_type");
  if (it == attrs.end() || it->second.empty()) Fail("Custom: the attribute op_type is required");
  std::lock_guard lock(mu);
  auto& slot = (*cache)[attrs];
  if (!slot) slot = std::make_shared<Prop>(it->second, attrs);
  return slot;
}

// MXNet's text of a device for the frontend ("cpu(0)", "gpu(1)").
std::string ContextText(const Context& ctx) {
  const auto [type, id] = FromContext(ctx);
  return fmt::format("{}({})", type == kDevCPU ? "cpu" : "gpu", id);
}

class Kernel : public HostOpKernel {
 public:
  Kernel(std::shared_ptr<Prop> prop, MXCallbackList op) : prop_(std::move(prop)), op_(op) {}
  ~Kernel() override {
    if (op_.num_callbacks > kOpDelete && op_.callbacks[kOpDelete])
      CallbackAs<DelFn>(op_.callbacks[kOpDelete])(op_.contexts[kOpDelete]);
  }

  void Forward(bool is_train, const std::vector<NDArray>& in, const std::vector<NDArray>& out,
               const std::vector<OpReqType>& req, const std::vector<NDArray>& aux) override {
    Call(kOpForward, "forward", is_train, {{&in, kInData}, {&out, kOutData}, {&aux, kAux}}, req);
  }

  void Backward(bool is_train, const std::vector<NDArray>& out_grad, const std::vector<NDArray>& in,
                const std::vector<NDArray>& out, const std::vector<NDArray>& in_grad, const std::vector<OpReqType>& req,
                const std::vector<NDArray>& aux) override {
    Call(kOpBackward, "backward", is_train,
         {{&out_grad, kOutGrad}, {&in, kInData}, {&out, kOutData}, {&in_grad, kInGrad}, {&aux, kAux}}, req);
  }

 private:
  void Call(int which, const char* what, bool is_train,
            const std::vector<std::pair<const std::vector<NDArray>*, Tag>>& groups, const std::vector<OpReqType>& req) {
    std::vector<void*> handles;
    std::vector<int> tags;
    for (const auto& [arrays, tag] : groups) {
      for (const NDArray& a : *arrays) {
        handles.push_back(NewND(a));  // the frontend's NDArray wrapper frees it
        tags.push_back(tag);
      }
    }
    std::vector<int> reqs(req.begin(), req.end());
    if (!Fn<FBFn>(op_, which, what)(static_cast<int>(handles.size()), handles.data(), tags.data(), reqs.data(),
                                    is_train ? 1 : 0, op_.contexts[which])) {
      Fail("Custom '{}': {} failed (the frontend printed the traceback)", prop_->op_type(), what);
    }
  }

  std::shared_ptr<Prop> prop_;
  MXCallbackList op_;
};

void InferShapes(const HostOpAttrs& attrs, std::vector<std::optional<Shape>>& in,
                 std::vector<std::optional<Shape>>& out, std::vector<std::optional<Shape>>& aux) {
  for (const auto& s : in)
    if (!s) return;  // the frontend's infer_shape needs every input's shape
  std::vector<std::vector<int>> shapes;
  for (const auto& s : in) shapes.emplace_back(s->begin(), s->end());
  shapes.resize(in.size() + out.size() + aux.size());
  PropFor(attrs)->InferShape(shapes);
  auto put = [&](std::vector<std::optional<Shape>>& slots, size_t first) {
    for (size_t i = 0; i < slots.size(); ++i)
      slots[i] = Shape(std::vector<int64_t>(shapes[first + i].begin(), shapes[first + i].end()));
  };
  put(in, 0);
  put(out, in.size());
  put(aux, in.size() + out.size());
}

void InferTypes(const HostOpAttrs& attrs, std::vector<int>& in, std::vector<int>& out, std::vector<int>& aux) {
  for (int t : in)
    if (t < 0) return;  // the frontend's infer_type needs every input's dtype
  std::vector<int> types = in;
  types.resize(in.size() + out.size() + aux.size(), -1);
  PropFor(attrs)->InferType(types);
  std::copy(types.begin(), types.begin() + static_cast<std::ptrdiff_t>(in.size()), in.begin());
  std::copy(types.begin() + static_cast<std::ptrdiff_t>(in.size()),
            types.begin() + static_cast<std::ptrdiff_t>(in.size() + out.size()), out.begin());
  std::copy(types.begin() + static_cast<std::ptrdiff_t>(in.size() + out.size()), types.end(), aux.begin());
}

}  // namespace

namespace weft::mx {

void RegisterCustomOp() {
  HostOpDef def;
  def.name = "Custom";
  def.description =
      "An operator written in the frontend's language: op_type names the class registered with "
      "mx.operator.register; the other keywords go to its CustomOpProp.";
  OpAttrInfo op_type;
  op_type.name = "op_type";
  op_type.type = "string";
  op_type.doc = "the registered name of the custom operator";
  def.attrs = {op_type};
  def.any_attrs = true;
  def.list_inputs = [](const HostOpAttrs& a) { return PropFor(a)->List(kPropListArguments, "list_arguments"); };
  def.list_outputs = [](const HostOpAttrs& a) { return PropFor(a)->List(kPropListOutputs, "list_outputs"); };
  def.list_aux = [](const HostOpAttrs& a) {
    return PropFor(a)->List(kPropListAuxiliaryStates, "list_auxiliary_states");
  };
  def.infer_shape = InferShapes;
  def.infer_type = InferTypes;
  def.create = [](const HostOpAttrs& a, const Context& ctx, const std::vector<Shape>& shapes,
                  const std::vector<DType>& dtypes) -> std::unique_ptr<HostOpKernel> {
    std::shared_ptr<Prop> prop = PropFor(a);
    const MXCallbackList op = prop->CreateOperator(ContextText(ctx), shapes, dtypes);
    return std::make_unique<Kernel>(std::move(prop), op);
  };
  RegisterHostOp(std::move(def));
}

}  // namespace weft::mx

extern "C" {

// Registers `creator` for Custom(op_type=`op_type`). Registering a type twice replaces the creator
// (MXNet's frontend re-registers when a module is reloaded).
int MXCustomOpRegister(const char* op_type, CustomOpPropCreator creator) {
  API_BEGIN();
  std::lock_guard lock(Registry().mu);
  Registry().creators[NotNull(op_type, "op_type")] = NotNull(creator, "creator");
  API_END();
}

}  // extern "C"
