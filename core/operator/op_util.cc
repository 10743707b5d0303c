#include "operator/op_util.h"

#include <algorithm>
#include <utility>

#include "weft/base.h"
#include "weft/sdk/ops/slice.hpp"

namespace weft::opdef {

void MarkInternal(OpDef& def, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    auto it = std::find_if(def.attrs.begin(), def.attrs.end(), [&](const AttrSpec& a) { return a.name == n; });
    if (it == def.attrs.end())
      throw Error(
          fmt::format("{}: no attribute '{}' to mark internal (declared ones: its parameter struct's)", def.name, n));
    it->internal = true;
  }
}

AttrSpec Req(std::string name, std::string type, std::string doc) {
  AttrSpec s;
  s.name = std::move(name);
  s.type = std::move(type);
  s.doc = std::move(doc);
  return s;
}

AttrSpec Opt(std::string name, std::string type, std::string default_value, std::string doc) {
  AttrSpec s = Req(std::move(name), std::move(type), std::move(doc));
  s.default_value = std::move(default_value);
  return s;
}

AttrSpec Enum(std::string name, std::vector<std::string> choices, std::string default_value, std::string doc) {
  AttrSpec s = Req(std::move(name), "enum", std::move(doc));
  if (!default_value.empty()) s.default_value = std::move(default_value);
  s.choices = std::move(choices);
  return s;
}

AttrSpec Ignored(AttrSpec spec) {
  spec.use = AttrSpec::Use::kIgnored;
  if (spec.doc.empty()) spec.doc = "accepted for MXNet compatibility; has no effect in weft";
  return spec;
}

AttrSpec DefaultOnly(AttrSpec spec) {
  spec.use = AttrSpec::Use::kDefaultOnly;
  return spec;
}

std::vector<AttrSpec> AttrSpecs(const std::vector<sdk::AttrDecl>& decls) {
  std::vector<AttrSpec> out;
  for (const sdk::AttrDecl& d : decls) {
    AttrSpec s = d.default_value ? Opt(d.name, d.type, *d.default_value, d.doc) : Req(d.name, d.type, d.doc);
    s.choices = d.choices;
    s.use = d.use;
    s.mxnet_type = d.mxnet_type;
    s.min = d.min;
    s.max = d.max;
    s.none_ok = d.none_ok;
    out.push_back(std::move(s));
  }
  return out;
}

NamesFn Fixed(std::vector<std::string> names) {
  return [names = std::move(names)](const AttrMap&) { return names; };
}

NamesFn Numbered(std::string prefix, std::string count_attr) {
  return [prefix = std::move(prefix), count_attr = std::move(count_attr)](const AttrMap& a) {
    const int64_t n = a.GetInt(count_attr);
    // Checked before anything is built: a 169-byte file with num_args=100000000 used to build
    // (and print) every name, 29 s and 5.7 GB.
    WEFT_CHECK(n >= 0 && n <= kMaxNumberedCount,
               "{}={} is out of range (0..{}); the file or the attributes are corrupt", count_attr, n,
               kMaxNumberedCount);
    std::vector<std::string> names;
    names.reserve(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) names.push_back(prefix + std::to_string(i));
    return names;
  };
}

bool FullyKnown(const ShapeSlot& s) {
  if (!s) return false;
  for (int64_t d : *s)
    if (d < 0) return false;
  return true;
}

Shape UnknownShape(size_t ndim) { return Shape(std::vector<int64_t>(ndim, -1)); }

int64_t ProdOrUnknown(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) {
    if (s[i] < 0) return -1;
    p *= s[i];
  }
  return p;
}

std::string SlotString(const ShapeSlot& s) { return s ? s->ToString() : std::string("unknown"); }

ShapeIO::ShapeIO(std::string_view op, const AttrMap& attrs, std::vector<ShapeSlot>& in, std::vector<ShapeSlot>& out,
                 std::vector<ShapeSlot>& aux, std::vector<std::string> in_names, std::vector<std::string> out_names,
                 std::vector<std::string> aux_names)
    : op_(op),
      attrs_(attrs),
      in_(in),
      out_(out),
      aux_(aux),
      in_names_(std::move(in_names)),
      out_names_(std::move(out_names)),
      aux_names_(std::move(aux_names)) {}

void ShapeIO::Fail(const std::string& message) const { weft::Fail("{}: {}", op_, message); }

void ShapeIO::Assign(ShapeSlot& slot, const Shape& s, std::string_view kind, std::string_view name) {
  if (!slot) {
    slot = s;
    return;
  }
  bool ok = slot->ndim() == s.ndim();
  Shape merged = *slot;
  for (size_t i = 0; ok && i < s.ndim(); ++i) {
    if (merged[i] < 0) {
      merged[i] = s[i];
    } else if (s[i] >= 0 && s[i] != merged[i]) {
      ok = false;
    }
  }
  if (!ok) {
    weft::Fail("{}: shape mismatch for {} '{}': has {}, expected {}", op_, kind, name, slot->ToString(), s.ToString());
  }
  slot = std::move(merged);
}

