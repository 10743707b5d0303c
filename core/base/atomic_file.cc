#include "base/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include "weft/base.h"

namespace weft::detail {

namespace fs = std::filesystem;

fs::path TempNameFor(const fs::path& target) {
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::random_device rd;
  return dir / fmt::format(".{}.tmp-{}-{:08x}", target.filename().string(), ::getpid(), rd());
}

void WriteFileAtomically(const std::string& path, std::span<const uint8_t> bytes, std::string_view what) {
  const fs::path target(path);
  const fs::path tmp = TempNameFor(target);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) Fail("cannot save {} '{}': creating '{}': {}", what, path, tmp.string(), std::strerror(errno));
  auto fail = [&](const char* step, int err, bool close_fd) {
    if (close_fd) ::close(fd);
    ::unlink(tmp.c_str());
    Fail("cannot save {} '{}': {} '{}': {}", what, path, step, tmp.string(), std::strerror(err));
  };
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail("writing", errno, true);
    }
    done += static_cast<size_t>(w);
  }
  if (::fsync(fd) != 0) fail("flushing", errno, true);
  if (::close(fd) != 0) fail("closing", errno, false);
  if (::rename(tmp.c_str(), target.c_str()) != 0) fail("renaming over it", errno, false);
}

void CheckCanWriteNextTo(const std::string& path, std::string_view what) {
  const fs::path tmp = TempNameFor(fs::path(path));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    Fail("cannot write {} '{}': creating a file in '{}' failed: {}; choose a writable directory", what, path,
         tmp.parent_path().string(), std::strerror(errno));
  }
  ::close(fd);
  ::unlink(tmp.c_str());
}

}  // namespace weft::detail
