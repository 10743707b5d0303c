// Every plugin the build produces exports exactly weft_plugin_entry (sdk.md principle 2: hidden
// visibility plus the version script), and libweft exports its public API only (weft/export.h:
// hidden visibility, WEFT_API on the public headers). Reads each file's .dynsym directly (ELF64,
// host byte order).
#include <cxxabi.h>
#include <elf.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <memory>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

namespace {

// Names of the symbols a shared object defines in its dynamic symbol table (global or weak).
std::set<std::string> DefinedDynamicSymbols(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::set<std::string> names;
  if (bytes.size() < sizeof(Elf64_Ehdr)) {
    ADD_FAILURE() << path << " is too short for an ELF header";
    return names;
  }
  auto at = [&](size_t off, size_t len) {
    if (off + len > bytes.size()) throw std::out_of_range(path + ": truncated");
    return bytes.data() + off;
  };
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(bytes.data());
  EXPECT_EQ(eh->e_ident[EI_CLASS], ELFCLASS64) << path;
  for (int i = 0; i < eh->e_shnum; ++i) {
    const auto* sh = reinterpret_cast<const Elf64_Shdr*>(at(eh->e_shoff + i * eh->e_shentsize, sizeof(Elf64_Shdr)));
    if (sh->sh_type != SHT_DYNSYM) continue;
    const auto* strtab =
        reinterpret_cast<const Elf64_Shdr*>(at(eh->e_shoff + sh->sh_link * eh->e_shentsize, sizeof(Elf64_Shdr)));
    for (size_t off = 0; off + sizeof(Elf64_Sym) <= sh->sh_size; off += sizeof(Elf64_Sym)) {
      const auto* sym = reinterpret_cast<const Elf64_Sym*>(at(sh->sh_offset + off, sizeof(Elf64_Sym)));
      int bind = ELF64_ST_BIND(sym->st_info);
      if (sym->st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE)) continue;
      names.insert(at(strtab->sh_offset + sym->st_name, 1));
    }
  }
  return names;
}

std::vector<std::string> SharedObjects(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".so") out.push_back(e.path().string());
  return out;
}

TEST(PluginExports, OnlyTheEntrySymbol) {
  std::vector<std::string> files = SharedObjects(WEFT_TEST_PLUGIN_DIR);
  for (const auto& f : SharedObjects(LOADER_FIXTURE_DIR))
    if (f.find("fixture_no_entry") == std::string::npos) files.push_back(f);
  ASSERT_FALSE(files.empty());
  for (const auto& f : files) {
    EXPECT_EQ(DefinedDynamicSymbols(f), std::set<std::string>{"weft_plugin_entry"}) << f;
  }
}

TEST(PluginExports, TheReaderSeesWhatAnUnscriptedLibraryExports) {
  // The fixture dependency library is built without the version script and exports its function.
  auto names = DefinedDynamicSymbols(std::string(WEFT_TEST_FIXTURE_DIR) + "/hidden-deps/libweft_fixture_dep.so");
  EXPECT_EQ(names.count("fixture_dep_value"), 1u);
  EXPECT_EQ(DefinedDynamicSymbols(std::string(LOADER_FIXTURE_DIR) + "/libfixture_no_entry.so").size(), 0u);
}

std::string Demangle(const std::string& name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && d ? std::string(d.get()) : name;
}

// True when a demangled name contains weft::<ns>:: with <ns> one of core's internal namespaces
// (kv, exec, graph, opdef, detail, tools, sdk or any *_detail). Written without std::regex,
// whose GCC 12 implementation trips -Wmaybe-uninitialized under the sanitizer presets.
bool NamesInternalNamespace(const std::string& d) {
  static const std::set<std::string> internal = {"kv", "exec", "graph", "opdef", "detail", "tools", "sdk"};
  const std::string prefix = "weft::";
  for (size_t at = d.find(prefix); at != std::string::npos; at = d.find(prefix, at + 1)) {
    size_t b = at + prefix.size(), e = b;
    while (e < d.size() && ((d[e] >= 'a' && d[e] <= 'z') || d[e] == '_')) ++e;
    if (e == b || d.compare(e, 2, "::") != 0) continue;
    const std::string ns = d.substr(b, e - b);
    const bool detail = ns.size() > 7 && ns.compare(ns.size() - 7, 7, "_detail") == 0;
    if (internal.count(ns) || detail) return true;
  }
  return false;
}

TEST(LibweftExports, NoInternalNamespaces) {
  const std::set<std::string> names = DefinedDynamicSymbols(WEFT_TEST_LIBWEFT);
  // Internal namespaces of core (and the SDK's C++ helpers, which core instantiates privately).
  std::vector<std::string> leaked;
  size_t weft_symbols = 0;
  for (const std::string& n : names) {
    const std::string d = Demangle(n);
    if (d.find("weft") != std::string::npos) ++weft_symbols;
    if (NamesInternalNamespace(d)) leaked.push_back(d);
  }
  std::cout << "[ info ] libweft exports " << names.size() << " symbols, " << weft_symbols << " of them weft's\n";
  EXPECT_GT(weft_symbols, 100u) << "the public API itself is missing (WEFT_API not applied?)";
  std::string sample;
  for (size_t i = 0; i < leaked.size() && i < 20; ++i) sample += "\n  " + leaked[i];
  EXPECT_TRUE(leaked.empty()) << leaked.size() << " internal symbols are exported, e.g.:" << sample
                              << "\nMark the public declaration WEFT_API or keep the symbol out of the public headers.";
}

}  // namespace
