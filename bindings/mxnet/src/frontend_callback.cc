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
  void* (*dict_new)() = nullptr;
  int (*dict_set_item_string)(void*, const char*, void*) = nullptr;
  void* (*dict_get_item_string)(void*, const char*) = nullptr;  // borrowed
  void* (*unicode_from_string_and_size)(const char*, ptrdiff_t) = nullptr;
  void* (*run_string_flags)(const char*, int, void*, void*, void*) = nullptr;
  void (*dec_ref)(void*) = nullptr;
  void (*err_clear)() = nullptr;
  void* (*get_attr_string)(void*, const char*) = nullptr;  // new reference or NULL (error set)
  int (*is_true)(void*) = nullptr;
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
    Resolve(a.dict_new, "PyDict_New");
    Resolve(a.dict_set_item_string, "PyDict_SetItemString");
    Resolve(a.dict_get_item_string, "PyDict_GetItemString");
    Resolve(a.unicode_from_string_and_size, "PyUnicode_FromStringAndSize");
    Resolve(a.run_string_flags, "PyRun_StringFlags");
    Resolve(a.dec_ref, "Py_DecRef");
    Resolve(a.err_clear, "PyErr_Clear");
    Resolve(a.get_attr_string, "PyObject_GetAttrString");
    Resolve(a.is_true, "PyObject_IsTrue");
    a.ok = a.is_initialized && a.gil_ensure && a.gil_release && a.run_simple_string && a.sys_get_object &&
           a.sys_set_object && a.unicode_as_utf8 && a.dec_ref && a.err_clear && a.get_attr_string && a.is_true &&
           a.is_initialized();
    return a;
  }();
  return api;
}

// Whether sys.unraisablehook is kInstallHook's wrapper (GIL held): read through the C API, since
// running kInstallHook compiles it each time, which cost more than the callback itself (a KVStore
// updater runs at every push).
bool HookInstalled(PyApi& py) {
  void* hook = py.sys_get_object("unraisablehook");
  if (!hook) return false;
  void* flag = py.get_attr_string(hook, "_weft_records");
  if (!flag) {
    py.err_clear();  // AttributeError: some other hook
    return false;
  }
  const int yes = py.is_true(flag);
  py.dec_ref(flag);
  if (yes < 0) py.err_clear();
  return yes > 0;
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
    const bool hooked = HookInstalled(py) || py.run_simple_string(kInstallHook) == 0;
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

std::string EvalPython(const char* what, const std::string& code, const std::string& input) {
  PyApi& py = Api();
  if (!py.ok || !py.dict_new || !py.dict_set_item_string || !py.dict_get_item_string ||
      !py.unicode_from_string_and_size || !py.run_string_flags || !py.dec_ref || !py.err_clear) {
    Fail("{}: needs the Python interpreter of the frontend, and this process has none", what);
  }
  // The code runs inside try/except so that its error comes back as text.
  std::string wrapped = "try:\n";
  for (size_t start = 0; start < code.size();) {
    size_t end = code.find('\n', start);
    if (end == std::string::npos) end = code.size();
    wrapped += "    " + code.substr(start, end - start) + "\n";
    start = end + 1;
  }
  wrapped += "except BaseException:\n    import traceback\n    _weft_error = traceback.format_exc()\n";
  constexpr int kPyFileInput = 257;  // Py_file_input
  std::string result, error;
  const PyApi::GilState g = py.gil_ensure();
  void* ns = py.dict_new();
  void* arg = py.unicode_from_string_and_size(input.data(), static_cast<ptrdiff_t>(input.size()));
  if (ns && arg && py.dict_set_item_string(ns, "_weft_input", arg) == 0) {
    void* ran = py.run_string_flags(wrapped.c_str(), kPyFileInput, ns, ns, nullptr);
    if (ran) {
      py.dec_ref(ran);
    } else {
      py.err_clear();
      error = "the code did not compile";
    }
    if (void* e = py.dict_get_item_string(ns, "_weft_error"))
      error = py.unicode_as_utf8(e) ? py.unicode_as_utf8(e) : "?";
    if (void* r = py.dict_get_item_string(ns, "_weft_result")) {
      const char* text = py.unicode_as_utf8(r);
      if (text)
        result = text;
      else
        py.err_clear();
    }
  } else {
    py.err_clear();
    error = "cannot make the Python namespace";
  }
  if (arg) py.dec_ref(arg);
  if (ns) py.dec_ref(ns);
  py.gil_release(g);
  if (!error.empty()) Fail("{} failed:\n{}", what, error);
  return result;
}

}  // namespace weft::mx
