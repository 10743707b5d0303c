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
  explicit HostStream(int32_t device) : device_(device), worker_([this] { Run(); }) {}
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

  /// Blocks until every task queued so far has run; then rethrows (and clears) the first
  /// exception a task threw since the previous Synchronize.
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

 private:
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
  std::mutex mu_;
  std::condition_variable work_cv_, idle_cv_;
  std::deque<std::function<void()>> queue_;
  uint64_t submitted_ = 0, completed_ = 0;
  std::exception_ptr error_;
  bool stop_ = false;
  std::thread worker_;  // last: starts after the members it uses exist
};

/// Completion state of an event. Each record takes the next generation; the event is complete
/// when the generation of its latest record has completed. Never recorded = complete.
class HostEvent {
 public:
  explicit HostEvent(int32_t device) : device_(device) {}
  int32_t device() const noexcept { return device_; }

  /// Starts a record; returns the generation to Complete() when its work has run.
  uint64_t Arm() {
    std::lock_guard<std::mutex> lock(mu_);
    return ++recorded_;
  }
  void Complete(uint64_t generation) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (generation > completed_) completed_ = generation;
    }
    cv_.notify_all();
  }
  /// The generation a wait issued now must reach (the latest record).
  uint64_t Latest() {
    std::lock_guard<std::mutex> lock(mu_);
    return recorded_;
  }
  bool Reached(uint64_t generation) {
    std::lock_guard<std::mutex> lock(mu_);
    return completed_ >= generation;
  }
  void WaitFor(uint64_t generation) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return completed_ >= generation; });
  }

 private:
  const int32_t device_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t recorded_ = 0, completed_ = 0;
};

/// A Device whose streams and events are HostStream / HostEvent and whose copies and memsets
/// are memmove / memset on the host memory HostAddress() returns.
class HostQueueDevice : public Device {
 public:
  using Device::Device;

  /// Host memory holding bytes [offset, offset + bytes) of allocation `ptr` on `device`.
  /// Throws Error(WEFT_ERR_INVALID_ARGUMENT) naming the device, pointer and range when they are
  /// not inside one live allocation (as far as the device can tell). `bytes` may be 0.
  /// This is also the seam through which host-code kernels reach device memory (kernel_queue.hpp).
  virtual void* HostAddress(int32_t device, weft_device_ptr ptr, uint64_t offset, uint64_t bytes) = 0;

  /// Runs `task` now in this thread (stream NULL) or queues it on `stream` (after a delay of
  /// TaskLatency(), which models a device that completes asynchronously).
  void Submit(weft_stream stream, std::function<void()> task) {
    if (stream == nullptr) {
      task();
      return;
    }
    std::shared_ptr<HostStream> s = FindStream(stream, "submit");
    const std::chrono::microseconds latency = TaskLatency();
    if (latency.count() > 0) {
      s->Enqueue([latency, t = std::move(task)] {
        std::this_thread::sleep_for(latency);
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
    Submit(a.stream, [src, dst, n] { std::memmove(dst, src, n); });
  }

  void Memset(const weft_memset_args& a) override {
    void* dst = HostAddress(a.device, a.dst, a.offset, a.bytes);
    const uint64_t n = a.bytes;
    const int value = a.value;
    Submit(a.stream, [dst, n, value] { std::memset(dst, value, n); });
  }

  weft_stream CreateStream(int32_t device) override {
    auto s = std::make_shared<HostStream>(device);
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

  weft_event CreateEvent(int32_t device) override {
    auto e = std::make_shared<HostEvent>(device);
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
    s->Enqueue([e, generation] { e->Complete(generation); });
  }
  void StreamWaitEvent(weft_stream stream, weft_event event) override {
    std::shared_ptr<HostEvent> e = FindEvent(event, "stream_wait_event");
    const uint64_t generation = e->Latest();  // records made after this call do not count
    if (stream == nullptr) {
      e->WaitFor(generation);
      return;
    }
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

 protected:
  /// Delay each queued task waits before it runs (simulated devices); 0 = none.
  virtual std::chrono::microseconds TaskLatency() const { return std::chrono::microseconds(0); }

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

  std::mutex registry_mu_;
  std::unordered_map<weft_stream, std::shared_ptr<HostStream>> streams_;
  std::unordered_map<weft_event, std::shared_ptr<HostEvent>> events_;
};

}  // namespace weft::sdk
