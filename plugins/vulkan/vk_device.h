// vulkan plugin — devices, memory, streams and events on Vulkan (see sdk/device.h for the model).
//
// Mapping (sdk/device.h table):
//   device  one VkPhysicalDevice with a compute queue; its VkDevice is created on first use.
//   memory  one VkBuffer + VkDeviceMemory per allocation (core pools on top), DEVICE_LOCAL first
//           (DEVICE_LOCAL|HOST_VISIBLE on UMA devices such as lavapipe). weft_device_ptr values
//           are addresses in a private range (not host pointers); every access is bounds-checked.
//   stream  a command pool, the command buffer being recorded and a timeline semaphore. Copies
//           and dispatches are recorded into the open command buffer and submitted at sync points
//           (event_synchronize / query, a wait from another stream, stream_synchronize, free) or
//           every kMaxCommandsPerBatch commands. Pipeline barriers are inserted only where a
//           command touches a buffer an earlier command of the batch wrote (or writes one it read).
//   event   (stream, timeline value): the value the stream's batch containing the captured work
//           signals. Host waits block on a condition variable fed by the device's completion
//           thread, which waits on the semaphores with vkWaitSemaphores (blocking, never spinning),
//           then runs the batch's host work (device->host copies out of staging memory, host
//           functions) and recycles its staging buffers and command buffer.
// One VkQueue per device serves every stream (submission guarded by a mutex); each command buffer
// starts with a barrier against earlier submissions, so queue order is stream order.
// Requires Vulkan 1.2 (timeline semaphores) and VK_KHR_push_descriptor.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "vk_api.h"
#include "weft/sdk/cpp/device.hpp"

namespace weft::vk {

class Gpu;
struct StreamState;

/// A raw buffer with its memory (mapped when host-visible).
struct RawBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  uint64_t bytes = 0;
};

/// One tensor argument of a dispatch: bytes [offset, offset + bytes) of allocation `ptr`.
/// `texel`: bound as a uniform texel buffer of R32G32B32A32_SFLOAT texels (a GLSL samplerBuffer,
/// read-only, 16-byte aligned, its push-constant offset counted in texels) instead of a storage
/// buffer. Why: lavapipe turns a storage-buffer load into a loop over the SIMD lanes with a branch
/// per lane and component, while a texel fetch is a vector gather; GEMM operands read this way
/// load several times faster (bench/vulkan, note of issue 14).
struct Binding {
  weft_device_ptr ptr = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  bool write = false;
  bool texel = false;
  bool scalar_texel = false;  // with texel: R32_SFLOAT texels (a float per fetch, offset in floats)
};

/// A compute pipeline made from one embedded shader (see vk_shaders.h) and its layout.
struct Pipeline {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  uint32_t bindings = 0;
  uint32_t texel_mask = 0;  // bit i: binding i is a uniform texel buffer (else a storage buffer)
};

/// Work run on the completion thread after a batch completed.
struct Batch {
  std::shared_ptr<StreamState> stream;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  uint64_t value = 0;       // semaphore value the GPU signals at the end of the batch
  uint64_t host_value = 0;  // when non-zero: the completion thread signals it after `after`
  std::vector<std::function<void()>> after;
  std::vector<RawBuffer> staging;
  std::vector<RawBuffer> release;   // freed allocations, destroyed after this batch
  std::vector<VkBufferView> views;  // texel-buffer views of the batch's dispatches
};

struct StreamState {
  Gpu* gpu = nullptr;
  std::mutex mu;  // everything below except `retired` and the free list
  VkCommandPool pool = VK_NULL_HANDLE;
  VkSemaphore sem = VK_NULL_HANDLE;
  VkCommandBuffer cb = VK_NULL_HANDLE;  // open command buffer, or null
  uint32_t commands = 0;
  uint64_t last_value = 0;  // highest semaphore value submitted (GPU or host signal)
  uint64_t own_wait = 0;    // the next submit waits for sem >= own_wait (after host work)
  std::vector<VkSemaphore> wait_sems;
  std::vector<uint64_t> wait_values;
  Batch open;  // host work and staging of the open batch
  bool open_host_signal = false;
  std::vector<VkBuffer> written, read;  // since the last barrier in `cb`
  std::string error;                    // sticky error of queued work
  std::atomic<uint64_t> retired{0};     // semaphore value whose host work has completed
  std::mutex free_mu;
  std::vector<VkCommandBuffer> free_cbs;

  bool HasOpenWork() const { return cb != VK_NULL_HANDLE || !open.after.empty() || open_host_signal; }
};

struct EventState {
  Gpu* gpu = nullptr;
  uint32_t flags = 0;
  std::mutex mu;
  std::shared_ptr<StreamState> stream;  // null: never recorded, or recorded on the NULL stream
  uint64_t value = 0;
  VkQueryPool timestamp = VK_NULL_HANDLE;  // WEFT_EVENT_TIMING: one timestamp query
  bool stamped = false;                    // a timestamp was recorded into `timestamp`
};

