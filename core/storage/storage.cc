#include "weft/storage.h"

#include <shared_mutex>
#include <unordered_map>

#include "device_pool.h"
#include "weft/base.h"
#include "weft/internal/runtime.h"

namespace weft {

using storage_detail::DevicePool;

struct Storage::Impl {
  std::optional<PoolConfig> config;
  mutable std::shared_mutex mu;
  std::unordered_map<Context, std::unique_ptr<DevicePool>> pools;

  DevicePool* Find(const Context& ctx) const {
    std::shared_lock lock(mu);
    auto it = pools.find(ctx);
    return it == pools.end() ? nullptr : it->second.get();
  }

  DevicePool& GetOrCreate(const Context& ctx) {
    if (DevicePool* p = Find(ctx)) return *p;
    Device& device = internal::GetDevice(Runtime::Get(), ctx);
    const PoolConfig cfg = config ? *config : PoolConfig::FromEnv(ctx.GetDeviceType());
    auto pool = std::make_unique<DevicePool>(device, cfg);
    std::unique_lock lock(mu);
    auto [it, inserted] = pools.try_emplace(ctx, std::move(pool));
    return *it->second;
  }

  DevicePool& ForHandle(const Handle& h) const {
    DevicePool* p = Find(h.ctx);
    WEFT_CHECK(p != nullptr, "cannot free a block of {}: this Storage never allocated on that device", h.ctx);
    return *p;
  }
};

Storage::Storage(std::optional<PoolConfig> config) : impl_(std::make_unique<Impl>()) {
  if (config) config->Validate();
  impl_->config = std::move(config);
}

Storage::~Storage() = default;

Storage* Storage::Get() {
  // Never destroyed: see the header (no frees into plugins that have shut down at exit).
  static Storage* const storage = new Storage(std::nullopt);
  return storage;
}

std::unique_ptr<Storage> Storage::Create(std::optional<PoolConfig> config) {
  return std::unique_ptr<Storage>(new Storage(std::move(config)));
}

Storage::Handle Storage::Alloc(uint64_t bytes, const Context& ctx) {
  Handle h;
  h.ctx = ctx;
  if (bytes == 0) return h;
  h.dptr = impl_->GetOrCreate(ctx).Alloc(bytes);
  h.size = bytes;
  return h;
}

void Storage::Free(const Handle& handle) {
  if (handle.is_null()) return;
  impl_->ForHandle(handle).Free(handle.dptr, handle.size);
}

void Storage::DirectFree(const Handle& handle) {
  if (handle.is_null()) return;
  impl_->ForHandle(handle).DirectFree(handle.dptr, handle.size);
}

void Storage::ReleaseAll(const Context& ctx) {
  if (DevicePool* p = impl_->Find(ctx)) p->ReleaseAll();
}

StorageStats Storage::Stats(const Context& ctx) const {
  DevicePool* p = impl_->Find(ctx);
  return p ? p->Stats() : StorageStats{};
}

PoolConfig Storage::GetPoolConfig(const Context& ctx) { return impl_->GetOrCreate(ctx).config(); }

}  // namespace weft
