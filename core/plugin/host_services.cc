// The weft_host_api every plugin receives (sdk/host.h), and the hooks behind it.
#include "weft/internal/host_services.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "weft/internal/device.h"
#include "weft/internal/runtime.h"
#include "weft/logging.h"

namespace weft {
namespace {

// host_ctx of one plugin: its name (for log lines and trace events) and its table.
struct HostContext {
  std::string plugin_name;
  weft_host_api api{};
};

struct TraceState {
  std::shared_mutex mu;
  TraceSink sink;
  std::atomic<bool> enabled{false};
};
TraceState& Trace() {
  static TraceState* state = new TraceState;  // leaked: plugins may trace during exit
  return *state;
}

struct ConfigState {
  std::mutex mu;
  std::map<std::string, std::string> values;
};
ConfigState& Config() {
  static ConfigState* state = new ConfigState;
  return *state;
}

class InProcessStore : public RendezvousStore {
 public:
  void Set(const std::string& key, std::string value) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      values_[key] = std::move(value);
    }
    cv_.notify_all();
  }
  std::optional<std::string> Get(const std::string& key, std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    auto present = [&] { return values_.count(key) != 0; };
    if (timeout.count() < 0) {
      cv_.wait(lock, present);
    } else if (!cv_.wait_for(lock, timeout, present)) {
      return std::nullopt;
    }
    return values_.at(key);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::string> values_;
};

struct StoreState {
  std::mutex mu;
  std::shared_ptr<RendezvousStore> store = std::make_shared<InProcessStore>();
};
StoreState& Store() {
  static StoreState* state = new StoreState;
  return *state;
}
std::shared_ptr<RendezvousStore> CurrentStore() {
  std::lock_guard<std::mutex> lock(Store().mu);
  return Store().store;
}

const std::string& PluginName(void* host_ctx) { return static_cast<HostContext*>(host_ctx)->plugin_name; }

void HostLog(void* host_ctx, int32_t level, const char* msg, size_t len) {
  try {
    int clamped = level < WEFT_LOG_DEBUG ? WEFT_LOG_DEBUG : (level > WEFT_LOG_ERROR ? WEFT_LOG_ERROR : level);
    auto lvl = static_cast<LogLevel>(clamped);
    if (lvl < GetLogLevel()) return;
    LogMessage(lvl, fmt::format("{}: {}", PluginName(host_ctx), std::string_view(msg ? msg : "", msg ? len : 0)));
  } catch (...) {
  }
}

weft_error* HostErrorCreate(void*, int32_t code, const char* msg, size_t len) {
  return CreateError(code, std::string_view(msg ? msg : "", msg ? len : 0));
}

int32_t HostErrorCode(void*, const weft_error* err) { return ErrorCode(err); }

const char* HostErrorMessage(void*, const weft_error* err, size_t* len) {
  std::string_view m = ErrorMessage(err);
  if (len != nullptr) *len = m.size();
  return m.data();
}

void HostErrorRelease(void*, weft_error* err) { ReleaseError(err); }

weft_error* HostNativeHandle(void*, const char* device_type, weft_native_handle_args* args) {
  if (device_type == nullptr || args == nullptr)
    return CreateError(WEFT_ERR_INVALID_ARGUMENT, "native_handle: device_type or args is NULL");
  if (args->struct_size < WEFT_STRUCT_SIZE(weft_native_handle_args, size))
    return CreateError(WEFT_ERR_INVALID_ARGUMENT, "native_handle: args->struct_size is smaller than SDK 2.0's");
  try {
    Runtime& rt = Runtime::Get();
    const std::vector<std::string> types = rt.DeviceTypes();
    if (std::find(types.begin(), types.end(), device_type) == types.end())
      return CreateError(WEFT_ERR_NOT_FOUND,
                         fmt::format("native_handle: no loaded plugin provides device type '{}'", device_type));
    Device& d = internal::GetDevice(rt, Context(device_type, args->device));
    if (d.api()->native_handle == nullptr)
      return CreateError(WEFT_ERR_UNSUPPORTED,
                         fmt::format("native_handle: the '{}' plugin offers no native handles", d.plugin().name()));
    // The caller's struct may be shorter than ours (an older plugin): copy in and out by size.
    weft_native_handle_args a{};
    std::memcpy(&a, args, std::min(args->struct_size, sizeof(a)));
    d.NativeHandle(a);
    const size_t n = std::min(args->struct_size, sizeof(a));
    a.struct_size = args->struct_size;
    std::memcpy(args, &a, n);
    return nullptr;
  } catch (const std::exception& e) {
    return CreateError(WEFT_ERR_INVALID_ARGUMENT, e.what());
  } catch (...) {
    return CreateError(WEFT_ERR_UNKNOWN, "native_handle failed");
  }
}

int64_t HostConfigGet(void*, const char* key, char* buf, size_t buf_size) {
  if (!key) return -1;
  std::string value;
  if (const char* env = std::getenv(key)) {
    value = env;
  } else {
    try {
      std::lock_guard<std::mutex> lock(Config().mu);
      auto it = Config().values.find(key);
      if (it == Config().values.end()) return -1;
      value = it->second;
    } catch (...) {
      return -1;
    }
  }
  if (buf && buf_size > 0) {
    size_t n = value.size() < buf_size ? value.size() : buf_size;
    std::memcpy(buf, value.data(), n);
    if (n < buf_size) buf[n] = '\0';
  }
  return static_cast<int64_t>(value.size());
}

void* HostAlloc(void*, size_t bytes, size_t alignment) {
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  if ((alignment & (alignment - 1)) != 0) return nullptr;
  void* p = nullptr;
  if (posix_memalign(&p, alignment, bytes == 0 ? 1 : bytes) != 0) return nullptr;
  return p;
}

void HostFree(void*, void* ptr) { std::free(ptr); }

int32_t HostTraceEnabled(void*) { return Trace().enabled.load(std::memory_order_relaxed) ? 1 : 0; }

void HostTrace(void* host_ctx, const weft_trace_event* event) {
  if (!event || !Trace().enabled.load(std::memory_order_relaxed)) return;
  try {
    // Normalise: fields past the plugin's struct_size read as absent.
    weft_trace_event e{};
    size_t n = event->struct_size < sizeof(e) ? event->struct_size : sizeof(e);
    std::memcpy(&e, event, n);
    e.struct_size = sizeof(e);
    if (n < WEFT_STRUCT_SIZE(weft_trace_event, device_id)) e.device_id = -1;
    if (n < WEFT_STRUCT_SIZE(weft_trace_event, stream_id)) e.stream_id = -1;
    std::shared_lock<std::shared_mutex> lock(Trace().mu);
    if (Trace().sink) Trace().sink(e, PluginName(host_ctx));
  } catch (...) {
  }
}

weft_error* HostKvSet(void*, const char* key, const void* value, size_t len) {
  if (!key || (!value && len > 0)) return CreateError(WEFT_ERR_INVALID_ARGUMENT, "kv_set: key or value is NULL");
  try {
    CurrentStore()->Set(key, std::string(static_cast<const char*>(value), len));
    return nullptr;
  } catch (const std::exception& e) {
    return CreateError(WEFT_ERR_UNAVAILABLE, fmt::format("kv_set '{}': {}", key, e.what()));
  } catch (...) {
    return CreateError(WEFT_ERR_UNAVAILABLE, fmt::format("kv_set '{}' failed", key));
  }
}

weft_error* HostKvGet(void*, const char* key, void* buf, size_t buf_size, size_t* len, int64_t timeout_ms) {
  if (!key) return CreateError(WEFT_ERR_INVALID_ARGUMENT, "kv_get: key is NULL");
  try {
    auto value = CurrentStore()->Get(key, std::chrono::milliseconds(timeout_ms));
    if (!value) {
      return CreateError(WEFT_ERR_TIMEOUT,
                         fmt::format("kv_get: key '{}' did not appear within {} ms", key, timeout_ms));
    }
    if (buf && buf_size > 0) std::memcpy(buf, value->data(), value->size() < buf_size ? value->size() : buf_size);
    if (len) *len = value->size();
    return nullptr;
  } catch (const std::exception& e) {
    return CreateError(WEFT_ERR_UNAVAILABLE, fmt::format("kv_get '{}': {}", key, e.what()));
  } catch (...) {
    return CreateError(WEFT_ERR_UNAVAILABLE, fmt::format("kv_get '{}' failed", key));
  }
}

}  // namespace