void SetShapeFn(OpDef& def, ShapeFn fn) {
  NamesFn li = def.list_inputs, lo = def.list_outputs, la = def.list_aux;
  std::string name = def.name;
  def.infer_shape = [=](const AttrMap& attrs, std::vector<ShapeSlot>& in, std::vector<ShapeSlot>& out,
                        std::vector<ShapeSlot>& aux) {
    std::vector<std::string> in_names = li(attrs), out_names = lo(attrs);
    std::vector<std::string> aux_names = la ? la(attrs) : std::vector<std::string>{};
    WEFT_CHECK(in.size() == in_names.size() && out.size() == out_names.size() && aux.size() == aux_names.size(),
               "{}: shape inference got {} inputs, {} outputs, {} aux states; the op has {}, {}, {}", name, in.size(),
               out.size(), aux.size(), in_names.size(), out_names.size(), aux_names.size());
    ShapeIO io(name, attrs, in, out, aux, std::move(in_names), std::move(out_names), std::move(aux_names));
    fn(io);
  };
}

void SameShapeAll(ShapeIO& io) {
  // Merge everything known into one shape first (so the error names the slot that disagrees
  // with the earlier ones), then spread it.
  ShapeSlot merged;
  for (size_t i = 0; i < io.num_in(); ++i)
    if (io.in(i)) {
      if (!merged) merged = io.in(i);
      io.AssignIn(i, *merged);
      merged = io.in(i);
    }
  for (size_t i = 0; i < io.num_out(); ++i)
    if (io.out(i)) {
      if (!merged) merged = io.out(i);
      io.AssignOut(i, *merged);
      merged = io.out(i);
    }
  for (size_t i = 0; i < io.num_aux(); ++i)
    if (io.aux(i)) {
      if (!merged) merged = io.aux(i);
      io.AssignAux(i, *merged);
      merged = io.aux(i);
    }
  if (!merged) return;
  for (size_t i = 0; i < io.num_in(); ++i) io.AssignIn(i, *merged);
  for (size_t i = 0; i < io.num_out(); ++i) io.AssignOut(i, *merged);
  for (size_t i = 0; i < io.num_aux(); ++i) io.AssignAux(i, *merged);
}

Shape SlicedShape(const ShapeIO& io, const Shape& data) {
  std::vector<sdk::SliceRange> r;
  try {
    r = sdk::SliceRanges(sdk::ParseParams<sdk::SliceParam>(io.attrs()), data.dims());
  } catch (const std::exception& e) {
    io.Fail(fmt::format("input {}: {}", data.ToString(), e.what()));
  }
  Shape out = data;
  for (size_t i = 0; i < r.size(); ++i) out[i] = data[i] < 0 ? -1 : r[i].len;
  return out;
}

int64_t NormalizeAxis(const ShapeIO& io, int64_t axis, int64_t ndim, std::string_view attr) {
  if (axis < -ndim || axis >= ndim) {
    io.Fail(fmt::format("{}={} is out of range for a {}-d input (valid: {} to {})", attr, axis, ndim, -ndim, ndim - 1));
  }
  return axis < 0 ? axis + ndim : axis;
}

void AssignType(std::string_view op, std::string_view kind, std::string_view name, int& slot, int dtype) {
  if (dtype < 0) return;
  if (slot < 0) {
    slot = dtype;
    return;
  }
  if (slot != dtype) {
    auto nm = [](int t) {
      return IsValidDType(t) ? std::string(DTypeName(static_cast<DType>(t))) : fmt::format("dtype {}", t);
    };
    weft::Fail("{}: dtype mismatch for {} '{}': has {}, expected {}", op, kind, name, nm(slot), nm(dtype));
  }
}

InplaceFn InplacePairs(std::vector<std::pair<int, int>> pairs) {
  return [pairs = std::move(pairs)](const AttrMap&) { return pairs; };
}

// MXNet's ReduceAxesShapeImpl: `exclude` reduces the axes not listed.
Shape ReducedShape(const ShapeIO& io, const Shape& in, std::vector<int64_t> axes, bool keepdims, bool exclude) {
  const std::vector<int64_t> given = axes;
  const size_t nd = in.ndim();
  if (axes.empty() && exclude) return in;
  if (axes.empty()) return keepdims ? Shape(std::vector<int64_t>(nd, 1)) : Shape{1};
  for (int64_t& a : axes) a = NormalizeAxis(io, a, static_cast<int64_t>(nd), "axis");
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
    io.Fail(fmt::format("axis {} names an axis twice", sdk::FormatTuple(given)));
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < nd; ++i) {
    const bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i)) != exclude;
    if (!reduced) {
      out.push_back(in[i]);
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  if (out.empty()) out.push_back(1);
  return Shape(std::move(out));
}

}  // namespace weft::opdef
