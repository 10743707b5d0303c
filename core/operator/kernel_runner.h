// weft core — a prepared kernel for one node: where an op definition, a device plugin's kernel and
// NDArrays meet. The executor keeps one KernelRunner per graph node; imperative invoke makes one
// per call.
//
// Preparing (the constructor) finds the kernel for (op, device type, dtype of the first input —
// else of the first output) through internal::FindKernel, calls its create_state once with the
// node's attributes and the shapes/dtypes of every input, output and aux state, and reserves the
// workspace the kernel asked for in one of the device's shared temp-space slots
// (operator/workspace_pool.h: MXNet's kTempSpace; the slot's block may move between runs, so a
// kernel never keeps a workspace address). The kernel state lives until the runner *and* every
// run pushed through it are gone: pushed work holds a reference, so destroying a runner with runs
// still pending is safe.
//
// Running:
//   Run(...)       pushes one engine operation on the runner's Context that reads the inputs'
//                  variables and writes the outputs' and aux states' variables (plus the
//                  variable of the runner's workspace slot, which serialises the runs that
//                  share it). Returns at once; errors of the kernel are stored on the written
//                  variables (weft::Error "<op> on <device>: <plugin message>", rethrown by the
//                  next WaitToRead / SyncCopyToCPU of an output).
//   RunInline(...) computes synchronously in the calling thread, which must be inside an engine
//                  operation that already holds the right dependencies (the executor's bulked
//                  segments). Errors are thrown as weft::Error.
// Both build weft_tensor views (chunk address + byte offset, dtype, shape, device index) of the
// NDArrays given, so views made with Slice/Reshape/AsArray compute in place.
//
// Write requests are WEFT_REQ_* values (sdk/operator.h; MXNet's OpReqType kNullOp = 0,
// kWriteTo = 1, kWriteInplace = 2, kAddTo = 3), one per output.
//
// Random numbers: for ops whose definition asks for WEFT_OP_RESOURCE_RANDOM, every run gets a
// fresh 64-bit seed drawn when the run is pushed (RunInline: given by the caller, who draws it
// with NextRandomSeed when it pushes the enclosing operation) from a process-wide
// sequence started by SetRandomSeed (MXNet's mx.random.seed), so a program that seeds and then
// pushes in a fixed order gets the same numbers every time. Run also writes the Context's random
// resource variable (MXNet's kRandom resource), so a sampler's failure is carried by the random
// ops pushed after it until a wait rethrows it, as in MXNet.
//
// Thread-safety: a KernelRunner may be run from several threads at once (runs are ordered by the
// engine). Construction and destruction are not synchronised with other uses of the same object.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "operator/op_def.h"
#include "weft/base.h"
#include "weft/context.h"
#include "weft/engine.h"
#include "weft/ndarray.h"

namespace weft {

/// Shapes and dtypes of one node's slots, in the order of the op's input / output (hidden ones
/// included) / aux-state names.
struct NodeSignature {
  std::vector<Shape> in_shapes, out_shapes, aux_shapes;
  std::vector<DType> in_dtypes, out_dtypes, aux_dtypes;
  /// Storage types of the inputs and outputs (SDK 2.1), both empty for a dense node. With a sparse
  /// entry the runner prepares the sparse kernel that claims exactly these (a row_sparse or csr
  /// array's shape above is its full shape); such a runner only Runs (no RunInline), and a sparse
  /// output's new parts are installed while the run computes, so wait for it before reading them.
  std::vector<StorageType> in_stypes, out_stypes;
};

class KernelRunner {
 public:
  /// Prepares `op` (a definition name or alias; backward ops such as "_backward_FullyConnected"
  /// too) on device `ctx`. `attrs` are passed to the kernel as given, except that attributes whose
  /// name starts with "__" are dropped (normalise them first with OpDef::Normalize; backward nodes
  /// carry the forward node's normalised attributes). `resources`: kResource* bits (an op's
  /// OpDef::resources, a backward node's BackwardNode::resources); the constructor adds those of
  /// the op's own definition when it has one.
  ///
  /// With sparse storage types in `sig`, the kernel is the first sparse kernel whose infer_storage
  /// claims them (internal::FindSparseKernel); none claiming is a weft::Error naming the op, the
  /// storage types and the device.
  /// Throws weft::Error when no loaded plugin has a kernel for (op, ctx's device type, dtype) —
  /// the message names the op, device and dtype and lists the device types (and dtypes) that do
  /// have one; when `ctx` names no loaded device; when a shape/dtype vector's size differs from its
  /// partner; or with the kernel's own message when create_state refuses the node
  /// ("<op> on <device>: <message>"). weft::OutOfMemoryError when the workspace cannot be had.
  KernelRunner(const std::string& op, const AttrMap& attrs, const Context& ctx, const NodeSignature& sig,
               uint32_t resources = 0);
  ~KernelRunner();
  KernelRunner(const KernelRunner&) = delete;
  KernelRunner& operator=(const KernelRunner&) = delete;

