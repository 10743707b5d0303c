// The device contract (the README's "Writing a device plugin" section): what every device of every device plugin
// must do — properties, allocation (zero, odd, aligned sizes), copies in every direction with
// offsets and odd lengths, memset, stream order, events across streams, freeing with queued work,
// out-of-memory errors and recovery, errors for invalid handles and out-of-range accesses,
// concurrent use, kernels ordered with copies on a stream.
//
// Each check is a plain function over a Device that records failures in a Checker; weft-conformance
// runs them for its certificate and tests/device_contract runs them as GoogleTest cases. Checks of
// one device must not run concurrently with each other (they measure the device's memory).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "weft/base.h"
#include "weft/internal/device.h"

namespace weft::contract {

/// Collects the failures of one check. Expect records and continues; Require records and ends
/// the check; Skip ends it as skipped with a reason.
class Checker {
 public:
  /// Records `what` (prefixed with the current trace) as a failure when !ok.
  void Expect(bool ok, std::string_view what);
  /// Like Expect, but a failure ends the check.
  void Require(bool ok, std::string_view what);
  /// Ends the check as skipped.
  [[noreturn]] void Skip(std::string reason);
  /// Expects `fn()` to throw weft::Error (OutOfMemoryError when `oom`); `what` names the case.
  template <typename F>
  void ExpectError(F&& fn, std::string_view what, bool oom = false) {
    std::string got = "no error";
    try {
      fn();
    } catch (const OutOfMemoryError&) {
      return;
    } catch (const Error& e) {
      if (!oom) return;
      got = std::string("weft::Error, not OutOfMemoryError: ") + e.what();
    }
    Expect(false, std::string(what) + ": expected an error, got " + got);
  }
  /// Context for the failures recorded while it lives ("dst_offset 7 ...").
  class Trace {
   public:
    Trace(Checker& c, std::string text) : c_(c) { c_.trace_.push_back(std::move(text)); }
    ~Trace() { c_.trace_.pop_back(); }
    Trace(const Trace&) = delete;
    Trace& operator=(const Trace&) = delete;

   private:
    Checker& c_;
  };

  const std::vector<std::string>& failures() const { return failures_; }
  const std::string& skip_reason() const { return skip_reason_; }

 private:
  std::vector<std::string> failures_, trace_;
  std::string skip_reason_;
};

/// One check: its name (a GoogleTest-safe identifier), the function, and (nullptr: always) a function
/// that says why the check does not apply to a device ("" when it does: e.g. peer copies need a
/// second device).
struct ContractCheck {
  const char* name;
  void (*run)(Device& dev, Checker& c);
  std::string (*not_applicable)(Device& dev);
};

/// Every check, in a fixed order.
const std::vector<ContractCheck>& ContractChecks();

struct ContractOutcome {
  enum class Status { kPass, kFail, kSkip } status = Status::kPass;
  std::vector<std::string> failures;  // kFail: what went wrong (an exception that escaped included)
  std::string skip_reason;            // kSkip
  double seconds = 0;
};
/// "pass", "fail", "skip".
const char* OutcomeName(ContractOutcome::Status s);

/// Why `check` does not apply to `dev`, or "" when it does. Never throws for a working device.
std::string NotApplicable(const ContractCheck& check, Device& dev);

/// Runs one check on `dev` (skipped with the reason when it does not apply); never throws.
ContractOutcome RunContractCheck(const ContractCheck& check, Device& dev);

}  // namespace weft::contract
