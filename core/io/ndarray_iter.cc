// NDArrayIter (weft/ndarray_iter.h): a BatchPlan over the rows, views where possible, gathers
// from host copies otherwise, on one Prefetcher worker.
#include "weft/ndarray_iter.h"

#include <numeric>

#include "io/batch_plan.h"

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

struct NDArrayIter::Impl : ThreadedDataIter::Producer {
  int batch_size = 1;
  std::unique_ptr<Rows> data, label;
  std::unique_ptr<io_detail::BatchPlan> plan;

  void Restart(uint64_t delivered) override { plan->BeginEpoch(delivered); }

  bool Produce(uint64_t k, DataBatch* out, const ThreadedDataIter::Worker&) override {
    io_detail::BatchPlan::Batch b;
    if (!plan->GetBatch(k, &b)) return false;
    const bool contiguous = b.samples.back() + 1 - b.samples.front() == b.samples.size() &&
                            std::is_sorted(b.samples.begin(), b.samples.end());
    out->data = data->Batch(b.samples, contiguous, batch_size);
    out->label = label->Batch(b.samples, contiguous, batch_size);
    out->pad_num = b.pad;
    out->index.assign(b.samples.begin(), b.samples.end());
    return true;
  }
};

NDArrayIter::NDArrayIter(const NDArray& data, const NDArray& label, const NDArrayIterOptions& options) {
  WEFT_CHECK(!data.is_none() && data.GetShape().ndim() >= 1, "NDArrayIter: data must be an array with a row axis");
  const int64_t n = data.GetShape()[0];
  WEFT_CHECK(label.is_none() || (label.GetShape().ndim() >= 1 && label.GetShape()[0] == n),
             "NDArrayIter: data has {} rows but label has shape {}", n, label.GetShape());
  WEFT_CHECK(options.batch_size >= 1, "NDArrayIter: batch_size must be at least 1, got {}", options.batch_size);
  WEFT_CHECK(n >= 1 && n <= INT32_MAX, "NDArrayIter: data has {} rows; 1 to 2^31-1 are supported", n);
  auto impl = std::make_unique<Impl>();
  impl->batch_size = options.batch_size;
  impl->plan = std::make_unique<io_detail::BatchPlan>(static_cast<uint64_t>(n), options.batch_size,
                                                      ModeOf(options.last_batch_handle), options.shuffle, options.seed);
  impl->data = std::make_unique<Rows>(data);
  impl->label = std::make_unique<Rows>(label);
  auto with_batch = [&](const NDArray& a, const std::string& name) {
    Shape s = a.GetShape();
    s[0] = options.batch_size;
    return DataDesc{name, s, a.GetDType()};
  };
  data_ = with_batch(data, options.data_name);
  if (!label.is_none()) label_.push_back(with_batch(label, options.label_name));
  impl_ = impl.get();
  StartWorkers(std::move(impl), 1, static_cast<size_t>(std::max(options.prefetch_buffer, 1)));
}

size_t NDArrayIter::num_batches() const { return static_cast<size_t>(impl_->plan->num_batches()); }

}  // namespace weft
