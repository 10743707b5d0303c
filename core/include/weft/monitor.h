// weft — Monitor: statistics of every intermediate value and argument of executors, every so many
// batches, after MXNet's mx.monitor.Monitor (python/mxnet/monitor.py):
//
//   Monitor mon(/*interval=*/100, nullptr, ".*weight|.*output");
//   module.InstallMonitor(mon);              // or mon.Install(executor)
//   for (each batch) { mon.Tic(); module.Forward(b, true); module.Backward(); module.Update(); mon.TocPrint(); }
//
// Tic() arms the monitor on every `interval`-th call (counting from the first); while armed, the
// executors' monitor callbacks (weft/executor.h: "<node>_output", with monitor_all also node
// inputs, and backward outputs) record stat_func of each value whose name matches `pattern`
// (std::regex_match from the start of the name, as Python's re.match: ".*weight" matches
// "fc1_weight"); Toc() adds stat_func of each matching argument of every installed executor (in
// ListArguments order), disarms, and returns the records. TocPrint() writes them as MXNet logs
// them: "Batch: %7d %-30s %s" (step, name, the stat's values each followed by a tab).
//
// Thread-safety: one thread drives Tic/Toc and the executors it is installed on. The monitor must
// outlive the executors it is installed on, or be uninstalled first (SetMonitorCallback({})).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "weft/executor.h"
#include "weft/export.h"

namespace weft {

/// One recorded statistic: the Tic count it belongs to (MXNet's step: 1 after the first Tic),
/// the value's name and the statistic's elements formatted as MXNet does ("<v>\t" per element).
struct MonitorStat {
  int step;
  std::string name;
  std::string value;
};

class WEFT_API Monitor {
 public:
  /// A statistic of an array; returns an array of any shape (every element is printed). The
  /// default is MXNet's: the 2-norm divided by sqrt(number of elements), a shape (1,) float32
  /// array (computed in double on the host; float16/float64/integer arrays are read as float).
  using StatFunc = std::function<NDArray(const NDArray&)>;

  /// `interval` >= 1: every interval-th Tic arms the monitor. `pattern`: an ECMAScript regular
  /// expression. `sort`: Toc returns the records sorted by name (stable). `monitor_all`: node
  /// inputs too (MXNet's monitor_all). Throws weft::Error for interval < 1 or a pattern that is
  /// not a regular expression (naming it).
  explicit Monitor(int interval, StatFunc stat_func = nullptr, const std::string& pattern = ".*", bool sort = false,
                   bool monitor_all = false);

  /// Installs this monitor's callback on `executor` (replacing any other) and remembers the
  /// executor for Toc's arguments.
  void Install(Executor& executor);
  /// Arms the monitor on every interval-th call (waiting for the installed executors' arguments
  /// first, so what is recorded belongs to the coming batch), and counts the step.
  void Tic();
  /// When armed: records the matching arguments of every installed executor, disarms and returns
  /// every record since Tic (sorted by name with `sort`). Otherwise returns nothing.
  std::vector<MonitorStat> Toc();
  /// Toc(), each record printed to stderr as "Batch: %7d %-30s %s\n" (MXNet logs at INFO).
  void TocPrint();

  /// The default statistic (see StatFunc).
  static NDArray NormStat(const NDArray& array);

 private:
  void Record(const std::string& name, const NDArray& array);

  struct Pattern;  // the compiled std::regex (only monitor.cc includes <regex>)

  int interval_;
  StatFunc stat_func_;
  std::shared_ptr<const Pattern> pattern_;
  bool sort_, monitor_all_;
  int step_ = 0;
  bool activated_ = false;
  std::vector<Executor*> executors_;
  std::vector<std::pair<std::string, NDArray>> queue_;  // (name, stat) of the current step
};

}  // namespace weft
