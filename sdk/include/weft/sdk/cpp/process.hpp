// weft SDK C++ helpers — whether a peer process on this host is still running.
//
// Transport plugins (transport.h) learn their peers' process ids at rendezvous; when a
// connection drops they ask whether a peer on the same host has exited, to name the rank that
// died instead of waiting for a timeout. Header-only, no host table needed, thread-safe (reads
// /proc only).
#pragma once

#include <fstream>
#include <string>

namespace weft::sdk {

/// True when process `pid` on this host has exited: /proc/<pid> is gone, or its state (the
/// third field of /proc/<pid>/stat, proc(5)) is Z (zombie: exited, not yet reaped) or X (dead).
/// False for a running or stopped process, for `pid` <= 0, and where there is no /proc (it
/// cannot tell there, and a false "gone" would name a live peer as dead). The state is read after
/// the last ')' of the line, because the second field, the command name in parentheses, may hold
/// spaces and parentheses of its own. A pid reused by a new process after the peer's exit and
/// reaping reads as running: callers use it as a hint next to a failed connection, not as proof.
inline bool ProcessGone(int pid) {
  if (pid <= 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return std::ifstream("/proc/self/stat").good();
  std::string line;
  std::getline(stat, line);
  const size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return false;
  return line[close + 2] == 'Z' || line[close + 2] == 'X';
}

}  // namespace weft::sdk
