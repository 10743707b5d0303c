// One worker of the distributed KVStore tests (dist_test.cc starts several, directly or through
// weft-launch). The job comes from the environment (WEFT_RANK, WEFT_NUM_WORKERS,
// WEFT_RENDEZVOUS); DIST_KV_TYPE picks the store type (default dist_sync).
//
//   dist_worker values                 MXNet's push/pull/updater numbers with int and string keys;
//                                      exits 0 and prints "values OK", or 1 naming the mismatch.
//                                      With parameter servers (WEFT_NUM_SERVERS > 0) the updater is
//                                      an optimizer run by the servers (sgd, lr -2: w += 2 g), set
//                                      before the updater rounds; the numbers are the same
//   dist_worker buckets                bucket fusion: the same pushes (fractions, many key sizes,
//                                      pushed all then pulled all, pushed and pulled in turn, a key
//                                      pushed twice, then sgd with momentum) into an unfused store
//                                      and one with 4 KiB buckets: bit-identical pulls, equal to the
//                                      sums of every rank's values (2 workers); prints "buckets OK"
//   dist_worker async <rounds>         dist_async on the servers: each worker pushes r+1 <rounds>
//                                      times to an int, a string and a big key under w += g (applied
//                                      per push: commutative), then Barrier; the final values must
//                                      be init + rounds n(n+1)/2; prints "async OK"
//   dist_worker pushpull               PushPull against Push + Pull on two stores with the same
//                                      pushes (int keys, then string keys; a small key that goes
//                                      into a bucket and a 1.2 MB one that travels alone; outs given
//                                      or in place; a Push after PushPulls; then an optimizer): pulls
//                                      bit-identical; prints "pushpull OK"
//   dist_worker states <sgd|adam> <dir>
//                                      server-side optimizer states (parameter servers; keys 3, 4 and
//                                      9, key 9 sliced when the bound is below 2000): train 3 rounds,
//                                      rank 0 saves the states, 3 more rounds -> A. A new store from
//                                      the saved weights and states, 3 rounds -> must equal A bit for
//                                      bit; rank 0: a local store loading the servers' file must
//                                      reach A too, and a server store loading the local store's
//                                      file must follow the local store for 2 more rounds. dist_sync:
//                                      one push per worker and round; dist_async: the workers push in
//                                      turn (Barrier between), so the order of updates is fixed.
//                                      Prints "states OK"
//   dist_worker rowsparse              row_sparse_pull (KVStore::PullRowSparse) in dist_sync: key 5
//                                      (301 x 7 = 2107 elements; with the bound below that, sliced
//                                      over the servers with a cut inside row 150) and key 6
//                                      (20000 x 64): after one round of pushes, the rows asked for
//                                      (unsorted, repeated) equal those rows of a full Pull; on key 6
//                                      each worker asks for 1 % of the rows (200; DIST_ROWS sets the
//                                      rows, default 20000). Prints
//                                      "rowsparse OK"
//   dist_worker rowpush                row_sparse pushes in dist_sync with sgd (lr 0.1, wd 0.1) set:
//                                      key 5 (301 x 7, sliced as for rowsparse); rank r pushes rows
//                                      {2r+1, 150, 300} with value r+1 on two devices; after the round
//                                      the pushed rows hold 0.99 w - 0.1 g (g their sum) and every
//                                      other row its initial value (lazy_update). Prints "rowpush OK"
//   dist_worker savefail <file>       one worker of dist_async with 2 servers: keys 3 (server 1)
//                                      and 4 (server 0) trained one round, prints "ready", waits for
//                                      <file>.go (the test kills a server first), then calls
//                                      SaveOptimizerStates(<file>): prints "caught: <message>" and
//                                      exits 3 when it fails, 0 when it succeeds
//   dist_worker fault <victim> <kill|stop|exit> <round>
//                                      push/pull rounds; rank <victim> kills (SIGKILL) or stops
//                                      (SIGSTOP) itself, or exits 0 early, at <round>; a survivor
//                                      that catches the error prints "caught: <message>" and exits 3;
//                                      every worker prints "round 10" when it gets there
#include <signal.h>
#include <unistd.h>

