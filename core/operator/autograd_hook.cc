#include "operator/autograd_hook.h"

#include <atomic>

namespace weft::imperative_detail {
namespace {

thread_local bool t_recording = false;
thread_local bool t_training = false;
std::atomic<const Recorder*> g_recorder{nullptr};

}  // namespace

bool IsRecording() noexcept { return t_recording; }
bool IsTraining() noexcept { return t_training; }

bool SetIsRecording(bool on) noexcept {
  const bool prev = t_recording;
  t_recording = on;
  return prev;
}

bool SetIsTraining(bool on) noexcept {
  const bool prev = t_training;
  t_training = on;
  return prev;
}

void SetRecorder(const Recorder* recorder) noexcept { g_recorder.store(recorder, std::memory_order_release); }

const Recorder* ActiveRecorder() noexcept { return t_recording ? g_recorder.load(std::memory_order_acquire) : nullptr; }

}  // namespace weft::imperative_detail
