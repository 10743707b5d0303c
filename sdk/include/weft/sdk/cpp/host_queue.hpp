// weft SDK C++ helpers — streams and events run by host threads, for devices whose memory the
// plugin reaches through host pointers (the CPU plugin, simulated devices, test devices).
//
// HostStream is a FIFO queue with one worker thread: work queued on it runs in order, and
// Synchronize() reports the first exception a queued task threw. HostEvent tracks records by
// generation: a record is one generation; the event is complete when the latest record's work
// has run. HostQueueDevice implements everything of weft::sdk::Device that is about ordering
// (streams, events, copies, memsets) on top of one hook, HostAddress(), that turns a (device
// pointer, offset, bytes) range into the host memory holding it; a derived device only supplies
// memory (Count, Properties, Allocate, Free, HostAddress).
//
// Semantics (sdk/device.h): the NULL stream runs work in the caller's thread before returning.
// Argument errors (bad pointer, out-of-range offset) are raised synchronously by the call that
// queues the work, never deferred to the stream.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "weft/sdk/cpp/device.hpp"

namespace weft::sdk {

/// A FIFO work queue with one worker thread. Thread-safe.
class HostStream {
 public:
  /// `host`: for turning errors of foreign work (native_queue()) into exceptions; may be NULL.
  explicit HostStream(int32_t device, const weft_host_api* host = nullptr)
      : device_(device), host_(host), worker_([this] { Run(); }) {
    native_.struct_size = sizeof(native_);
    native_.queue = this;
    native_.enqueue = &EnqueueForeign;
  }
  /// Runs what is still queued, then joins the worker.
  ~HostStream() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    work_cv_.notify_one();
    worker_.join();
  }
  HostStream(const HostStream&) = delete;
  HostStream& operator=(const HostStream&) = delete;

  int32_t device() const noexcept { return device_; }

  /// When the simulated device work queued so far ends (HostQueueDevice::Submit with a latency).
  /// Read and written only by tasks, i.e. on the stream's own thread.
  std::chrono::steady_clock::time_point device_clock{};

  /// The C view of this queue handed out as the stream's native handle (kind HOST_QUEUE), so
  /// operator plugins can queue their own host work on it.
  weft_host_queue* native_queue() noexcept { return &native_; }

  /// Queues `task`; it runs after everything queued before it.
  void Enqueue(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(task));
      ++submitted_;
    }
    work_cv_.notify_one();
  }

  /// Blocks until every task queued so far has run. Leaves errors for Synchronize.
  void WaitIdle() {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t target = submitted_;
    idle_cv_.wait(lock, [&] { return completed_ >= target; });
  }

  /// Blocks until every task queued so far has run; then rethrows (and clears) the stream's
  /// sticky error: the first exception a task threw since the previous Synchronize.
  void Synchronize() {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t target = submitted_;
    idle_cv_.wait(lock, [&] { return completed_ >= target; });
    if (error_) {
      std::exception_ptr e = std::exchange(error_, nullptr);
      lock.unlock();
      std::rethrow_exception(e);
    }
  }

  /// The sticky error as it stands (null when healthy). Tasks running on the stream call it to
  /// capture the state for events (sdk/device.h: events recorded after a failure report it).
  std::exception_ptr StickyError() {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }

 private:
  static weft_error* EnqueueForeign(void* queue, weft_error* (*fn)(void*), void* user_data) {
    auto* self = static_cast<HostStream*>(queue);
    return Guard(self->host_, [&] {
      if (fn == nullptr) throw Error(WEFT_ERR_INVALID_ARGUMENT, "weft_host_queue.enqueue: fn is NULL");
      const weft_host_api* host = self->host_;
      self->Enqueue([fn, user_data, host] { ThrowIfError(host, fn(user_data)); });
    });
  }

  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_ and drained
      std::function<void()> task = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      std::exception_ptr failure;
      try {
        task();
      } catch (...) {
        failure = std::current_exception();
      }
      task = nullptr;  // release captures (events, buffers) outside the lock
      lock.lock();
      if (failure && !error_) error_ = failure;
      ++completed_;
      idle_cv_.notify_all();
    }
  }

  const int32_t device_;
  const weft_host_api* const host_;
  weft_host_queue native_{};
  std::mutex mu_;
  std::condition_variable work_cv_, idle_cv_;
  std::deque<std::function<void()>> queue_;
  uint64_t submitted_ = 0, completed_ = 0;
  std::exception_ptr error_;
  bool stop_ = false;
  std::thread worker_;  // last: starts after the members it uses exist
};

