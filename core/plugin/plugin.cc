#include "weft/internal/plugin.h"

#include <fmt/format.h>

#include "plugin_tables.h"

namespace weft {

std::string SdkVersionString(uint32_t version) {
  return fmt::format("{}.{}", WEFT_SDK_VERSION_MAJOR_OF(version), WEFT_SDK_VERSION_MINOR_OF(version));
}

Plugin::Plugin(std::string path, const weft_plugin_api& api, uint32_t sdk_version, uint32_t plugin_min,
               uint32_t plugin_max, int load_index)
    : path_(std::move(path)),
      name_(api.name ? api.name : ""),
      version_(api.version ? api.version : ""),
      description_(api.description ? api.description : ""),
      sdk_version_(sdk_version),
      plugin_min_(plugin_min),
      plugin_max_(plugin_max),
      load_index_(load_index),
      tables_(std::make_unique<detail::PluginTables>()) {
  tables_->plugin = api;
}

Plugin::~Plugin() = default;

uint32_t Plugin::provides() const { return tables_->plugin.provides; }
const weft_plugin_api* Plugin::api() const { return &tables_->plugin; }
const weft_device_api* Plugin::device_api() const { return tables_->device ? &*tables_->device : nullptr; }
const weft_operator_api* Plugin::operator_api() const { return tables_->ops ? &*tables_->ops : nullptr; }
const weft_transport_api* Plugin::transport_api() const { return tables_->transport ? &*tables_->transport : nullptr; }

}  // namespace weft
