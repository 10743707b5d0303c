// vulkan plugin — the embedded SPIR-V of shaders/<name>.comp (compiled by glslc at build time).
#pragma once

#include <cstdint>
#include <span>

namespace weft::vk {

/// The SPIR-V words of shader `name` (the file name without .comp); empty when there is none.
std::span<const uint32_t> Shader(const char* name);

}  // namespace weft::vk
