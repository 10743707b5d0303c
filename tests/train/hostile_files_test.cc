// Hostile datasets and careless checkpoint use (issue 19): gzip bombs are refused by the size the
// idx header announces; checkpoints cannot be mixed across networks, half written, or loaded
// with parameters missing.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "weft/io.h"
#include "weft/model.h"
#include "weft/networks.h"

namespace weft {
namespace {

namespace fs = std::filesystem;

std::string ErrorOrNone(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

double PeakRssMiB() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

class ScratchDir {
 public:
  ScratchDir() : path_(fs::temp_directory_path() / fmt::format("weft-hostile-{}-{}", ::getpid(), counter_++)) {
    fs::create_directories(path_);
  }
  ~ScratchDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  std::vector<std::string> Files() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

// gzip of an idx header announcing `dims`, followed by `zeros` zero bytes.
void WriteGzIdx(const std::string& path, const std::vector<uint32_t>& dims, size_t zeros) {
  std::vector<uint8_t> head{0, 0, 0x08, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) head.push_back(static_cast<uint8_t>(d >> s));
  gzFile f = gzopen(path.c_str(), "wb9");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, head.data(), static_cast<unsigned>(head.size())), static_cast<int>(head.size()));
  const std::vector<uint8_t> block(1 << 20, 0);
  for (size_t done = 0; done < zeros; done += block.size()) {
    const auto n = static_cast<unsigned>(std::min(block.size(), zeros - done));
    ASSERT_EQ(gzwrite(f, block.data(), n), static_cast<int>(n));
  }
  gzclose(f);
}

TEST(HostileFiles, GzipBombIsRefusedByTheAnnouncedSize) {
  ScratchDir dir;
  // 16 MiB of zeros after a header announcing 60 bytes: refused after reading 61 of them.
  WriteGzIdx(dir / "bomb.gz", {10, 2, 3}, size_t{16} << 20);
  // A header announcing far more than a file of this size can inflate to.
  WriteGzIdx(dir / "liar.gz", {4000000, 4000, 4000}, 1000);
  // Nothing but zeros, 16 MiB inflated: not even an idx header.
  {
    gzFile f = gzopen((dir / "zeros.gz").c_str(), "wb9");
    const std::vector<uint8_t> block(1 << 20, 0);
    for (int i = 0; i < 16; ++i) gzwrite(f, block.data(), static_cast<unsigned>(block.size()));
    gzclose(f);
  }
  const double rss = PeakRssMiB();
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_NE(ErrorOrNone([&] { ReadIdxFile(dir / "bomb.gz"); }).find("more data than the 60 bytes its header announces"),
            std::string::npos);
  EXPECT_NE(ErrorOrNone([&] { ReadIdxFile(dir / "liar.gz"); }).find("more than a"), std::string::npos);
  EXPECT_NE(ErrorOrNone([&] { ReadIdxFile(dir / "zeros.gz"); }).find("element type 0x00"), std::string::npos);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(PeakRssMiB() - rss, 32.0) << "no large allocation";
  std::printf("refused the three files in %.3f s\n", seconds);  // reported, not asserted
  // A well-formed gzip file still loads.
  WriteGzIdx(dir / "ok.gz", {4, 2}, 8);
  IdxFile ok = ReadIdxFile(dir / "ok.gz");
  EXPECT_EQ(ok.dims, (std::vector<uint32_t>{4, 2}));
  EXPECT_EQ(ok.data.size(), 8u);
}

std::map<std::string, NDArray> ParamsOf(const Symbol& net, const std::vector<std::string>& skip = {}) {
  // Shapes do not matter to the checkpoint files; one small array per argument.
  std::map<std::string, NDArray> out;
  for (const std::string& n : net.ListArguments()) {
    if (n == "data" || n == "softmax_label" || std::find(skip.begin(), skip.end(), n) != skip.end()) continue;
    out[n] = NDArray(std::vector<float>{1, 2}, Shape(2), Context::cpu(0));
  }
  return out;
}

TEST(HostileFiles, APrefixHoldsOneNetworkUnlessReplacingIsAsked) {
  ScratchDir dir;
  const std::string prefix = dir / "model";
  const Symbol mlp = MnistNetwork("mlp"), lenet = MnistNetwork("lenet");
  SaveCheckpoint(prefix, 1, mlp, ParamsOf(mlp), {});
  SaveCheckpoint(prefix, 2, mlp, ParamsOf(mlp), {});  // same network: fine
  const std::string err = ErrorOrNone([&] { SaveCheckpoint(prefix, 1, lenet, ParamsOf(lenet), {}); });
  EXPECT_NE(err.find("holds a different network"), std::string::npos) << err;
  EXPECT_NE(ErrorOrNone([&] { CheckCheckpointPrefix(prefix, lenet); }).find("--replace-network"), std::string::npos);
  // The refused save changed nothing: epoch 1 still loads as the MLP.
  EXPECT_EQ(LoadCheckpoint(prefix, 1).symbol.ListArguments(), mlp.ListArguments());
  SaveCheckpointOptions replace;
  replace.replace_network = true;
  SaveCheckpoint(prefix, 1, lenet, ParamsOf(lenet), {}, replace);
  EXPECT_EQ(LoadCheckpoint(prefix, 1).symbol.ListArguments(), lenet.ListArguments());
  // A corrupt symbol file is reported, not overwritten.
  std::ofstream(CheckpointSymbolFile(prefix)) << "{";
  EXPECT_NE(ErrorOrNone([&] { CheckCheckpointPrefix(prefix, lenet); }).find("cannot be read"), std::string::npos);
}

// A training program's --model-prefix / --load-epoch settings, checked before any work.
TEST(HostileFiles, TrainingCheckpointSettingsAreCheckedUpFront) {
  ScratchDir dir;
  const std::string prefix = dir / "run";
  const Symbol mlp = MnistNetwork("mlp"), lenet = MnistNetwork("lenet");
  CheckTrainingCheckpoints("", 0, 10, mlp);  // no checkpoints
  CheckTrainingCheckpoints(prefix, 0, 10, mlp);
  EXPECT_NE(ErrorOrNone([&] { CheckTrainingCheckpoints("", 3, 10, mlp); }).find("needs the checkpoint prefix"),
            std::string::npos);
  EXPECT_NE(ErrorOrNone([&] { CheckTrainingCheckpoints(prefix, 10, 10, mlp); }).find("nothing to train"),
            std::string::npos);
  EXPECT_NE(ErrorOrNone([&] { CheckTrainingCheckpoints(prefix, -1, 10, mlp); }).find("negative"), std::string::npos);
  EXPECT_NE(ErrorOrNone([&] { CheckTrainingCheckpoints("/proc/weft-run", 0, 10, mlp); }).find("writable"),
            std::string::npos);
  // A fresh run into a prefix of another network: refused, or the old symbol goes when asked.
  SaveCheckpoint(prefix, 1, mlp, ParamsOf(mlp), {});
  EXPECT_NE(ErrorOrNone([&] { CheckTrainingCheckpoints(prefix, 0, 10, lenet); }).find("different network"),
            std::string::npos);
  CheckTrainingCheckpoints(prefix, 1, 10, lenet);  // resuming reads the prefix's own network: no check
  EXPECT_TRUE(fs::exists(CheckpointSymbolFile(prefix)));
  CheckTrainingCheckpoints(prefix, 0, 10, lenet, /*replace_network=*/true);
  EXPECT_FALSE(fs::exists(CheckpointSymbolFile(prefix)));
  SaveCheckpoint(prefix, 1, lenet, ParamsOf(lenet), {});  // the first save of the new network succeeds
}

TEST(HostileFiles, ParamsAreWrittenLastAndNothingIsLeftOnFailure) {
  ScratchDir dir;
  const std::string prefix = dir / "m";
  const Symbol mlp = MnistNetwork("mlp");
  SaveCheckpointOptions opts;
  bool params_existed_during_states = true;
  opts.write_states = [&](const std::string& file) {
    params_existed_during_states = fs::exists(CheckpointParamsFile(prefix, 3));
    std::ofstream(file) << "states";
  };
  SaveCheckpoint(prefix, 3, mlp, ParamsOf(mlp), {}, opts);
  SaveCheckpoint(prefix, 3, mlp, ParamsOf(mlp), {}, opts);  // again, over the old files
  EXPECT_FALSE(params_existed_during_states) << "the old params must be gone before the states are rewritten";
  // A states writer that fails (disk full, SIGINT-like abort) leaves no params file of that
  // epoch, so the epoch cannot be resumed with mismatched states, and no temporary files.
  opts.write_states = [](const std::string&) { Fail("disk full (simulated)"); };
  EXPECT_NE(ErrorOrNone([&] { SaveCheckpoint(prefix, 3, mlp, ParamsOf(mlp), {}, opts); }).find("disk full"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(CheckpointParamsFile(prefix, 3)));
  EXPECT_EQ(dir.Files(), (std::vector<std::string>{"m-0003.states", "m-symbol.json"}));
}

TEST(HostileFiles, UnwritableCheckpointDirectoryIsReportedBeforeTraining) {
  const Symbol mlp = MnistNetwork("mlp");
  const std::string missing = (fs::temp_directory_path() / "weft-no-such-dir" / "sub" / "model").string();
  const std::string err = ErrorOrNone([&] { CheckCheckpointPrefix(missing, mlp); });
  EXPECT_NE(err.find("choose a writable directory"), std::string::npos) << err;
  if (::geteuid() != 0) {  // root writes into read-only directories
    ScratchDir dir;
    fs::permissions(dir / "", fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_NE(ErrorOrNone([&] { CheckCheckpointPrefix(dir / "m", mlp); }).find("Permission denied"), std::string::npos);
    fs::permissions(dir / "", fs::perms::owner_all);
  }
  // /proc refuses new files even to root.
  EXPECT_NE(ErrorOrNone([&] { CheckCheckpointPrefix("/proc/weft-model", mlp); }).find("writable"), std::string::npos);
}

TEST(HostileFiles, MissingParametersAreListedByName) {
  const Symbol mlp = MnistNetwork("mlp");
  std::vector<std::string> names;
  for (const auto& [n, a] : ParamsOf(mlp)) names.push_back(n);
  const std::string err =
      ErrorOrNone([&] { RequireAllParams(names, {"bn_moving_mean"}, ParamsOf(mlp, {"fc2_weight"}), {}, "x.params"); });
  EXPECT_NE(err.find("x.params: 2 parameter(s) of the network are missing: arg:fc2_weight, aux:bn_moving_mean"),
            std::string::npos)
      << err;
  EXPECT_EQ(ErrorOrNone([&] { RequireAllParams(names, {}, ParamsOf(mlp), {}, "x.params"); }), "no error");
}

}  // namespace
}  // namespace weft