#include <algorithm>
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
#include "weft/sparse.h"

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
  // A larger key (several 1 MiB ring segments per worker's chunk, the last chunk shorter) that no
  // updater touches; a ramp, so that a segment landing in the wrong place shows.
  const Shape big(701, 1001);
  std::vector<float> ramp(big.Size()), want(big.Size());
  for (size_t i = 0; i < ramp.size(); ++i) {
    ramp[i] = static_cast<float>((r + 1) * static_cast<int>(i % 997));
    want[i] = tri * static_cast<float>(i % 997);
  }
  kv.Init(k2, Full(big, 0));
  kv.Push(k2, {NDArray(ramp, big, Context::cpu(0))});
  NDArray bout = Full(big, -1);
  kv.Pull(k2, {bout});
  std::vector<float> got;
  bout.SyncCopyToCPU(&got);
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) {
      std::fprintf(stderr, "rank %d: 701x1001 key: element %zu is %g, expected %g\n", r, i, got[i], want[i]);
      std::exit(1);
    }
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

// The rows `ids` of `key` by PullRowSparse against a full Pull (see "rowsparse" above).
bool RowsMatch(KVStore& kv, int key, const Shape& s, const std::vector<float>& ids) {
  const int r = kv.rank();
  NDArray full = Full(s, -1);
  kv.Pull(key, {full});
  std::vector<float> whole;
  full.SyncCopyToCPU(&whole);
  NDArray out = NDArray::CreateSparse(weft::StorageType::kRowSparse, s, Context::cpu(0));
  kv.PullRowSparse(key, {out}, {NDArray(ids, Shape(static_cast<int64_t>(ids.size())), Context::cpu(0))});
  std::vector<int64_t> want(ids.begin(), ids.end());
  std::sort(want.begin(), want.end());
  want.erase(std::unique(want.begin(), want.end()), want.end());
  const NDArray idx = out.aux_ndarray(0);
  std::vector<int64_t> got_ids(idx.Size());
  if (!got_ids.empty()) idx.SyncCopyToCPUBytes(got_ids.data(), got_ids.size() * sizeof(int64_t));
  if (got_ids != want) {
    std::fprintf(stderr, "rank %d: key %d: row_sparse_pull returned %zu row ids, expected %zu\n", r, key,
                 got_ids.size(), want.size());
    return false;
  }
  std::vector<float> values;
  out.data_ndarray().SyncCopyToCPU(&values);
  const auto row_len = static_cast<size_t>(s[1]);
  for (size_t k = 0; k < want.size(); ++k)
    for (size_t j = 0; j < row_len; ++j)
      if (values[k * row_len + j] != whole[static_cast<size_t>(want[k]) * row_len + j]) {
        std::fprintf(stderr, "rank %d: key %d row %lld element %zu: %g, the full pull has %g\n", r, key,
                     static_cast<long long>(want[k]), j, values[k * row_len + j],
                     whole[static_cast<size_t>(want[k]) * row_len + j]);
        return false;
      }
  return true;
}

