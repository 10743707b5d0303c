// CallFrontend: see frontend_callback.h. The Python C API is reached through dlsym, so the library
// neither links libpython nor needs its headers, and works the same outside Python.
#include "frontend_callback.h"

#include <dlfcn.h>

#include <mutex>

#include "weft/base.h"

namespace weft::mx {
namespace {

// The few functions of CPython's stable ABI used here.
struct PyApi {
  using GilState = int;
  int (*is_initialized)() = nullptr;
  GilState (*gil_ensure)() = nullptr;
  void (*gil_release)(GilState) = nullptr;
  int (*run_simple_string)(const char*) = nullptr;
  void* (*sys_get_object)(const char*) = nullptr;       // borrowed reference or NULL
  int (*sys_set_object)(const char*, void*) = nullptr;  // v may be NULL: deletes
  const char* (*unicode_as_utf8)(void*) = nullptr;
  bool ok = false;
};

template <typename F>
void Resolve(F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

// Wraps whatever sys.unraisablehook is now (unless it is already this wrapper): the wrapper records
// the exception text in sys._weft_callback_error, then calls the hook it wrapped, which prints it.
// Run before each callback: programs and test runners (pytest) replace the hook at any time.
constexpr const char* kInstallHook = R"(
import sys as _weft_sys
if not getattr(_weft_sys.unraisablehook, '_weft_records', False):
    def _weft_unraisable_hook(u, _previous=_weft_sys.unraisablehook, _sys=_weft_sys):
        import traceback
        _sys._weft_callback_error = ''.join(
            traceback.format_exception(u.exc_type, u.exc_value, u.exc_traceback)).strip()
        _previous(u)
    _weft_unraisable_hook._weft_records = True
    _weft_sys.unraisablehook = _weft_unraisable_hook
    del _weft_unraisable_hook
del _weft_sys
)";

PyApi& Api() {
  static PyApi api = [] {
    PyApi a;
    Resolve(a.is_initialized, "Py_IsInitialized");
    Resolve(a.gil_ensure, "PyGILState_Ensure");
    Resolve(a.gil_release, "PyGILState_Release");
    Resolve(a.run_simple_string, "PyRun_SimpleString");
    Resolve(a.sys_get_object, "PySys_GetObject");
    Resolve(a.sys_set_object, "PySys_SetObject");
    Resolve(a.unicode_as_utf8, "PyUnicode_AsUTF8");
    a.ok = a.is_initialized && a.gil_ensure && a.gil_release && a.run_simple_string && a.sys_get_object &&
           a.sys_set_object && a.unicode_as_utf8 && a.is_initialized();
    return a;
  }();
  return api;
}

// One callback's error at a time: the slot in sys is process-wide. Recursive: a callback may call
// into the library, which may call another callback.
std::recursive_mutex g_mu;

}  // namespace

void CallFrontend(const char* what, const std::function<void()>& fn) {
  PyApi& py = Api();
  if (!py.ok) {
    fn();
    return;
  }
  std::string error;
  {
    std::lock_guard lock(g_mu);
    const PyApi::GilState before = py.gil_ensure();
    const bool hooked = py.run_simple_string(kInstallHook) == 0;
    py.gil_release(before);
    if (!hooked) {
      fn();
      return;
    }
    fn();
    const PyApi::GilState g = py.gil_ensure();
    if (void* obj = py.sys_get_object("_weft_callback_error")) {
      if (const char* text = py.unicode_as_utf8(obj)) error = text;
      py.sys_set_object("_weft_callback_error", nullptr);
    }
    py.gil_release(g);
  }
  if (!error.empty()) Fail("{} raised:\n{}", what, error);
}

}  // namespace weft::mx
