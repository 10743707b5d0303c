// CTCLoss (weft/sdk/ops/ctc_loss.hpp): Graves et al., "Connectionist Temporal Classification"
// (ICML 2006), the forward-backward recursions over the label with blanks between its symbols,
// in log space (section 4.1), and the gradient with respect to the activations before the softmax
// (eq. 16). The rules that MXNet's warp-ctc based operator adds are kept:
//   - a transition may skip a blank only onto a label that is not the blank and differs from the
//     label two places back (so a label equal to the blank class is allowed and never skipped to);
//   - a sequence too short for its label (label length + repeated neighbours > frames) has loss 0
//     (MXNet leaves its gradient unwritten there; weft writes zeros);
//   - frames at or past a sequence's data_lengths get a zero gradient.
// Each sequence is computed in double on one thread; sequences are spread over the OpenMP team.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "nn_common.h"
#include "parallel.h"
#include "weft/sdk/ops/ctc_loss.hpp"

namespace weft::cpu {
namespace {

using weft::sdk::CTCLossParam;

constexpr uint64_t kCtcDTypes = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32) | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT64);
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// log(exp(a) + exp(b)) without overflow.
double LogAdd(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  const double hi = std::max(a, b);
  return hi + std::log1p(std::exp(std::min(a, b) - hi));
}

// One sequence: its label (class indices) and its frame count.
struct Sequence {
  std::vector<int64_t> label;
  int64_t frames = 0;
};

// Forward and gradient of one sequence. `x` points at frame 0 of the sequence (stride `step`
// elements between frames, C classes each); `grad` likewise (every frame written). Returns the loss.
template <typename T>
double SequenceLoss(const Sequence& seq, const T* x, T* grad, int64_t step, int64_t total_frames, int64_t classes,
                    int64_t blank) {
  const int64_t frames = seq.frames, length = static_cast<int64_t>(seq.label.size());
  for (int64_t t = 0; t < total_frames; ++t) std::fill(grad + t * step, grad + t * step + classes, T(0));
  int64_t repeats = 0;
  for (int64_t i = 1; i < length; ++i) repeats += seq.label[i] == seq.label[i - 1];
  if (length + repeats > frames) return 0.0;  // no alignment exists (MXNet's loss 0)

  // log softmax of every frame
  std::vector<double> logy(static_cast<size_t>(frames * classes));
  for (int64_t t = 0; t < frames; ++t) {
    const T* row = x + t * step;
    double hi = kNegInf, sum = 0.0;
    for (int64_t k = 0; k < classes; ++k) hi = std::max(hi, static_cast<double>(row[k]));
    for (int64_t k = 0; k < classes; ++k) sum += std::exp(static_cast<double>(row[k]) - hi);
    const double log_sum = hi + std::log(sum);
    for (int64_t k = 0; k < classes; ++k) logy[t * classes + k] = static_cast<double>(row[k]) - log_sum;
  }
  // The label with blanks around and between its symbols: S = 2L + 1 states.
  const int64_t states = 2 * length + 1;
  std::vector<int64_t> ext(static_cast<size_t>(states), blank);
  for (int64_t i = 0; i < length; ++i) ext[2 * i + 1] = seq.label[i];
  auto can_skip = [&](int64_t s, int64_t other) { return ext[s] != blank && ext[s] != ext[other]; };

  std::vector<double> alpha(static_cast<size_t>(frames * states), kNegInf), beta(alpha.size(), kNegInf);
  alpha[0] = logy[blank];
  if (length > 0) alpha[1] = logy[ext[1]];
  for (int64_t t = 1; t < frames; ++t) {
    const double* prev = &alpha[(t - 1) * states];
    double* cur = &alpha[t * states];
    for (int64_t s = 0; s < states; ++s) {
      double sum = prev[s];
      if (s >= 1) sum = LogAdd(sum, prev[s - 1]);
      if (s >= 2 && can_skip(s, s - 2)) sum = LogAdd(sum, prev[s - 2]);
      cur[s] = sum == kNegInf ? kNegInf : sum + logy[t * classes + ext[s]];
    }
  }
  const int64_t last = (frames - 1) * states;
  beta[last + states - 1] = logy[(frames - 1) * classes + blank];
  if (length > 0) beta[last + states - 2] = logy[(frames - 1) * classes + ext[states - 2]];
  for (int64_t t = frames - 2; t >= 0; --t) {
    const double* next = &beta[(t + 1) * states];
    double* cur = &beta[t * states];
    for (int64_t s = 0; s < states; ++s) {
      double sum = next[s];
      if (s + 1 < states) sum = LogAdd(sum, next[s + 1]);
      if (s + 2 < states && can_skip(s, s + 2)) sum = LogAdd(sum, next[s + 2]);
      cur[s] = sum == kNegInf ? kNegInf : sum + logy[t * classes + ext[s]];
    }
  }
  const double log_p =
      length > 0 ? LogAdd(alpha[last + states - 1], alpha[last + states - 2]) : alpha[last + states - 1];

  // d loss / d activation = y − (1/p) Σ_{s: ext[s] = k} α_t(s) β_t(s) / y_t(k): α and β both
  // include frame t's emission, hence the division.
  std::vector<double> occupied(static_cast<size_t>(classes));
  for (int64_t t = 0; t < frames; ++t) {
    std::fill(occupied.begin(), occupied.end(), kNegInf);
    for (int64_t s = 0; s < states; ++s)
      occupied[ext[s]] = LogAdd(occupied[ext[s]], alpha[t * states + s] + beta[t * states + s]);
    T* g = grad + t * step;
    for (int64_t k = 0; k < classes; ++k) {
      const double ly = logy[t * classes + k];
      const double y = std::exp(ly);
      g[k] = static_cast<T>(occupied[k] == kNegInf ? y : y - std::exp(occupied[k] - ly - log_p));
    }
  }
  return -log_p;
}

