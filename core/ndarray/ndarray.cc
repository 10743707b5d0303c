// NDArray: construction, views, copies through the engine, waits and element access.
// Save/Load live in ndarray_io.cc.
#include "weft/ndarray.h"

#include <cstring>

#include "chunk.h"
#include "dtype_convert.h"
#include "sparse_parts.h"
#include "storage/staging.h"
#include "weft/sparse.h"

namespace weft {

using ndarray_detail::Chunk;

namespace {

// Row i of `to` = `from + rows[i] * row_bytes`; runs of consecutive source rows are one memcpy
// (a whole unshuffled batch is one block).
void GatherRows(uint8_t* to, const uint8_t* from, const std::vector<uint32_t>& rows, size_t row_bytes) {
  for (size_t i = 0; i < rows.size();) {
    size_t run = 1;
    while (i + run < rows.size() && rows[i + run] == rows[i] + run) ++run;
    std::memcpy(to + i * row_bytes, from + size_t{rows[i]} * row_bytes, run * row_bytes);
    i += run;
  }
}

uint64_t CheckedBytes(const Shape& shape, DType dtype) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    WEFT_CHECK(d >= 0, "cannot create an array of shape {}: extents cannot be negative", shape);
    WEFT_CHECK(d == 0 || n <= (uint64_t{1} << 62) / static_cast<uint64_t>(d),
               "cannot create an array of shape {}: it is too large", shape);
    n *= static_cast<uint64_t>(d);
  }
  const uint64_t elem = DTypeSize(dtype);
  WEFT_CHECK(n <= (uint64_t{1} << 62) / elem, "cannot create an array of shape {}: it is too large", shape);
  return n * elem;
}

bool IsCpu(const Context& ctx) { return ctx.GetDeviceType() == "cpu"; }

using storage_detail::AcquireStaging;
using Staging = std::shared_ptr<storage_detail::StagingBuffer>;

// Copies `bytes` bytes of host memory to dst+off inside an engine function running with `rctx`:
// on a stream through a staging buffer (the function's captures, holding `keep`, live until the
// stream has passed the copy), synchronously otherwise.
void CopyHostToDevice(Device* dst, weft_device_ptr dp, uint64_t off, const void* src, uint64_t bytes,
                      const RunContext& rctx, Staging* keep) {
  if (rctx.stream == nullptr || dst->host_addressable()) {
    dst->CopyFromHost(dp, off, src, bytes, rctx.stream);
    return;
  }
  *keep = AcquireStaging(*dst, bytes);
  std::memcpy((*keep)->data(), src, bytes);
  dst->CopyFromHost(dp, off, (*keep)->data(), bytes, rctx.stream);
}

// Removes a temporary engine variable when the scope ends (also on exceptions).
struct ScopedVar {
  ScopedVar(const Context& c) : ctx(c), var(Engine::Get()->NewVariable()) {}
  ~ScopedVar() { Engine::Get()->DeleteVariable(nullptr, ctx, var); }
  Context ctx;
  VarHandle var;
};

}  // namespace

// ---- construction ------------------------------------------------------------------------------

NDArray::NDArray() = default;

NDArray::NDArray(const Shape& shape, const Context& context, bool delay_alloc, DType dtype)
    : chunk_(std::make_shared<Chunk>(context, CheckedBytes(shape, dtype), delay_alloc)), shape_(shape), dtype_(dtype) {}

NDArray::NDArray(const std::vector<float>& data, const Shape& shape, const Context& context)
    : NDArray(shape, context, false, DType::kFloat32) {
  SyncCopyFromCPU(data);
}

NDArray::NDArray(const float* data, const Shape& shape, const Context& context)
    : NDArray(shape, context, false, DType::kFloat32) {
  SyncCopyFromCPU(data, static_cast<size_t>(shape.Size()));
}

NDArray::NDArray(const float* data, size_t size) : NDArray(data, Shape(static_cast<int64_t>(size)), Context::cpu(0)) {}

NDArray::NDArray(const std::vector<float>& data) : NDArray(data.data(), data.size()) {}

