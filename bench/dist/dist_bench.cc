// Allreduce bandwidth: KVStore "dist_sync" (Push + Pull of one key, and PushPull of another; no
// optimizer) next to raw Gloo (gloo::allreduce, ring, in place) in the same run, on the same
// rendezvous and sizes.
//
//   weft-launch -n 2 -- build/default/bench/dist_bench [sizes in MB, default 1 16 64]
//
// Rank 0 prints one line per size: MB, GB/s of raw Gloo, Push+Pull and PushPull, and the two
// ratios to raw Gloo. GB/s is the "algorithm bandwidth" bytes / time per allreduce, best of the
// repeats and (in brackets) their median; the three are timed in turn, so load changes on a shared
// machine hit all alike.
#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "weft/internal/rendezvous.h"
#include "weft/kvstore.h"
#include "weft/ndarray.h"

namespace {

using Clock = std::chrono::steady_clock;

// gloo's Store on weft's rendezvous store (what the gloo plugin does through the host table).
class Store final : public gloo::rendezvous::Store {
 public:
  explicit Store(std::shared_ptr<weft::RendezvousStore> s) : s_(std::move(s)) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    s_->Set("bench/" + key, std::string(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    auto v = s_->Get("bench/" + key, std::chrono::seconds(60));
    if (!v) throw std::runtime_error("rendezvous: key " + key + " missing");
    return {v->begin(), v->end()};
  }
  void wait(const std::vector<std::string>& keys) override { wait(keys, std::chrono::seconds(60)); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& t) override {
    for (const auto& k : keys)
      if (!s_->Get("bench/" + k, t)) throw std::runtime_error("rendezvous: key " + k + " missing");
  }

 private:
  std::shared_ptr<weft::RendezvousStore> s_;
};

// Times each of `fns` in turn, `repeats` rounds after one warm-up round (in turn, so that a change
// of the machine's load hits all alike); returns their times in seconds.
std::vector<std::vector<double>> TimeInTurn(int repeats, const std::vector<std::function<void()>>& fns) {
  for (const auto& f : fns) f();
  std::vector<std::vector<double>> t(fns.size());
  for (int i = 0; i < repeats; ++i)
    for (size_t k = 0; k < fns.size(); ++k) {
      const auto t0 = Clock::now();
      fns[k]();
      t[k].push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
  return t;
}

double Best(std::vector<double> v) { return *std::min_element(v.begin(), v.end()); }
double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> sizes_mb;
  for (int i = 1; i < argc; ++i) sizes_mb.push_back(std::atof(argv[i]));
  if (sizes_mb.empty()) sizes_mb = {1, 16, 64};
  try {
    auto kv = weft::KVStore::Create("dist_sync");  // joins the job (and sets up the rendezvous)
    const int rank = kv->rank(), size = kv->num_workers();
    // Raw Gloo on its own full mesh.
    Store store(weft::RendezvousFromEnv());
    gloo::transport::tcp::attr attr;
    attr.hostname = "127.0.0.1";
    auto dev = gloo::transport::tcp::CreateDevice(attr);
    auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
    ctx->setTimeout(std::chrono::seconds(60));
    ctx->connectFullMesh(store, dev);
    if (rank == 0)
      std::printf(
          "%d workers; allreduce of float32; raw Gloo, KVStore Push+Pull and KVStore PushPull in turn;\n"
          "GB/s best of repeats (median); ratios to raw Gloo best (median)\n"
          "%6s %15s %15s %15s %13s %13s\n",
          size, "MB", "gloo GB/s", "Push+Pull GB/s", "PushPull GB/s", "Push+Pull", "PushPull");
    int key = 0;
    for (double mb : sizes_mb) {
      const size_t n = static_cast<size_t>(mb * 1024 * 1024 / 4);
      const int repeats = mb <= 1 ? 40 : (mb <= 16 ? 12 : 8);
      std::vector<float> buf(n, 1.0f);
      uint32_t tag = 0;
      weft::NDArray grad(std::vector<float>(n, 1.0f), weft::Shape(static_cast<int64_t>(n)), weft::Context::cpu(0));
      weft::NDArray out(weft::Shape(static_cast<int64_t>(n)), weft::Context::cpu(0));
      // One key per path: PushPull leaves its key's value in `out2`.
      weft::NDArray out2(weft::Shape(static_cast<int64_t>(n)), weft::Context::cpu(0));
      kv->Init(key, grad);
      kv->Init(key + 1, grad);
      const auto t = TimeInTurn(repeats, {[&] {
                                            gloo::AllreduceOptions o(ctx);
                                            o.setOutput(buf.data(), n);
                                            o.setReduceFunction([](void* c, const void* a, const void* b, size_t k) {
                                              gloo::sum<float>(c, a, b, k);
                                            });
                                            o.setTag(tag++);
                                            gloo::allreduce(o);
                                          },
                                          [&] {
                                            kv->Push(key, {grad});
                                            kv->Pull(key, {out});
                                            out.WaitToRead();
                                          },
                                          [&] {
                                            kv->PushPull(key + 1, {grad}, {out2});
                                            out2.WaitToRead();
                                          }});
      key += 2;
      const double bytes = static_cast<double>(n) * 4;
      if (rank == 0)
        std::printf("%6.0f %7.2f (%5.2f) %7.2f (%5.2f) %7.2f (%5.2f) %5.0f%% (%3.0f%%) %5.0f%% (%3.0f%%)\n", mb,
                    bytes / Best(t[0]) / 1e9, bytes / Median(t[0]) / 1e9, bytes / Best(t[1]) / 1e9,
                    bytes / Median(t[1]) / 1e9, bytes / Best(t[2]) / 1e9, bytes / Median(t[2]) / 1e9,
                    100 * Best(t[0]) / Best(t[1]), 100 * Median(t[0]) / Median(t[1]), 100 * Best(t[0]) / Best(t[2]),
                    100 * Median(t[0]) / Median(t[2]));
    }
    kv->Barrier();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dist_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