// Inputs data, label[, data_lengths][, label_lengths]; outputs loss (N), grad (T, N, C).
class CTCLossForward {
 public:
  explicit CTCLossForward(const KernelSetup& s) : p_(s.Params<CTCLossParam>()) {
    const int inputs = 2 + static_cast<int>(p_.use_data_lengths) + static_cast<int>(p_.use_label_lengths);
    s.ExpectCounts(inputs, 2);
    const TensorDesc& data = s.inputs[0];
    if (data.ndim() != 3) Invalid(s, "data must be (sequence length, batch, classes), got " + ShapeString(data));
    frames_ = data.dim(0), batch_ = data.dim(1), classes_ = data.dim(2);
    if (classes_ < 1) Invalid(s, "data has no classes: " + ShapeString(data));
    const TensorDesc& label = s.inputs[1];
    if (label.ndim() != 2 || label.dim(0) != batch_)
      Invalid(s, "label must be (batch, label length) with batch " + std::to_string(batch_) + ", got " +
                     ShapeString(label));
    label_width_ = label.dim(1);
    for (size_t i = 2; i < s.inputs.size(); ++i)
      if (s.inputs[i].ndim() != 1 || s.inputs[i].dim(0) != batch_)
        Invalid(s, "lengths input " + std::to_string(i) + " must be (" + std::to_string(batch_) + ",), got " +
                       ShapeString(s.inputs[i]));
    for (const auto* list : {&s.inputs, &s.outputs})
      for (const TensorDesc& t : *list)
        if (t.dtype != data.dtype)
          Unsupported(s, "every input and output must have data's dtype " + sdk::DTypeName(data.dtype) +
                             " (labels and lengths hold whole numbers in it)");
    dtype_ = data.dtype;
  }

  void Compute(const KernelCall& c) const {
    WithFloatType(dtype_, [&](auto t) { Run<decltype(t)>(c); });
  }

 private:
  // Reads and checks every sequence's label and frame count (on the calling thread: it may throw).
  template <typename T>
  std::vector<Sequence> Sequences(const KernelCall& c) const {
    const T* label = c.inputs[1].data<T>();
    const T* data_lengths = p_.use_data_lengths ? c.inputs[2].data<T>() : nullptr;
    const T* label_lengths = p_.use_label_lengths ? c.inputs[2 + p_.use_data_lengths].data<T>() : nullptr;
    auto whole = [](T v, int64_t lo, int64_t hi, const std::string& what) {
      if (!(v == std::floor(v)) || v < static_cast<T>(lo) || v > static_cast<T>(hi))
        throw Error(WEFT_ERR_INVALID_ARGUMENT, "CTCLoss: " + what + " is " + std::to_string(v) +
                                                   "; it must be a whole number from " + std::to_string(lo) + " to " +
                                                   std::to_string(hi));
      return static_cast<int64_t>(v);
    };
    std::vector<Sequence> seqs(static_cast<size_t>(batch_));
    for (int64_t n = 0; n < batch_; ++n) {
      Sequence& q = seqs[n];
      const std::string row = "sequence " + std::to_string(n);
      q.frames = data_lengths ? whole(data_lengths[n], 0, frames_, "data_lengths[" + std::to_string(n) + "]") : frames_;
      const int64_t length = label_lengths
                                 ? whole(label_lengths[n], 0, label_width_, "label_lengths[" + std::to_string(n) + "]")
                                 : label_width_;
      for (int64_t i = 0; i < length; ++i) {
        const T v = label[n * label_width_ + i];
        if (!label_lengths && v == static_cast<T>(p_.Padding())) break;  // the row's padding ends it
        q.label.push_back(whole(v, 0, classes_ - 1, "label[" + std::to_string(n) + ", " + std::to_string(i) + "]"));
      }
    }
    return seqs;
  }

