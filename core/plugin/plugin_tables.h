// Normalised copies of a plugin's tables (see weft/plugin.h): every struct is this host's size,
// fields past the plugin's struct_size read as zero, fields past the host's size are never read.
#pragma once

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "weft/sdk/plugin.h"

namespace weft::detail {

/// Copies min(src->struct_size, sizeof(T)) bytes of *src into a zero-initialised T and sets the
/// copy's struct_size to sizeof(T). The caller has checked src->struct_size covers the required
/// fields (RequiredSizeError).
template <typename T>
T NormalizeStruct(const T* src) {
  T out{};
  size_t n = std::min(src->struct_size, sizeof(T));
  std::memcpy(static_cast<void*>(&out), static_cast<const void*>(src), n);
  out.struct_size = sizeof(T);
  return out;
}

/// "" when `size` (a plugin's struct_size) covers `required` bytes, else the reason, e.g.
/// "device table is 40 bytes (struct_size), too small for the required fields (needs 128 bytes)".
std::string RequiredSizeError(const char* what, size_t size, size_t required);

// Bytes a plugin's table must have: the fields the host cannot do without. Later fields are
// optional (an older plugin's table may end before them).
inline constexpr size_t kPluginApiRequired = WEFT_STRUCT_SIZE(weft_plugin_api, init);
inline constexpr size_t kDeviceApiRequired = WEFT_STRUCT_SIZE(weft_device_api, event_synchronize);
inline constexpr size_t kOperatorApiRequired = WEFT_STRUCT_SIZE(weft_operator_api, kernels);
inline constexpr size_t kOpDefRequired = WEFT_STRUCT_SIZE(weft_op_def, infer_shape);
inline constexpr size_t kKernelDefRequired = WEFT_STRUCT_SIZE(weft_kernel_def, compute);
inline constexpr size_t kAttrDefRequired = WEFT_STRUCT_SIZE(weft_attr_def, default_value);
inline constexpr size_t kTransportApiRequired = WEFT_STRUCT_SIZE(weft_transport_api, group_end);

struct PluginTables {
  weft_plugin_api plugin{};
  std::optional<weft_device_api> device;
  std::optional<weft_operator_api> ops;
  std::vector<weft_op_def> op_defs;
  std::vector<std::vector<weft_attr_def>> attrs;  // per op def
  std::vector<const weft_op_def*> op_def_ptrs;
  std::vector<weft_kernel_def> kernels;
  std::vector<const weft_kernel_def*> kernel_ptrs;
  std::optional<weft_transport_api> transport;
};

/// Checks and normalises a device table into t.device. Returns "" or the rejection reason.
std::string NormalizeDeviceApi(const weft_device_api* raw, PluginTables& t);
/// Checks and normalises an operator table (op defs, their attributes, kernels) into t.
std::string NormalizeOperatorApi(const weft_operator_api* raw, PluginTables& t);
/// Checks and normalises a transport table into t.transport.
std::string NormalizeTransportApi(const weft_transport_api* raw, PluginTables& t);

}  // namespace weft::detail
