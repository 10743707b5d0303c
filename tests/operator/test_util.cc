#include "test_util.h"

namespace weft::test {

AttrMap Norm(const std::string& op, const Attrs& attrs) {
  return OpRegistry::Get().Lookup(op).Normalize(AttrMap(attrs));
}

Inferred Infer(const std::string& op, const Attrs& attrs, std::vector<ShapeSlot> in, std::vector<ShapeSlot> out,
               std::vector<ShapeSlot> aux) {
  const OpDef& def = OpRegistry::Get().Lookup(op);
  AttrMap a = def.Normalize(AttrMap(attrs));
  in.resize(OpInputNames(def, a).size());
  out.resize(OpOutputNames(def, a).size());
  aux.resize(OpAuxNames(def, a).size());
  InferShapes(def, a, in, out, aux);
  return {in, out, aux};
}

void ExpectContains(const std::string& message, std::initializer_list<std::string> parts) {
  for (const std::string& p : parts) {
    EXPECT_NE(message.find(p), std::string::npos) << "message: " << message << "\nmissing: " << p;
  }
}

}  // namespace weft::test
