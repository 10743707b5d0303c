#include "load_diagnostics.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include <fmt/format.h>

namespace weft::detail {
namespace {

#if defined(__x86_64__)
constexpr unsigned kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr unsigned kHostMachine = EM_AARCH64;
#elif defined(__powerpc64__)
constexpr unsigned kHostMachine = EM_PPC64;
#elif defined(__riscv)
constexpr unsigned kHostMachine = EM_RISCV;
#elif defined(__i386__)
constexpr unsigned kHostMachine = EM_386;
#else
constexpr unsigned kHostMachine = 0;  // unknown host: the machine is not checked
#endif
constexpr unsigned char kHostClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr unsigned char kHostData = ELFDATA2LSB;
#else
constexpr unsigned char kHostData = ELFDATA2MSB;
#endif

std::string HostDescription() { return ElfMachineName(kHostMachine); }

}  // namespace

std::string ElfMachineName(unsigned machine) {
  switch (machine) {
    case EM_386:
      return "x86 (32-bit)";
    case EM_X86_64:
      return "x86-64";
    case EM_AARCH64:
      return "aarch64";
    case EM_ARM:
      return "arm";
    case EM_PPC64:
      return "ppc64";
    case EM_RISCV:
      return "riscv";
    case EM_S390:
      return "s390";
    case EM_MIPS:
      return "mips";
    default:
      return fmt::format("machine {}", machine);
  }
}

std::string CheckElfHeader(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot be opened for reading; check its permissions";
  unsigned char h[64] = {};
  in.read(reinterpret_cast<char*>(h), sizeof(h));
  size_t n = static_cast<size_t>(in.gcount());
  if (n < EI_NIDENT || std::memcmp(h, ELFMAG, SELFMAG) != 0) {
    std::string start;
    for (size_t i = 0; i < n && i < 4; ++i) start += fmt::format("{}{:02x}", i ? " " : "", h[i]);
    return fmt::format(
        "is not an ELF shared object (it is {} bytes long{}{}); it is not a plugin: remove it from the "
        "plugin directory",
        n < sizeof(h) ? std::to_string(n) : std::string("at least 64"), n ? ", starting with bytes " : "", start);
  }
  bool little = h[EI_DATA] == ELFDATA2LSB;
  // e_type and e_machine are the two 16-bit fields right after e_ident in both classes.
  unsigned type = little ? (h[16] | (h[17] << 8)) : ((h[16] << 8) | h[17]);
  unsigned machine = little ? (h[18] | (h[19] << 8)) : ((h[18] << 8) | h[19]);
  std::string host = HostDescription();
  if (kHostMachine != 0 && machine != kHostMachine) {
    return fmt::format("built for {} (ELF machine {}), this host is {}; use a build of the plugin for {}",
                       ElfMachineName(machine), machine, host, host);
  }
  if (h[EI_CLASS] != kHostClass) {
    return fmt::format("built as a {} ELF object, this host is {}-bit; use a {}-bit build of the plugin",
                       h[EI_CLASS] == ELFCLASS32 ? "32-bit" : "64-bit", sizeof(void*) * 8, sizeof(void*) * 8);
  }
  if (h[EI_DATA] != kHostData) {
    return fmt::format("built {}-endian, this host is {}-endian; use a build of the plugin for this host",
                       little ? "little" : "big", little ? "big" : "little");
  }
  if (type != ET_DYN) {
    return fmt::format("is an ELF {}, not a shared object; a plugin is a shared library built with weft_add_plugin",
                       type == ET_EXEC ? "executable" : (type == ET_REL ? "object file" : "file of another type"));
  }
  return "";
}

namespace {

// A read-only mapping of a whole file; empty when the file cannot be mapped.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        data_ = static_cast<const unsigned char*>(p);
        size_ = static_cast<size_t>(st.st_size);
      }
    }
    ::close(fd);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() {
    if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
  }
  const unsigned char* data() const { return data_; }
  size_t size() const { return size_; }
  // True when [offset, offset + count * each) lies inside the file (without overflow).
  bool Holds(uint64_t offset, uint64_t count, uint64_t each) const {
    if (offset > size_) return false;
    return each == 0 || count <= (size_ - offset) / each;
  }

 private:
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace

