// libFuzzer target for the NDArray list (.params) reader. Any input must either parse or raise
// weft::Error — never crash, hang or allocate more than the input holds (run with
// -malloc_limit_mb to enforce the latter). What parses must survive a write/read round trip.
// Built by the `fuzz` preset; run by scripts/fuzz.sh with params.dict and the MXNet fixture
// legacy_ndarray.v0 plus a file written by weft as seeds.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "weft/ndarray_format.h"

namespace {

void CheckRoundTrip(const weft::NDArrayListData& list) {
  const std::vector<uint8_t> bytes = weft::SerializeNDArrayList(list);
  const weft::NDArrayListData back = weft::ParseNDArrayList(bytes, "round trip");
  if (back.arrays.size() != list.arrays.size() || back.names != list.names) std::abort();
  for (size_t i = 0; i < list.arrays.size(); ++i) {
    const auto& a = list.arrays[i];
    const auto& b = back.arrays[i];
    if (a.none != b.none) std::abort();
    if (a.none) continue;
    if (!(a.shape == b.shape) || a.dtype != b.dtype || a.data != b.data || a.dev_type != b.dev_type ||
        a.dev_id != b.dev_id || a.stype != b.stype || !(a.storage_shape == b.storage_shape) ||
        a.aux.size() != b.aux.size())
      std::abort();
    for (size_t k = 0; k < a.aux.size(); ++k)
      if (a.aux[k].dtype != b.aux[k].dtype || !(a.aux[k].shape == b.aux[k].shape) || a.aux[k].data != b.aux[k].data)
        std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  try {
    CheckRoundTrip(weft::ParseNDArrayList(bytes, "fuzz"));
  } catch (const weft::Error&) {
  }
  try {
    weft::NDArrayListData one;
    one.arrays.push_back(weft::ParseNDArrayRecord(bytes, "fuzz record"));
    CheckRoundTrip(one);
  } catch (const weft::Error&) {
  }
  return 0;
}
