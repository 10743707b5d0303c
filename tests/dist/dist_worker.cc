// One worker of the distributed KVStore tests (dist_test.cc starts several, directly or through
// weft-launch). The job comes from the environment (WEFT_RANK, WEFT_NUM_WORKERS,
// WEFT_RENDEZVOUS); DIST_KV_TYPE picks the store type (default dist_sync).
//
//   dist_worker values                 MXNet's push/pull/updater numbers with int and string keys;
//                                      exits 0 and prints "values OK", or 1 naming the mismatch.
//                                      With parameter servers (WEFT_NUM_SERVERS > 0) the updater is
//                                      an optimizer run by the servers (sgd, lr -2: w += 2 g), set
//                                      before the updater rounds; the numbers are the same
//   dist_worker async <rounds>         dist_async on the servers: each worker pushes r+1 <rounds>
//                                      times to an int, a string and a big key under w += g (applied
//                                      per push: commutative), then Barrier; the final values must
//                                      be init + rounds n(n+1)/2; prints "async OK"
//   dist_worker fault <victim> <kill|stop|exit> <round>
//                                      push/pull rounds; rank <victim> kills (SIGKILL) or stops
//                                      (SIGSTOP) itself, or exits 0 early, at <round>; a survivor
//                                      that catches the error prints "caught: <message>" and exits 3;
//                                      every worker prints "round 10" when it gets there
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "weft/imperative.h"
#include "weft/kvstore.h"
#include "weft/ndarray.h"
#include "weft/optimizer.h"

using weft::Context;
using weft::KVStore;
using weft::NDArray;
using weft::Shape;

namespace {

NDArray Full(const Shape& s, float v, const Context& ctx = Context::cpu(0)) {
  return NDArray(std::vector<float>(s.Size(), v), s, ctx);
}

// Every element of `a` equals `want`, else prints and exits 1.
void Expect(const NDArray& a, float want, const std::string& what, int rank) {
  std::vector<float> got;
  a.SyncCopyToCPU(&got);
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want) {
      std::fprintf(stderr, "rank %d: %s: element %zu is %g, expected %g\n", rank, what.c_str(), i, got[i], want);
      std::exit(1);
    }
  }
}

std::string KvType() {
  const char* t = std::getenv("DIST_KV_TYPE");
  return t ? t : "dist_sync";
}

// The same checks on int keys and on string keys (K = int or std::string).
bool OnServers() {
  const char* s = std::getenv("WEFT_NUM_SERVERS");
  return s != nullptr && std::atoi(s) > 0;
}

// An optimizer doing w += factor * g (sgd with lr = -factor; no momentum, no weight decay).
std::unique_ptr<weft::Optimizer> AddTimes(float factor) {
  auto opt = weft::OptimizerRegistry::Create("sgd");
  opt->SetParam("lr", -factor)->SetParam("rescale_grad", 1.0f)->SetParam("wd", 0.0f);
  return opt;
}

template <typename K>
void CheckValues(KVStore& kv, K k1, K k2, K k3) {
  const int r = kv.rank(), n = kv.num_workers();
  const float tri = static_cast<float>(n * (n + 1) / 2);  // sum of r+1 over ranks
  const Shape s(4, 4);
  // Init: rank 0's value wins.
  kv.Init(k1, Full(s, static_cast<float>(r + 1)));
  NDArray out = Full(s, -1);
  kv.Pull(k1, {out});
  Expect(out, 1, "init (rank 0 wins)", r);
  // No updater: the stored value becomes the sum of every worker's push.
  kv.Push(k1, {Full(s, static_cast<float>(r + 1))});
  kv.Pull(k1, {out});
  Expect(out, tri, "push without updater", r);
  // Values from two local devices are summed first.
  kv.Push(k1, {Full(s, static_cast<float>(r + 1)), Full(s, static_cast<float>(r + 1), Context::cpu(1))});
  NDArray out1 = Full(s, -1, Context::cpu(1));
  kv.Pull(k1, {out, out1});
  Expect(out, 2 * tri, "push from two devices", r);
  Expect(out1, 2 * tri, "pull to cpu(1)", r);
  // A larger key (several Gloo segments) that no updater touches.
  const Shape big(300, 1000);
  kv.Init(k2, Full(big, 0));
  kv.Push(k2, {Full(big, 0.5f * static_cast<float>(r + 1))});
  NDArray bout = Full(big, -1);
  kv.Pull(k2, {bout});
  Expect(bout, 0.5f * tri, "push of a 300x1000 key", r);
  // MXNet's dist test: updater w += 2 g, init 1, worker r pushes r+1: after round i the value is
  // n(n+1) i + 1.
  kv.Init(k3, Full(s, 1));
  if (OnServers()) kv.SetOptimizer(AddTimes(2));  // from here on every push is w += 2 g
  for (int i = 1; i <= 3; ++i) {
    kv.Push(k3, {Full(s, static_cast<float>(r + 1))});
    kv.Pull(k3, {out});
    Expect(out, static_cast<float>(n * (n + 1) * i + 1), "updater round " + std::to_string(i), r);
  }
  kv.Barrier();
}

