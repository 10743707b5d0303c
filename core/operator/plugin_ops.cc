#include "operator/plugin_ops.h"

#include <array>

#include "operator/op_util.h"
#include "weft/internal/runtime.h"
#include "weft/logging.h"

namespace weft::opdef {
namespace {

std::vector<std::string> Names(const char* const* names, int32_t n, const char* what, const char* op) {
  WEFT_CHECK(n >= 0 && (n == 0 || names != nullptr), "plugin op '{}' has {} {} but no name array", op, n, what);
  std::vector<std::string> out;
  for (int32_t i = 0; i < n; ++i) {
    WEFT_CHECK(names[i] != nullptr, "plugin op '{}': {} name {} is NULL", op, what, i);
    out.emplace_back(names[i]);
  }
  return out;
}

weft_shape ToC(const ShapeSlot& s, const std::string& op, const std::string& slot) {
  weft_shape c{};
  if (!s) {
    c.ndim = -1;
    return c;
  }
  WEFT_CHECK(s->ndim() <= WEFT_MAX_NDIM, "{}: {} has {} axes; plugin ops take at most {}", op, slot, s->ndim(),
             WEFT_MAX_NDIM);
  c.ndim = static_cast<int32_t>(s->ndim());
  for (size_t i = 0; i < s->ndim(); ++i) c.dims[i] = (*s)[i];
  return c;
}

ShapeSlot FromC(const weft_shape& c, const std::string& op, const std::string& slot) {
  if (c.ndim < 0) return std::nullopt;
  WEFT_CHECK(c.ndim <= WEFT_MAX_NDIM, "{}: the plugin's shape inference returned {} axes for {}", op, c.ndim, slot);
  std::vector<int64_t> dims(c.dims, c.dims + c.ndim);
  for (int64_t& d : dims) d = d < 0 ? -1 : d;
  return Shape(std::move(dims));
}

// Everything a call into the plugin's inference needs, kept alive for the call.
struct InferCall {
  std::vector<std::string> keys, values;
  std::vector<weft_kv> kv;
  std::vector<weft_shape> in, out, aux;
  std::vector<int32_t> in_t, out_t, aux_t;
  weft_infer_args args{};

