// PrefetchingIter (weft/prefetching_iter.h): one Prefetcher worker calling the wrapped Next().
#include "weft/prefetching_iter.h"

#include "io/prefetcher.h"

namespace weft {

struct PrefetchingIter::Impl {
  std::unique_ptr<DataIter> base;
  std::vector<DataDesc> data_desc, label_desc;
  DataBatch current;
  bool touched = false;
  // Last: stopped before `base` goes.
  std::unique_ptr<io_detail::Prefetcher<DataBatch>> prefetcher;
};

PrefetchingIter::PrefetchingIter(std::unique_ptr<DataIter> base, int prefetch_buffer)
    : impl_(std::make_unique<Impl>()) {
  WEFT_CHECK(base != nullptr, "PrefetchingIter: no iterator given");
  WEFT_CHECK(prefetch_buffer >= 0, "PrefetchingIter: prefetch_buffer must not be negative, got {}", prefetch_buffer);
  Impl& m = *impl_;
  m.base = std::move(base);
  m.data_desc = m.base->ProvideData();
  m.label_desc = m.base->ProvideLabel();
  // One worker: the wrapped iterator's Next() calls stay sequential and in order.
  m.prefetcher = std::make_unique<io_detail::Prefetcher<DataBatch>>(
      1, static_cast<size_t>(std::max(prefetch_buffer, 1)), [&m](uint64_t, DataBatch* out, int) {
        if (!m.base->Next()) return false;
        *out = m.base->GetDataBatch();
        return true;
      });
  m.prefetcher->Start();
}

PrefetchingIter::~PrefetchingIter() = default;

void PrefetchingIter::BeforeFirst() {
  Impl& m = *impl_;
  if (!m.touched) return;
  m.prefetcher->Stop();
  m.touched = false;
  try {
    m.base->BeforeFirst();  // on this thread, with the worker stopped: its errors are thrown here
  } catch (...) {
    m.prefetcher->Start();  // Next() then reports whatever state the wrapped iterator is in
    throw;
  }
  m.prefetcher->Start();
}

bool PrefetchingIter::Next() {
  impl_->touched = true;
  DataBatch b;
  if (!impl_->prefetcher->Next(&b)) return false;
  impl_->current = std::move(b);
  return true;
}

NDArray PrefetchingIter::GetData() { return impl_->current.data; }
NDArray PrefetchingIter::GetLabel() { return impl_->current.label; }
int PrefetchingIter::GetPadNum() { return impl_->current.pad_num; }
std::vector<int> PrefetchingIter::GetIndex() { return impl_->current.index; }
std::vector<DataDesc> PrefetchingIter::ProvideData() const { return impl_->data_desc; }
std::vector<DataDesc> PrefetchingIter::ProvideLabel() const { return impl_->label_desc; }

}  // namespace weft
