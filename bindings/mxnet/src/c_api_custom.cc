// MXNet C API: operators written in the frontend's language (mx.operator.CustomOp).
#include <mutex>

#include "common.h"

using namespace weft;
using namespace weft::mx;

namespace {

// op_type -> the frontend's property creator, as registered.
struct CustomRegistry {
  std::mutex mu;
  std::map<std::string, CustomOpPropCreator> creators;
};
CustomRegistry& Registry() {
  static auto* r = new CustomRegistry;  // never destroyed: the frontend may register during exit
  return *r;
}

}  // namespace

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