/// Completion state of an event. Each record takes the next generation; the event is complete
/// when the generation of its latest record has completed. Never recorded = complete. A record
/// completes with the error its stream carried at that point (sdk/device.h: events recorded
/// after a failure report it) and the time it completed (for timing events).
class HostEvent {
 public:
  HostEvent(int32_t device, uint32_t flags) : device_(device), flags_(flags) {}
  int32_t device() const noexcept { return device_; }
  uint32_t flags() const noexcept { return flags_; }

  /// Starts a record; returns the generation to Complete() when its work has run.
  uint64_t Arm() {
    std::lock_guard<std::mutex> lock(mu_);
    return ++recorded_;
  }
  void Complete(uint64_t generation, std::exception_ptr error = nullptr) {
    const auto now = std::chrono::steady_clock::now();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (generation > completed_) {
        completed_ = generation;
        error_ = std::move(error);
        when_ = now;
      }
    }
    cv_.notify_all();
  }
  /// The generation a wait issued now must reach (the latest record).
  uint64_t Latest() {
    std::lock_guard<std::mutex> lock(mu_);
    return recorded_;
  }
  /// True when `generation` has completed; rethrows the error it completed with.
  bool Reached(uint64_t generation) {
    std::unique_lock<std::mutex> lock(mu_);
    if (completed_ < generation) return false;
    RethrowLocked(lock);
    return true;
  }
  /// Blocks until `generation` has completed; rethrows the error it completed with.
  void WaitFor(uint64_t generation) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return completed_ >= generation; });
    RethrowLocked(lock);
  }
  /// When the latest completed record completed; throws unless `generation` has completed.
  std::chrono::steady_clock::time_point CompletedAt(uint64_t generation) {
    std::lock_guard<std::mutex> lock(mu_);
    if (completed_ < generation || completed_ == 0)
      throw Error(WEFT_ERR_INVALID_ARGUMENT, "event_elapsed: an event has not completed (or was never recorded)");
    return when_;
  }

 private:
  void RethrowLocked(std::unique_lock<std::mutex>& lock) {
    if (!error_) return;
    std::exception_ptr e = error_;
    lock.unlock();
    std::rethrow_exception(e);
  }

  const int32_t device_;
  const uint32_t flags_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t recorded_ = 0, completed_ = 0;
  std::exception_ptr error_;  // the error the latest completed record carried
  std::chrono::steady_clock::time_point when_{};
};

/// A Device whose streams and events are HostStream / HostEvent and whose copies and memsets
/// are memmove / memset on the host memory HostAddress() returns.
class HostQueueDevice : public Device {
 public:
  /// `host`: the plugin's host table (errors of work queued through native handles).
  HostQueueDevice(std::string device_type, const weft_host_api* host) : Device(std::move(device_type)), host_(host) {}

  /// Host memory holding bytes [offset, offset + bytes) of allocation `ptr` on `device`.
  /// Throws Error(WEFT_ERR_INVALID_ARGUMENT) naming the device, pointer and range when they are
  /// not inside one live allocation (as far as the device can tell). `bytes` may be 0.
  /// This is also the seam through which host-code kernels reach device memory (queued_kernels.hpp).
  virtual void* HostAddress(int32_t device, weft_device_ptr ptr, uint64_t offset, uint64_t bytes) = 0;
  /// Bytes of the allocation `ptr` lies in from ptr + offset to its end (for native memory
  /// handles); 0 when unknown (host pointers carry no bounds).
  virtual uint64_t BytesFrom(int32_t /*device*/, weft_device_ptr /*ptr*/, uint64_t /*offset*/) { return 0; }

  /// What a queued task is, for simulated latencies.
  enum class TaskKind { kCopy, kKernel, kOther };

  /// Runs `task` now in this thread (stream NULL) or queues it on `stream` (after a delay of
  /// TaskLatency(kind), which models a device that completes asynchronously).
  void Submit(weft_stream stream, std::function<void()> task, TaskKind kind = TaskKind::kOther) {
    if (stream == nullptr) {
      task();
      return;
    }
    std::shared_ptr<HostStream> s = FindStream(stream, "submit");
    const std::chrono::microseconds latency = TaskLatency(kind);
    if (latency.count() > 0) {
      // Simulated device time: the task starts when it was queued or when the stream's previous
      // task ended, whichever is later, and ends `latency` after that. Sleeping until that ideal
      // end (not for `latency` from whenever the thread woke up) keeps the host's timer slack and
      // scheduling delays from adding up along a queue, as on a real device.
      HostStream* raw = s.get();  // the task runs on this stream, so it outlives the task
      const auto queued = std::chrono::steady_clock::now();
      s->Enqueue([raw, queued, latency, t = std::move(task)] {
        const auto start = std::max(queued, raw->device_clock);
        raw->device_clock = start + latency;
        std::this_thread::sleep_until(raw->device_clock);
        t();
      });
    } else {
      s->Enqueue(std::move(task));
    }
  }