/// One physical device and, once used, its logical device.
class Gpu {
 public:
  Gpu(Api& api, VkPhysicalDevice phys, uint32_t family, std::string name);
  ~Gpu();
  Gpu(const Gpu&) = delete;
  Gpu& operator=(const Gpu&) = delete;

  Api& api() { return api_; }
  const std::string& name() const { return name_; }  // "vulkan(0)"
  VkPhysicalDevice phys() const { return phys_; }
  uint32_t family() const { return family_; }
  const VkPhysicalDeviceProperties& props() const { return props_; }
  uint32_t subgroup_size() const { return subgroup_size_; }
  /// "llvmpipe: Mesa 22.3.6 (LLVM 15.0.6)" (VkPhysicalDeviceDriverProperties).
  const std::string& driver() const { return driver_; }
  uint64_t heap_bytes() const { return heap_bytes_; }
  uint64_t used_bytes() const { return used_.load(); }
  bool has_push_descriptor() const { return push_descriptor_; }
  /// Largest storage-buffer binding in bytes: maxStorageBufferRange, or less when
  /// WEFT_VULKAN_MAX_BINDING_BYTES says so (read at every call; tests lower it to exercise the
  /// chunked element-wise path on small tensors). Throws on a malformed value.
  uint64_t max_binding_bytes() const;
  /// shaderFloat64 is offered (and enabled on the VkDevice): the Cast shader can run.
  bool has_float64() const { return float64_; }
  /// Directory of the on-disk pipeline cache ("" = none); set before first use.
  void set_cache_dir(std::string dir) { cache_dir_ = std::move(dir); }
  /// Creates the VkDevice, queue and completion thread on first call. Thread-safe.
  VkDevice device();
  VkQueue queue() {
    device();
    return queue_;
  }

  // Memory.
  weft_device_ptr Allocate(uint64_t bytes, uint64_t alignment);
  void Free(weft_device_ptr ptr);
  /// The buffer behind [ptr + offset, + bytes) and the offset into it; throws a message naming
  /// the device, the pointer and the range when it is not inside one live allocation.
  std::pair<const RawBuffer*, uint64_t> Locate(weft_device_ptr ptr, uint64_t offset, uint64_t bytes,
                                               const char* what) const;
  RawBuffer MakeBuffer(uint64_t bytes, bool host_visible);
  void DestroyBuffer(const RawBuffer& b);
  RawBuffer TakeStaging(uint64_t bytes);
  void ReturnStaging(RawBuffer b);

  // Streams. Every function taking a StreamState locks it.
  std::shared_ptr<StreamState> CreateStream();
  void DestroyStream(const std::shared_ptr<StreamState>& s);
  /// Records `body(cb)` into the stream's open command buffer after the barriers the accesses
  /// need. `reads`/`writes`: buffers the command reads and writes.
  void Record(StreamState& s, std::span<const VkBuffer> reads, std::span<const VkBuffer> writes,
              const std::function<void(VkCommandBuffer)>& body);
  /// Adds host work run after the stream's work so far has completed (on the completion thread).
  void After(StreamState& s, std::function<void()> fn, bool gpu_waits_for_it);
  void KeepStaging(StreamState& s, RawBuffer b);
  /// Submits the open batch (stream locked by the caller).
  void FlushLocked(StreamState& s);
  void Flush(StreamState& s);
  /// Blocks until retired >= value; throws the stream's sticky error.
  void WaitRetired(StreamState& s, uint64_t value);
  void Synchronize(StreamState& s);
  /// A temporary stream for synchronous (NULL-stream) work.
  std::shared_ptr<StreamState> SyncStream();
  void ReleaseSyncStream(std::shared_ptr<StreamState> s);

  // Pipelines: `spirv` of shader `name` with `bindings` descriptors (storage buffers, uniform
  // texel buffers where `texel_mask` has bit i); cached by name, spec constants and mask.
  const Pipeline& GetPipeline(const std::string& name, std::span<const uint32_t> spirv, uint32_t bindings,
                              std::span<const int32_t> spec, uint32_t texel_mask = 0);
  /// Records a dispatch of `p` over `groups` workgroups with the bindings and push constants
  /// (binding element offsets first, then `push`).
  void Dispatch(StreamState& s, const Pipeline& p, std::span<const Binding> bindings, const void* push,
                uint32_t push_bytes, uint32_t gx, uint32_t gy, uint32_t gz);