  template <typename T>
  void Run(const KernelCall& c) const {
    const std::vector<Sequence> seqs = Sequences<T>(c);
    const T* x = c.inputs[0].data<T>();
    std::vector<T> loss(static_cast<size_t>(batch_));
    const bool direct = c.req[1] == WEFT_REQ_WRITE || c.req[1] == WEFT_REQ_WRITE_INPLACE;
    std::vector<T> scratch(direct ? 0 : static_cast<size_t>(c.outputs[1].size()));
    T* grad = scratch.empty() ? c.outputs[1].data<T>() : scratch.data();
    const int64_t step = batch_ * classes_;
    const int64_t blank = p_.Blank(classes_);
    ParallelChunks(batch_, frames_ * step * 8, [&](int64_t begin, int64_t end, int) {
      for (int64_t n = begin; n < end; ++n)
        loss[n] = static_cast<T>(
            SequenceLoss(seqs[n], x + n * classes_, grad + n * classes_, step, frames_, classes_, blank));
    });
    if (T* out = WantedOutput<T>(c, 0)) sdk::StoreReq(c.req[0], out, loss.data(), batch_);
    if (!scratch.empty()) sdk::StoreReq(c.req[1], c.outputs[1].data<T>(), scratch.data(), c.outputs[1].size());
  }

  CTCLossParam p_;
  int64_t frames_ = 0, batch_ = 0, classes_ = 0, label_width_ = 0;
  int32_t dtype_ = WEFT_DTYPE_FLOAT32;
};

// Inputs out_grad(output) (N), out_grad(grad) (unused), output, grad (T, N, C); outputs the
// gradients of data (grad scaled by each sequence's out_grad), label and the lengths (zeros).
class CTCLossBackward {
 public:
  explicit CTCLossBackward(const KernelSetup& s) {
    if (s.inputs.size() != 4 || s.outputs.size() < 2)
      Invalid(s, "expects out_grad, out_grad of grad, output and grad, and at least the data and label gradients");
    const TensorDesc& grad = s.inputs[3];
    if (grad.ndim() != 3 || s.inputs[0].size() != grad.dim(1) || s.outputs[0].size() != grad.size())
      Invalid(s, "grad " + ShapeString(grad) + ", out_grad " + ShapeString(s.inputs[0]) + " and data gradient " +
                     ShapeString(s.outputs[0]) + " do not fit together");
    step_ = grad.dim(1) * grad.dim(2);
    classes_ = grad.dim(2);
    dtype_ = grad.dtype;
  }
  void Compute(const KernelCall& c) const {
    WithFloatType(dtype_, [&](auto t) { Run<decltype(t)>(c); });
  }

 private:
  template <typename T>
  void Run(const KernelCall& c) const {
    if (T* gx = WantedOutput<T>(c, 0)) {
      const T* og = c.inputs[0].data<T>();
      const T* g = c.inputs[3].data<T>();
      const int64_t n = c.outputs[0].size();
      sdk::WithReq(c.req[0], [&](auto assign) {
        for (int64_t i = 0; i < n; ++i) assign(gx[i], g[i] * og[(i % step_) / classes_]);
      });
    }
    for (size_t o = 1; o < c.outputs.size(); ++o)
      if (T* z = WantedOutput<T>(c, o)) sdk::FillReq(c.req[o], z, T(0), c.outputs[o].size());
  }
  int64_t step_ = 1, classes_ = 1;
  int32_t dtype_ = WEFT_DTYPE_FLOAT32;
};

}  // namespace

void RegisterCTCLoss(KernelTable& t) {
  t.Add<CTCLossForward>("CTCLoss", kCtcDTypes);
  t.Add<CTCLossBackward>("_backward_ctc_loss", kCtcDTypes);
}

}  // namespace weft::cpu
