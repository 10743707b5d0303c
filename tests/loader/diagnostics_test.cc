// Unit tests of the load-failure texts (plugin/load_diagnostics.h) on inputs the fixtures cannot
// produce on this machine.
#include <gtest/gtest.h>

#include "plugin/load_diagnostics.h"

namespace weft::detail {
namespace {

TEST(LoadDiagnostics, BoostErrnoSuffixIsDropped) {
  EXPECT_EQ(ExtractDlerror("boost::dll::shared_library::load() failed (dlerror system message: /a/libx.so: cannot "
                           "open shared object file: No such file or directory): Bad file descriptor"),
            "/a/libx.so: cannot open shared object file: No such file or directory");
  EXPECT_EQ(ExtractDlerror("something else"), "something else");
}

TEST(LoadDiagnostics, DlopenTextsBecomeCausesWithRemedies) {
  EXPECT_EQ(ExplainDlopenError("libcudart.so.12: cannot open shared object file: No such file or directory",
                               "/p/libweft-cuda.so"),
            "needs libcudart.so.12, which was not found; install it or add its directory to LD_LIBRARY_PATH");
  std::string undefined = ExplainDlopenError(
      "/p/libweft-x.so: undefined symbol: cublasLtMatmul, version libcublasLt.so.12", "/p/libweft-x.so");
  EXPECT_NE(undefined.find("symbol cublasLtMatmul is undefined"), std::string::npos) << undefined;
  EXPECT_NE(ExplainDlopenError("libz.so.1: wrong ELF class: ELFCLASS32", "/p/x.so").find("another word size"),
            std::string::npos);
  EXPECT_EQ(ExplainDlopenError("weird failure", "/p/x.so"), "cannot be loaded: weird failure");
}

TEST(LoadDiagnostics, MachineNames) {
  EXPECT_EQ(ElfMachineName(62), "x86-64");
  EXPECT_EQ(ElfMachineName(183), "aarch64");
  EXPECT_EQ(ElfMachineName(9999), "machine 9999");
}

}  // namespace
}  // namespace weft::detail
