// One worker of the device-communicator tests (device_comm_test.cc starts several): the
// distributed store of type DIST_KV_TYPE ("nccl" or "dist_device_sync") on a device transport (in
// tests the simcoll plugin on simdev, standing in for NCCL on CUDA), arrays on simdev devices.
//
//   device_comm_worker values   int and string keys: Init (rank 0 wins), pushes from simdev(0)
//                               and simdev(1) (summed locally first), an updater (w += 2 g), a
//                               larger key; every pull must equal, bit for bit, what a
//                               single-process "device" store gives for the pushes of all ranks
//                               (every rank can make every rank's values). Prints "values OK".
//   device_comm_worker threads <rounds>
//                               three threads push keys of different sizes in a fixed turn (the
//                               same program order on every rank), while the engine makes their
//                               inputs ready in a different order on each rank (a slow producer on
//                               some pushes, chosen by rank): the collectives must still be
//                               issued in push order, else ranks exchange data of different keys
//                               (an error naming the size mismatch, or wrong sums). Prints
//                               "threads OK".
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "weft/engine.h"
#include "weft/imperative.h"
#include "weft/kvstore.h"
#include "weft/ndarray.h"

using weft::Context;
using weft::KVStore;
using weft::NDArray;
using weft::Shape;

namespace {

const Context kDev0("simdev", 0), kDev1("simdev", 1);

std::string KvType() {
  const char* t = std::getenv("DIST_KV_TYPE");
  return t ? t : "nccl";
}

// Rank q's value number `v` of a key of `n` elements: small integers (sums are exact in float, so
// the order of additions does not matter and results compare bit for bit).
std::vector<float> Gen(int q, int v, size_t n) {
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>(static_cast<int>((q * 31 + v * 7 + i * 13) % 41) - 20);
  return x;
}

void Same(const NDArray& got, const NDArray& want, const std::string& what, int rank) {
  std::vector<float> g, w;
  got.SyncCopyToCPU(&g);
  want.SyncCopyToCPU(&w);
  if (g.size() != w.size()) {
    std::fprintf(stderr, "rank %d: %s: %zu elements, expected %zu\n", rank, what.c_str(), g.size(), w.size());
    std::exit(1);
  }
  for (size_t i = 0; i < g.size(); ++i)
    if (std::memcmp(&g[i], &w[i], sizeof(float)) != 0) {
      std::fprintf(stderr, "rank %d: %s: element %zu is %g, the single-process store has %g\n", rank, what.c_str(), i,
                   g[i], w[i]);
      std::exit(1);
    }
}

// The distributed store `kv` against the single-process `ref`, which gets every rank's values.
template <typename K>
void Values(KVStore& kv, KVStore& ref, const std::vector<K>& keys) {
  const int r = kv.rank(), n = kv.num_workers();
  const std::vector<size_t> sizes{16, 3000, 40};
  for (size_t k = 0; k < keys.size(); ++k) {
    const Shape s(static_cast<int64_t>(sizes[k]));
    kv.Init(keys[k], NDArray(Gen(r, 100, sizes[k]), s, kDev0));
    ref.Init(keys[k], NDArray(Gen(0, 100, sizes[k]), s, kDev0));  // rank 0's value wins
  }
  auto updater = [](const NDArray& recv, NDArray* local) { *local += recv * 2.0f; };
  for (KVStore* store : {&kv, &ref}) {
    if constexpr (std::is_same_v<K, int>)
      store->SetUpdater([updater](int key, const NDArray& recv, NDArray* local) {
        if (key == 7)
          updater(recv, local);
        else
          NDArray::CopyFromTo(recv, *local);
      });
    else
      store->SetUpdater([updater](const std::string& key, const NDArray& recv, NDArray* local) {
        if (key == "w")
          updater(recv, local);
        else
          NDArray::CopyFromTo(recv, *local);
      });
  }
  for (int round = 0; round < 3; ++round) {
    for (size_t k = 0; k < keys.size(); ++k) {
      const Shape s(static_cast<int64_t>(sizes[k]));
      // Two local devices: their sum travels (CommDevice picks where it is made).
      kv.Push(keys[k], {NDArray(Gen(r, round, sizes[k]), s, kDev0), NDArray(Gen(r, round + 50, sizes[k]), s, kDev1)});
      std::vector<NDArray> all;
      for (int q = 0; q < n; ++q) {
        all.emplace_back(Gen(q, round, sizes[k]), s, kDev0);
        all.emplace_back(Gen(q, round + 50, sizes[k]), s, kDev1);
      }
      ref.Push(keys[k], all);
    }
    for (size_t k = 0; k < keys.size(); ++k) {
      const Shape s(static_cast<int64_t>(sizes[k]));
      NDArray got(std::vector<float>(sizes[k], -1), s, round == 1 ? kDev1 : kDev0);
      NDArray want(std::vector<float>(sizes[k], -2), s, kDev0);
      kv.Pull(keys[k], {got});
      ref.Pull(keys[k], {want});
      Same(got, want, "round " + std::to_string(round) + " key #" + std::to_string(k), r);
    }
  }
  kv.Barrier();
}

int RunValues() {
  auto ref_int = KVStore::Create("device");
  auto ref_str = KVStore::Create("device");
  {
    auto kv = KVStore::Create(KvType());
    Values<int>(*kv, *ref_int, {3, 5, 7});
  }
  auto kv = KVStore::Create(KvType());
  Values<std::string>(*kv, *ref_str, {"a", "big", "w"});
  std::printf("rank %d of %d: values OK (%s)\n", kv->rank(), kv->num_workers(), KvType().c_str());
  return 0;
}

// A value whose content an engine operation writes after `delay_ms` (a slow producer).
NDArray Produced(const std::vector<float>& x, const Shape& s, int delay_ms) {
  NDArray a(s, Context::cpu(0));
  NDArray src(x, s, Context::cpu(0));
  weft::Engine::Get()->PushSync(
      [a, src, delay_ms](weft::RunContext) {
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
        std::memcpy(const_cast<void*>(a.GetRawData()), src.GetRawData(), a.Size() * sizeof(float));
      },
      Context::cpu(0), {src.var()}, {a.var()}, weft::FnProperty::kNormal, 0, "slow producer");
  return a;
}

int RunThreads(int rounds) {
  auto kv = KVStore::Create(KvType());
  const int r = kv->rank(), n = kv->num_workers();
  constexpr int kThreads = 3, kKeysPerThread = 2;
  auto size_of = [](int key) { return static_cast<size_t>(5 + 17 * key); };  // every key a different size
  for (int key = 0; key < kThreads * kKeysPerThread; ++key)
    kv->Init(key, NDArray(std::vector<float>(size_of(key), 0), Shape(static_cast<int64_t>(size_of(key))), kDev0));
  std::mutex mu;
  std::condition_variable cv;
  int turn = 0;  // pushes made so far, in the fixed order thread 0, 1, 2, 0, ...
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        for (int round = 0; round < rounds; ++round)
          for (int j = 0; j < kKeysPerThread; ++j) {
            std::unique_lock<std::mutex> lock(mu);
            cv.wait(lock, [&] { return turn % kThreads == t; });
            const int key = t * kKeysPerThread + j;
            const Shape s(static_cast<int64_t>(size_of(key)));
            // Rank-dependent slow inputs: without the issue order, each rank would issue a different
            // collective first.
            const bool slow = (turn + r) % 3 == 0;
            const auto x = Gen(r, round, size_of(key));
            kv->Push(key, {slow ? Produced(x, s, 15) : NDArray(x, s, kDev0)});
            ++turn;
            lock.unlock();
            cv.notify_all();
          }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d thread %d: error: %s\n", r, t, e.what());
        std::_Exit(2);
      }
    });
  for (auto& th : threads) th.join();
  for (int key = 0; key < kThreads * kKeysPerThread; ++key) {
    const Shape s(static_cast<int64_t>(size_of(key)));
    std::vector<float> want(size_of(key), 0);
    for (int q = 0; q < n; ++q) {
      const auto x = Gen(q, rounds - 1, size_of(key));
      for (size_t i = 0; i < want.size(); ++i) want[i] += x[i];
    }
    NDArray got(std::vector<float>(size_of(key), -1), s, kDev1);
    kv->Pull(key, {got});
    Same(got, NDArray(want, s, Context::cpu(0)), "key " + std::to_string(key) + " after the threads' pushes", r);
  }
  kv->Barrier();
  std::printf("rank %d of %d: threads OK (%d pushes from %d threads)\n", r, n, rounds * kThreads * kKeysPerThread,
              kThreads);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  try {
    if (what == "values") return RunValues();
    if (what == "threads" && argc == 3) return RunThreads(std::atoi(argv[2]));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  std::fprintf(stderr, "usage: device_comm_worker values | threads <rounds>\n");
  return 2;
}
