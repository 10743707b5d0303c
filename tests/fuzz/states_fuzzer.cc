// libFuzzer target for optimizer state files (KVStore::SaveOptimizerStates): an NDArray list whose
// "__meta__" record holds the optimizer's JSON. Any input must parse or raise weft::Error —
// never crash, recurse without bound or allocate more than the input holds. The JSON part is
// given to every optimizer type, as LoadOptimizerStates does after reading the file.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/untrusted.h"
#include "weft/ndarray_format.h"
#include "weft/optimizer.h"

namespace {

void LoadMeta(const std::string& text) {
  nlohmann::json meta = weft::detail::ParseJsonBounded(text, "fuzz __meta__");
  if (!meta.is_object()) return;
  for (const char* type : {"sgd", "nag", "adam", "rmsprop"}) {
    try {
      auto opt = weft::OptimizerRegistry::Create(type);
      nlohmann::json m = meta;
      if (!m.contains("type")) m["type"] = type;
      opt->Deserialize(m.dump());
      (void)opt->Serialize();
    } catch (const weft::Error&) {
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    weft::NDArrayListData list = weft::ParseNDArrayList({data, size}, "fuzz");
    for (size_t i = 0; i < list.names.size(); ++i) {
      if (list.names[i] != "__meta__" || list.arrays[i].none) continue;
      const auto& bytes = list.arrays[i].data;
      LoadMeta(std::string(bytes.begin(), bytes.end()));
    }
  } catch (const weft::Error&) {
  }
  // The JSON reader on its own too: most inputs never get past the list header above.
  try {
    LoadMeta(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const weft::Error&) {
  }
  return 0;
}
