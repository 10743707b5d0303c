// vulkan plugin — kernels: device kernel classes (sdk/cpp/kernel.hpp) that record dispatches of
// the embedded shaders into the stream's command buffer. An op's shader carries the op's name
// (shaders/Activation.comp for Activation) unless several ops share one (elemwise_binary, gemm).
// Only float32 is implemented; the table registers exactly the ops below, so an op without a
// kernel here gets core's "no kernel for operator ... on device type 'vulkan'" error.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "vk_device.h"
#include "weft/sdk/cpp/kernel.hpp"

namespace weft::vk {

/// The kernel table of the plugin; kernels reach the device through it.
class VkKernelTable : public sdk::KernelTable {
 public:
  VkKernelTable(const weft_host_api* host, VulkanDevice& device) : sdk::KernelTable("vulkan", host), device_(device) {}
  VulkanDevice& device() const { return device_; }

 private:
  VulkanDevice& device_;
};

/// While alive, the kernels `table` adds list shaders/<name>.comp of each of `names` as their
/// math_files (weft_kernel_def, read by weft-info and the generated OPS.md): the shaders their
/// Compute dispatches. The path is built from this header's own (__FILE__).
class ShaderScope {
 public:
  ShaderScope(sdk::KernelTable& table, std::initializer_list<const char*> names) : scope_(table, Files(names)) {}