NDArray::NDArray(std::shared_ptr<Chunk> chunk, Shape shape, DType dtype, uint64_t offset)
    : chunk_(std::move(chunk)), shape_(std::move(shape)), dtype_(dtype), offset_(offset) {}

NDArray NDArray::FromExternal(const Context& context, weft_device_ptr ptr, uint64_t bytes, const Shape& shape,
                              DType dtype, std::function<void()> release) {
  for (int64_t d : shape) WEFT_CHECK(d >= 0, "NDArray::FromExternal: shape {} has a negative extent", shape);
  const uint64_t need = static_cast<uint64_t>(shape.Size()) * DTypeSize(dtype);
  WEFT_CHECK(need <= bytes, "NDArray::FromExternal: shape {} of {} needs {} bytes, the memory has {}", shape,
             DTypeName(dtype), need, bytes);
  auto chunk = std::make_shared<Chunk>(context, ptr, bytes, std::move(release));
  return NDArray(std::move(chunk), shape, dtype, 0);
}

NDArray NDArray::WithOwnVariable() const {
  CheckDense("WithOwnVariable");
  return NDArray(std::make_shared<Chunk>(chunk_), shape_, dtype_, offset_);
}

void NDArray::CheckNotNone(const char* what) const {
  WEFT_CHECK(chunk_ != nullptr, "{}: the array is none (default-constructed or loaded from an empty record)", what);
}

void NDArray::CheckDense(const char* what) const {
  CheckNotNone(what);
  WEFT_CHECK(chunk_->sparse == nullptr,
             "{}: the array is {} (shape {}); this needs a dense array: convert it first (CastStorage to "
             "kDefault, MXNet's tostype('default'))",
             what, StorageTypeName(storage_type()), shape_);
}

Context NDArray::GetContext() const {
  CheckNotNone("GetContext");
  return chunk_->ctx;
}

size_t NDArray::Size() const noexcept { return chunk_ ? static_cast<size_t>(shape_.Size()) : 0; }

size_t NDArray::Bytes() const noexcept { return chunk_ && !chunk_->sparse ? Size() * DTypeSize(dtype_) : 0; }

VarHandle NDArray::var() const { return chunk_ ? chunk_->var : nullptr; }

void NDArray::CheckAndAlloc() const {
  CheckDense("CheckAndAlloc");
  chunk_->CheckAndAlloc();
}

weft_device_ptr NDArray::dptr() const { return chunk_ ? chunk_->handle().dptr : 0; }

Storage::Handle NDArray::storage_handle() const { return chunk_ ? chunk_->handle() : Storage::Handle{}; }

void NDArray::NoteWrite() const noexcept {
  if (chunk_) chunk_->writes.fetch_add(1, std::memory_order_relaxed);
}

uint64_t NDArray::write_count() const noexcept { return chunk_ ? chunk_->writes.load(std::memory_order_relaxed) : 0; }

bool NDArray::WritesCounted() const noexcept { return chunk_ && !chunk_->uncounted.load(std::memory_order_relaxed); }

void NDArray::NoteUncountedWrites() const noexcept {
  if (chunk_) chunk_->uncounted.store(true, std::memory_order_relaxed);
}

NDArray NDArray::Detach() const { return NDArray(chunk_, shape_, dtype_, offset_); }

// ---- host <-> array ----------------------------------------------------------------------------

void NDArray::CopyFromHostSync(const void* data, size_t bytes) {
  CheckAndAlloc();
  NoteWrite();
  const weft_device_ptr base = dptr();
  const uint64_t off = offset_;
  Device* dev = chunk_->device;
  Engine* engine = Engine::Get();
  if (dev->host_addressable() || bytes == 0) {
    engine->PushSync(
        [=](RunContext rctx) {
          if (bytes) dev->CopyFromHost(base, off, data, bytes, rctx.stream);
        },
        chunk_->ctx, {}, {chunk_->var}, IsCpu(chunk_->ctx) ? FnProperty::kNormal : FnProperty::kCopyToDevice, 0,
        "SyncCopyFromCPU");
  } else {
    // Staged here, so the queued copy never reads the caller's memory.
    Staging stage = AcquireStaging(*dev, bytes);
    std::memcpy(stage->data(), data, bytes);
    engine->PushSync([=](RunContext rctx) { dev->CopyFromHost(base, off, stage->data(), bytes, rctx.stream); },
                     chunk_->ctx, {}, {chunk_->var}, FnProperty::kCopyToDevice, 0, "SyncCopyFromCPU");
  }
  engine->WaitForVar(chunk_->var);
}

