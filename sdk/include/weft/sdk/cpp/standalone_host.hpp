// weft SDK C++ helpers — a minimal host for programs that call a plugin's C tables directly,
// without weft's runtime: kernel tests, kernel benchmarks, a plugin author's own unit tests.
//
//   weft::sdk::StandaloneHost host;                           // errors, config from the environment
//   weft::sdk::KernelTable table("cpu", host.api());
//   ... weft_error* err = def->compute(nullptr, &args);
//   std::string what = host.Take(err);                        // "" for NULL; releases the object
//
// Error objects are this host's own (code + message); read them with Code/Message or Take, or
// through the table's error_code / error_message / error_release like any host's. config_get
// reads environment variables only; log writes to stderr at WEFT_LOG_WARNING and above (or every
// level with `verbose`). There is no rendezvous store and no native_handle (both report
// WEFT_ERR_UNAVAILABLE / WEFT_ERR_UNSUPPORTED). Thread-safe.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>

#include "weft/sdk/host.h"
#include "weft/sdk/version.h"

namespace weft::sdk {

class StandaloneHost {
 public:
  explicit StandaloneHost(bool verbose = false) : verbose_(verbose) {
    api_.struct_size = sizeof(api_);
    api_.sdk_version = WEFT_SDK_VERSION;
    api_.host_ctx = this;
    api_.log = &LogFn;
    api_.error_create = &Create;
    api_.config_get = &ConfigGet;
    api_.host_alloc = &Alloc;
    api_.host_free = &FreeFn;
    api_.error_code = &CodeFn;
    api_.error_message = &MessageFn;
    api_.error_release = &Release;
    api_.native_handle = &NoNative;
  }
  StandaloneHost(const StandaloneHost&) = delete;
  StandaloneHost& operator=(const StandaloneHost&) = delete;

  const weft_host_api* api() const noexcept { return &api_; }

  static int32_t Code(const weft_error* e) noexcept { return e == nullptr ? 0 : Obj(e)->code; }
  static std::string_view Message(const weft_error* e) noexcept {
    return e == nullptr ? std::string_view() : std::string_view(Obj(e)->message);
  }
  /// "code <c>: <message>" and releases `e`; "" for NULL.
  static std::string Take(weft_error* e) {
    if (e == nullptr) return "";
    std::string s = "code " + std::to_string(Code(e)) + ": " + std::string(Message(e));
    Release(nullptr, e);
    return s;
  }

 private:
  struct Object {
    int32_t code;
    std::string message;
  };
  static const Object* Obj(const weft_error* e) noexcept { return reinterpret_cast<const Object*>(e); }

  static void LogFn(void* ctx, int32_t level, const char* msg, size_t len) {
    if (level < WEFT_LOG_WARNING && !static_cast<StandaloneHost*>(ctx)->verbose_) return;
    std::fprintf(stderr, "[plugin] %.*s\n", static_cast<int>(len), msg != nullptr ? msg : "");
  }
  // Returned when even an error object cannot be allocated (host.h: never NULL); never freed.
  static Object& OutOfMemory() {
    static Object oom{WEFT_ERR_OUT_OF_MEMORY, "out of host memory while reporting an error"};
    return oom;
  }
  static weft_error* Create(void*, int32_t code, const char* msg, size_t len) {
    auto* o = new (std::nothrow) Object{code, std::string()};
    if (o == nullptr) return reinterpret_cast<weft_error*>(&OutOfMemory());
    try {
      o->message.assign(msg != nullptr ? msg : "", msg != nullptr ? len : 0);
    } catch (...) {
    }
    return reinterpret_cast<weft_error*>(o);
  }
  static int64_t ConfigGet(void*, const char* key, char* buf, size_t size) {
    const char* v = key != nullptr ? std::getenv(key) : nullptr;
    if (v == nullptr) return -1;
    const size_t n = std::strlen(v);
    if (buf != nullptr && size > 0) {
      const size_t c = n < size - 1 ? n : size - 1;
      std::memcpy(buf, v, c);
      buf[c] = '\0';
    }
    return static_cast<int64_t>(n);
  }
  static void* Alloc(void*, size_t bytes, size_t alignment) {
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    void* p = nullptr;
    return posix_memalign(&p, alignment, bytes == 0 ? 1 : bytes) == 0 ? p : nullptr;
  }
  static void FreeFn(void*, void* p) { std::free(p); }
  static int32_t CodeFn(void*, const weft_error* e) { return Code(e); }
  static const char* MessageFn(void*, const weft_error* e, size_t* len) {
    std::string_view m = Message(e);
    if (len != nullptr) *len = m.size();
    return m.data();
  }
  static void Release(void*, weft_error* e) {
    if (e == nullptr || Obj(e) == &OutOfMemory()) return;
    delete reinterpret_cast<Object*>(e);
  }
  static weft_error* NoNative(void* ctx, const char*, weft_native_handle_args*) {
    static constexpr std::string_view kMsg = "native_handle: a standalone host has no device plugins";
    return Create(ctx, WEFT_ERR_UNSUPPORTED, kMsg.data(), kMsg.size());
  }

  weft_host_api api_{};
  bool verbose_;
};

}  // namespace weft::sdk
