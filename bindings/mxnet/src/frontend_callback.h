// Calling functions of the frontend (KVStore updaters, custom operators, monitors) so that an
// exception they raise is not lost.
//
// MXNet's Python passes its callbacks as ctypes function pointers. When such a Python function
// raises, ctypes prints the traceback ("Exception ignored on calling ctypes callback function")
// and returns to C as if nothing happened, so MXNet itself carries on with half-done work. When
// this library runs inside a Python process it instead records the exception (through
// sys.unraisablehook, chained to the previous hook so the traceback is still printed) and
// CallFrontend throws weft::Error with it after the callback returns: the error then reaches the
// caller the way weft's own errors do (at once, or at the next wait for work pushed to the engine).
// Outside Python (an R or C program) the callbacks are called as they are.
#pragma once

#include <functional>
#include <string>

namespace weft::mx {

/// A callback of an MXCallbackList as its real type: the protocol hands out generic `int (*)(void)`
/// pointers that each have their own; going through `void (*)()` is the cast GCC accepts for that.
template <typename F>
F CallbackAs(int (*p)(void)) {
  return reinterpret_cast<F>(reinterpret_cast<void (*)()>(p));
}

/// Calls `fn` (which calls a frontend callback); throws weft::Error "<what> raised: <the Python
/// exception and traceback>" when the callback raised. Thread-safe.
void CallFrontend(const char* what, const std::function<void()>& fn);

/// Runs Python `code` in a fresh namespace where `_weft_input` is the string `input`, and returns
/// the string the code stores in `_weft_result`. Throws weft::Error naming `what` when the code
/// raises (with the Python traceback), sets no string result, or when this process is not a Python
/// interpreter. For reading objects the frontend hands over pickled (an optimizer sent to the
/// KVStore servers). Thread-safe.
std::string EvalPython(const char* what, const std::string& code, const std::string& input);

}  // namespace weft::mx
