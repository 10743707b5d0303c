#include "host_info.h"

#include <sched.h>
#include <sys/sysinfo.h>

#include <fstream>
#include <sstream>
#include <string_view>

namespace weft::cpu {
namespace {

std::string Trim(std::string s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

}  // namespace

HostInfo ReadHostInfo() {
  HostInfo info;
  std::string vendor_id, flags;
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = Trim(line.substr(0, colon));
    if (key == "model name" && info.model.empty()) info.model = Trim(line.substr(colon + 1));
    if (key == "vendor_id" && vendor_id.empty()) vendor_id = Trim(line.substr(colon + 1));
    if (key == "flags" && flags.empty()) flags = " " + Trim(line.substr(colon + 1)) + " ";
    if (!info.model.empty() && !vendor_id.empty() && !flags.empty()) break;
  }
  if (info.model.empty()) info.model = "unknown cpu";
  info.vendor = vendor_id == "AuthenticAMD"   ? "AMD"
                : vendor_id == "GenuineIntel" ? "Intel"
                : vendor_id.empty()           ? "unknown"
                                              : vendor_id;
  for (std::string_view f :
       {"sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512_bf16", "amx_tile"}) {
    if (flags.find(" " + std::string(f) + " ") != std::string::npos) {
      if (!info.isa.empty()) info.isa += ' ';
      info.isa += f;
    }
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) info.cores = CPU_COUNT(&set) > 0 ? CPU_COUNT(&set) : 1;
  struct sysinfo si {};
  if (sysinfo(&si) == 0) {
    info.total_memory = static_cast<uint64_t>(si.totalram) * si.mem_unit;
    info.total_swap = static_cast<uint64_t>(si.totalswap) * si.mem_unit;
  }
  return info;
}

uint64_t AvailableMemory() {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream fields(line.substr(13));
      uint64_t kib = 0;
      if (fields >> kib) return kib * 1024;
    }
  }
  struct sysinfo si {};
  if (sysinfo(&si) == 0) return static_cast<uint64_t>(si.freeram) * si.mem_unit;
  return 0;
}

}  // namespace weft::cpu