void NDArray::CopyRowsFromHostAsync(const void* src, std::vector<uint32_t> rows, size_t row_bytes) {
  CheckDense("CopyRowsFromHostAsync");
  WEFT_CHECK(rows.size() * row_bytes == Bytes(),
             "CopyRowsFromHostAsync: {} rows of {} bytes given for an array of shape {} {} ({} bytes)", rows.size(),
             row_bytes, shape_, DTypeName(dtype_), Bytes());
  CheckAndAlloc();
  NoteWrite();
  const weft_device_ptr base = dptr();
  const uint64_t off = offset_;
  Device* dev = chunk_->device;
  const auto* from = static_cast<const uint8_t*>(src);
  if (Bytes() == 0) return;
  if (dev->host_addressable()) {
    // Host-addressable memory (as GetRawData): the rows are copied with memcpy in the engine
    // function; a plugin call per row (200 per shuffled MNIST batch with the labels) cost more
    // than the copying.
    Engine::Get()->PushSync(
        [=, rows = std::move(rows)](RunContext) {
          GatherRows(reinterpret_cast<uint8_t*>(base + off), from, rows, row_bytes);
        },
        chunk_->ctx, {}, {chunk_->var}, IsCpu(chunk_->ctx) ? FnProperty::kNormal : FnProperty::kCopyToDevice, 0,
        "CopyRowsFromHost");
    return;
  }
  Staging stage = AcquireStaging(*dev, Bytes());
  for (size_t i = 0; i < rows.size(); ++i)
    std::memcpy(static_cast<uint8_t*>(stage->data()) + i * row_bytes, from + size_t{rows[i]} * row_bytes, row_bytes);
  const size_t bytes = Bytes();
  Engine::Get()->PushSync([=](RunContext rctx) { dev->CopyFromHost(base, off, stage->data(), bytes, rctx.stream); },
                          chunk_->ctx, {}, {chunk_->var}, FnProperty::kCopyToDevice, 0, "CopyRowsFromHost");
}

NDArray NDArray::FromHostRows(const void* src, std::vector<uint32_t> rows, size_t row_bytes, const Shape& shape,
                              const Context& context, DType dtype) {
  NDArray a(shape, context, /*delay_alloc=*/false, dtype);
  if (!a.chunk_->device->host_addressable()) {
    a.CopyRowsFromHostAsync(src, std::move(rows), row_bytes);
    return a;
  }
  WEFT_CHECK(rows.size() * row_bytes == a.Bytes(),
             "FromHostRows: {} rows of {} bytes given for an array of shape {} {} ({} bytes)", rows.size(), row_bytes,
             shape, DTypeName(dtype), a.Bytes());
  // No operation can have been pushed on the new array, and its memory came back to the pool
  // only after every operation on its previous owner completed: writing it here is safe.
  GatherRows(reinterpret_cast<uint8_t*>(a.dptr() + a.offset_), static_cast<const uint8_t*>(src), rows, row_bytes);
  return a;
}

