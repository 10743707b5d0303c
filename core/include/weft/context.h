// weft core — Context: which device an array lives on or an op runs on.
//
// As in MXNet a Context is a device type plus an index: cpu(0), cuda(1). Device types are the
// names device plugins register ("cpu", "cuda", "hip", "vulkan", "simdev"), so a new backend
// needs no change here. Context::gpu(i) names the first GPU-class plugin that is loaded (cuda,
// then hip), so mxnet-cpp code that says Context::gpu() keeps working.
#pragma once

#include "weft/export.h"

#include <functional>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace weft {

class WEFT_API Context {
 public:
  /// cpu(0).
  Context() = default;
  /// A device of plugin device type `dev_type` (e.g. "cuda") with index `dev_id` (>= 0).
  Context(std::string dev_type, int dev_id) : dev_type_(std::move(dev_type)), dev_id_(dev_id) {}

  static Context cpu(int dev_id = 0) { return Context("cpu", dev_id); }
  /// The first loaded GPU-class device type ("cuda", then "hip"); "cuda" when none is loaded
  /// (using it then raises a clear "no such device" error).
  static Context gpu(int dev_id = 0);
  /// Parses "cpu", "cpu(1)", "cuda:0", "simdev(2)". Throws weft::Error on anything else.
  static Context FromString(std::string_view text);

  const std::string& GetDeviceType() const noexcept { return dev_type_; }
  int GetDeviceId() const noexcept { return dev_id_; }
  /// "cpu(0)", MXNet's form.
  std::string ToString() const { return fmt::format("{}({})", dev_type_, dev_id_); }

  bool operator==(const Context&) const = default;
  auto operator<=>(const Context&) const = default;

 private:
  std::string dev_type_ = "cpu";
  int dev_id_ = 0;
};

}  // namespace weft

template <>
struct std::hash<weft::Context> {
  size_t operator()(const weft::Context& c) const noexcept {
    return std::hash<std::string>()(c.GetDeviceType()) * 31u + static_cast<size_t>(c.GetDeviceId());
  }
};

template <>
struct fmt::formatter<weft::Context> : fmt::formatter<std::string> {
  auto format(const weft::Context& c, format_context& ctx) const {
    return fmt::formatter<std::string>::format(c.ToString(), ctx);
  }
};
