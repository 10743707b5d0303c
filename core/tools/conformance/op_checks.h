// Operator conformance: every op a device claims (the kernels its plugin registered, i.e. what
// `supports_op` answers yes to), forward and gradient, for every dtype it claims, run on seeded
// random inputs through KernelRunner with sentinel-padded arrays (conformance_util.h) and
// compared at the dtype's NMSE tolerance: the cpu plugin's forward with the double-precision
// reference (reference.h), its gradients with central finite differences (float32, float64), the
// reference gradient of ops that define theirs, or (other dtypes) its float64 gradient; every
// other device with the cpu's results. The write requests add-to, null and in-place are checked
// against the plain write (the README's "Writing a device plugin" section).
//
// Used by weft-conformance (the certificate) and by tests/conformance (the in-tree suite).
// Not thread-safe: run one RunOpConformance at a time (KernelRunner's random seed is global).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "conformance_util.h"
#include "op_cases.h"
#include "weft/internal/plugin.h"

namespace wconf {

/// Outcome of one (op, dtype, forward|backward) cell. Names (StatusName) are the certificate's.
enum class Status { kNotClaimed, kPass, kFail, kNoGradient, kNotRun };
/// "not claimed", "pass", "fail", "none" (the op has no gradient), "not run" (time budget, or no
/// case reaches that dtype).
const char* StatusName(Status s);

/// The NMSE a result of `dtype` may differ from the reference by (1e-7 for float32/float64,
/// 1e-4 float16, 1e-3 bfloat16, 0 for integer dtypes).
double Tolerance(DType dtype);

/// One failed check of one case on one device.
struct Failure {
  std::string device;      // "simdev(0)"
  std::string row;         // forward op (the certificate's row)
  std::string op;          // the kernel that failed (forward op or its backward op)
  std::string dtype;       // dtype of the case (its first input)
  bool backward = false;   // the gradient kernel failed
  std::string check;       // "run", "vs cpu", "vs reference", "finite differences", "add-to", "null", "in-place", ...
  std::string case_label;  // OpCase::Label()
  uint64_t seed = 0;       // the case's seed (rerun with --seed)
  std::string error;       // what differed, e.g. "output 0 (5, 3): NMSE 2.1e-03 > 1e-07"
};

/// One cell of the certificate table.
struct Cell {
  Status status = Status::kNotClaimed;
  int cases = 0;           // case runs (every check of a case counts once)
  double worst = 0;        // largest NMSE against the reference over its cases
  std::string worst_case;  // label of the case with that error
};

/// One row: a forward op with its cells per dtype name: [0] forward, [1] backward.
struct OpRow {
  bool has_gradient = false;
  std::map<std::string, std::array<Cell, 2>> cells;
};

struct OpOptions {
  std::vector<weft::Context> devices;    // devices to check (the reference is cpu(0))
  const weft::Plugin* plugin = nullptr;  // claims = kernels this plugin registered; nullptr: any plugin's
  std::set<std::string> ops;             // forward op names to run (empty: every claimed op)
  std::set<std::string> dtypes;          // dtype names to run (empty: every claimed dtype)
  bool small = false;                    // one case per op and dtype (slow devices)
  double time_budget_s = 0;              // start no case after this many seconds (0: no limit)
  uint64_t seed = 20261121;
  std::function<void(const std::string&)> log;  // progress and notes (may be empty)
};

struct OpResults {
  std::map<std::string, std::map<std::string, OpRow>> by_type;  // device type -> forward op -> row
  std::vector<Failure> failures;
  std::vector<std::string> notes;  // refusals as listed, ops without cases, dtypes skipped
  int case_runs = 0;
  bool budget_exhausted = false;
};

/// Runs every case of every claimed op on every device of `options`. Never throws for a failing
/// kernel (it becomes a Failure); throws weft::Error when there is no cpu device for references.
OpResults RunOpConformance(const OpOptions& options);

/// The forward op whose gradient kernel is named `kernel_op` ("_backward_FullyConnected" ->
/// "FullyConnected"), or `kernel_op` itself when it is not a registered backward op.
std::string ForwardOpOf(const std::string& kernel_op);

/// Forward ops claimed on `device_type` (by `plugin`, or any) for which the suite has no case and
/// cannot build one from the op's definition.
std::vector<std::string> OpsWithoutCases(const std::string& device_type, const weft::Plugin* plugin);

/// Forward ops claimed on `device_type` (by `plugin`, or any) that have no reference
/// implementation (reference.h): their cpu results can only be checked against themselves.
std::vector<std::string> OpsWithoutReference(const std::string& device_type, const weft::Plugin* plugin);

}  // namespace wconf
