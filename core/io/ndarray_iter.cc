// NDArrayIter (weft/ndarray_iter.h): a BatchPlan over the rows, views where possible, gathers
// from host copies otherwise, on one Prefetcher worker.
#include "weft/ndarray_iter.h"

#include <numeric>

#include "io/batch_plan.h"
#include "io/prefetcher.h"

namespace weft {

namespace {

struct Rows {
  NDArray array;              // the user's array (views are sliced from it)
  std::vector<uint8_t> host;  // its bytes, for gathering
  size_t row_bytes = 0;

  explicit Rows(const NDArray& a) : array(a) {
    if (a.is_none()) return;
    host.resize(a.Bytes());
    a.SyncCopyToCPUBytes(host.data(), host.size());
    row_bytes = a.GetShape()[0] == 0 ? 0 : a.Bytes() / static_cast<size_t>(a.GetShape()[0]);
  }
  NDArray Batch(const std::vector<uint32_t>& rows, bool contiguous, int batch) const {
    if (array.is_none()) return NDArray();
    if (contiguous) return array.Slice(rows.front(), rows.front() + rows.size());
    Shape s = array.GetShape();
    s[0] = batch;
    return NDArray::FromHostRows(host.data(), rows, row_bytes, s, array.GetContext(), array.GetDType());
  }
};

io_detail::LastBatch ModeOf(const std::string& handle) {
  if (handle == "pad") return io_detail::LastBatch::kPad;
  if (handle == "discard") return io_detail::LastBatch::kDiscard;
  if (handle == "roll_over") return io_detail::LastBatch::kRollOver;
  Fail("NDArrayIter: last_batch_handle '{}' is not one of 'pad', 'discard', 'roll_over'", handle);
}

}  // namespace

struct NDArrayIter::Impl {
  NDArrayIterOptions o;
  std::unique_ptr<Rows> data, label;
  std::unique_ptr<io_detail::BatchPlan> plan;
  DataBatch current;
  uint64_t delivered = 0;
  bool touched = false;
  std::unique_ptr<io_detail::Prefetcher<DataBatch>> prefetcher;  // last: stopped first

  bool Produce(uint64_t k, DataBatch* out) const {
    io_detail::BatchPlan::Batch b;
    if (!plan->GetBatch(k, &b)) return false;
    const bool contiguous = b.samples.back() + 1 - b.samples.front() == b.samples.size() &&
                            std::is_sorted(b.samples.begin(), b.samples.end());
    out->data = data->Batch(b.samples, contiguous, o.batch_size);
    out->label = label->Batch(b.samples, contiguous, o.batch_size);
    out->pad_num = b.pad;
    out->index.assign(b.samples.begin(), b.samples.end());
    return true;
  }
};

NDArrayIter::NDArrayIter(const NDArray& data, const NDArray& label, const NDArrayIterOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.o = options;
  WEFT_CHECK(!data.is_none() && data.GetShape().ndim() >= 1, "NDArrayIter: data must be an array with a row axis");
  const int64_t n = data.GetShape()[0];
  WEFT_CHECK(label.is_none() || (label.GetShape().ndim() >= 1 && label.GetShape()[0] == n),
             "NDArrayIter: data has {} rows but label has shape {}", n, label.GetShape());
  WEFT_CHECK(options.batch_size >= 1, "NDArrayIter: batch_size must be at least 1, got {}", options.batch_size);
  WEFT_CHECK(n >= 1 && n <= INT32_MAX, "NDArrayIter: data has {} rows; 1 to 2^31-1 are supported", n);
  m.plan = std::make_unique<io_detail::BatchPlan>(static_cast<uint64_t>(n), options.batch_size,
                                                  ModeOf(options.last_batch_handle), options.shuffle, options.seed);
  m.data = std::make_unique<Rows>(data);
  m.label = std::make_unique<Rows>(label);
  m.prefetcher = std::make_unique<io_detail::Prefetcher<DataBatch>>(
      1, static_cast<size_t>(std::max(options.prefetch_buffer, 1)),
      [&m](uint64_t k, DataBatch* out, int) { return m.Produce(k, out); });
  m.prefetcher->Start();
}

NDArrayIter::~NDArrayIter() = default;

void NDArrayIter::BeforeFirst() {
  Impl& m = *impl_;
  if (!m.touched) return;
  m.prefetcher->Stop();
  m.plan->BeginEpoch();
  m.delivered = 0;
  m.touched = false;
  m.prefetcher->Start();
}

bool NDArrayIter::Next() {
  Impl& m = *impl_;
  m.touched = true;
  DataBatch b;
  if (!m.prefetcher->Next(&b)) return false;
  m.plan->Delivered(m.delivered++);
  m.current = std::move(b);
  return true;
}

NDArray NDArrayIter::GetData() { return impl_->current.data; }
NDArray NDArrayIter::GetLabel() { return impl_->current.label; }
int NDArrayIter::GetPadNum() { return impl_->current.pad_num; }
std::vector<int> NDArrayIter::GetIndex() { return impl_->current.index; }

std::vector<DataDesc> NDArrayIter::ProvideData() const {
  Shape s = impl_->data->array.GetShape();
  s[0] = impl_->o.batch_size;
  return {{impl_->o.data_name, s, impl_->data->array.GetDType()}};
}

std::vector<DataDesc> NDArrayIter::ProvideLabel() const {
  if (impl_->label->array.is_none()) return {};
  Shape s = impl_->label->array.GetShape();
  s[0] = impl_->o.batch_size;
  return {{impl_->o.label_name, s, impl_->label->array.GetDType()}};
}

size_t NDArrayIter::num_batches() const { return static_cast<size_t>(impl_->plan->num_batches()); }

}  // namespace weft
