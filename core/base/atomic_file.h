// weft core (internal) — files replaced whole or not at all.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace weft::detail {

/// A hidden temporary name next to `target` (".<name>.tmp-<pid>-<random>"), for files written
/// in place and renamed over `target` when complete.
std::filesystem::path TempNameFor(const std::filesystem::path& target);

/// Writes `bytes` to `path` through a hidden temporary file in the same directory
/// (".<name>.tmp-<pid>-<random>"), flushed to disk and renamed over `path`: readers see the old
/// file or the new one, never a torn one. On any failure (directory missing or read-only, disk
/// full) the temporary file is removed and weft::Error names `what`, `path`, the step and the
/// system's reason. Thread-safe for distinct paths.
void WriteFileAtomically(const std::string& path, std::span<const uint8_t> bytes, std::string_view what);

/// Throws weft::Error unless a file can be created next to `path` (in its directory), e.g. before
/// a long training run that will write checkpoints there. Creates and removes one temporary file.
void CheckCanWriteNextTo(const std::string& path, std::string_view what);

}  // namespace weft::detail
