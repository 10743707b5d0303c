#include <new>

#include "error_object.h"
#include "weft/base.h"
#include "weft/internal/error.h"

namespace weft {
namespace {
// Returned when an error object itself cannot be allocated (host.h promises error_create never
// returns NULL); never freed.
weft_error* StaticOutOfMemory() {
  static weft_error oom{WEFT_ERR_OUT_OF_MEMORY, "out of host memory while reporting an error"};
  return &oom;
}
}  // namespace

weft_error* CreateError(int32_t code, std::string_view message) {
  try {
    return new weft_error{code, std::string(message)};
  } catch (...) {
    return StaticOutOfMemory();
  }
}

int32_t ErrorCode(const weft_error* err) { return err ? err->code : 0; }

std::string_view ErrorMessage(const weft_error* err) {
  return err ? std::string_view(err->message) : std::string_view();
}

void ReleaseError(weft_error* err) {
  if (err && err != StaticOutOfMemory()) delete err;
}

void ThrowIfError(weft_error* err, std::string_view what) {
  if (!err) return;
  std::string message = fmt::format("{}: {}", what, err->message);
  bool oom = err->code == WEFT_ERR_OUT_OF_MEMORY;
  ReleaseError(err);
  if (oom) throw OutOfMemoryError(message);
  throw Error(message);
}

}  // namespace weft