void NDArray::CopyToHostSync(void* data, size_t bytes, uint64_t extra_offset) const {
  CheckAndAlloc();
  const weft_device_ptr base = dptr();
  const uint64_t off = offset_ + extra_offset;
  Device* dev = chunk_->device;
  Engine* engine = Engine::Get();
  if (IsCpu(chunk_->ctx) && dev->host_addressable() && WritesCounted() && !chunk_->shm) {
    // The host's own memory, written only through this chunk's variable: wait for the writes
    // queued before this call, then copy here. A read queued on the device would also wait for
    // every op queued before it, related or not (a device runs its queue in push order), and cost
    // a round trip through a worker: Module::Score reads batch n-1's outputs while batch n runs.
    // Pending reads need no wait. Memory that another chunk or the caller may also write (shared
    // memory, borrowed or external memory) keeps the queued read below: a test and users count on
    // it seeing ops pushed before it through the other array.
    engine->WaitForVar(chunk_->var);
    if (bytes) std::memcpy(data, reinterpret_cast<const void*>(base + off), bytes);
    return;
  }
  // WaitForVar does not wait for pending reads, so the read writes a private variable to wait on.
  ScopedVar done(chunk_->ctx);
  if (dev->host_addressable() || bytes == 0) {
    engine->PushSync(
        [=](RunContext rctx) {
          if (bytes) dev->CopyToHost(data, base, off, bytes, rctx.stream);
        },
        chunk_->ctx, {chunk_->var}, {done.var}, IsCpu(chunk_->ctx) ? FnProperty::kNormal : FnProperty::kCopyFromDevice,
        0, "SyncCopyToCPU");
    engine->WaitForVar(done.var);
    return;
  }
  // The device writes a staging buffer on its copy stream; the wait below blocks on that copy's
  // event, then the data is moved to the caller's memory here.
  Staging stage = AcquireStaging(*dev, bytes);
  engine->PushSync([=](RunContext rctx) { dev->CopyToHost(stage->data(), base, off, bytes, rctx.stream); }, chunk_->ctx,
                   {chunk_->var}, {done.var}, FnProperty::kCopyFromDevice, 0, "SyncCopyToCPU");
  engine->WaitForVar(done.var);
  std::memcpy(data, stage->data(), bytes);
}

void NDArray::SyncCopyFromCPU(const float* data, size_t size) {
  CheckDense("SyncCopyFromCPU");
  WEFT_CHECK(dtype_ == DType::kFloat32,
             "SyncCopyFromCPU(const float*): the array is {}, not float32; use "
             "SyncCopyFromCPUBytes",
             DTypeName(dtype_));
  WEFT_CHECK(size == Size(), "SyncCopyFromCPU: {} floats given for an array of shape {} ({} elements)", size, shape_,
             Size());
  CopyFromHostSync(data, size * sizeof(float));
}

void NDArray::SyncCopyFromCPU(const std::vector<float>& data) { SyncCopyFromCPU(data.data(), data.size()); }

void NDArray::SyncCopyFromCPUBytes(const void* data, size_t bytes) {
  CheckDense("SyncCopyFromCPUBytes");
  WEFT_CHECK(bytes == Bytes(), "SyncCopyFromCPUBytes: {} bytes given for an array of shape {} {} ({} bytes)", bytes,
             shape_, DTypeName(dtype_), Bytes());
  CopyFromHostSync(data, bytes);
}

void NDArray::SyncCopyToCPU(float* data, size_t size) const {
  CheckDense("SyncCopyToCPU");
  WEFT_CHECK(dtype_ == DType::kFloat32,
             "SyncCopyToCPU(float*): the array is {}, not float32; use "
             "SyncCopyToCPUBytes",
             DTypeName(dtype_));
  if (size == 0) size = Size();
  WEFT_CHECK(size == Size(), "SyncCopyToCPU: room for {} floats given for an array of shape {} ({} elements)", size,
             shape_, Size());
  CopyToHostSync(data, size * sizeof(float), 0);
}

void NDArray::SyncCopyToCPU(std::vector<float>* data, size_t size) const {
  WEFT_CHECK(data != nullptr, "SyncCopyToCPU: the output vector is null");
  CheckDense("SyncCopyToCPU");
  data->resize(Size());
  SyncCopyToCPU(data->data(), size);
}

void NDArray::SyncCopyToCPUBytes(void* data, size_t bytes) const {
  CheckDense("SyncCopyToCPUBytes");
  WEFT_CHECK(bytes == Bytes(), "SyncCopyToCPUBytes: room for {} bytes given for an array of shape {} {} ({} bytes)",
             bytes, shape_, DTypeName(dtype_), Bytes());
  CopyToHostSync(data, bytes, 0);
}

