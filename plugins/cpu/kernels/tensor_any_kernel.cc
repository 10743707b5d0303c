// AnyKernel (tensor_any_kernel.h): the one sdk kernel class behind AddAny's registrations.
#include "tensor_any_kernel.h"

#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace weft::cpu::tensor {
namespace {

struct Entry {
  uint64_t dtypes;
  AnyKernelFactory make;
};

// Every AddAny registration of the process: op name -> (dtype mask, factory).
class AnyRegistry {
 public:
  void Put(const std::string& op, uint64_t dtypes, AnyKernelFactory make) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<Entry>& entries = by_op_[op];
    for (const Entry& e : entries) {
      if (e.make == make && e.dtypes == dtypes) return;  // the same kernel, for another table
      if ((e.dtypes & dtypes) != 0) {
        throw sdk::Error(WEFT_ERR_INTERNAL, "cpu kernels: two kernels registered for " + op +
                                                " with overlapping dtype masks (a registration bug)");
      }
    }
    entries.push_back({dtypes, make});
  }

  // The factory whose mask holds `dtype` (the def the host chose, KeyDtype). Without such
  // a def (a caller that bypassed the host's choice), the op's first: its setup rejects the dtype
  // with its own message.
  AnyKernelFactory Find(const std::string& op, int32_t dtype) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = by_op_.find(op);
    if (it == by_op_.end() || it->second.empty()) {
      throw sdk::Error(WEFT_ERR_INTERNAL, "cpu kernels: no kernel registered for " + op);
    }
    const uint64_t bit = dtype >= 0 && dtype < 64 ? WEFT_DTYPE_BIT(dtype) : 0;
    for (const Entry& e : it->second) {
      if ((e.dtypes & bit) != 0) return e.make;
    }
    return it->second.front().make;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::vector<Entry>> by_op_;
};

AnyRegistry& Registry() {
  static AnyRegistry registry;
  return registry;
}

// The dtype the host chose the def by (core/operator/kernel_runner.h): the first input's, else
// (samplers, zeros) the first output's.
int32_t KeyDtype(const sdk::KernelSetup& s) {
  if (!s.inputs.empty()) return s.inputs[0].dtype;
  return s.outputs.empty() ? -1 : s.outputs[0].dtype;
}

class AnyKernel {
 public:
  explicit AnyKernel(const sdk::KernelSetup& s) : impl_(Registry().Find(s.op_name, KeyDtype(s))(s)) {}
  void Compute(const sdk::KernelCall& c) const { impl_->Compute(c); }

 private:
  std::unique_ptr<AnyKernelImpl> impl_;
};

}  // namespace

void AddAny(sdk::KernelTable& t, const std::string& op_name, uint64_t dtypes, AnyKernelFactory make,
            const char* source_file) {
  Registry().Put(op_name, dtypes, make);
  t.Add<AnyKernel>(op_name, dtypes, 0, source_file);
}

}  // namespace weft::cpu::tensor
