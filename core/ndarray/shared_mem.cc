// NDArrays in POSIX shared memory (MXNet's cpu_shared context, as its CPUSharedStorageManager does
// it on Linux): the creator makes a segment with shm_open, sizes it, maps it and unlinks the name
// at once; the segment's file descriptor is its id. Another process gets that descriptor over a
// Unix socket (Python's DataLoader pickles arrays with multiprocessing's DupFd) and maps it. The
// kernel frees the memory when the last mapping and descriptor are gone, so nothing outlives the
// processes, even after a crash.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>

#include "chunk.h"
#include "weft/ndarray.h"

namespace weft {

using ndarray_detail::Chunk;

namespace {

std::string ErrnoText(int err) { return std::string(std::strerror(err)); }

uint64_t BytesOf(const Shape& shape, DType dtype) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    WEFT_CHECK(d >= 0 && (d == 0 || n <= (uint64_t{1} << 56) / static_cast<uint64_t>(d)),
               "shared-memory array of shape {}: extents must be non-negative and the array not too large", shape);
    n *= static_cast<uint64_t>(d);
  }
  return n * DTypeSize(dtype);
}

// Maps `fd` (at least `bytes` long) into a chunk that owns the mapping and the descriptor; closes
// the descriptor and throws on failure.
std::shared_ptr<Chunk> MapSegment(int pid, int fd, uint64_t bytes) {
  const uint64_t length = bytes == 0 ? 1 : bytes;  // mmap refuses a length of 0
  void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    close(fd);
    Fail("shared-memory array: mmap of {} bytes failed: {}", length, ErrnoText(err));
  }
  auto release = [p, length, fd] {
    munmap(p, length);
    close(fd);
  };
  std::shared_ptr<Chunk> chunk;
  try {
    chunk = std::make_shared<Chunk>(Context::cpu(0), reinterpret_cast<weft_device_ptr>(p), bytes, release);
  } catch (...) {
    release();
    throw;
  }
  chunk->shm = Chunk::SharedMem{pid, fd};
  return chunk;
}

}  // namespace

NDArray NDArray::CreateSharedMem(const Shape& shape, DType dtype) {
  const uint64_t bytes = BytesOf(shape, dtype);
  static std::atomic<uint32_t> counter{0};
  std::random_device rd;
  const int pid = static_cast<int>(getpid());
  int fd = -1;
  std::string name;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    name = fmt::format("/weft_{:x}_{:x}_{:x}", pid, counter.fetch_add(1), rd());
    fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) Fail("shared-memory array: shm_open('{}') failed: {}", name, ErrnoText(errno));
  shm_unlink(name.c_str());  // the descriptor keeps the segment; no name to leak
  if (ftruncate(fd, static_cast<off_t>(bytes == 0 ? 1 : bytes)) != 0) {
    const int err = errno;
    close(fd);
    Fail("shared-memory array: sizing the segment to {} bytes failed: {} (is /dev/shm full?)", bytes, ErrnoText(err));
  }
  return NDArray(MapSegment(pid, fd, bytes), shape, dtype, 0);
}

NDArray NDArray::FromSharedMem(int shared_pid, int shared_id, const Shape& shape, DType dtype) {
  const uint64_t bytes = BytesOf(shape, dtype);
  struct stat st {};
  WEFT_CHECK(shared_id >= 0 && fstat(shared_id, &st) == 0,
             "shared-memory array ({}, {}): {} is not an open file descriptor in this process; pass the descriptor "
             "received from the creating process",
             shared_pid, shared_id, shared_id);
  WEFT_CHECK(static_cast<uint64_t>(st.st_size) >= bytes,
             "shared-memory array ({}, {}): the segment holds {} bytes, shape {} {} needs {}", shared_pid, shared_id,
             st.st_size, shape, DTypeName(dtype), bytes);
  int fd = shared_id;
  if (shared_pid == static_cast<int>(getpid())) {
    fd = fcntl(shared_id, F_DUPFD_CLOEXEC, 0);  // the creator's own descriptor stays the creator's
    WEFT_CHECK(fd >= 0, "shared-memory array ({}, {}): dup failed: {}", shared_pid, shared_id, ErrnoText(errno));
  }
  return NDArray(MapSegment(shared_pid, fd, bytes), shape, dtype, 0);
}

bool NDArray::IsSharedMem() const noexcept { return chunk_ && chunk_->shm.has_value(); }

void NDArray::GetSharedMemHandle(int* shared_pid, int* shared_id) const {
  WEFT_CHECK(IsSharedMem(),
             "GetSharedMemHandle: the array is not in shared memory; copy it into NDArray::CreateSharedMem first");
  WEFT_CHECK(offset_ == 0,
             "GetSharedMemHandle: the array is a view at byte {} of its segment; the handle names the "
             "whole segment, so pass the array itself",
             offset_);
  WaitToRead();
  if (shared_pid) *shared_pid = chunk_->shm->pid;
  if (shared_id) *shared_id = chunk_->shm->fd;
}

}  // namespace weft
