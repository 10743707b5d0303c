// mxnet-cpp's MXDataIter (weft/io.h) on the iterator registry.
#include "weft/io.h"

namespace weft {

MXDataIter::MXDataIter(const std::string& type) : type_(type) {
  if (!FindDataIter(type)) {
    std::string known;
    for (const auto& info : ListDataIters()) known += (known.empty() ? "" : ", ") + info.name;
    Fail("MXDataIter: iterator type '{}' is not available; known: {}", type, known);
  }
}

MXDataIter MXDataIter::CreateDataIter() {
  MXDataIter out(type_);
  out.impl_ = weft::CreateDataIter(type_, params_);
  return out;
}

DataIter& MXDataIter::Impl() const {
  WEFT_CHECK(impl_ != nullptr, "MXDataIter: call CreateDataIter() first");
  return *impl_;
}
void MXDataIter::BeforeFirst() { Impl().BeforeFirst(); }
bool MXDataIter::Next() { return Impl().Next(); }
NDArray MXDataIter::GetData() { return Impl().GetData(); }
NDArray MXDataIter::GetLabel() { return Impl().GetLabel(); }
int MXDataIter::GetPadNum() { return Impl().GetPadNum(); }
std::vector<int> MXDataIter::GetIndex() { return Impl().GetIndex(); }
std::vector<DataDesc> MXDataIter::ProvideData() const { return Impl().ProvideData(); }
std::vector<DataDesc> MXDataIter::ProvideLabel() const { return Impl().ProvideLabel(); }

}  // namespace weft
