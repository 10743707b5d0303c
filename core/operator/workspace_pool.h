// weft core — the temp space kernel runners share on a device (MXNet's ResourceManager kTempSpace,
// MXNET_CPU_TEMP_COPY): a few slots per Context, each one block of device memory and one engine
// variable. A runner whose kernel asks for a workspace (weft_kernel_state_args.workspace_bytes) is
// given a slot (round robin) that grows to hold it; every run through the runner writes the slot's
// variable, so runs that share a slot are ordered by the engine and never overlap.
//
// Why: each runner used to own its block for as long as it lived, so an executor held the sum of
// its nodes' workspaces. ResNet-18 training at batch 32 held 1.9 GiB of them (a peak RSS of 2.9 GiB
// against MXNet's 1.5); shared, it holds the largest one per slot.
//
// A slot that grows gets a new block at once; the old one is freed by an engine operation that
// writes the slot's variable, so after every run pushed before (including one running now that
// read the old block). Runs read the slot's block when they compute (Current), which is then at
// least as large as any runner of the slot asked for. Slots live until the process exits.
//
// Slots per device type: WEFT_<DEV>_TEMP_COPY (default 1: the cpu runs one engine worker, see
// WEFT_CPU_WORKER_NTHREADS; more slots let independent ops on several workers run at once).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "weft/context.h"
#include "weft/engine.h"
#include "weft/storage.h"

namespace weft {

/// One shared temp-space block of a device. Thread-safe.
class WorkspaceSlot {
 public:
  explicit WorkspaceSlot(const Context& ctx);
  /// Frees the block and deletes the variable after the runs pushed on it (ReserveWorkspace's
  /// slots are never destroyed; a slot of one's own is).
  ~WorkspaceSlot();
  WorkspaceSlot(const WorkspaceSlot&) = delete;
  WorkspaceSlot& operator=(const WorkspaceSlot&) = delete;

  /// The variable every run using this slot writes.
  VarHandle var() const { return var_; }
  /// Makes the block at least `bytes` long (see the top of this file). Throws weft::Error
  /// (OutOfMemoryError) when the device has no room.
  void Grow(uint64_t bytes);
  /// The current block, for a run that holds var() (inside its engine operation).
  Storage::Handle Current() const;
  /// Bytes of the current block.
  uint64_t size() const;

 private:
  const Context ctx_;
  const VarHandle var_;
  mutable std::mutex mu_;
  Storage::Handle block_;
};

/// A slot of ctx holding at least `bytes` (> 0): the next slot of ctx's round robin, grown.
/// Thread-safe. Throws weft::Error for a malformed WEFT_<DEV>_TEMP_COPY (not in [1, 64]) and as
/// WorkspaceSlot::Grow.
std::shared_ptr<WorkspaceSlot> ReserveWorkspace(const Context& ctx, uint64_t bytes);

}  // namespace weft