// ---- array <-> array ---------------------------------------------------------------------------

void NDArray::CopyFromTo(const NDArray& from, const NDArray& to, int priority) {
  WEFT_CHECK(!from.is_none() && !to.is_none(), "CopyTo: cannot copy {} a none array", from.is_none() ? "from" : "to");
  WEFT_CHECK(from.shape_ == to.shape_ && from.dtype_ == to.dtype_,
             "CopyTo: source {} {} on {} and destination {} {} on {} differ in shape or dtype", from.shape_,
             DTypeName(from.dtype_), from.chunk_->ctx, to.shape_, DTypeName(to.dtype_), to.chunk_->ctx);
  if (from.chunk_->sparse || to.chunk_->sparse) {
    CastStorageInto(from, to);
    return;
  }
  from.CheckAndAlloc();
  to.CheckAndAlloc();
  to.NoteWrite();
  const uint64_t bytes = from.Bytes();
  Device* src = from.chunk_->device;
  Device* dst = to.chunk_->device;
  const weft_device_ptr sp = from.dptr(), dp = to.dptr();
  const uint64_t so = from.offset_, doff = to.offset_;
  const Context& sctx = from.chunk_->ctx;
  const Context& dctx = to.chunk_->ctx;
  const FnProperty from_prop = IsCpu(sctx) ? FnProperty::kNormal : FnProperty::kCopyFromDevice;
  const FnProperty to_prop = IsCpu(dctx) ? FnProperty::kNormal : FnProperty::kCopyToDevice;
  const std::vector<VarHandle> reads{from.chunk_->var}, writes{to.chunk_->var};
  Engine* engine = Engine::Get();
  if (&src->plugin() == &dst->plugin()) {
    // One plugin: its own device-to-device copy, queued on a stream of the destination (the SDK's
    // rule for peer copies); the same device keeps it on the compute streams, in the chain.
    const bool same = sctx == dctx;
    engine->PushSync(
        [=](RunContext rctx) {
          if (bytes) dst->CopyFromDevice(dp, doff, *src, sp, so, bytes, rctx.stream);
        },
        dctx, reads, writes, same ? FnProperty::kNormal : to_prop, priority, "CopyDeviceToDevice");
    return;
  }
  if (bytes == 0) {
    engine->PushSync([](RunContext) {}, dctx, reads, writes, to_prop, priority, "CopyTo");
    return;
  }
  if (src->host_addressable()) {
    // Host memory to a device: staged on the destination's copy stream.
    auto keep = std::make_shared<Staging>();
    engine->PushSync(
        [=](RunContext rctx) {
          CopyHostToDevice(dst, dp, doff, reinterpret_cast<const void*>(sp + so), bytes, rctx, keep.get());
        },
        dctx, reads, writes, to_prop, priority, "CopyHostToDevice");
    return;
  }
  // From a device that is not host-addressable: its copy stream fills a staging buffer (a
  // temporary variable carries the copy's event); then the destination takes the data from there,
  // after a host wait for that event (host memory, or another plugin's device).
  Staging stage = AcquireStaging(*src, bytes);
  VarHandle staged = engine->NewVariable();
  engine->PushSync([=](RunContext rctx) { src->CopyToHost(stage->data(), sp, so, bytes, rctx.stream); }, sctx, reads,
                   {staged}, from_prop, priority, "CopyDeviceToStaging");
  auto keep = std::make_shared<Staging>();
  engine->PushSync(
      [=](RunContext rctx) {
        if (dst->host_addressable()) {
          std::memcpy(reinterpret_cast<void*>(dp + doff), stage->data(), bytes);
        } else {
          CopyHostToDevice(dst, dp, doff, stage->data(), bytes, rctx, keep.get());
        }
      },
      dctx, {staged}, writes, to_prop, priority, dst->host_addressable() ? "CopyStagingToHost" : "CopyThroughHost");
  engine->DeleteVariable({}, dctx, staged);
}

