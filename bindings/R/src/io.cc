// MXDataIter: the C API's data iterators (mx.io.MNISTIter and the others it lists).
#include "common.h"

using namespace mxr;

namespace {

DataIterHandle Iter(SEXP x) { return Get(x, Kind::kDataIter, "data iterator"); }

DataIterCreator Creator(const std::string& name) {
  uint32_t n = 0;
  DataIterCreator* creators = nullptr;
  Check(api().MXListDataIters(&n, &creators));
  std::vector<DataIterCreator> all(creators, creators + n);
  for (DataIterCreator c : all) {
    const char *iter_name = nullptr, *desc = nullptr;
    uint32_t num_args = 0;
    const char **names = nullptr, **types = nullptr, **descs = nullptr;
    Check(api().MXDataIterGetIterInfo(c, &iter_name, &desc, &num_args, &names, &types, &descs));
    if (name == iter_name) return c;
  }
  Fail("no data iterator named '" + name + "'");
}

}  // namespace

// Every iterator the library lists: name, description, argument names, types, descriptions.
// [[Rcpp::export(.mx_io_list, rng = false)]]
Rcpp::List mx_io_list() {
  uint32_t n = 0;
  DataIterCreator* creators = nullptr;
  Check(api().MXListDataIters(&n, &creators));
  std::vector<DataIterCreator> all(creators, creators + n);
  Rcpp::List out(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    const char *name = nullptr, *desc = nullptr;
    uint32_t num_args = 0;
    const char **names = nullptr, **types = nullptr, **descs = nullptr;
    Check(api().MXDataIterGetIterInfo(all[i], &name, &desc, &num_args, &names, &types, &descs));
    out[i] = Rcpp::List::create(Rcpp::Named("name") = std::string(name), Rcpp::Named("description") = std::string(desc),
                                Rcpp::Named("arg.names") = Strings(num_args, names),
                                Rcpp::Named("arg.types") = Strings(num_args, types),
                                Rcpp::Named("arg.descriptions") = Strings(num_args, descs));
  }
  return out;
}

// [[Rcpp::export(.mx_io_create, rng = false)]]
SEXP mx_io_create(std::string name, std::vector<std::string> keys, std::vector<std::string> values) {
  if (keys.size() != values.size()) Fail("mx.io." + name + ": parameter names and values differ in number");
  DataIterCreator c = Creator(name);
  std::vector<const char*> ck = CStrings(keys), cv = CStrings(values);
  DataIterHandle h = nullptr;
  Check(api().MXDataIterCreateIter(c, static_cast<uint32_t>(ck.size()), ck.data(), cv.data(), &h));
  return Wrap(h, Kind::kDataIter);
}

// [[Rcpp::export(.mx_io_next, rng = false)]]
bool mx_io_next(SEXP iter) {
  int more = 0;
  Check(api().MXDataIterNext(Iter(iter), &more));
  return more != 0;
}

// [[Rcpp::export(.mx_io_reset, rng = false)]]
void mx_io_reset(SEXP iter) { Check(api().MXDataIterBeforeFirst(Iter(iter))); }

// list(data = , label = ) of the current batch.
// [[Rcpp::export(.mx_io_value, rng = false)]]
Rcpp::List mx_io_value(SEXP iter) {
  DataIterHandle h = Iter(iter);
  NDArrayHandle data = nullptr, label = nullptr;
  Check(api().MXDataIterGetData(h, &data));
  Rcpp::Shield<SEXP> d(Wrap(data, Kind::kNDArray));
  Check(api().MXDataIterGetLabel(h, &label));
  Rcpp::Shield<SEXP> l(Wrap(label, Kind::kNDArray));
  return Rcpp::List::create(Rcpp::Named("data") = d, Rcpp::Named("label") = l);
}

// [[Rcpp::export(.mx_io_num_pad, rng = false)]]
int mx_io_num_pad(SEXP iter) {
  int pad = 0;
  Check(api().MXDataIterGetPadNum(Iter(iter), &pad));
  return pad;
}
