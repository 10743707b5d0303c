// Turning load failures into one-line causes with remedies: the ELF header check (glibc reports a
// wrong-architecture object as "No such file or directory") and dlerror text parsing.
#pragma once

#include <string>

namespace weft::detail {

/// "" when `path` holds an ELF shared object for this host's class, byte order and machine;
/// otherwise the cause and remedy, e.g. "built for aarch64 (ELF machine 183), this host is
/// x86-64; use a build of the plugin for x86-64".
std::string CheckElfHeader(const std::string& path);

/// Whether the ELF shared object at `path` (already accepted by CheckElfHeader) defines `symbol`
/// in its dynamic symbol table, read from the file without loading it: dlopen runs a library's
/// constructors, and some system libraries (libasan.so) abort the process when loaded late, so a
/// file that is not a plugin must be refused before dlopen. "" when the symbol is exported;
/// otherwise the reason (no section headers, no dynamic symbol table, symbol absent, or a
/// malformed table), naming the fix.
std::string CheckElfExports(const std::string& path, const char* symbol);

/// Name of an ELF e_machine value ("x86-64", "aarch64"), or "machine <n>".
std::string ElfMachineName(unsigned machine);

/// The dlerror part of a Boost.DLL 1.74 load error ("boost::dll::shared_library::load() failed
/// (dlerror system message: TEXT): Bad file descriptor" -> "TEXT"); the whole text when it does
/// not have that form.
std::string ExtractDlerror(const std::string& boost_what);

/// Cause and remedy for a dlopen failure of `plugin_path` given the dlerror text, e.g.
/// "needs libfoo.so.1, which was not found; install it or add its directory to LD_LIBRARY_PATH".
std::string ExplainDlopenError(const std::string& dlerror_text, const std::string& plugin_path);

}  // namespace weft::detail
