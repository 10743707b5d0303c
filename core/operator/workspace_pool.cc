// Temp space shared per device (workspace_pool.h).
#include "operator/workspace_pool.h"

#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "weft/base.h"
#include "weft/env.h"

namespace weft {
namespace {

struct DeviceSlots {
  std::vector<std::shared_ptr<WorkspaceSlot>> slots;
  size_t next = 0;
};

int64_t SlotCount(const std::string& device_type) {
  const std::string name = DeviceEnvName(device_type, "TEMP_COPY");
  return GetEnvIntInRange(name.c_str(), 1, 1, 64, "a number of workspace slots");
}

}  // namespace

WorkspaceSlot::WorkspaceSlot(const Context& ctx) : ctx_(ctx), var_(Engine::Get()->NewVariable()) {}

WorkspaceSlot::~WorkspaceSlot() {
  const Storage::Handle block = block_;
  Engine::Get()->DeleteVariable(
      [block](RunContext) {
        if (!block.is_null()) Storage::Get()->Free(block);
      },
      ctx_, var_);
}

void WorkspaceSlot::Grow(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (bytes <= block_.size) return;
  const Storage::Handle old = block_;
  block_ = Storage::Get()->Alloc(bytes, ctx_);
  if (old.is_null()) return;
  // After every run pushed so far: one of them may be computing in the old block right now.
  Engine::Get()->PushSync([old](RunContext) { Storage::Get()->Free(old); }, ctx_, {}, {var_}, FnProperty::kNormal, 0,
                          "workspace_grow");
}

Storage::Handle WorkspaceSlot::Current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return block_;
}

uint64_t WorkspaceSlot::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return block_.size;
}

std::shared_ptr<WorkspaceSlot> ReserveWorkspace(const Context& ctx, uint64_t bytes) {
  // Never destroyed: runners freed at exit may still reach their slots.
  static std::mutex& mu = *new std::mutex;
  static auto& devices = *new std::map<Context, DeviceSlots>;
  std::shared_ptr<WorkspaceSlot> slot;
  {
    std::lock_guard<std::mutex> lock(mu);
    DeviceSlots& d = devices[ctx];
    if (d.slots.empty()) {
      const int64_t n = SlotCount(ctx.GetDeviceType());
      for (int64_t i = 0; i < n; ++i) d.slots.push_back(std::make_shared<WorkspaceSlot>(ctx));
    }
    slot = d.slots[d.next++ % d.slots.size()];
  }
  slot->Grow(bytes);
  return slot;
}

}  // namespace weft
