// MXNDArray: creation from R arrays, conversion back, shape, device, slices, save and load, and
// imperative operator calls (the engine behind mx.nd.* and NDArray arithmetic).
#include <cstring>
#include <unordered_map>

#include "common.h"

using namespace mxr;

namespace {

// MXNet's dtype codes (mshadow's TypeFlag).
enum DType { kFloat32 = 0, kFloat64 = 1, kFloat16 = 2, kUint8 = 3, kInt32 = 4, kInt8 = 5, kInt64 = 6 };

size_t NumElements(const std::vector<int>& shape) {
  size_t n = 1;
  for (int d : shape) n *= static_cast<size_t>(d);
  return n;
}

// IEEE half to float (MXNet checkpoints may hold float16 parameters).
float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      uint32_t m = mant;
      do {
        ++e;
        m <<= 1;
      } while ((m & 0x400u) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (m & 0x3ffu) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

template <typename T>
void Widen(const std::vector<char>& raw, double* out, size_t n) {
  const T* p = reinterpret_cast<const T*>(raw.data());
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<double>(p[i]);
}

size_t DTypeSize(int dtype) {
  switch (dtype) {
    case kFloat32:
    case kInt32:
      return 4;
    case kFloat64:
    case kInt64:
      return 8;
    case kFloat16:
      return 2;
    case kUint8:
    case kInt8:
      return 1;
  }
  Fail("as.array: MXNDArray of dtype code " + std::to_string(dtype) + " cannot be converted to an R array");
}

OpHandle Op(const std::string& name) {
  static std::unordered_map<std::string, OpHandle> cache;  // op handles live as long as the library
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  OpHandle h = nullptr;
  Check(api().NNGetOpHandle(name.c_str(), &h));
  cache.emplace(name, h);
  return h;
}

}  // namespace

// A new float32 MXNDArray of R dim `dim` on (dev_type, dev_id) holding `values` (R's column-major
// order is MXNet's row-major order of the reversed shape, so the bytes go over unchanged).
// [[Rcpp::export(.mx_nd_array, rng = false)]]
SEXP mx_nd_array(Rcpp::NumericVector values, Rcpp::IntegerVector dim, int dev_type, int dev_id) {
  std::vector<uint32_t> shape = MXShape(dim, "mx.nd.array");
  size_t n = 1;
  for (uint32_t d : shape) n *= d;
  if (n != static_cast<size_t>(values.size())) {
    Fail("mx.nd.array: " + std::to_string(values.size()) + " values for dim of " + std::to_string(n) + " elements");
  }
  NDArrayHandle h = nullptr;
  Check(api().MXNDArrayCreateEx(shape.data(), static_cast<uint32_t>(shape.size()), dev_type, dev_id, 0, kFloat32, &h));
  Rcpp::Shield<SEXP> out(Wrap(h, Kind::kNDArray));
  std::vector<float> data(values.begin(), values.end());
  Check(api().MXNDArraySyncCopyFromCPU(h, data.data(), n));
  return out;
}

// A new MXNDArray of R dim `dim` on the device, uninitialised (an imperative op fills it).
// [[Rcpp::export(.mx_nd_empty, rng = false)]]
SEXP mx_nd_empty(Rcpp::IntegerVector dim, int dev_type, int dev_id, int dtype) {
  std::vector<uint32_t> shape = MXShape(dim, "mx.nd.empty");
  NDArrayHandle h = nullptr;
  Check(api().MXNDArrayCreateEx(shape.data(), static_cast<uint32_t>(shape.size()), dev_type, dev_id, 0, dtype, &h));
  return Wrap(h, Kind::kNDArray);
}

// The values as an R numeric array with R's dim (waits for pending writes to the array).
// [[Rcpp::export(.mx_nd_as_array, rng = false)]]
SEXP mx_nd_as_array(SEXP nd) {
  void* h = Get(nd, Kind::kNDArray, "as.array(x)");
  const std::vector<int> shape = ShapeOf(h);
  int dtype = 0;
  Check(api().MXNDArrayGetDType(h, &dtype));
  const size_t n = NumElements(shape);
  std::vector<char> raw(n * DTypeSize(dtype));
  Check(api().MXNDArraySyncCopyToCPU(h, raw.data(), n));
  Rcpp::NumericVector out(n);
  double* o = out.begin();
  switch (dtype) {
    case kFloat32:
      Widen<float>(raw, o, n);
      break;
    case kFloat64:
      Widen<double>(raw, o, n);
      break;
    case kInt32:
      Widen<int32_t>(raw, o, n);
      break;
    case kInt64:
      Widen<int64_t>(raw, o, n);
      break;
    case kUint8:
      Widen<uint8_t>(raw, o, n);
      break;
    case kInt8:
      Widen<int8_t>(raw, o, n);
      break;
    case kFloat16: {
      const uint16_t* p = reinterpret_cast<const uint16_t*>(raw.data());
      for (size_t i = 0; i < n; ++i) o[i] = HalfToFloat(p[i]);
      break;
    }
  }
  out.attr("dim") = RDim(shape.data(), static_cast<int>(shape.size()));
  return out;
}

// [[Rcpp::export(.mx_nd_dim, rng = false)]]
Rcpp::IntegerVector mx_nd_dim(SEXP nd) {
  const std::vector<int> shape = ShapeOf(Get(nd, Kind::kNDArray, "dim(x)"));
  return RDim(shape.data(), static_cast<int>(shape.size()));
}

// MXNet's dtype name of the array.
// [[Rcpp::export(.mx_nd_dtype, rng = false)]]
int mx_nd_dtype(SEXP nd) {
  int dtype = 0;
  Check(api().MXNDArrayGetDType(Get(nd, Kind::kNDArray, "x"), &dtype));
  return dtype;
}

// c(dev_type, dev_id) in MXNet's numbering (1 cpu, 2 gpu).
// [[Rcpp::export(.mx_nd_context, rng = false)]]
Rcpp::IntegerVector mx_nd_context(SEXP nd) {
  int type = 0, id = 0;
  Check(api().MXNDArrayGetContext(Get(nd, Kind::kNDArray, "ctx(x)"), &type, &id));
  return Rcpp::IntegerVector::create(type, id);
}

// Elements [begin, end) of MXNet's first axis (R's last dimension), sharing memory with `nd`.
// [[Rcpp::export(.mx_nd_slice, rng = false)]]
SEXP mx_nd_slice(SEXP nd, int begin, int end) {
  void* h = Get(nd, Kind::kNDArray, "mx.nd.slice(x)");
  const std::vector<int> shape = ShapeOf(h);
  if (shape.empty() || begin < 0 || end < begin || end > shape[0]) {
    Fail("mx.nd.slice: [" + std::to_string(begin) + ", " + std::to_string(end) +
         ") is not a range of the last dimension (extent " + std::to_string(shape.empty() ? 0 : shape[0]) + ")");
  }
  NDArrayHandle out = nullptr;
  Check(api().MXNDArraySlice(h, static_cast<uint32_t>(begin), static_cast<uint32_t>(end), &out));
  return Wrap(out, Kind::kNDArray);
}

// [[Rcpp::export(.mx_nd_save, rng = false)]]
void mx_nd_save(Rcpp::List arrays, std::string filename, bool named) {
  std::vector<void*> handles = GetList(arrays, Kind::kNDArray, "mx.nd.save(ndarray)");
  std::vector<std::string> names;
  if (named) names = Rcpp::as<std::vector<std::string>>(arrays.names());
  std::vector<const char*> keys = CStrings(names);
  Check(api().MXNDArraySave(filename.c_str(), static_cast<uint32_t>(handles.size()), handles.data(),
                            named ? keys.data() : nullptr));
}

// [[Rcpp::export(.mx_nd_load, rng = false)]]
Rcpp::List mx_nd_load(std::string filename) {
  uint32_t n = 0, n_names = 0;
  NDArrayHandle* arrays = nullptr;
  const char** names = nullptr;
  Check(api().MXNDArrayLoad(filename.c_str(), &n, &arrays, &n_names, &names));
  // Wrap every handle before anything can fail, so none leaks.
  std::vector<void*> handles(arrays, arrays + n);
  std::vector<std::string> keys = Strings(n_names, names);
  Rcpp::List out(n);
  for (uint32_t i = 0; i < n; ++i) out[i] = Wrap(handles[i], Kind::kNDArray);
  if (n_names == n && n > 0) out.names() = keys;
  return out;
}

// Runs operator `op` on `inputs` (MXNDArrays) with string attributes. With `out` (a list of
// MXNDArrays) the results are written there and `out` is returned; otherwise new arrays.
// [[Rcpp::export(.mx_nd_invoke, rng = false)]]
Rcpp::List mx_nd_invoke(std::string op, Rcpp::List inputs, std::vector<std::string> keys,
                        std::vector<std::string> values, SEXP out) {
  if (keys.size() != values.size()) Fail("mx.nd." + op + ": attribute names and values differ in number");
  std::vector<void*> in = GetList(inputs, Kind::kNDArray, ("mx.nd." + op + " input").c_str());
  std::vector<const char*> ck = CStrings(keys), cv = CStrings(values);
  std::vector<void*> given;
  if (out != R_NilValue) given = GetList(Rcpp::List(out), Kind::kNDArray, ("mx.nd." + op + "(out)").c_str());
  int num_out = static_cast<int>(given.size());
  NDArrayHandle* outputs = given.empty() ? nullptr : given.data();
  Check(api().MXImperativeInvoke(Op(op), static_cast<int>(in.size()), in.data(), &num_out, &outputs,
                                 static_cast<int>(ck.size()), ck.data(), cv.data()));
  if (!given.empty()) return Rcpp::List(out);
  std::vector<void*> made(outputs, outputs + num_out);
  Rcpp::List result(num_out);
  for (int i = 0; i < num_out; ++i) result[i] = Wrap(made[i], Kind::kNDArray);
  return result;
}