  /// Destroys the streams still alive (their queued work runs first). Plugins call it before
  /// destroying anything queued work may touch (memory, kernel tables).
  void DrainStreams() noexcept {
    std::unordered_map<weft_stream, std::shared_ptr<HostStream>> streams;
    {
      std::lock_guard<std::mutex> lock(registry_mu_);
      streams.swap(streams_);
    }
    streams.clear();
  }

  void Copy(const weft_copy_args& a) override {
    const char* src = a.kind == WEFT_COPY_HOST_TO_DEVICE
                          ? static_cast<const char*>(a.src_host) + a.src_offset
                          : static_cast<const char*>(HostAddress(a.src_device, a.src, a.src_offset, a.bytes));
    char* dst = a.kind == WEFT_COPY_DEVICE_TO_HOST
                    ? static_cast<char*>(a.dst_host) + a.dst_offset
                    : static_cast<char*>(HostAddress(a.dst_device, a.dst, a.dst_offset, a.bytes));
    const uint64_t n = a.bytes;
    // memmove: a device->device copy within one allocation may overlap.
    Submit(
        a.stream, [src, dst, n] { std::memmove(dst, src, n); }, TaskKind::kCopy);
  }

  void Memset(const weft_memset_args& a) override {
    void* dst = HostAddress(a.device, a.dst, a.offset, a.bytes);
    const uint64_t n = a.bytes;
    const int value = a.value;
    Submit(
        a.stream, [dst, n, value] { std::memset(dst, value, n); }, TaskKind::kCopy);
  }

  weft_stream CreateStream(int32_t device, uint32_t /*flags*/, int32_t /*priority*/) override {
    auto s = std::make_shared<HostStream>(device, host_);
    weft_stream handle = ToStreamHandle(s.get());
    std::lock_guard<std::mutex> lock(registry_mu_);
    streams_.emplace(handle, std::move(s));
    return handle;
  }
  void DestroyStream(weft_stream stream) override {
    std::shared_ptr<HostStream> s;
    {
      std::lock_guard<std::mutex> lock(registry_mu_);
      auto it = streams_.find(stream);
      if (it == streams_.end()) throw Error(WEFT_ERR_INVALID_ARGUMENT, UnknownHandle("stream_destroy", "stream"));
      s = std::move(it->second);
      streams_.erase(it);
    }
    // `s` dies here (outside the lock): the worker finishes the queued work, then joins.
  }
  void SynchronizeStream(weft_stream stream) override { FindStream(stream, "stream_synchronize")->Synchronize(); }

  weft_event CreateEvent(int32_t device, uint32_t flags) override {
    auto e = std::make_shared<HostEvent>(device, flags);
    weft_event handle = ToEventHandle(e.get());
    std::lock_guard<std::mutex> lock(registry_mu_);
    events_.emplace(handle, std::move(e));
    return handle;
  }
  void DestroyEvent(weft_event event) override {
    std::lock_guard<std::mutex> lock(registry_mu_);
    // Pending records hold their own reference: the state lives until they have run.
    if (events_.erase(event) == 0) throw Error(WEFT_ERR_INVALID_ARGUMENT, UnknownHandle("event_destroy", "event"));
  }
  void RecordEvent(weft_event event, weft_stream stream) override {
    std::shared_ptr<HostEvent> e = FindEvent(event, "event_record");
    if (stream == nullptr) {
      e->Complete(e->Arm());  // NULL-stream work has all completed already
      return;
    }
    std::shared_ptr<HostStream> s = FindStream(stream, "event_record");
    const uint64_t generation = e->Arm();
    HostStream* raw = s.get();  // the task runs on this stream, so it outlives the task
    s->Enqueue([e, generation, raw] { e->Complete(generation, raw->StickyError()); });
  }
  void StreamWaitEvent(weft_stream stream, weft_event event) override {
    std::shared_ptr<HostEvent> e = FindEvent(event, "stream_wait_event");
    const uint64_t generation = e->Latest();  // records made after this call do not count
    if (stream == nullptr) {
      e->WaitFor(generation);
      return;
    }
    // A failure of the awaited work becomes the waiting stream's sticky error (the task throws
    // it), so work that depends on failed work across streams reports the failure too.
    FindStream(stream, "stream_wait_event")->Enqueue([e, generation] { e->WaitFor(generation); });
  }
  bool QueryEvent(weft_event event) override {
    std::shared_ptr<HostEvent> e = FindEvent(event, "event_query");
    return e->Reached(e->Latest());
  }
  void SynchronizeEvent(weft_event event) override {
    std::shared_ptr<HostEvent> e = FindEvent(event, "event_synchronize");
    e->WaitFor(e->Latest());
  }

