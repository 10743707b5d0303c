// The same MLP under the naive and the threaded engine (child processes: the engine is chosen
// once per process), and on simdev against cpu.
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "mlp_util.h"
#include "require.h"
#include "run_self.h"
#include "weft/runtime.h"

namespace weft {
namespace {

TEST(ExecutorEngines, NaiveAndThreadedGiveIdenticalResults) {
  if (const char* dump = std::getenv("WEFT_EXECUTOR_TEST_DUMP")) {  // child mode
    std::vector<float> r = test::RunMlp(Context::cpu());
    std::ofstream out(dump, std::ios::binary);
    out.write(reinterpret_cast<const char*>(r.data()), static_cast<std::streamsize>(r.size() * sizeof(float)));
    return;
  }
  std::vector<std::vector<char>> results;
  for (const char* engine : {"naive", "threaded"}) {
    const std::string file = ::testing::TempDir() + "/weft_exec_" + engine + "_" + std::to_string(getpid());
    int status = -1;
    const std::string out =
        wtest::RunSelf("ExecutorEngines.NaiveAndThreadedGiveIdenticalResults",
                       std::string("WEFT_ENGINE_TYPE=") + engine + " WEFT_EXECUTOR_TEST_DUMP=" + file, &status);
    ASSERT_EQ(status, 0) << engine << " engine: " << out;
    std::ifstream in(file, std::ios::binary);
    results.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    std::remove(file.c_str());
  }
  ASSERT_GT(results[0].size(), 4 * 32u);
  EXPECT_EQ(results[0], results[1]);
}

TEST(ExecutorDevices, SimdevMatchesCpu) {
  const Context sim("simdev", 0);
  if (!Runtime::Get().HasDevice(sim)) WEFT_SKIP_UNLESS_REQUIRED() << "the simdev test plugin is not loaded";
  std::vector<float> c = test::RunMlp(Context::cpu());
  std::vector<float> s = test::RunMlp(sim);
  ASSERT_EQ(c.size(), s.size());
  double err = 0, ref = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    err += (c[i] - s[i]) * static_cast<double>(c[i] - s[i]);
    ref += c[i] * static_cast<double>(c[i]);
  }
  EXPECT_LE(err / ref, 1e-7);
}

}  // namespace
}  // namespace weft
