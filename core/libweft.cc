// libweft is the union of the core modules (linked whole-archive); this file only carries the
// library's version, so that `strings libweft.so | grep weft-core` identifies a build.
#include "weft/base.h"

namespace weft {
const char* CoreVersion() noexcept { return WEFT_CORE_VERSION_STRING; }
}  // namespace weft