int Values() {
  {
    auto kv = KVStore::Create(KvType());
    if (!OnServers())
      kv->SetUpdater([](int key, const NDArray& recv, NDArray* local) {
        if (key != 7) {  // keys 3 and 5 have no updater semantics in this test: replace
          NDArray::CopyFromTo(recv, *local);
          return;
        }
        *local += recv * 2.0f;
      });
    CheckValues<int>(*kv, 3, 5, 7);
  }
  {
    auto kv = KVStore::Create(KvType());
    if (!OnServers())
      kv->SetUpdater([](const std::string& key, const NDArray& recv, NDArray* local) {
        if (key != "w") {
          NDArray::CopyFromTo(recv, *local);
          return;
        }
        *local += recv * 2.0f;
      });
    CheckValues<std::string>(*kv, "a", "big", "w");
    std::printf("rank %d of %d: values OK (%s)\n", kv->rank(), kv->num_workers(), KvType().c_str());
  }
  return 0;
}

// dist_async: pushes applied one by one as they arrive (w += g commutes, so the end value is known).
int Async(int rounds) {
  auto kv = KVStore::Create("dist_async");
  const int r = kv->rank(), n = kv->num_workers();
  const float tri = static_cast<float>(n * (n + 1) / 2);
  kv->SetOptimizer(AddTimes(1));
  const Shape s(4, 4), big(20000);  // big: sliced over the servers when the bound is below 20000
  std::vector<float> ramp(big.Size());
  for (size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<float>(i % 1000);
  kv->Init(3, Full(s, static_cast<float>(10 + r)));  // rank 0's 10 wins
  kv->Init(9, NDArray(ramp, big, Context::cpu(0)));
  NDArray out = Full(s, -1), bout = Full(big, -1);
  for (int i = 0; i < rounds; ++i) {
    kv->Push(3, {Full(s, static_cast<float>(r + 1))});
    kv->Push(9, {Full(big, static_cast<float>(r + 1))});
    if (i % 5 == 0) kv->Pull(3, {out});  // interleaved pulls see some prefix of the pushes
  }
  kv->Barrier();  // every worker's pushes are applied
  kv->Pull(3, {out});
  kv->Pull(9, {bout});
  Expect(out, 10 + rounds * tri, "int key after all pushes", r);
  std::vector<float> got;
  bout.SyncCopyToCPU(&got);
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != ramp[i] + rounds * tri) {
      std::fprintf(stderr, "rank %d: big key element %zu is %g, expected %g\n", r, i, got[i], ramp[i] + rounds * tri);
      return 1;
    }
  }
  kv->Barrier();  // nobody pushes again before everyone has checked
  std::printf("rank %d of %d: async OK\n", r, n);
  return 0;
}

int Fault(int victim, const std::string& how, int at_round) {
  try {
    auto kv = KVStore::Create(KvType());
    const int r = kv->rank();
    const Shape s(1000);
    kv->Init(3, Full(s, 0));
    NDArray out = Full(s, 0);
    for (int round = 0; round < 100000; ++round) {
      if (round == 10) {
        std::fprintf(stderr, "round 10\n");
        std::fflush(stderr);
      }
      if (r == victim && round == at_round) {
        std::fprintf(stderr, "rank %d: %s at round %d\n", r, how.c_str(), round);
        std::fflush(stderr);
        if (how == "kill") raise(SIGKILL);
        if (how == "stop") raise(SIGSTOP);
        if (how == "exit") std::_Exit(0);
      }
      kv->Push(3, {Full(s, 1)});
      kv->Pull(3, {out});
      out.WaitToRead();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "caught: %s\n", e.what());
    std::fflush(stderr);
    std::_Exit(3);  // the store's destructor would wait on a broken job: leave at once
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  try {
    if (what == "values") return Values();
    if (what == "async" && argc == 3) return Async(std::atoi(argv[2]));
    if (what == "fault" && argc == 5) return Fault(std::atoi(argv[2]), argv[3], std::atoi(argv[4]));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  std::fprintf(stderr, "usage: dist_worker values | async <rounds> | fault <victim rank> <kill|stop|exit> <round>\n");
  return 2;
}
