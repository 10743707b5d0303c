// CPU plugin — facts about the host machine for device properties.
#pragma once

#include <cstdint>
#include <string>

namespace weft::cpu {

/// What the plugin reports about the host. Read once at init.
struct HostInfo {
  std::string model;          // /proc/cpuinfo "model name" (e.g. "AMD EPYC 7B13"), "unknown cpu" if absent
  std::string vendor;         // "AMD", "Intel", or /proc/cpuinfo's vendor_id as is
  std::string isa;            // the SIMD features that matter to kernels, space-separated ("avx2 fma")
  int32_t cores = 1;          // CPUs this process may run on (sched_getaffinity), >= 1
  uint64_t total_memory = 0;  // physical RAM, bytes (sysinfo)
  uint64_t total_swap = 0;    // swap, bytes (sysinfo)
};

/// Reads /proc/cpuinfo, sched_getaffinity and sysinfo. Never throws; missing facts stay default.
HostInfo ReadHostInfo();

/// Bytes of memory available now (/proc/meminfo MemAvailable, else sysinfo freeram); 0 = unknown.
uint64_t AvailableMemory();

}  // namespace weft::cpu
