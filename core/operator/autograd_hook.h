// weft core — where imperative invoke meets autograd (core/autograd, weft/autograd.h): the
// calling thread's recording and training switches (MXNet's thread-local
// Imperative::is_recording_ / is_train_) and the recorder autograd installs. It lives in the
// operator module so that Invoke (imperative.cc) can consult it without depending on the
// autograd module, which sits above the executor.
//
// Thread-safety: the switches are per thread; the recorder is installed once (by the first use of
// weft/autograd.h) and read with acquire semantics.
#pragma once

#include <vector>

#include "operator/op_def.h"
#include "weft/ndarray.h"

namespace weft::imperative_detail {

/// The calling thread's switches; both start false. The setters return the previous value.
bool IsRecording() noexcept;
bool SetIsRecording(bool on) noexcept;
bool IsTraining() noexcept;
bool SetIsTraining(bool on) noexcept;

/// One imperative call as the recorder sees it, after its kernel was pushed.
struct InvokedOp {
  const OpDef& def;
  const AttrMap& attrs;                // normalised
  const std::vector<NDArray>& inputs;  // the op's inputs, aux states excluded
  const std::vector<NDArray>& aux;
  std::vector<NDArray>& outputs;  // every output, hidden ones included; the recorder sets entries
  bool is_train;
};

struct Recorder {
  /// Called while recording, before anything is pushed, with the arrays the call writes (the
  /// caller's output arrays; none arrays for outputs Invoke allocates). Throws weft::Error to
  /// refuse the call (an output that is part of a recorded graph).
  void (*check_outputs)(const OpDef& def, const std::vector<NDArray>& outputs);
  /// Called while recording, after the op was pushed.
  void (*record)(const InvokedOp& op);
};

/// Installs the recorder (a static object of the autograd module). Thread-safe.
void SetRecorder(const Recorder* recorder) noexcept;
/// The recorder when this thread is recording and one is installed, else null.
const Recorder* ActiveRecorder() noexcept;

}  // namespace weft::imperative_detail
