// Typed host pointers to a device call's tensors for the cpu's sparse kernels (SDK 2.1), which
// take sdk::DeviceCall rather than the host adapter's KernelCall: the table's resolver turns a
// tensor's device pointer into host memory (the cpu's is the identity plus the offset).
#pragma once

#include <cstdint>

#include "weft/sdk/cpp/kernel.hpp"

namespace weft::cpu {

/// `elements` values of type T at tensor `t` of call `c`, as a host pointer. Thread-safe.
template <typename T>
T* HostData(const sdk::DeviceCall& c, const sdk::DeviceTensor& t, int64_t elements) {
  const uint64_t bytes = static_cast<uint64_t>(elements) * sizeof(T);
  return static_cast<T*>(c.table->Resolve(t.device(), t.data(), t.offset(), bytes));
}

}  // namespace weft::cpu