  /// Pushes one run (see the top of this file). The arrays must be on this runner's Context with
  /// the prepared shapes and dtypes (an array of the prepared size in a different shape is
  /// refused too), and `req` must have one entry per output; otherwise weft::Error naming the op,
  /// the slot and both shapes / dtypes, and nothing is pushed. Outputs with req WEFT_REQ_NULL may
  /// be none arrays. Allocates delayed arrays before pushing (may throw OutOfMemoryError).
  /// `priority` as Engine::Push.
  void Run(const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs, const std::vector<int32_t>& req,
           const std::vector<NDArray>& aux, bool is_train, int priority = 0) const;

  /// Computes synchronously on `rctx.stream` (see the top of this file). Same checks as Run, and
  /// every array must already be allocated (CheckAndAlloc before the enclosing push). Throws
  /// weft::Error (or OutOfMemoryError) with the kernel's message on failure.
  /// `seed` is the run's random seed (used when uses_random()).
  void RunInline(const RunContext& rctx, const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs,
                 const std::vector<int32_t>& req, const std::vector<NDArray>& aux, bool is_train, uint64_t seed) const;

  /// Names the graph node this runner computes (the executor's node name): errors the kernel
  /// reports while computing then read "<op> on <device> (node '<node>'): <message>". Call before
  /// the first run (not thread-safe against runs in flight).
  void SetNodeName(const std::string& node);

  /// The op name the kernel was found under (aliases resolved), e.g. "add_n".
  const std::string& op() const;
  const Context& context() const;
  const NodeSignature& signature() const;
  /// Bytes of workspace the kernel asked for (0 when none).
  uint64_t workspace_bytes() const;
  /// The variable of the shared workspace slot this runner computes in (workspace_pool.h), or
  /// null when the kernel asked for none. An engine operation that calls RunInline must write it.
  VarHandle workspace_var() const;
  /// Name of the plugin that provided the kernel.
  const std::string& plugin_name() const;
  /// True when runs get a per-call seed (WEFT_OP_RESOURCE_RANDOM).
  bool uses_random() const;
  /// True for a host operator (weft/host_op.h): its runs are asynchronous engine operations served
  /// by host threads, and RunInline refuses it (an executor must not bulk it).
  bool is_host() const;

  struct State;  // shared with pushed runs; defined in kernel_runner.cc

 private:
  std::shared_ptr<State> state_;
};

/// A prepared kernel for (op, attrs, ctx, sig, resources), made on first use and shared by later
/// calls with the same key (imperative invoke and autograd's backward: a training loop prepares
/// each kernel once, as the executor does per node). Runs of one shared runner are ordered by the
/// engine (they share its workspace). The cache is bounded (256 runners, 256 MiB of workspace;
/// it is emptied when either is exceeded, and pushed runs keep what they use). Thread-safe.
/// Throws as the KernelRunner constructor.
std::shared_ptr<KernelRunner> SharedKernelRunner(const std::string& op, const AttrMap& attrs, const Context& ctx,
                                                 const NodeSignature& sig, uint32_t resources = 0);

/// Asks the sparse kernels of ctx's device type (SDK 2.1 infer_storage) whether one computes `op`
/// with `attrs` on inputs of sig.in_shapes / in_dtypes / in_stypes (only these are read).
/// *out_stypes holds one entry per output: kUndefined where the caller leaves the choice to the
/// kernel, else the storage type the caller's output array has. Returns true and fills
/// *out_stypes with the claim, or false (nothing changed) when no kernel claims the call.
/// Throws weft::Error with a plugin's message when its infer_storage fails.
bool ClaimStorageTypes(const std::string& op, const AttrMap& attrs, const Context& ctx, const NodeSignature& sig,
                       std::vector<StorageType>* out_stypes);

/// True when some loaded plugin has a kernel for (op, device type, dtype).
bool HasKernel(const std::string& op, const std::string& device_type, DType dtype);

/// Restarts the process-wide seed sequence of WEFT_OP_RESOURCE_RANDOM ops (MXNet's
/// mx.random.seed / mxnet-cpp's MXRandomSeed). Thread-safe.
void SetRandomSeed(uint64_t seed);
/// The next seed of that sequence (what the next random run gets). Thread-safe.
uint64_t NextRandomSeed();

}  // namespace weft