  InferCall(const std::string& op, const AttrMap& attrs, size_t ni, size_t no, size_t na) {
    for (const auto& [k, v] : attrs.values()) {
      if (k.starts_with("__")) continue;
      keys.push_back(k);
      values.push_back(v);
    }
    for (size_t i = 0; i < keys.size(); ++i) kv.push_back({keys[i].c_str(), values[i].c_str()});
    weft_shape unknown{};
    unknown.ndim = -1;
    in.assign(ni, unknown);
    out.assign(no, unknown);
    aux.assign(na, unknown);
    in_t.assign(ni, -1);
    out_t.assign(no, -1);
    aux_t.assign(na, -1);
    args.struct_size = WEFT_STRUCT_SIZE(weft_infer_args, aux_dtypes);
    args.op_name = op.c_str();
    args.num_attrs = static_cast<int32_t>(kv.size());
    args.attrs = kv.data();
    args.num_inputs = static_cast<int32_t>(ni);
    args.input_shapes = in.data();
    args.input_dtypes = in_t.data();
    args.num_outputs = static_cast<int32_t>(no);
    args.output_shapes = out.data();
    args.output_dtypes = out_t.data();
    args.num_aux = static_cast<int32_t>(na);
    args.aux_shapes = aux.data();
    args.aux_dtypes = aux_t.data();
  }
};

}  // namespace

OpDef AdaptPluginOpDef(const weft_op_def& c, void* state, const std::string& source) {
  WEFT_CHECK(c.name != nullptr && *c.name != '\0', "plugin '{}' has an op definition without a name", source);
  WEFT_CHECK(c.infer_shape != nullptr, "plugin op '{}' from '{}' has no infer_shape", c.name, source);
  OpDef d;
  d.name = c.name;
  d.description = c.description ? c.description : "";
  d.source = source;
  WEFT_CHECK(c.num_attrs >= 0 && (c.num_attrs == 0 || c.attrs != nullptr), "plugin op '{}' has a bad attribute list",
             c.name);
  for (int32_t i = 0; i < c.num_attrs; ++i) {
    const weft_attr_def& a = c.attrs[i];
    WEFT_CHECK(a.name != nullptr, "plugin op '{}': attribute {} has no name", c.name, i);
    AttrSpec s;
    s.name = a.name;
    s.type = a.type ? a.type : "string";
    if (a.default_value) s.default_value = a.default_value;
    if (WEFT_STRUCT_HAS(&a, weft_attr_def, doc) && a.doc) s.doc = a.doc;
    d.attrs.push_back(std::move(s));
  }
  const std::vector<std::string> in = Names(c.input_names, c.num_inputs, "inputs", c.name);
  const std::vector<std::string> out = Names(c.output_names, c.num_outputs, "outputs", c.name);
  const std::vector<std::string> aux = Names(c.aux_names, c.num_aux, "aux states", c.name);
  d.list_inputs = Fixed(in);
  d.list_outputs = Fixed(out);
  if (!aux.empty()) d.list_aux = Fixed(aux);

  const std::string what = fmt::format("{} (plugin '{}')", d.name, source);
  auto infer_shape = c.infer_shape;
  SetShapeFn(d, [=](ShapeIO& io) {
    InferCall call(what, io.attrs(), io.num_in(), io.num_out(), io.num_aux());
    call.args.op_name = c.name;
    call.args.def_data = c.def_data;
    for (size_t i = 0; i < io.num_in(); ++i) call.in[i] = ToC(io.in(i), what, "input '" + in[i] + "'");
    for (size_t i = 0; i < io.num_out(); ++i) call.out[i] = ToC(io.out(i), what, "output '" + out[i] + "'");
    for (size_t i = 0; i < io.num_aux(); ++i) call.aux[i] = ToC(io.aux(i), what, "aux state '" + aux[i] + "'");
    ThrowIfError(infer_shape(state, &call.args), what + " shape inference");
    // The plugin may fill unknown slots; anything it changes is checked like a core op's.
    for (size_t i = 0; i < io.num_in(); ++i)
      if (ShapeSlot s = FromC(call.in[i], what, in[i])) io.AssignIn(i, *s);
    for (size_t i = 0; i < io.num_out(); ++i)
      if (ShapeSlot s = FromC(call.out[i], what, out[i])) io.AssignOut(i, *s);
    for (size_t i = 0; i < io.num_aux(); ++i)
      if (ShapeSlot s = FromC(call.aux[i], what, aux[i])) io.AssignAux(i, *s);
  });
  if (c.infer_type) {
    auto infer_type = c.infer_type;
    const std::string name = d.name;
    d.infer_type = [=](const AttrMap& attrs, std::vector<int>& ti, std::vector<int>& to, std::vector<int>& ta) {
      InferCall call(what, attrs, ti.size(), to.size(), ta.size());
      call.args.op_name = c.name;
      call.args.def_data = c.def_data;
      std::copy(ti.begin(), ti.end(), call.in_t.begin());
      std::copy(to.begin(), to.end(), call.out_t.begin());
      std::copy(ta.begin(), ta.end(), call.aux_t.begin());
      ThrowIfError(infer_type(state, &call.args), what + " dtype inference");
      for (size_t i = 0; i < ti.size(); ++i) AssignType(what, "input", in[i], ti[i], call.in_t[i]);
      for (size_t i = 0; i < to.size(); ++i) AssignType(what, "output", out[i], to[i], call.out_t[i]);
      for (size_t i = 0; i < ta.size(); ++i) AssignType(what, "aux state", aux[i], ta[i], call.aux_t[i]);
    };
  }
  if (c.backward_op != nullptr && *c.backward_op != '\0') {
    d.grad = GradKind::kOp;
    d.backward_op = c.backward_op;
    d.backward_uses = c.backward_uses & (kUsesInputs | kUsesOutputs | kUsesAux);
  }
  WEFT_CHECK(c.num_inplace >= 0 && (c.num_inplace == 0 || c.inplace_pairs != nullptr),
             "plugin op '{}' has a bad in-place list", c.name);
  std::vector<std::pair<int, int>> pairs;
  for (int32_t i = 0; i < c.num_inplace; ++i) {
    int a = c.inplace_pairs[2 * i], b = c.inplace_pairs[2 * i + 1];
    WEFT_CHECK(a >= 0 && a < c.num_inputs && b >= 0 && b < c.num_outputs,
               "plugin op '{}': in-place pair ({}, {}) is out of range", c.name, a, b);
    pairs.emplace_back(a, b);
  }
  if (!pairs.empty()) d.inplace = InplacePairs(pairs);
  d.resources = c.resources & (kResourceTempSpace | kResourceRandom);
  d.is_loss = (c.flags & WEFT_OP_FLAG_LOSS) != 0;
  return d;
}

std::vector<std::string> RegisterPluginOpDefs(OpRegistry& registry, const std::vector<const weft_op_def*>& defs,
                                              void* plugin_state, const std::string& source) {
  std::vector<std::string> registered;
  for (const weft_op_def* c : defs) {
    if (c == nullptr) continue;
    try {
      OpDef d = AdaptPluginOpDef(*c, plugin_state, source);
      std::string name = d.name;
      registry.Register(std::move(d));
      registered.push_back(std::move(name));
    } catch (const Error& e) {
      LogWarning("plugin '{}': op definition skipped: {}", source, e.what());
    }
  }
  return registered;
}

void ConnectPluginOps(OpRegistry& registry) noexcept {
  try {
    internal::OnPluginLoaded(Runtime::Get(), [&registry](const Plugin& p) {
      const weft_operator_api* api = p.operator_api();
      if (api == nullptr || api->num_op_defs <= 0 || api->op_defs == nullptr) return;
      std::vector<const weft_op_def*> defs(api->op_defs, api->op_defs + api->num_op_defs);
      RegisterPluginOpDefs(registry, defs, p.state(), p.name());
    });
  } catch (const std::exception& e) {
    LogWarning("op definitions from plugins are unavailable: {}", e.what());
  }
}

}  // namespace weft::opdef