int RowSparse() {
  auto kv = KVStore::Create(KvType());
  const int r = kv->rank(), n = kv->num_workers();
  // DIST_ROWS (default 20000) sets key 6's rows: 1000000 gives the 1M x 64 weight.
  const char* rows_env = std::getenv("DIST_ROWS");
  const int64_t rows = rows_env ? std::atoll(rows_env) : 20000;
  const Shape small(301, 7), big(rows, 64);
  for (auto [key, s] : {std::pair{5, small}, std::pair{6, big}}) {
    std::vector<float> ramp(s.Size());
    for (size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<float>(i % 997);
    kv->Init(key, NDArray(ramp, s, Context::cpu(0)));
    for (float& v : ramp) v *= static_cast<float>(r + 1);
    kv->Push(key, {NDArray(ramp, s, Context::cpu(0))});  // the round's sum replaces the value
  }
  // Rows on both sides of the cut (row 150 holds elements 1050..1056, the cut is at 1053).
  if (!RowsMatch(*kv, 5, small, {300, 150, 0, 151, 150, 149})) return 1;
  std::vector<float> ids;
  for (int64_t i = r; i < rows; i += 100) ids.push_back(static_cast<float>(i));
  if (!RowsMatch(*kv, 6, big, ids)) return 1;
  kv->Barrier();
  std::printf("rank %d of %d: rowsparse OK\n", r, n);
  return 0;
}

int RowPush() {
  auto kv = KVStore::Create(KvType());
  const int r = kv->rank(), n = kv->num_workers();
  const Shape s(301, 7);
  std::vector<float> w0(s.Size());
  for (size_t i = 0; i < w0.size(); ++i) w0[i] = static_cast<float>(i % 997);
  kv->Init(5, NDArray(w0, s, Context::cpu(0)));
  auto sgd = weft::OptimizerRegistry::Create("sgd");
  sgd->SetParam("lr", 0.1f)->SetParam("wd", 0.1f)->SetParam("rescale_grad", 1.0f);
  kv->SetOptimizer(std::move(sgd));
  // Each worker's gradient: rows 2r+1, 150 and 300 hold r+1, half from each of two devices.
  std::vector<float> g(s.Size(), 0.0f);
  for (int64_t row : {int64_t{2} * r + 1, int64_t{150}, int64_t{300}})
    for (size_t j = 0; j < 7; ++j) g[static_cast<size_t>(row) * 7 + j] = 0.5f * static_cast<float>(r + 1);
  std::vector<NDArray> parts;
  for (int d = 0; d < 2; ++d)
    parts.push_back(weft::CastStorage(NDArray(g, s, Context::cpu(d)), weft::StorageType::kRowSparse));
  kv->Push(5, parts);
  NDArray out = Full(s, -1);
  kv->Pull(5, {out});
  std::vector<float> got;
  out.SyncCopyToCPU(&got);
  for (size_t i = 0; i < got.size(); ++i) {
    const int64_t row = static_cast<int64_t>(i / 7);
    float sum = 0;  // the round's gradient of this element
    bool pushed = false;
    for (int q = 0; q < n; ++q)
      if (row == 2 * q + 1 || row == 150 || row == 300) {
        sum += static_cast<float>(q + 1);
        pushed = true;
      }
    const float want = pushed ? (1.0f - 0.1f * 0.1f) * w0[i] - 0.1f * sum : w0[i];
    if (std::fabs(got[i] - want) > 1e-4f * std::max(1.0f, std::fabs(want))) {
      std::fprintf(stderr, "rank %d: element %zu (row %lld): %g, expected %g\n", r, i, static_cast<long long>(row),
                   got[i], want);
      return 1;
    }
  }
  kv->Barrier();
  std::printf("rank %d of %d: rowpush OK\n", r, n);
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

// A value of rank q's key k in round `round` (-1: init): fractions, so that a sum in another order
// or a value in the wrong place shows.
float Gen(int q, int round, int k, size_t i) {
  const uint32_t h =
      static_cast<uint32_t>(q * 7919 + (round + 2) * 104729 + k * 1299709) + static_cast<uint32_t>(i) * 2654435761u;
  return static_cast<float>(static_cast<int>(h >> 16) % 2001 - 1000) / 997.0f;
}

// Pulls every key of both stores and compares them bit for bit with each other and, when `sums`
// is given, with it.
void Compare(KVStore& plain, KVStore& fused, const std::vector<int64_t>& sizes,
             const std::vector<std::vector<float>>* sums, const std::string& what) {
  for (size_t k = 0; k < sizes.size(); ++k) {
    const Shape s(sizes[k]);
    NDArray a = Full(s, -7), b = Full(s, -7);
    plain.Pull(static_cast<int>(k), {a});
    fused.Pull(static_cast<int>(k), {b});
    std::vector<float> va, vb;
    a.SyncCopyToCPU(&va);
    b.SyncCopyToCPU(&vb);
    for (size_t i = 0; i < va.size(); ++i) {
      const float want = sums ? (*sums)[k][i] : va[i];
      if (std::memcmp(&va[i], &want, 4) != 0 || std::memcmp(&vb[i], &want, 4) != 0) {
        std::fprintf(stderr, "rank %d: %s: key %zu element %zu: unfused %.9g, fused %.9g, expected %.9g\n",
                     plain.rank(), what.c_str(), k, i, va[i], vb[i], want);
        std::exit(1);
      }
    }
  }
}

// Bucket fusion: the same pushes into a store without fusion and into one with 4 KiB buckets.
int Buckets() {
  ::setenv("WEFT_KVSTORE_BUCKET_BYTES", "0", 1);
  auto plain = KVStore::Create(KvType());
  ::setenv("WEFT_KVSTORE_BUCKET_BYTES", "4096", 1);
  auto fused = KVStore::Create(KvType());
  const int r = plain->rank(), n = plain->num_workers();
  // Small keys of many sizes (fused: below 256 elements, a quarter of 4 KiB; two buckets of them)
  // and larger ones (never fused).
  const std::vector<int64_t> sizes{1, 7, 100, 200, 3, 250, 50, 255, 4, 199, 1000, 130, 8, 256, 20000};
  auto values = [&](int q, int round) {
    std::vector<NDArray> v;
    for (size_t k = 0; k < sizes.size(); ++k) {
      std::vector<float> x(static_cast<size_t>(sizes[k]));
      for (size_t i = 0; i < x.size(); ++i) x[i] = Gen(q, round, static_cast<int>(k), i);
      v.emplace_back(x, Shape(sizes[k]), Context::cpu(0));
    }
    return v;
  };
  auto sums = [&](int round) {  // every rank's values added in rank order (the ring's order for 2)
    std::vector<std::vector<float>> s(sizes.size());
    for (int q = 0; q < n; ++q) {
      const auto v = values(q, round);
      for (size_t k = 0; k < sizes.size(); ++k) {
        std::vector<float> x;
        v[k].SyncCopyToCPU(&x);
        if (q == 0)
          s[k] = x;
        else
          for (size_t i = 0; i < x.size(); ++i) s[k][i] += x[i];
      }
    }
    return s;
  };
  const auto init = values(r, -1);
  for (size_t k = 0; k < sizes.size(); ++k) {
    plain->Init(static_cast<int>(k), init[k]);
    fused->Init(static_cast<int>(k), init[k]);
  }
  // Round 0: every push, then every pull; key 2 is pushed twice (the second replaces the first).
  auto g = values(r, 0), g2 = values(r, 5);
  for (size_t k = 0; k < sizes.size(); ++k)
    for (KVStore* kv : {plain.get(), fused.get()}) kv->Push(static_cast<int>(k), {g[k]});
  for (KVStore* kv : {plain.get(), fused.get()}) kv->Push(2, {g2[2]});
  auto want = sums(0);
  want[2] = sums(5)[2];
  Compare(*plain, *fused, sizes, &want, "round 0 (push all, then pull all)");
  // Round 1: push and pull each key in turn (each pull issues the open bucket).
  g = values(r, 1);
  want = sums(1);
  for (size_t k = 0; k < sizes.size(); ++k) {
    const Shape s(sizes[k]);
    NDArray a = Full(s, -7), b = Full(s, -7);
    plain->Push(static_cast<int>(k), {g[k]});
    plain->Pull(static_cast<int>(k), {a});
    fused->Push(static_cast<int>(k), {g[k]});
    fused->Pull(static_cast<int>(k), {b});
  }
  Compare(*plain, *fused, sizes, &want, "round 1 (push and pull in turn)");
  // Rounds 2-3 with an optimizer with state (momentum): the fused store's updates are the same.
  for (KVStore* kv : {plain.get(), fused.get()}) {
    auto opt = weft::OptimizerRegistry::Create("sgd");
    opt->SetParam("lr", 0.1f)->SetParam("momentum", 0.9f)->SetParam("wd", 0.001f)->SetParam("rescale_grad", 0.5f);
    kv->SetOptimizer(std::move(opt));
  }
  for (int round = 2; round <= 3; ++round) {
    g = values(r, round);
    for (size_t k = 0; k < sizes.size(); ++k)
      for (KVStore* kv : {plain.get(), fused.get()}) kv->Push(static_cast<int>(k), {g[k]});
    Compare(*plain, *fused, sizes, nullptr, "round " + std::to_string(round) + " (sgd with momentum)");
  }
  plain->Barrier();
  fused->Barrier();
  std::printf("rank %d of %d: buckets OK\n", r, n);
  return 0;
}

// ---- states: server-side optimizer states saved and loaded ------------------------------------

namespace {

const std::vector<int> kStateKeys{3, 4, 9};
Shape StateShape(int k) { return k == 3 ? Shape(4, 5) : k == 4 ? Shape(7) : Shape(20, 100); }

NDArray StateGrad(int q, int round, int k) {
  const Shape s = StateShape(k);
  std::vector<float> x(s.Size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = Gen(q, round, k, i);
  return NDArray(x, s, Context::cpu(0));
}

std::unique_ptr<weft::Optimizer> StateOptimizer(const std::string& name) {
  auto opt = weft::OptimizerRegistry::Create(name);
  if (name == "sgd") opt->SetParam("momentum", 0.9f)->SetParam("lr", 0.1f);
  opt->SetParam("wd", 0.001f)->SetParam("rescale_grad", 0.5f);
  return opt;
}

// One round on a store of the job: dist_sync: every worker pushes its gradients; dist_async: the
// workers push in turn (the servers apply rank 0's, then rank 1's ...).
void JobRound(KVStore& kv, int round) {
  const bool async = KvType() == "dist_async";
  for (int q = 0; q < kv.num_workers(); ++q) {
    if (!async || q == kv.rank())
      for (int k : kStateKeys) kv.Push(k, {StateGrad(kv.rank(), round, k)});
    if (!async) break;
    kv.Barrier();
  }
}

// The same round in a local store: every rank's gradients, summed (dist_sync; the servers add two
// workers' pushes, which is the same sum in either order) or one after the other (dist_async).
void LocalRound(KVStore& kv, int workers, int round) {
  for (int k : kStateKeys) {
    if (KvType() == "dist_async") {
      for (int q = 0; q < workers; ++q) kv.Push(k, {StateGrad(q, round, k)});
    } else {
      NDArray sum = StateGrad(0, round, k);
      for (int q = 1; q < workers; ++q) sum = sum + StateGrad(q, round, k);
      kv.Push(k, {sum});
    }
  }
}

using KeyValues = std::map<int, std::vector<float>>;

KeyValues PullAll(KVStore& kv) {
  KeyValues v;
  for (int k : kStateKeys) {
    NDArray out = Full(StateShape(k), -7);
    kv.Pull(k, {out});
    out.SyncCopyToCPU(&v[k]);
  }
  return v;
}

void ExpectSame(const KeyValues& got, const KeyValues& want, const std::string& what, int rank) {
  for (const auto& [k, w] : want)
    for (size_t i = 0; i < w.size(); ++i)
      if (std::memcmp(&got.at(k)[i], &w[i], sizeof(float)) != 0) {
        std::fprintf(stderr, "rank %d: %s: key %d element %zu is %.9g, expected %.9g\n", rank, what.c_str(), k, i,
                     got.at(k)[i], w[i]);
        std::exit(1);
      }
}

// A store of type `type` holding `init`, with the optimizer; `load` (when not empty) loaded by
// rank 0, then a Barrier.
std::unique_ptr<KVStore> StateStore(const std::string& type, const KeyValues& init, const std::string& opt,
                                    const std::string& load) {
  auto kv = KVStore::Create(type);
  for (int k : kStateKeys) kv->Init(k, NDArray(init.at(k), StateShape(k), Context::cpu(0)));
  kv->SetOptimizer(StateOptimizer(opt));
  if (!load.empty() && kv->rank() == 0) kv->LoadOptimizerStates(load);
  kv->Barrier();
  return kv;
}

int States(const std::string& opt, const std::string& dir) {
  const std::string ps_file = dir + "/ps.states", local_file = dir + "/local.states";
  KeyValues init;
  for (int k : kStateKeys) StateGrad(9, -1, k).SyncCopyToCPU(&init[k]);
  KeyValues w3, a;  // the weights after round 2 (saved) and after round 5 (continued)
  int r = 0, n = 0;
  {
    auto kv = StateStore(KvType(), init, opt, "");
    r = kv->rank();
    n = kv->num_workers();
    for (int round = 0; round < 3; ++round) JobRound(*kv, round);
    w3 = PullAll(*kv);
    if (r == 0) kv->SaveOptimizerStates(ps_file);
    kv->Barrier();
    for (int round = 3; round < 6; ++round) JobRound(*kv, round);
    a = PullAll(*kv);
  }
  KeyValues l8;  // the local store after round 7
  if (r == 0) {
    auto local = StateStore("local", w3, opt, ps_file);
    for (int round = 3; round < 6; ++round) LocalRound(*local, n, round);
    ExpectSame(PullAll(*local), a, "a local store loading the servers' states", r);
    local->SaveOptimizerStates(local_file);
    for (int round = 6; round < 8; ++round) LocalRound(*local, n, round);
    l8 = PullAll(*local);
  }
  {
    auto kv = StateStore(KvType(), w3, opt, ps_file);
    for (int round = 3; round < 6; ++round) JobRound(*kv, round);
    ExpectSame(PullAll(*kv), a, "restarted from the saved weights and states", r);
  }
  {
    auto kv = StateStore(KvType(), a, opt, local_file);
    for (int round = 6; round < 8; ++round) JobRound(*kv, round);
    const KeyValues c = PullAll(*kv);
    if (r == 0) ExpectSame(c, l8, "servers loading the local store's states", r);
    kv->Barrier();
  }
  std::printf("rank %d of %d: states OK (%s, %s)\n", r, n, KvType().c_str(), opt.c_str());
  return 0;
}

}  // namespace

// ---- savefail: SaveOptimizerStates with a dead server ------------------------------------------

namespace {

int SaveFail(const std::string& file) {
  try {
    auto kv = KVStore::Create("dist_async");
    kv->SetOptimizer(StateOptimizer("sgd"));
    for (int k : {3, 4}) {
      kv->Init(k, Full(Shape(10), 1));
      kv->Push(k, {Full(Shape(10), 0.5f)});
    }
    kv->Barrier();
    std::fprintf(stderr, "ready\n");
    std::fflush(stderr);
    for (int i = 0; i < 2000 && ::access((file + ".go").c_str(), F_OK) != 0; ++i) ::usleep(10000);
    kv->SaveOptimizerStates(file);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "caught: %s\n", e.what());
    std::fflush(stderr);
    std::_Exit(3);  // the store's destructor would wait on a broken job: leave at once
  }
  return 0;
}

}  // namespace

// ---- pushpull: the fused PushPull gives Push + Pull's results ---------------------------------

namespace {

std::vector<float> Host(const NDArray& a) {
  std::vector<float> v;
  a.SyncCopyToCPU(&v);
  return v;
}

void ExpectBits(const NDArray& got, const NDArray& want, const std::string& what, int rank) {
  const std::vector<float> g = Host(got), w = Host(want);
  for (size_t i = 0; i < w.size(); ++i)
    if (std::memcmp(&g[i], &w[i], sizeof(float)) != 0) {
      std::fprintf(stderr, "rank %d: %s: element %zu is %.9g, expected %.9g\n", rank, what.c_str(), i, g[i], w[i]);
      std::exit(1);
    }
}

// `plain` gets Push + Pull, `fused` PushPull, with the same values; keys[0] small, keys[1] large.
template <typename K>
void CheckPushPull(KVStore& plain, KVStore& fused, const std::vector<K>& keys) {
  const int r = plain.rank();
  const std::vector<int64_t> sizes{100, 300000};  // 300000 floats: above a quarter of a 4 MiB bucket
  auto grad = [&](int round, size_t k) {
    std::vector<float> x(static_cast<size_t>(sizes[k]));
    for (size_t i = 0; i < x.size(); ++i) x[i] = Gen(r, round, static_cast<int>(k), i);
    return NDArray(x, Shape(sizes[k]), Context::cpu(0));
  };
  for (size_t k = 0; k < keys.size(); ++k)
    for (KVStore* kv : {&plain, &fused}) kv->Init(keys[k], grad(-1, k));
  // Round 3's in-place outs (the store keeps them as the values) and their values: the Push of
  // round 4 must give the store its own array again, leaving them as they are.
  std::vector<NDArray> kept(keys.size()), kept_value(keys.size());
  for (int round = 0; round < 6; ++round) {
    if (round == 5)  // from here on an optimizer updates (PushPull is Push then Pull then)
      for (KVStore* kv : {&plain, &fused}) {
        auto opt = weft::OptimizerRegistry::Create("sgd");
        opt->SetParam("lr", 0.1f)->SetParam("momentum", 0.9f)->SetParam("wd", 0.001f);
        kv->SetOptimizer(std::move(opt));
      }
    for (size_t k = 0; k < keys.size(); ++k) {
      const std::string what = "round " + std::to_string(round) + " key " + std::to_string(k);
      const NDArray g = grad(round, k);
      NDArray a = Full(Shape(sizes[k]), -7), b = Full(Shape(sizes[k]), -7);
      plain.Push(keys[k], {g});
      plain.Pull(keys[k], {a});
      if (round == 3) {  // in place: the pushed array receives the result
        b = g.Copy(Context::cpu(0));
        fused.PushPull(keys[k], {b}, {});
        kept[k] = b;
        kept_value[k] = a;
      } else if (round == 4) {  // a plain Push after PushPulls
        fused.Push(keys[k], {g});
        fused.Pull(keys[k], {b});
      } else {
        fused.PushPull(keys[k], {g}, {b});
      }
      ExpectBits(b, a, what, r);
      NDArray again = Full(Shape(sizes[k]), -7);
      fused.Pull(keys[k], {again});  // the value the store keeps
      ExpectBits(again, a, what + " (pulled again)", r);
      if (round == 4) ExpectBits(kept[k], kept_value[k], what + ": round 3's out after a later Push", r);
    }
  }
  fused.Barrier();
  plain.Barrier();
}

int PushPullCheck() {
  int r = 0, n = 0;
  {
    auto plain = KVStore::Create(KvType()), fused = KVStore::Create(KvType());
    CheckPushPull<int>(*plain, *fused, {3, 9});
    r = plain->rank();
    n = plain->num_workers();
  }
  {
    auto plain = KVStore::Create(KvType()), fused = KVStore::Create(KvType());
    CheckPushPull<std::string>(*plain, *fused, {"small", "large"});
  }
  std::printf("rank %d of %d: pushpull OK\n", r, n);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  try {
    if (what == "values") return Values();
    if (what == "buckets") return Buckets();
    if (what == "pushpull") return PushPullCheck();
    if (what == "rowsparse") return RowSparse();
    if (what == "rowpush") return RowPush();
    if (what == "savefail" && argc == 3) return SaveFail(argv[2]);
    if (what == "async" && argc == 3) return Async(std::atoi(argv[2]));
    if (what == "states" && argc == 4) return States(argv[2], argv[3]);
    if (what == "fault" && argc == 5) return Fault(std::atoi(argv[2]), argv[3], std::atoi(argv[4]));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  std::fprintf(stderr,
               "usage: dist_worker values | buckets | pushpull | async <rounds> | states <sgd|adam> <dir> | savefail "
               "<file> | fault "
               "<victim rank> <kill|stop|exit> <round>\n");
  return 2;
}