NDArray NDArray::CopyTo(NDArray* other) const {
  WEFT_CHECK(other != nullptr, "CopyTo: the destination is null");
  CopyFromTo(*this, *other);
  return *other;
}

NDArray NDArray::Copy(const Context& context) const {
  CheckNotNone("Copy");
  if (chunk_->sparse) {
    std::vector<DType> aux_types;
    for (size_t i = 0; i < num_aux_data(); ++i) aux_types.push_back(aux_type(i));
    NDArray out = CreateSparse(storage_type(), shape_, context, dtype_, aux_types);
    CopyFromTo(*this, out);
    return out;
  }
  NDArray out(shape_, context, false, dtype_);
  CopyFromTo(*this, out);
  return out;
}

NDArray& NDArray::operator=(float scalar) {
  CheckDense("operator=(float)");
  CheckAndAlloc();
  NoteWrite();
  const size_t elem = DTypeSize(dtype_);
  std::vector<uint8_t> value(elem);
  ndarray_detail::StoreFromDouble(scalar, dtype_, value.data());
  bool uniform = true;
  for (uint8_t b : value) uniform = uniform && b == value[0];
  const uint64_t bytes = Bytes();
  const weft_device_ptr base = dptr();
  const uint64_t off = offset_;
  Device* dev = chunk_->device;
  const size_t n = Size();
  auto keep = std::make_shared<Staging>();  // the staging buffer of a non-uniform fill
  Engine::Get()->PushSync(
      [=](RunContext rctx) {
        if (!bytes) return;
        if (uniform) {
          dev->Memset(base, off, bytes, value[0], rctx.stream);
          return;
        }
        std::vector<uint8_t> host(bytes);
        for (size_t i = 0; i < n; ++i) std::memcpy(host.data() + i * elem, value.data(), elem);
        CopyHostToDevice(dev, base, off, host.data(), bytes, rctx, keep.get());
      },
      chunk_->ctx, {}, {chunk_->var}, FnProperty::kNormal, 0, "Fill");
  return *this;
}

// ---- element access ----------------------------------------------------------------------------

size_t NDArray::Offset(size_t h, size_t w) const {
  WEFT_CHECK(shape_.ndim() == 2, "Offset(h, w) needs a 2-d array; this one has shape {}", shape_);
  return h * static_cast<size_t>(shape_[1]) + w;
}

size_t NDArray::Offset(size_t c, size_t h, size_t w) const {
  WEFT_CHECK(shape_.ndim() == 3, "Offset(c, h, w) needs a 3-d array; this one has shape {}", shape_);
  return (c * static_cast<size_t>(shape_[1]) + h) * static_cast<size_t>(shape_[2]) + w;
}

float NDArray::At(size_t index) const {
  CheckDense("At");
  WEFT_CHECK(index < Size(), "At: index {} is out of range for an array of shape {} ({} elements)", index, shape_,
             Size());
  uint8_t buf[8];
  const size_t elem = DTypeSize(dtype_);
  CopyToHostSync(buf, elem, index * elem);
  return static_cast<float>(ndarray_detail::LoadAsDouble(buf, dtype_));
}

float NDArray::At(size_t h, size_t w) const {
  WEFT_CHECK(shape_.ndim() == 2 && h < static_cast<size_t>(shape_[0]) && w < static_cast<size_t>(shape_[1]),
             "At({}, {}) is out of range for an array of shape {}", h, w, shape_);
  return At(Offset(h, w));
}

float NDArray::At(size_t c, size_t h, size_t w) const {
  WEFT_CHECK(shape_.ndim() == 3 && c < static_cast<size_t>(shape_[0]) && h < static_cast<size_t>(shape_[1]) &&
                 w < static_cast<size_t>(shape_[2]),
             "At({}, {}, {}) is out of range for an array of shape {}", c, h, w, shape_);
  return At(Offset(c, h, w));
}

