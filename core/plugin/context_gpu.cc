// Context::gpu lives in the plugin module: which GPU-class device type exists depends on the
// plugins loaded.
#include "weft/context.h"
#include "weft/runtime.h"

namespace weft {

Context Context::gpu(int dev_id) {
  for (const std::string& type : Runtime::Get().DeviceTypes()) {
    if (type == "cuda" || type == "hip") return Context(type, dev_id);
  }
  return Context("cuda", dev_id);
}

}  // namespace weft
