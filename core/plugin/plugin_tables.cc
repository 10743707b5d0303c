#include "plugin_tables.h"

#include <fmt/format.h>

namespace weft::detail {
namespace {
bool ValidDeviceType(const char* s) {
  if (!s || !*s) return false;
  for (; *s; ++s) {
    char c = *s;
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}
}  // namespace

std::string RequiredSizeError(const char* what, size_t size, size_t required) {
  if (size >= required) return "";
  return fmt::format(
      "{} is {} bytes (struct_size), too small for the required fields (needs {} bytes); the plugin is corrupt "
      "or sets struct_size wrongly: rebuild it with WEFT_STRUCT_SIZE",
      what, size, required);
}

std::string NormalizeDeviceApi(const weft_device_api* raw, PluginTables& t) {
  if (auto e = RequiredSizeError("device table", raw->struct_size, kDeviceApiRequired); !e.empty()) return e;
  weft_device_api d = NormalizeStruct(raw);
  if (!ValidDeviceType(d.device_type)) {
    return fmt::format("device table has an invalid device_type '{}' (lower-case letters, digits and '_' only)",
                       d.device_type ? d.device_type : "(null)");
  }
  struct Required {
    const char* name;
    bool present;
  };
  const Required required[] = {
      {"device_count", d.device_count != nullptr},
      {"get_properties", d.get_properties != nullptr},
      {"allocate", d.allocate != nullptr},
      {"free", d.free != nullptr},
      {"copy", d.copy != nullptr},
      {"memset", d.memset != nullptr},
      {"stream_create", d.stream_create != nullptr},
      {"stream_destroy", d.stream_destroy != nullptr},
      {"stream_synchronize", d.stream_synchronize != nullptr},
      {"event_create", d.event_create != nullptr},
      {"event_destroy", d.event_destroy != nullptr},
      {"event_record", d.event_record != nullptr},
      {"stream_wait_event", d.stream_wait_event != nullptr},
      {"event_query", d.event_query != nullptr},
      {"event_synchronize", d.event_synchronize != nullptr},
  };
  for (const auto& r : required) {
    if (!r.present) return fmt::format("device table has no {} function (required); fix the plugin", r.name);
  }
  t.device = d;
  return "";
}

std::string NormalizeOperatorApi(const weft_operator_api* raw, PluginTables& t) {
  if (auto e = RequiredSizeError("operator table", raw->struct_size, kOperatorApiRequired); !e.empty()) return e;
  weft_operator_api o = NormalizeStruct(raw);
  if (o.num_op_defs < 0 || o.num_kernels < 0 || (o.num_op_defs > 0 && !o.op_defs) ||
      (o.num_kernels > 0 && !o.kernels)) {
    return "operator table has a negative count or a NULL array; fix the plugin";
  }
  t.op_defs.reserve(o.num_op_defs);
  t.attrs.resize(o.num_op_defs);
  for (int i = 0; i < o.num_op_defs; ++i) {
    const weft_op_def* raw_def = o.op_defs[i];
    if (!raw_def) return fmt::format("operator table: op definition {} is NULL", i);
    if (auto e = RequiredSizeError("op definition", raw_def->struct_size, kOpDefRequired); !e.empty()) {
      return fmt::format("{} (op definition {})", e, i);
    }
    weft_op_def def = NormalizeStruct(raw_def);
    if (!def.name || !*def.name || !def.infer_shape) {
      return fmt::format("operator table: op definition {} ('{}') has no name or no infer_shape", i,
                         def.name ? def.name : "");
    }
    if (def.num_attrs < 0 || (def.num_attrs > 0 && !def.attrs)) {
      return fmt::format("op definition '{}' has a bad attribute list", def.name);
    }
    // An attribute array's stride is the plugin's sizeof(weft_attr_def): its struct_size rounded
    // up to the struct's alignment.
    auto& attrs = t.attrs[i];
    if (def.num_attrs > 0) {
      size_t size = def.attrs[0].struct_size;
      if (auto e = RequiredSizeError("attribute definition", size, kAttrDefRequired); !e.empty()) {
        return fmt::format("{} (op '{}')", e, def.name);
      }
      size_t align = alignof(weft_attr_def);
      size_t stride = (size + align - 1) / align * align;
      const char* base = reinterpret_cast<const char*>(def.attrs);
      for (int a = 0; a < def.num_attrs; ++a) {
        attrs.push_back(NormalizeStruct(reinterpret_cast<const weft_attr_def*>(base + a * stride)));
        if (!attrs.back().name) return fmt::format("op definition '{}': attribute {} has no name", def.name, a);
      }
      def.attrs = attrs.data();
    }
    t.op_defs.push_back(def);
  }
  t.kernels.reserve(o.num_kernels);
  for (int i = 0; i < o.num_kernels; ++i) {
    const weft_kernel_def* raw_k = o.kernels[i];
    if (!raw_k) return fmt::format("operator table: kernel {} is NULL", i);
    if (auto e = RequiredSizeError("kernel definition", raw_k->struct_size, kKernelDefRequired); !e.empty()) {
      return fmt::format("{} (kernel {})", e, i);
    }
    weft_kernel_def k = NormalizeStruct(raw_k);
    if (!k.op_name || !*k.op_name || !ValidDeviceType(k.device_type) || !k.compute) {
      return fmt::format(
          "operator table: kernel {} (op '{}', device type '{}') lacks an op name, a valid device "
          "type or a compute function",
          i, k.op_name ? k.op_name : "", k.device_type ? k.device_type : "");
    }
    if ((k.storage_types & ~WEFT_STYPE_BIT(WEFT_STYPE_DEFAULT)) != 0 && !k.infer_storage) {
      // The host asks a sparse kernel which storage types it claims; without the answer it could
      // only guess, and a guess may hand a kernel arrays it cannot read.
      return fmt::format(
          "operator table: kernel {} (op '{}', device type '{}') claims sparse storage types (mask {:#x}) but "
          "has no infer_storage function; set infer_storage or clear the sparse bits",
          i, k.op_name, k.device_type, k.storage_types);
    }
    t.kernels.push_back(k);
  }
  for (const auto& d : t.op_defs) t.op_def_ptrs.push_back(&d);
  for (const auto& k : t.kernels) t.kernel_ptrs.push_back(&k);
  o.op_defs = t.op_def_ptrs.data();
  o.kernels = t.kernel_ptrs.data();
  t.ops = o;
  return "";
}

std::string NormalizeTransportApi(const weft_transport_api* raw, PluginTables& t) {
  if (auto e = RequiredSizeError("transport table", raw->struct_size, kTransportApiRequired); !e.empty()) return e;
  weft_transport_api tr = NormalizeStruct(raw);
  if (!tr.name || !*tr.name) return "transport table has no name; fix the plugin";
  if (!tr.kvstore_types || !*tr.kvstore_types)
    return fmt::format("transport '{}' names no KVStore types it serves (kvstore_types); fix the plugin", tr.name);
  const std::pair<const char*, bool> required[] = {
      {"comm_init", tr.comm_init != nullptr},     {"comm_finalize", tr.comm_finalize != nullptr},
      {"comm_abort", tr.comm_abort != nullptr},   {"allreduce", tr.allreduce != nullptr},
      {"broadcast", tr.broadcast != nullptr},     {"barrier", tr.barrier != nullptr},
      {"group_start", tr.group_start != nullptr}, {"group_end", tr.group_end != nullptr},
  };
  for (const auto& [fn, present] : required) {
    if (!present) return fmt::format("transport '{}' has no {} function (required); fix the plugin", tr.name, fn);
  }
  if ((tr.ps_call != nullptr) != (tr.ps_poll != nullptr) || (tr.ps_poll != nullptr) != (tr.ps_respond != nullptr))
    return fmt::format("transport '{}' has only some of ps_call, ps_poll, ps_respond (all or none); fix the plugin",
                       tr.name);
  t.transport = tr;
  return "";
}

}  // namespace weft::detail
