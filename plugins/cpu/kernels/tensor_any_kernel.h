// weft CPU kernels — one sdk kernel class for many ops (internal to weft_cpu_kernels).
//
// KernelTable::Add<K> instantiates the sdk's trampolines (create_state with its KernelSetup
// construction and error guard, compute with its tensor views) for each class K: about 6 KB of
// code and 0.13 s of -O3 compile time per class, whatever K does (issue 34: 41 empty classes
// took 6.7 s against 1.2 s for one). The element-wise families register some 200 classes (an op
// x a dtype flavour x forward/backward), so that boilerplate was about half of their build.
//
// AddAny<K>(table, op, dtypes) registers the one class AnyKernel instead and records K's factory
// under (op, dtypes) in a process-wide list; AnyKernel's setup finds the factory by the op's name
// and the dtype the host chose the def by (input 0's, else output 0's), and Compute calls K's
// through one virtual call. K's own code (its setup checks and loops) is compiled as before.
//
// For host kernel classes without WorkspaceBytes (static_assert) and not sparse (AddSparse keeps
// its own class). Thread-safe: registration and setup lock the list; Compute takes no lock.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "weft/sdk/cpp/host_kernel.hpp"

namespace weft::cpu::tensor {

/// A host kernel behind a virtual Compute.
class AnyKernelImpl {
 public:
  virtual ~AnyKernelImpl() = default;
  virtual void Compute(const sdk::KernelCall& c) const = 0;
};

using AnyKernelFactory = std::unique_ptr<AnyKernelImpl> (*)(const sdk::KernelSetup& s);

namespace detail {

template <typename K>
class AnyKernelOf final : public AnyKernelImpl {
 public:
  explicit AnyKernelOf(const sdk::KernelSetup& s) : kernel_(s) {}
  void Compute(const sdk::KernelCall& c) const override { kernel_.Compute(c); }

 private:
  K kernel_;
};

template <typename K>
std::unique_ptr<AnyKernelImpl> MakeAny(const sdk::KernelSetup& s) {
  return std::make_unique<AnyKernelOf<K>>(s);
}

}  // namespace detail

/// Registers `make`'s kernels for `op_name` and the dtype mask `dtypes` through AnyKernel.
/// Throws WEFT_ERR_INTERNAL when another factory already serves an overlapping mask of the op
/// (the host could not tell them apart either); registering the same pair again (a second table)
/// is a no-op for the list.
void AddAny(sdk::KernelTable& t, const std::string& op_name, uint64_t dtypes, AnyKernelFactory make,
            const char* source_file);

/// KernelTable::Add<K>(op_name, dtypes) with K's code reached through AnyKernel.
template <typename K>
void AddAny(sdk::KernelTable& t, const std::string& op_name, uint64_t dtypes,
            const char* source_file = WEFT_SDK_CALLER_FILE) {
  static_assert(sdk::KernelClass<K> && !sdk::detail::HasWorkspace<K>,
                "AddAny: K must be a host kernel class without WorkspaceBytes");
  AddAny(t, op_name, dtypes, &detail::MakeAny<K>, source_file);
}

}  // namespace weft::cpu::tensor