 private:
  static std::vector<std::string> Files(std::initializer_list<const char*> names) {
    std::string dir = __FILE__;
    dir.resize(dir.rfind('/') + 1);  // npos + 1 = 0: compiled from this directory
    std::vector<std::string> files;
    for (const char* n : names) files.push_back(dir + "shaders/" + n + ".comp");
    return files;
  }
  sdk::KernelTable::SourceScope scope_;
};

/// add_n.comp: besides add_n, the kernels that add into an output (req add) run it.
inline constexpr const char* kAddShader = "add_n";

/// t.Add<K>(op, dtypes) with the shaders `shaders` (names without .comp) as its math_files.
template <class K>
void AddWithShaders(sdk::KernelTable& t, std::string op, uint64_t dtypes, std::initializer_list<const char*> shaders,
                    const char* source_file = WEFT_SDK_CALLER_FILE) {
  ShaderScope scope(t, shaders);
  t.Add<K>(std::move(op), dtypes, 0, source_file);
}

/// Registers every kernel (vk_kernels.cc): each op family's host code is
/// vk_kernels_<family>[_<part>].cc (docs/adding-an-op.md, "Op families").
void RegisterKernels(VkKernelTable& table);
void RegisterNnKernels(VkKernelTable& table);                   // vk_kernels_nn.cc
void RegisterConvKernels(VkKernelTable& table);                 // vk_kernels_nn_conv.cc
void RegisterNormKernels(VkKernelTable& table);                 // vk_kernels_norm.cc
void RegisterSoftmaxKernels(VkKernelTable& table);              // vk_kernels_softmax.cc
void RegisterElemwiseKernels(VkKernelTable& table);             // vk_kernels_elemwise.cc
void RegisterElemwiseBinaryKernels(VkKernelTable& table);       // vk_kernels_elemwise_binary.cc
void RegisterReduceKernels(VkKernelTable& table);               // vk_kernels_reduce.cc
void RegisterTensorKernels(VkKernelTable& table);               // vk_kernels_tensor.cc
void RegisterIndexKernels(VkKernelTable& table);                // vk_kernels_index.cc
void RegisterOptimizerKernels(VkKernelTable& table);            // vk_kernels_optimizer.cc
void RegisterGradientCompressionKernels(VkKernelTable& table);  // vk_kernels_gradient_compression.cc
void RegisterRandomKernels(VkKernelTable& table);               // vk_kernels_random.cc

/// A shader dispatch: pipeline `shader` with specialization constants `spec`.
struct Launch {
  const char* shader;
  std::span<const int32_t> spec;
  uint32_t gx = 1, gy = 1, gz = 1;
};

/// Records `launch` with `bindings` and push constants `push` on the call's stream (or runs it
/// synchronously on the NULL stream).
void Dispatch(const sdk::DeviceCall& call, const Launch& launch, std::span<const Binding> bindings, const void* push,
              uint32_t push_bytes);
template <typename P>
void Dispatch(const sdk::DeviceCall& call, const Launch& launch, std::span<const Binding> bindings, const P& push) {
  Dispatch(call, launch, bindings, &push, sizeof(P));
}

/// An element-wise dispatch: `push` starts with the element count n (uint32_t), every binding
/// holds n float32 elements. Tensors larger than the device's storage-buffer range are done in
/// chunks (one dispatch per chunk, each binding advanced and n lowered).
void DispatchElementwise(const sdk::DeviceCall& call, const char* shader, std::span<const int32_t> spec,
                         std::span<const Binding> bindings, const void* push, uint32_t push_bytes);
template <typename P>
void DispatchElementwise(const sdk::DeviceCall& call, const char* shader, std::span<const int32_t> spec,
                         std::span<const Binding> bindings, const P& push) {
  static_assert(sizeof(P) >= 4);
  DispatchElementwise(call, shader, spec, bindings, &push, sizeof(P));
}

/// out = scale · in (out += scale · in for an add request; nothing for null) with
/// elemwise_unary.comp's _mul_scalar; both bindings hold n float32 elements.
void DispatchScaled(const sdk::DeviceCall& call, const Binding& in, const Binding& out, int32_t req, int64_t n,
                    float scale);

/// out = src (out += src when `add`) for n float32 elements, through shaders/add_n.comp with one
/// input (chunked as DispatchElementwise).
void AddInto(const sdk::DeviceCall& call, const Binding& src, const Binding& out, int64_t n, bool add);

/// Workgroups of 64 invocations for n elements (grid-stride shaders loop over the rest).
uint32_t Groups64(int64_t n);

/// Binding of a whole tensor.
inline Binding In(const sdk::DeviceTensor& t) { return {t.data(), t.offset(), t.bytes(), false}; }
inline Binding Out(const sdk::DeviceTensor& t) { return {t.data(), t.offset(), t.bytes(), true}; }

/// A size or geometry value as a shader's 32-bit push-constant field (the shaders index with
/// 32-bit integers).
inline uint32_t U32(int64_t v) { return static_cast<uint32_t>(v); }
/// 1 for WEFT_REQ_ADD, 0 for write / in-place (the shaders' `add` flag).
inline uint32_t AddFlag(int32_t req) { return req == WEFT_REQ_ADD ? 1u : 0u; }

/// Fills the float32 tensor `t` with 0 on the call's stream (req write), nothing for add/null.
void ZeroOutput(const sdk::DeviceCall& call, const sdk::DeviceTensor& t, int32_t req);
/// Fills `bytes` bytes of `b` with 0 (vkCmdFillBuffer: offset and size multiples of 4).
void ZeroFill(const sdk::DeviceCall& call, const Binding& b, uint64_t bytes);

/// Throws WEFT_ERR_UNSUPPORTED unless every input and output of the setup is float32.
void RequireFloat32(const sdk::KernelSetup& s);
[[noreturn]] void Unsupported(const sdk::KernelSetup& s, const std::string& what);
[[noreturn]] void Invalid(const sdk::KernelSetup& s, const std::string& what);

/// C[b] = alpha op(A[b]) op(B[b]) (+ bias) (+ C when req is add) through shaders/gemm.comp.
struct GemmArgs {
  uint32_t m, n, k;
  bool ta = false, tb = false;
  uint32_t batch = 1;
  uint32_t sa = 0, sb = 0, sc = 0;  // batch strides in elements
  float alpha = 1.0f;
  uint32_t bias_rows = 0;  // bias per row of C (1) or per column (0)
};
/// Tile of the vec4 GEMM (shaders/gemm4.comp): 4 rows4 x 4 cols4 per invocation, K walked in
/// steps of 4 kblocks; rows4 = 0 means gemm.comp (operands gemm4 cannot load as vec4, or
/// WEFT_VULKAN_GEMM=scalar).
struct GemmTiles {
  int32_t rows4 = 0, cols4 = 0, kblocks = 1;
};
GemmTiles ChooseGemm(const sdk::DeviceCall& call, const GemmArgs& g, const Binding& a, const Binding& b);
/// WEFT_VULKAN_GEMM: "RxC" or "RxCkB" forces gemm4 tiles (R, C 1..4, B 1..4), "scalar"
/// gemm.comp; unset {0, 0}.
GemmTiles GemmTilesOverride();
void Gemm(const sdk::DeviceCall& call, const GemmArgs& g, const sdk::DeviceTensor& a, const sdk::DeviceTensor& b,
          const sdk::DeviceTensor& c, int32_t req, const sdk::DeviceTensor* bias);
/// The same on bindings (parts of tensors or of the workspace); c must be writable.
void Gemm(const sdk::DeviceCall& call, const GemmArgs& g, const Binding& a, const Binding& b, const Binding& c,
          int32_t req, const Binding* bias);
/// `b` advanced by `elements` float32 elements.
Binding At(Binding b, uint64_t elements);
/// The call's workspace as a binding.
inline Binding Workspace(const sdk::DeviceCall& c, bool write) {
  return {c.workspace.data(), c.workspace.offset(), c.workspace_bytes, write};
}
/// dst (=|+=) src walked with strides over `dims` (up to 4 axes after merging; throws otherwise),
/// float32 elements (shaders/broadcast_reduce.comp).
void StridedCopy(const sdk::DeviceCall& c, std::span<const int64_t> dims, const Binding& src,
                 std::span<const int64_t> src_strides, const Binding& dst, std::span<const int64_t> dst_strides,
                 int32_t req);
/// The same, summing src over the axes flagged in `reduced` (dst strides there are ignored).
void StridedSum(const sdk::DeviceCall& c, std::span<const int64_t> dims, const Binding& src,
                std::span<const int64_t> src_strides, const Binding& dst, std::span<const int64_t> dst_strides,
                std::span<const bool> reduced, int32_t req);
/// "(2, 3)" for a tensor's shape, "(5,)" for one axis.
std::string ShapeText(const sdk::TensorDesc& t);

}  // namespace weft::vk
