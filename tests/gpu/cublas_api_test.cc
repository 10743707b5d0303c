// The CUDA plugin's cuBLAS loader (plugins/cuda/cublas_api.h) against the real libcublas: the
// library loads without a GPU, so every entry point the plugin calls must resolve here.
#include "cublas_api.h"

#include <gtest/gtest.h>

#include <string>

namespace {

TEST(CublasApi, EveryEntryPointResolves) {
  const weft::cuda::CublasApi* api = nullptr;
  try {
    api = &weft::cuda::Cublas();
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
  EXPECT_NE(api->Create, nullptr);
  EXPECT_NE(api->Destroy, nullptr);
  EXPECT_NE(api->SetStream, nullptr);
  EXPECT_NE(api->Sgemm, nullptr);
  EXPECT_NE(api->SgemmStridedBatched, nullptr);
  ASSERT_NE(api->GetStatusString, nullptr);
  // A call that needs no device: the status names come from the loaded library.
  const std::string status = api->GetStatusString(CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_NE(status.find("not initialized"), std::string::npos) << status;
  EXPECT_EQ(&weft::cuda::Cublas(), api) << "a second call must return the same table";
  EXPECT_EQ(weft::cuda::CublasLibraryName(), "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR));
}

}  // namespace