 private:
  void CompletionLoop();
  void Retire(Batch& b);
  VkCommandBuffer NewCommandBuffer(StreamState& s);
  uint32_t MemoryType(uint32_t type_bits, bool host_visible) const;
  VkDescriptorSetLayout SetLayout(uint32_t bindings, uint32_t texel_mask);
  /// Storage-buffer descriptor of [at, at + bytes) of `buf`; returns the element offset to push.
  uint32_t StorageRange(const RawBuffer& buf, uint64_t at, uint64_t bytes, VkDescriptorBufferInfo& info) const;
  /// A new view covering [at, at + bytes) of R32G32B32A32_SFLOAT (texel_bytes 16) or R32_SFLOAT
  /// (4) texels; returns the texel offset to push.
  uint32_t TexelView(const RawBuffer& buf, uint64_t at, uint64_t bytes, uint32_t texel_bytes, VkBufferView& view);
  void LoadPipelineCache();
  void SavePipelineCache();
  std::string PipelineCachePath() const;

  Api& api_;
  VkPhysicalDevice phys_;
  uint32_t family_;
  std::string name_;
  VkPhysicalDeviceProperties props_{};
  VkPhysicalDeviceMemoryProperties mem_props_{};
  uint32_t subgroup_size_ = 0;
  std::string driver_;
  uint64_t heap_bytes_ = 0;
  bool push_descriptor_ = false;
  bool float64_ = false;

  std::once_flag init_once_;
  std::string init_error_;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  std::mutex queue_mu_;

  // Allocations by address.
  mutable std::mutex alloc_mu_;
  std::map<uint64_t, RawBuffer> allocs_;
  uint64_t next_addr_;
  std::atomic<uint64_t> used_{0};

  std::mutex staging_mu_;
  std::multimap<uint64_t, RawBuffer> staging_free_;

  // Completion.
  std::mutex done_mu_;
  std::condition_variable done_cv_;  // new batch (to the thread) / batch retired (to waiters)
  std::deque<Batch> pending_;
  bool stop_ = false;
  std::thread completion_;
  std::vector<std::weak_ptr<StreamState>> streams_;  // for Free: flush everything in flight
  std::vector<std::shared_ptr<StreamState>> sync_streams_;

  std::mutex pipe_mu_;
  // Keyed by texel_mask << 32 | bindings.
  std::map<uint64_t, VkDescriptorSetLayout> set_layouts_;
  std::map<uint64_t, VkPipelineLayout> pipe_layouts_;
  std::unordered_map<std::string, std::unique_ptr<Pipeline>> pipelines_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::string cache_dir_;
};

/// The SDK device: every Gpu of the instance.
class VulkanDevice final : public sdk::Device {
 public:
  explicit VulkanDevice(const weft_host_api* host);
  ~VulkanDevice() override;

  int32_t Count() override { return static_cast<int32_t>(gpus_.size()); }
  const char* NoDeviceReason() override { return reason_.c_str(); }
  void Properties(int32_t device, weft_device_props& props) override;
  weft_device_ptr Allocate(int32_t device, uint64_t bytes, uint64_t alignment) override;
  void Free(int32_t device, weft_device_ptr ptr) override;
  void Copy(const weft_copy_args& args) override;
  void Memset(const weft_memset_args& args) override;
  weft_stream CreateStream(int32_t device, uint32_t flags, int32_t priority) override;
  void DestroyStream(weft_stream stream) override;
  void SynchronizeStream(weft_stream stream) override;
  weft_event CreateEvent(int32_t device, uint32_t flags) override;
  void DestroyEvent(weft_event event) override;
  void RecordEvent(weft_event event, weft_stream stream) override;
  void StreamWaitEvent(weft_stream stream, weft_event event) override;
  bool QueryEvent(weft_event event) override;
  void SynchronizeEvent(weft_event event) override;
  bool HasNativeHandles() const override { return true; }
  void NativeHandle(weft_native_handle_args& args) override;
  bool HasHostFunc() const override { return true; }
  bool HasTimestamps() const override { return true; }
  double EventElapsedMs(weft_event start, weft_event end) override;
  void LaunchHostFunc(weft_stream stream, void (*fn)(void*), void* user_data) override;

  Gpu& gpu(int32_t device) { return *gpus_[static_cast<size_t>(device)]; }
  /// The stream behind a handle (a registered stream of this plugin), else throws.
  std::shared_ptr<StreamState> StreamOf(weft_stream stream);
  /// Runs fn(stream) on `stream`, or on a temporary stream that is then synchronised (NULL).
  void OnStream(int32_t device, weft_stream stream, const std::function<void(Gpu&, StreamState&)>& fn);

 private:
  struct StreamBox {
    int32_t device;
    std::shared_ptr<StreamState> state;
  };
  struct EventBox {
    int32_t device;
    EventState state;
  };
  EventBox& EventOf(weft_event e);
  void Enumerate();
  void FillAttributes(size_t i);

  Api api_;
  std::string reason_;
  std::vector<std::unique_ptr<Gpu>> gpus_;
  std::vector<std::vector<std::string>> attr_text_;
  std::vector<std::vector<weft_kv>> attrs_;
  std::mutex handles_mu_;
  std::map<StreamBox*, std::unique_ptr<StreamBox>> streams_;
  std::map<EventBox*, std::unique_ptr<EventBox>> events_;
};

}  // namespace weft::vk