  // Timestamps: the host clock when each record completed on its stream.
  bool HasTimestamps() const override { return true; }
  double EventElapsedMs(weft_event start, weft_event end) override {
    std::shared_ptr<HostEvent> a = FindEvent(start, "event_elapsed"), b = FindEvent(end, "event_elapsed");
    if ((a->flags() & WEFT_EVENT_TIMING) == 0 || (b->flags() & WEFT_EVENT_TIMING) == 0)
      throw Error(WEFT_ERR_INVALID_ARGUMENT, "event_elapsed: both events must be created with WEFT_EVENT_TIMING");
    const auto t0 = a->CompletedAt(a->Latest()), t1 = b->CompletedAt(b->Latest());
    return std::chrono::duration<double, std::milli>(t1 - t0).count();
  }

  // Native handles: a stream is a host thread (its HostStream object), memory a host address.
  bool HasNativeHandles() const override { return true; }
  void NativeHandle(weft_native_handle_args& a) override {
    switch (a.what) {
      case WEFT_NATIVE_STREAM:
        a.kind = WEFT_NATIVE_KIND_HOST_QUEUE;
        a.handle = a.stream == nullptr ? nullptr : FindStream(a.stream, "native_handle")->native_queue();
        return;
      case WEFT_NATIVE_MEMORY:
        a.kind = WEFT_NATIVE_KIND_HOST_POINTER;
        a.handle = HostAddress(a.device, a.ptr, a.offset, 0);
        a.size = BytesFrom(a.device, a.ptr, a.offset);
        return;
      case WEFT_NATIVE_EVENT:
        a.kind = WEFT_NATIVE_KIND_HOST_QUEUE;
        a.handle = FindEvent(a.event, "native_handle").get();
        return;
      case WEFT_NATIVE_DEVICE:
        a.kind = WEFT_NATIVE_KIND_HOST_QUEUE;
        a.index = a.device;
        return;
      default:
        throw Error(WEFT_ERR_INVALID_ARGUMENT, "native_handle: unknown request " + std::to_string(a.what));
    }
  }

  // Host functions run on the stream's worker thread, in queue order.
  bool HasHostFunc() const override { return true; }
  void LaunchHostFunc(weft_stream stream, void (*fn)(void*), void* user_data) override {
    FindStream(stream, "launch_host_func")->Enqueue([fn, user_data] { fn(user_data); });
  }

 protected:
  /// Delay each queued task of `kind` waits before it runs (simulated devices); 0 = none.
  virtual std::chrono::microseconds TaskLatency(TaskKind /*kind*/) const { return std::chrono::microseconds(0); }

  /// Blocks until the work queued so far on every stream of this plugin has run. Derived Free()
  /// calls it before releasing memory, so queued work never touches freed memory (cudaFree
  /// synchronises the same way). Errors stay for stream_synchronize.
  void WaitForAllStreams() {
    std::vector<std::shared_ptr<HostStream>> streams;
    {
      std::lock_guard<std::mutex> lock(registry_mu_);
      streams.reserve(streams_.size());
      for (const auto& [handle, s] : streams_) streams.push_back(s);
    }
    for (const auto& s : streams) s->WaitIdle();
  }

  std::shared_ptr<HostStream> FindStream(weft_stream stream, const char* what) {
    std::lock_guard<std::mutex> lock(registry_mu_);
    auto it = streams_.find(stream);
    if (it == streams_.end()) throw Error(WEFT_ERR_INVALID_ARGUMENT, UnknownHandle(what, "stream"));
    return it->second;
  }
  std::shared_ptr<HostEvent> FindEvent(weft_event event, const char* what) {
    std::lock_guard<std::mutex> lock(registry_mu_);
    auto it = events_.find(event);
    if (it == events_.end()) throw Error(WEFT_ERR_INVALID_ARGUMENT, UnknownHandle(what, "event"));
    return it->second;
  }

 private:
  std::string UnknownHandle(const char* what, const char* kind) const {
    return std::string(what) + ": unknown " + kind + " handle for " + device_type() +
           " devices (destroyed, or made by another plugin)";
  }

  const weft_host_api* const host_;
  std::mutex registry_mu_;
  std::unordered_map<weft_stream, std::shared_ptr<HostStream>> streams_;
  std::unordered_map<weft_event, std::shared_ptr<HostEvent>> events_;
};

}  // namespace weft::sdk
