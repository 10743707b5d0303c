// weft core — the profiler: timed intervals (engine ops, plugin kernels and copies) collected in
// memory and written as Chrome trace-event JSON (the "JSON Object Format" of the Trace Event
// Format spec; opens in Perfetto, https://ui.perfetto.dev, and chrome://tracing).
//
// The engine records one "X" (complete) event per executed op: name = the op's name (or
// "<unnamed>"), category = "op" / "copy" / "async" / "delete", tid = the worker thread, args =
// {ctx, priority}. Plugins' trace events (the SDK host's trace hook) land in the same buffer
// with the category the plugin gave. Timestamps are CLOCK_MONOTONIC (std::chrono::steady_clock),
// written in microseconds as Chrome expects.
//
// Enable with Profiler::Get().SetEnabled(true) or WEFT_PROFILER_OUTPUT=file.json (enabled from
// start, dumped to that file at exit). Thread-safe: every method may be called from any thread.
#pragma once

#include "weft/export.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace weft {

class WEFT_API Profiler {
 public:
  /// The process-wide profiler (never destroyed, so it is usable during static destruction).
  static Profiler& Get();

  /// Starts or stops recording. Events already recorded are kept.
  void SetEnabled(bool enabled) noexcept;
  bool enabled() const noexcept;

  /// Records one interval [begin_ns, end_ns] (steady_clock ns), when enabled (a no-op
  /// otherwise), on trace thread `tid` (ThreadId() of some thread; -1 = the calling thread).
  /// `args_json` is either empty or a JSON object text added as the event's "args" (anything
  /// else is stored as a string instead).
  void AddEvent(std::string_view name, std::string_view category, uint64_t begin_ns, uint64_t end_ns,
                std::string_view args_json = {}, int tid = -1);
  /// The calling thread's trace id (small integers, assigned on first use).
  static int ThreadId();
  /// Names the calling thread in traces ("cpu(0) worker 0"); the default is "thread <n>".
  static void SetThreadName(std::string_view name);

  /// Writes every recorded event to `path` as trace-event JSON. Throws weft::Error naming the
  /// path when it cannot be written. Keeps the events (call Clear to drop them).
  void Dump(const std::string& path) const;
  /// The same document as a string.
  std::string DumpToString() const;
  /// Drops the recorded events.
  void Clear();
  /// Number of recorded events.
  size_t EventCount() const;

  /// steady_clock now, in ns.
  static uint64_t NowNs() noexcept;

  struct State;

 private:
  Profiler();
  std::unique_ptr<State> state_;
};

}  // namespace weft