void SetTraceSink(TraceSink sink) {
  std::unique_lock<std::shared_mutex> lock(Trace().mu);
  Trace().enabled.store(static_cast<bool>(sink));
  Trace().sink = std::move(sink);
}

void SetConfig(const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> lock(Config().mu);
  Config().values[key] = value;
}

void SetRendezvousStore(std::shared_ptr<RendezvousStore> store) {
  std::lock_guard<std::mutex> lock(Store().mu);
  Store().store = store ? std::move(store) : std::make_shared<InProcessStore>();
}

const weft_host_api* CreateHostApi(const std::string& plugin_name, uint32_t sdk_version) {
  auto* ctx = new HostContext;
  ctx->plugin_name = plugin_name;
  weft_host_api& api = ctx->api;
  api.struct_size = sizeof(weft_host_api);
  api.sdk_version = sdk_version;
  api.host_ctx = ctx;
  api.log = HostLog;
  api.error_create = HostErrorCreate;
  api.error_code = HostErrorCode;
  api.error_message = HostErrorMessage;
  api.error_release = HostErrorRelease;
  api.native_handle = HostNativeHandle;
  api.config_get = HostConfigGet;
  api.host_alloc = HostAlloc;
  api.host_free = HostFree;
  api.trace_enabled = HostTraceEnabled;
  api.trace = HostTrace;
  api.kv_set = HostKvSet;
  api.kv_get = HostKvGet;
  return &api;
}

void ReleaseHostApi(const weft_host_api* api) {
  if (api) delete static_cast<HostContext*>(api->host_ctx);
}

}  // namespace weft
