// simdev — the operator half of the simulated device: every CPU kernel class (plugins/cpu/kernels)
// registered for device type "simdev". The kernels compute in host code on memory reached through
// simdev's pointer resolver (which validates every handle, offset and size), and run queued on
// simdev's asynchronous streams (sdk/cpp/queued_kernels.hpp), so core's kernel path is exercised
// against a device that is not host-addressable. The conformance suite (tests/conformance)
// compares every op simdev claims with the CPU plugin.
#pragma once

#include "weft/sdk/cpp/host_kernel.hpp"
#include "weft/sdk/cpp/host_queue.hpp"
#include "weft/sdk/cpp/queued_kernels.hpp"
#include "weft/sdk/operator.h"

namespace weft::simdev {

/// Owns the kernel tables; lives in the plugin object (one per plugin init). Not copyable.
class SimdevKernels {
 public:
  /// `resolve(resolver_data, ...)` turns simdev handles into host pointers; `device` provides
  /// the streams; `host` the plugin's host table. Throws weft::sdk::Error when the CPU kernels
  /// cannot be registered.
  SimdevKernels(sdk::PointerResolver resolve, void* resolver_data, sdk::HostQueueDevice* device,
                const weft_host_api* host);
  SimdevKernels(const SimdevKernels&) = delete;
  SimdevKernels& operator=(const SimdevKernels&) = delete;

  /// The operator API to Provide() (valid while this object lives).
  const weft_operator_api* api() const noexcept { return queued_.api(); }

 private:
  static const weft_operator_api* Fill(sdk::KernelTable& table);
  sdk::KernelTable table_;
  sdk::QueuedKernels queued_;
};

}  // namespace weft::simdev
