// Ops without inputs that make arrays from their attributes: _zeros, _ones, _full, _arange (what
// mx.sym.zeros / ones / full / arange write into symbol JSON), _linspace and _eye (mx.nd.linspace,
// mx.nd.eye). Shape rules are MXNet 1.9's
// (src/operator/tensor/init_op.h).
#include <algorithm>
#include <cmath>

#include "operator/defs/builtin.h"
#include "operator/op_util.h"

namespace weft::opdef {
namespace {

const std::vector<std::string> kInitDTypes = {"float32", "float64", "float16", "bfloat16", "uint8",
                                              "int8",    "int32",   "int64",   "bool"};

// MXNet's `ctx` and `dtype`, after the op's own attributes as MXNet declares them (its Python
// functions take the attributes by position in that order: mx.nd.zeros(shape, ctx, dtype)).
// `refused` are the dtypes MXNet's parameter struct does not list for the op.
void AddCtxDType(OpDef& d, const std::vector<std::string>& refused) {
  d.attrs.push_back(Ignored(Opt("ctx", "string", "", "device the array is made on (the executor's context is used)")));
  std::vector<std::string> dtypes = kInitDTypes;
  for (const std::string& r : refused) dtypes.erase(std::find(dtypes.begin(), dtypes.end(), r));
  d.attrs.push_back(Enum("dtype", dtypes, "float32", "output dtype"));
}

OpDef NoInput(std::string name, std::string description) {
  OpDef d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.list_inputs = Fixed({});
  d.list_outputs = Fixed({"output"});
  d.infer_type = [](const AttrMap& a, std::vector<int>&, std::vector<int>& out, std::vector<int>&) {
    AssignType("init", "output", "output", out[0], static_cast<int>(DTypeFromName(a.GetString("dtype"))));
  };
  d.grad = GradKind::kNone;
  return d;
}

OpDef Fill(std::string name, std::string what) {
  OpDef d = NoInput(name, "An array of `shape` filled with " + what + ".");
  d.attrs.push_back(Opt("shape", "shape", "()", "output shape"));
  AddCtxDType(d, {});
  if (name == "_full") d.attrs.push_back(Req("value", "float", "fill value"));
  SetShapeFn(d, [](ShapeIO& io) {
    std::vector<int64_t> s = io.attrs().GetTuple("shape", {});
    for (int64_t& e : s) {
      if (e < 0) io.Fail(fmt::format("shape {} has a negative extent", sdk::FormatTuple(s)));
      // MXNet 1.x (not numpy mode): an extent of 0 is unknown, inferred from the graph, as in the
      // begin states of mx.rnn cells, zeros(shape=(0, num_hidden)), whose batch comes from data.
      if (e == 0) e = -1;
    }
    io.AssignOut(0, Shape(s));
  });
  return d;
}

// MXNet's RangeParam: [start, stop) by step, each value `repeat` times; stop None = [0, start).
int64_t ArangeLength(const AttrMap& a) {
  double start = a.GetFloat("start"), step = a.GetFloat("step", 1.0);
  std::optional<double> stop = a.GetOptionalFloat("stop");
  if (!stop) {
    stop = start;
    start = 0;
  }
  WEFT_CHECK(step != 0, "step must not be 0");
  const double n = std::ceil((*stop - start) / step);
  return n <= 0 ? 0 : static_cast<int64_t>(n) * a.GetInt("repeat", 1);
}

OpDef Arange() {
  OpDef d = NoInput("_arange",
                    "start, start + step, … below stop (above it for a negative step; stop None counts from 0 to "
                    "start), each value `repeat` times.");
  d.attrs.push_back(Req("start", "float", "first value (the end when stop is None)"));
  d.attrs.push_back(Opt("stop", "float", "None", "end (exclusive)"));
  d.attrs.push_back(Opt("step", "float", "1", "spacing"));
  d.attrs.push_back(Opt("repeat", "int", "1", "copies of each value"));
  d.attrs.push_back(DefaultOnly(Opt("infer_range", "bool", "False", "take the length from the graph (unsupported)")));
  AddCtxDType(d, {"bool"});
  d.validate = [](const AttrMap& a) {
    WEFT_CHECK(a.GetInt("repeat") >= 1, "repeat must be at least 1, got {}", a.GetInt("repeat"));
    ArangeLength(a);
  };
  SetShapeFn(d, [](ShapeIO& io) { io.AssignOut(0, Shape{ArangeLength(io.attrs())}); });
  return d;
}

// MXNet's LinspaceParam (its registration lists RangeParam's fields, but parses these).
OpDef Linspace() {
  OpDef d = NoInput("_linspace",
                    "num values evenly spaced from start to stop (stop included when endpoint): element i = start + "
                    "i·(stop − start) / (num − endpoint), computed in double.");
  d.attrs.push_back(Req("start", "float", "first value"));
  d.attrs.push_back(Req("stop", "float", "last value (or the end when endpoint is False)"));
  d.attrs.push_back(Req("num", "int", "number of values"));
  d.attrs.push_back(Opt("endpoint", "bool", "True", "whether stop is the last value"));
  AddCtxDType(d, {"bool"});
  d.validate = [](const AttrMap& a) { WEFT_CHECK(a.GetInt("num") >= 0, "num must be non-negative"); };
  SetShapeFn(d, [](ShapeIO& io) { io.AssignOut(0, Shape{io.attrs().GetInt("num")}); });
  return d;
}

OpDef Eye() {
  OpDef d = NoInput("_eye", "An N × M array (M = 0: N × N) with ones on diagonal k (k > 0 above the main one).");
  d.attrs.push_back(Req("N", "int", "rows"));
  d.attrs.push_back(Opt("M", "int", "0", "columns; 0 = N"));
  d.attrs.push_back(Opt("k", "int", "0", "diagonal offset"));
  AddCtxDType(d, {"bfloat16", "bool"});
  d.validate = [](const AttrMap& a) {
    WEFT_CHECK(a.GetInt("N") >= 0 && a.GetInt("M") >= 0, "N and M must be non-negative");
  };
  SetShapeFn(d, [](ShapeIO& io) {
    const int64_t n = io.attrs().GetInt("N"), m = io.attrs().GetInt("M");
    io.AssignOut(0, Shape{n, m > 0 ? m : n});
  });
  return d;
}

}  // namespace

void RegisterInitOps(OpRegistry& r) {
  r.Register(Fill("_zeros", "zeros"));
  r.Register(Fill("_ones", "ones"));
  r.Register(Fill("_full", "`value`"));
  r.Register(Arange());
  r.Register(Linspace());
  r.Register(Eye());
}

}  // namespace weft::opdef