const void* NDArray::GetRawData() const {
  CheckDense("GetData");
  WEFT_CHECK(chunk_->device->host_addressable(),
             "GetData: the array is on {}, whose memory the host cannot read; copy it with Copy(Context::cpu()) or "
             "SyncCopyToCPU",
             chunk_->ctx);
  CheckAndAlloc();
  return reinterpret_cast<const void*>(dptr() + offset_);
}

const float* NDArray::GetData() const {
  CheckDense("GetData");
  WEFT_CHECK(dtype_ == DType::kFloat32, "GetData: the array is {}, not float32; use GetRawData", DTypeName(dtype_));
  return static_cast<const float*>(GetRawData());
}

// ---- views -------------------------------------------------------------------------------------

NDArray NDArray::Slice(size_t begin, size_t end) const {
  CheckDense("Slice");
  WEFT_CHECK(shape_.ndim() >= 1, "Slice: a scalar (shape ()) has no first axis to slice");
  const auto rows = static_cast<size_t>(shape_[0]);
  WEFT_CHECK(begin <= end && end <= rows, "Slice({}, {}) is out of range for an array of shape {}", begin, end, shape_);
  uint64_t row_elems = 1;
  for (size_t i = 1; i < shape_.ndim(); ++i) row_elems *= static_cast<uint64_t>(shape_[i]);
  Shape s = shape_;
  s[0] = static_cast<int64_t>(end - begin);
  return NDArray(chunk_, std::move(s), dtype_, offset_ + begin * row_elems * DTypeSize(dtype_));
}

NDArray NDArray::Reshape(const Shape& new_shape) const {
  CheckDense("Reshape");
  Shape s = new_shape;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < s.ndim(); ++i) {
    if (s[i] == -1) {
      WEFT_CHECK(infer < 0, "Reshape to {}: at most one extent may be -1", new_shape);
      infer = static_cast<int>(i);
    } else {
      WEFT_CHECK(s[i] >= 0, "Reshape to {}: extents must be >= 0 (or one -1 to infer)", new_shape);
      known *= s[i];
    }
  }
  const auto size = static_cast<int64_t>(Size());
  if (infer >= 0) {
    WEFT_CHECK(known > 0 && size % known == 0, "Reshape: cannot infer the -1 in {} for an array of shape {}", new_shape,
               shape_);
    s[static_cast<size_t>(infer)] = size / known;
  }
  WEFT_CHECK(s.Size() == size, "Reshape: shape {} has {} elements but the array of shape {} has {}", new_shape,
             s.Size(), shape_, size);
  return NDArray(chunk_, std::move(s), dtype_, offset_);
}

NDArray NDArray::AsArray(const Shape& shape, DType dtype) const {
  CheckDense("AsArray");
  const uint64_t need = CheckedBytes(shape, dtype);
  WEFT_CHECK(offset_ + need <= chunk_->bytes,
             "AsArray: a view of shape {} {} needs {} bytes but only {} remain in the array's memory", shape,
             DTypeName(dtype), need, chunk_->bytes - offset_);
  return NDArray(chunk_, shape, dtype, offset_);
}

// ---- waiting -----------------------------------------------------------------------------------

void NDArray::WaitToRead() const {
  CheckNotNone("WaitToRead");
  Engine::Get()->WaitForVar(chunk_->var);
  if (chunk_->sparse) {
    data_ndarray().WaitToRead();
    for (size_t i = 0; i < num_aux_data(); ++i) aux_ndarray(i).WaitToRead();
  }
}

void NDArray::WaitToWrite() const {
  CheckNotNone("WaitToWrite");
  if (chunk_->sparse) {
    data_ndarray().WaitToWrite();
    for (size_t i = 0; i < num_aux_data(); ++i) aux_ndarray(i).WaitToWrite();
  }
  // An empty write waits behind every pending read and write (MXNet does the same).
  Engine* engine = Engine::Get();
  engine->PushSync([](RunContext) {}, chunk_->ctx, {}, {chunk_->var}, FnProperty::kNormal, 0, "WaitToWrite");
  engine->WaitForVar(chunk_->var);
}

void NDArray::WaitAll() { Engine::Get()->WaitForAll(); }

}  // namespace weft