std::string CheckElfExports(const std::string& path, const char* symbol) {
  MappedFile f(path);
  if (!f.data()) return "cannot be mapped for reading; check that it is a readable regular file";
  const std::string malformed =
      "has a malformed ELF section table; it is not a plugin: remove it from the plugin directory";
  if (!f.Holds(0, 1, sizeof(ElfW(Ehdr)))) return malformed;
  ElfW(Ehdr) eh;
  std::memcpy(&eh, f.data(), sizeof(eh));
  if (eh.e_shnum == 0 || eh.e_shentsize != sizeof(ElfW(Shdr))) {
    return "has no ELF section headers, so its exports cannot be checked before loading; build it with "
           "weft_add_plugin (strip keeps the section headers)";
  }
  if (!f.Holds(eh.e_shoff, eh.e_shnum, sizeof(ElfW(Shdr)))) return malformed;
  auto section = [&](size_t i) {
    ElfW(Shdr) sh;
    std::memcpy(&sh, f.data() + eh.e_shoff + i * sizeof(ElfW(Shdr)), sizeof(sh));
    return sh;
  };
  const size_t want = std::strlen(symbol);
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    const ElfW(Shdr) sh = section(i);
    if (sh.sh_type != SHT_DYNSYM) continue;
    if (sh.sh_link >= eh.e_shnum || sh.sh_entsize != sizeof(ElfW(Sym))) return malformed;
    const ElfW(Shdr) strtab = section(sh.sh_link);
    const uint64_t count = sh.sh_size / sizeof(ElfW(Sym));
    if (!f.Holds(sh.sh_offset, count, sizeof(ElfW(Sym))) || !f.Holds(strtab.sh_offset, strtab.sh_size, 1)) {
      return malformed;
    }
    const auto* names = reinterpret_cast<const char*>(f.data() + strtab.sh_offset);
    for (uint64_t k = 0; k < count; ++k) {
      ElfW(Sym) sym;
      std::memcpy(&sym, f.data() + sh.sh_offset + k * sizeof(ElfW(Sym)), sizeof(sym));
      if (sym.st_shndx == SHN_UNDEF || sym.st_name >= strtab.sh_size) continue;
      const unsigned bind = ELF64_ST_BIND(sym.st_info);
      if (bind != STB_GLOBAL && bind != STB_WEAK) continue;
      if (strtab.sh_size - sym.st_name <= want) continue;  // too short to hold the name and its NUL
      if (std::memcmp(names + sym.st_name, symbol, want + 1) == 0) return "";
    }
    break;  // an object has at most one dynamic symbol table
  }
  return fmt::format(
      "does not export {} (read from its dynamic symbol table without loading it), so it is not a weft plugin; "
      "declare the entry with WEFT_DECLARE_PLUGIN_ENTRY() (sdk/plugin.h) and build it with weft_add_plugin, or "
      "remove it from the plugin directory",
      symbol);
}

std::string ExtractDlerror(const std::string& what) {
  static const std::string kPrefix = "(dlerror system message: ";
  size_t begin = what.find(kPrefix);
  if (begin == std::string::npos) return what;
  begin += kPrefix.size();
  size_t end = what.rfind(')');
  if (end == std::string::npos || end < begin) return what.substr(begin);
  return what.substr(begin, end - begin);
}

std::string ExplainDlopenError(const std::string& text, const std::string& plugin_path) {
  static const std::string kCannotOpen = ": cannot open shared object file";
  if (size_t pos = text.find(kCannotOpen); pos != std::string::npos) {
    std::string lib = text.substr(0, pos);
    if (lib != plugin_path) {
      return fmt::format("needs {}, which was not found; install it or add its directory to LD_LIBRARY_PATH", lib);
    }
  }
  static const std::string kUndefined = "undefined symbol: ";
  if (size_t pos = text.find(kUndefined); pos != std::string::npos) {
    std::string sym = text.substr(pos + kUndefined.size());
    if (size_t end = sym.find_first_of(" ,("); end != std::string::npos) sym.resize(end);
    return fmt::format(
        "cannot be loaded: symbol {} is undefined ({}); a library it depends on has another version "
        "than the plugin was built against: rebuild the plugin or install the matching library",
        sym, text);
  }
  if (text.find("wrong ELF class") != std::string::npos) {
    return fmt::format(
        "cannot be loaded: {}; a dependency is built for another word size: install the {}-bit "
        "build of it",
        text, sizeof(void*) * 8);
  }
  return fmt::format("cannot be loaded: {}", text);
}

}  // namespace weft::detail
