// KVStore "local" and "device": MXNet's worked numbers (tests/python/unittest/test_kvstore.py),
// 2-bit compression (against MXNet 1.9.1's results, mxnet_expected.h), where sums and updates
// run, errors, optimizer states — on cpu(0..3) and, when loaded, simdev(0..1).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <thread>

#include "mxnet_expected.h"
#include "require.h"
#include "weft/imperative.h"
#include "weft/kvstore.h"
#include "weft/runtime.h"
#include "weft/sparse.h"

namespace weft {
namespace {

const Shape kShape(4, 4);

std::vector<Context> Cpus() { return {Context::cpu(0), Context::cpu(1), Context::cpu(2), Context::cpu(3)}; }

// cpu(0..3) plus simdev(0..1) when the simdev plugin is loaded.
std::vector<Context> MixedDevices() {
  std::vector<Context> out = Cpus();
  for (int i = 0; i < 2; ++i)
    if (Runtime::Get().HasDevice(Context("simdev", i))) out.emplace_back("simdev", i);
  return out;
}

NDArray Filled(float v, const Context& ctx, const Shape& shape = kShape) {
  NDArray a(std::vector<float>(shape.Size(), v), shape, ctx);
  return a;
}

std::vector<NDArray> FilledOn(float v, const std::vector<Context>& ctxs) {
  std::vector<NDArray> out;
  for (const Context& c : ctxs) out.push_back(Filled(v, c));
  return out;
}

void ExpectAll(const NDArray& a, float expected) {
  std::vector<float> v;
  a.SyncCopyToCPU(&v);
  ASSERT_EQ(v.size(), static_cast<size_t>(a.Size()));
  for (size_t i = 0; i < v.size(); ++i)
    ASSERT_FLOAT_EQ(v[i], expected) << "element " << i << " on " << a.GetContext().ToString();
}

std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

class KVStoreTypes : public ::testing::TestWithParam<std::string> {};

TEST_P(KVStoreTypes, SumsPushesFromFourDevices) {
  auto kv = KVStore::Create(GetParam());
  kv->Init(3, Filled(0, Context::cpu(0)));
  kv->Push(3, FilledOn(1, Cpus()));
  std::vector<NDArray> outs = FilledOn(-1, Cpus());
  kv->Pull(3, outs);
  for (const NDArray& o : outs) ExpectAll(o, 4);
}

TEST_P(KVStoreTypes, SumsAcrossCpuAndSimdev) {
  const std::vector<Context> devs = MixedDevices();
  if (devs.size() == 4) std::cout << "[ note ] simdev not loaded: only cpu devices are exercised\n";
  auto kv = KVStore::Create(GetParam());
  kv->Init(9, Filled(0, devs.back()));
  kv->Push(9, FilledOn(1, devs));
  std::vector<NDArray> outs = FilledOn(-1, devs);
  kv->Pull(9, outs);
  for (const NDArray& o : outs) ExpectAll(o, static_cast<float>(devs.size()));
}

TEST_P(KVStoreTypes, UpdaterAccumulates) {
  auto kv = KVStore::Create(GetParam());
  kv->SetUpdater([](int, const NDArray& recv, NDArray* local) { *local += recv; });
  kv->Init(3, Filled(0, Context::cpu(0)));
  kv->Push(3, FilledOn(1, Cpus()));
  NDArray out = Filled(-1, Context::cpu(1));
  kv->Pull(3, {out});
  ExpectAll(out, 4);

  // MXNet's list case: fresh keys, four pushes of ones from four devices -> 16.
  const std::vector<int> keys{5, 7, 11};
  kv->Init(keys, {Filled(0, Context::cpu(0)), Filled(0, Context::cpu(0)), Filled(0, Context::cpu(0))});
  for (int i = 0; i < 4; ++i) kv->Push(keys, {FilledOn(1, Cpus()), FilledOn(1, Cpus()), FilledOn(1, Cpus())});
  std::vector<std::vector<NDArray>> outs{FilledOn(0, Cpus()), FilledOn(0, Cpus()), FilledOn(0, Cpus())};
  kv->Pull(keys, outs);
  for (const auto& per_key : outs)
    for (const NDArray& o : per_key) ExpectAll(o, 16);
}

TEST_P(KVStoreTypes, ListOfKeysEachSummed) {
  auto kv = KVStore::Create(GetParam());
  const std::vector<int> keys{5, 7, 11};
  kv->Init(keys, {Filled(0, Context::cpu(0)), Filled(0, Context::cpu(2)), Filled(0, Context::cpu(3))});
  kv->Push(keys, {FilledOn(1, Cpus()), FilledOn(1, Cpus()), FilledOn(1, Cpus())});
  std::vector<std::vector<NDArray>> outs{FilledOn(0, Cpus()), FilledOn(0, Cpus()), FilledOn(0, Cpus())};
  kv->Pull(keys, outs);
  for (const auto& per_key : outs)
    for (const NDArray& o : per_key) ExpectAll(o, 4);
}

TEST_P(KVStoreTypes, PushWithoutUpdaterReplaces) {
  auto kv = KVStore::Create(GetParam());
  kv->Init("w", Filled(2, Context::cpu(0)));
  NDArray out = Filled(0, Context::cpu(0));
  kv->Pull("w", {out});
  ExpectAll(out, 2);
  kv->Push("w", FilledOn(1, Cpus()));
  kv->Push("w", {Filled(8, Context::cpu(1))});
  kv->Pull("w", {out});
  ExpectAll(out, 8);
}

TEST_P(KVStoreTypes, PushPullFusesBoth) {
  auto kv = KVStore::Create(GetParam());
  kv->Init(1, Filled(0, Context::cpu(0)));
  std::vector<NDArray> vals = FilledOn(1, Cpus());
  kv->PushPull(1, vals, {});  // pulls into the values
  for (const NDArray& v : vals) ExpectAll(v, 4);
  NDArray out = Filled(0, Context::cpu(2));
  kv->PushPull(1, {Filled(3, Context::cpu(1))}, {out});
  ExpectAll(out, 3);
}

TEST_P(KVStoreTypes, PullOrdersAfterEveryEarlierPush) {
  // Many pushes and pulls queued without waiting; each pulled snapshot must hold the sum so far.
  auto kv = KVStore::Create(GetParam());
  kv->SetUpdater([](int, const NDArray& recv, NDArray* local) { *local += recv; });
  kv->Init(0, Filled(0, Context::cpu(0)));
  std::vector<NDArray> snapshots;
  for (int i = 1; i <= 20; ++i) {
    kv->Push(0, FilledOn(1, {Context::cpu(i % 4), Context::cpu((i + 1) % 4)}), i % 3);
    snapshots.push_back(NDArray(kShape, Context::cpu(i % 4)));
    kv->Pull(0, {snapshots.back()}, i % 2);
  }
  for (size_t i = 0; i < snapshots.size(); ++i) ExpectAll(snapshots[i], 2.0f * static_cast<float>(i + 1));
}

// MXNet's row_sparse_pull (the KVStore seed's example): the rows asked for, sorted and unique, of
// the value after the pushes before it, into row_sparse outs on any device; bad ids name their
// position.
TEST_P(KVStoreTypes, RowSparsePullGathersTheRowsAskedFor) {
  auto kv = KVStore::Create(GetParam());
  const Shape s(4, 3);
  std::vector<float> ramp(s.Size());
  for (size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<float>(i);
  kv->Init(7, NDArray(ramp, s, Context::cpu(0)));
  kv->Push(7, {NDArray(ramp, s, Context::cpu(1)), NDArray(ramp, s, Context::cpu(2))});  // value 2 * ramp
  std::vector<NDArray> outs;
  for (const Context& ctx : {Context::cpu(0), Context::cpu(3)})
    outs.push_back(NDArray::CreateSparse(StorageType::kRowSparse, s, ctx));
  const NDArray ids_a(std::vector<float>{3, 1, 3}, Shape(3), Context::cpu(0));
  const NDArray ids_b(std::vector<float>{2}, Shape(1), Context::cpu(0));
  kv->PullRowSparse(7, outs, {ids_a, ids_b});
  const std::vector<std::vector<int64_t>> rows = {{1, 3}, {2}};
  for (size_t o = 0; o < outs.size(); ++o) {
    std::vector<int64_t> idx(outs[o].aux_ndarray(0).Size());
    outs[o].aux_ndarray(0).SyncCopyToCPUBytes(idx.data(), idx.size() * sizeof(int64_t));
    EXPECT_EQ(idx, rows[o]);
    std::vector<float> v;
    outs[o].data_ndarray().SyncCopyToCPU(&v);
    ASSERT_EQ(v.size(), rows[o].size() * 3);
    for (size_t k = 0; k < rows[o].size(); ++k)
      for (size_t j = 0; j < 3; ++j) EXPECT_EQ(v[k * 3 + j], 2.0f * static_cast<float>(rows[o][k] * 3 + j)) << o;
  }
  const NDArray dense(s, Context::cpu(0));
  EXPECT_NE(ErrorOf([&] { kv->PullRowSparse(7, {dense}, {ids_b}); }).find("out 0 is default"), std::string::npos);
  const NDArray bad(std::vector<float>{0, 4}, Shape(2), Context::cpu(0));
  EXPECT_NE(ErrorOf([&] { kv->PullRowSparse(7, {outs[0]}, {bad}); }).find("row_ids[1] = 4 is outside the 4 rows"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { kv->PullRowSparse(7, {outs[0]}, {}); }).find("1 outs but 0 row_ids"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { kv->PullRowSparse(8, {outs[0]}, {ids_b}); }).find("8"), std::string::npos);
}

// Row_sparse pushes (MXNet's sparse gradients): with an optimizer, the sum of the pushed rows
// updates those rows only (sgd_update's lazy_update: rows 0 and 2 keep their values although wd
// would shrink them in a dense update); with no updater the sum replaces the value, zeros where
// no value stored a row.
TEST_P(KVStoreTypes, RowSparsePushUpdatesOnlyThePushedRows) {
  const Shape s(4, 3);
  std::vector<float> ramp(s.Size()), a(s.Size(), 0.0f), b(s.Size(), 0.0f);
  for (size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<float>(i + 1);
  for (size_t j = 0; j < 3; ++j) {
    a[3 + j] = a[9 + j] = 1.0f;  // rows 1 and 3
    b[9 + j] = 2.0f;             // row 3
  }
  const auto rsp = [&](const std::vector<float>& v, const Context& ctx) {
    return CastStorage(NDArray(v, s, ctx), StorageType::kRowSparse);
  };
  for (bool with_optimizer : {true, false}) {
    auto kv = KVStore::Create(GetParam());
    kv->Init(7, NDArray(ramp, s, Context::cpu(0)));
    if (with_optimizer) {
      auto sgd = OptimizerRegistry::Create("sgd");
      sgd->SetParam("lr", 0.1f)->SetParam("wd", 0.1f)->SetParam("rescale_grad", 1.0f);
      kv->SetOptimizer(std::move(sgd));
    }
    kv->Push(7, {rsp(a, Context::cpu(1)), rsp(b, Context::cpu(2))});
    NDArray out(s, Context::cpu(0));
    kv->Pull(7, {out});
    std::vector<float> got;
    out.SyncCopyToCPU(&got);
    for (size_t i = 0; i < got.size(); ++i) {
      const float g = a[i] + b[i];
      const size_t row = i / 3;
      const float want =
          with_optimizer ? (row == 1 || row == 3 ? (1.0f - 0.1f * 0.1f) * ramp[i] - 0.1f * g : ramp[i]) : g;
      EXPECT_FLOAT_EQ(got[i], want) << "element " << i << (with_optimizer ? " with sgd" : " without updater");
    }
  }
}

// A pull of a lazily updated value copies only the rows written since the out's last pull (see
// kvstore_local.h); whatever happened in between, the out must then equal the whole current
// value (read through a row_sparse_pull of every row, which leaves the pull's bookkeeping alone).
// A value written into the out's memory behind the engine's back (GetRawData) shows which path
// ran: it survives only a pull that copied rows, not the whole value.
TEST_P(KVStoreTypes, PullAfterLazyUpdatesGivesTheCurrentValue) {
  const Shape s(40, 2);
  const Context cpu = Context::cpu(0);
  std::vector<float> ramp(s.Size()), all_rows(40);
  for (size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<float>(i) * 0.25f - 3.0f;
  for (size_t r = 0; r < all_rows.size(); ++r) all_rows[r] = static_cast<float>(r);
  // A row_sparse gradient storing `rows` (each value `v`).
  const auto grad = [&](const std::vector<int64_t>& rows, float v) {
    std::vector<float> d(s.Size(), 0.0f);
    for (int64_t r : rows) d[static_cast<size_t>(r) * 2] = d[static_cast<size_t>(r) * 2 + 1] = v;
    return CastStorage(NDArray(d, s, cpu), StorageType::kRowSparse);
  };
  auto kv = KVStore::Create(GetParam());
  kv->Init(4, NDArray(ramp, s, cpu));
  auto adam = OptimizerRegistry::Create("adam");
  adam->SetParam("lr", 0.5f);  // rows of a row_sparse push: lazy (adam_update's default)
  kv->SetOptimizer(std::move(adam));
  NDArray out(s, cpu), other(s, cpu);
  const auto expect_current = [&](const NDArray& a, const std::string& step) {
    NDArray every = NDArray::CreateSparse(StorageType::kRowSparse, s, cpu);
    kv->PullRowSparse(4, {every}, {NDArray(all_rows, Shape(40), cpu)});
    std::vector<float> want, got;
    CastStorage(every, StorageType::kDefault).SyncCopyToCPU(&want);
    a.SyncCopyToCPU(&got);
    ASSERT_EQ(got, want) << step;
  };
  const auto poke = [](const NDArray& a, size_t element, float v) {  // behind the engine
    a.WaitToWrite();
    static_cast<float*>(const_cast<void*>(a.GetRawData()))[element] = v;
  };
  const auto peek = [](const NDArray& a, size_t element) {
    std::vector<float> v;
    a.SyncCopyToCPU(&v);
    return v[element];
  };
  kv->Pull(4, {out});
  expect_current(out, "first pull");
  kv->Push(4, {grad({1, 5}, 1.0f)});
  kv->Pull(4, {out});
  expect_current(out, "one push");
  // Two pushes, then one pull: the rows of both; then a pull with nothing pushed in between.
  kv->Push(4, {grad({2, 5}, -2.0f)});
  kv->Push(4, {grad({7, 39}, 3.0f)});
  kv->Pull(4, {out});
  expect_current(out, "two pushes");
  kv->Pull(4, {out});
  expect_current(out, "no push");
  // Pulls into two outs in turn (and both in one pull) after pushes.
  kv->Push(4, {grad({0}, 1.0f)});
  kv->Pull(4, {other});
  expect_current(other, "another out");
  kv->Push(4, {grad({3}, 1.0f)});
  kv->Pull(4, {out});
  expect_current(out, "the first out again");
  kv->Push(4, {grad({4}, 1.0f)});
  kv->Pull(4, {out, other});
  expect_current(out, "both outs, first");
  expect_current(other, "both outs, second");
  // Only changed rows are copied (row 3 untouched): the poked value survives...
  kv->Pull(4, {out});
  poke(out, 6, 1234.0f);
  kv->Push(4, {grad({1}, 1.0f)});
  kv->Pull(4, {out});
  EXPECT_EQ(peek(out, 6), 1234.0f) << "row 3 copied although no push wrote it";
  kv->Pull(4, {out});  // nothing pushed: nothing copied either
  EXPECT_EQ(peek(out, 6), 1234.0f);
  // ...unless the out was written (an engine write), its memory handed out, or the stored value
  // written by something other than a lazy update: then all of it is copied.
  out = 7.0f;
  kv->Pull(4, {out});
  expect_current(out, "after the out was filled");
  poke(out, 6, 1234.0f);
  out.NoteUncountedWrites();
  kv->Push(4, {grad({1}, 1.0f)});
  kv->Pull(4, {out});
  expect_current(out, "after the out's memory was handed out");
  kv->Pull(4, {other});
  poke(other, 6, 1234.0f);
  kv->Push(4, {Filled(0.5f, cpu, s)});  // dense: every row updated
  kv->Pull(4, {other});
  expect_current(other, "after a dense push");
}

TEST_P(KVStoreTypes, OptimizerUpdatesTheStoredValue) {
  // MXNet's set_optimizer example: default SGD (lr 0.01), push ones -> -0.01.
  auto kv = KVStore::Create(GetParam());
  kv->Init(3, Filled(0, Context::cpu(0), Shape(2, 2)));
  kv->SetOptimizer(OptimizerRegistry::Create("sgd"));
  kv->Push(3, {Filled(1, Context::cpu(1), Shape(2, 2))});
  NDArray w = Filled(5, Context::cpu(0), Shape(2, 2));
  kv->Pull(3, {w});
  ExpectAll(w, -0.01f);
}

TEST_P(KVStoreTypes, TwoBitCompressionKeepsResiduals) {
  const std::vector<Context> devs = MixedDevices();
  const float n = static_cast<float>(devs.size());
  auto kv = KVStore::Create(GetParam());
  kv->SetGradientCompression({{"type", "2bit"}, {"threshold", "0.5"}});
  kv->Init(0, Filled(0, Context::cpu(0)));
  NDArray out = Filled(-7, Context::cpu(0));
  kv->Push(0, FilledOn(0.4f, devs));  // residual 0.4 < t: nothing sent
  kv->Pull(0, {out});
  ExpectAll(out, 0);
  kv->Push(0, FilledOn(0.1f, devs));  // residual reaches 0.5: +t from every device
  kv->Pull(0, {out});
  ExpectAll(out, 0.5f * n);
  kv->Push(0, FilledOn(-0.6f, devs));  // residual 0 - 0.6 <= -t: -t, residual -0.1
  kv->Pull(0, {out});
  ExpectAll(out, -0.5f * n);
  kv->Push(0, FilledOn(-0.4f, devs));  // -0.1 - 0.4 = -0.5: -t again
  kv->Pull(0, {out});
  ExpectAll(out, -0.5f * n);
  // Init and pull are not compressed.
  kv->Init(1, Filled(0.3f, Context::cpu(0)));
  kv->Pull(1, {out});
  ExpectAll(out, 0.3f);
}

TEST_P(KVStoreTypes, ErrorsNameTheKey) {
  auto kv = KVStore::Create(GetParam());
  NDArray v = Filled(1, Context::cpu(0));
  std::string msg = ErrorOf([&] { kv->Pull(42, {v}); });
  EXPECT_NE(msg.find("42"), std::string::npos) << msg;
  EXPECT_NE(msg.find("has not been initialized"), std::string::npos) << msg;
  msg = ErrorOf([&] { kv->Push(43, {v}); });
  EXPECT_NE(msg.find("43"), std::string::npos) << msg;
  EXPECT_NE(msg.find("has not been initialized"), std::string::npos) << msg;

  kv->Init(7, v);
  msg = ErrorOf([&] { kv->Init(7, v); });
  EXPECT_NE(msg.find("duplicate init"), std::string::npos) << msg;
  EXPECT_NE(msg.find("7"), std::string::npos) << msg;

  msg = ErrorOf([&] { kv->Init("seven", v); });
  EXPECT_NE(msg.find("'seven'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("int keys or string keys"), std::string::npos) << msg;

  NDArray wrong = Filled(1, Context::cpu(1), Shape(2, 8));
  msg = ErrorOf([&] { kv->Push(7, {v, wrong}); });
  EXPECT_NE(msg.find("key 7"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(2, 8)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(4, 4)"), std::string::npos) << msg;
  msg = ErrorOf([&] { kv->Pull(7, {wrong}); });
  EXPECT_NE(msg.find("(2, 8)"), std::string::npos) << msg;
  msg = ErrorOf([&] { kv->Push(7, {}); });
  EXPECT_NE(msg.find("no values"), std::string::npos) << msg;
  // The refused push changed nothing.
  kv->Pull(7, {v});
  ExpectAll(v, 1);
}

INSTANTIATE_TEST_SUITE_P(Types, KVStoreTypes, ::testing::Values("local", "device"));

TEST(KVStore, CreateKnowsItsTypes) {
  auto local = KVStore::Create("Local");
  EXPECT_EQ(local->type(), "Local");
  EXPECT_EQ(local->rank(), 0);
  EXPECT_EQ(local->num_workers(), 1);
  EXPECT_EQ(KVStore::Create("device")->type(), "device");
  for (const char* t : {"nccl", "NCCL"}) {
    const std::string msg = ErrorOf([&] { KVStore::Create(t); });
    EXPECT_NE(msg.find("nccl transport plugin"), std::string::npos) << t << ": " << msg;  // why (nccl_support_test)
  }
  // Outside a job (no WEFT_NUM_WORKERS, no servers) a dist store is worker 0 of 1 and needs no
  // transport; tests/dist runs the several-process cases.
  for (const char* t : {"dist_sync", "dist_device_sync", "DIST_SYNC", "dist_async"}) {
    auto kv = KVStore::Create(t);
    EXPECT_EQ(kv->type(), t);
    EXPECT_EQ(kv->rank(), 0);
    EXPECT_EQ(kv->num_workers(), 1);
    kv->Init(3, NDArray(std::vector<float>{1, 2}, Shape(2), Context::cpu(0)));
    kv->Push(3, {NDArray(std::vector<float>{5, 6}, Shape(2), Context::cpu(0))});
    NDArray out(Shape(2), Context::cpu(0));
    kv->Pull(3, {out});
    std::vector<float> got;
    out.SyncCopyToCPU(&got);
    EXPECT_EQ(got, (std::vector<float>{5, 6})) << t;
    kv->Barrier();
  }
  const std::string msg = ErrorOf([] { KVStore::Create("cluster"); });
  EXPECT_NE(msg.find("unknown type"), std::string::npos) << msg;
  EXPECT_NE(msg.find("local"), std::string::npos) << msg;
}

TEST(KVStore, DeviceTypeSumsOnADeviceOfThePushers) {
  const std::vector<Context> devs = MixedDevices();
  if (devs.size() == 4) WEFT_SKIP_UNLESS_REQUIRED() << "needs the simdev plugin";
  // Values only on simdev: the sum and the update happen there, not on the host.
  auto kv = KVStore::Create("device");
  const std::vector<Context> sim{Context("simdev", 0), Context("simdev", 1)};
  kv->SetUpdater([](int, const NDArray& recv, NDArray* local) {
    EXPECT_EQ(recv.GetContext().GetDeviceType(), "simdev");
    EXPECT_EQ(local->GetContext().GetDeviceType(), "simdev");
    *local += recv;
  });
  kv->Init(0, Filled(1, Context::cpu(0)));
  kv->Push(0, FilledOn(2, sim));
  NDArray out = Filled(0, Context::cpu(3));
  kv->Pull(0, {out});
  ExpectAll(out, 5);
}

TEST(KVStore, LocalTypeSumsOnCpu0) {
  // "local" copies every value to cpu(0) and sums there (MXNet's CommCPU), wherever the values are.
  std::vector<Context> devs{Context::cpu(1), Context::cpu(2)};
  if (Runtime::Get().HasDevice(Context("simdev", 1))) devs = {Context("simdev", 0), Context("simdev", 1)};
  auto kv = KVStore::Create("local");
  std::vector<std::string> seen;
  kv->SetUpdater([&](int, const NDArray& recv, NDArray* local) {
    seen.push_back(recv.GetContext().ToString() + " " + local->GetContext().ToString());
    *local += recv;
  });
  kv->Init(0, Filled(1, devs[0]));
  kv->Push(0, FilledOn(2, devs));
  NDArray out = Filled(0, devs[1]);
  kv->Pull(0, {out});
  ExpectAll(out, 5);
  EXPECT_EQ(seen, std::vector<std::string>{"cpu(0) cpu(0)"});
}

TEST(KVStore, InitInPlaceKeepsTheCallersArray) {
  // "local" keeps a cpu(0) value itself: pushes update it, a pull into it copies nothing, and
  // writing it changes what later pulls see.
  auto kv = KVStore::Create("local");
  NDArray w = Filled(1, Context::cpu(0), Shape(2, 2));
  kv->InitInPlace(7, w);
  kv->SetOptimizer(OptimizerRegistry::Create("sgd"));
  kv->Push(7, {Filled(10, Context::cpu(0), Shape(2, 2))});
  ExpectAll(w, 1 - 0.01f * 10);  // updated without a Pull
  kv->Pull(7, {w});
  ExpectAll(w, 1 - 0.01f * 10);
  w.SyncCopyFromCPU(std::vector<float>(4, 3.0f));
  NDArray other = Filled(0, Context::cpu(0), Shape(2, 2));
  kv->Pull(7, {other});
  ExpectAll(other, 3);
  // A value on another device than the store keeps (cpu(1); "local" keeps cpu(0)) is copied.
  NDArray far = Filled(2, Context::cpu(1), Shape(2, 2));
  kv->InitInPlace(8, far);
  kv->Push(8, {Filled(10, Context::cpu(1), Shape(2, 2))});
  ExpectAll(far, 2);
  kv->Pull(8, {far});
  ExpectAll(far, 2 - 0.01f * 10);
}

TEST(KVStore, OptimizersGiveTheSameResultOnEveryType) {
  // The same pushes through "local" (update on cpu(0)) and "device" (update on the pushing
  // devices: simdev when loaded) give the same weights for every optimizer.
  std::vector<Context> devs{Context::cpu(1), Context::cpu(2)};
  if (Runtime::Get().HasDevice(Context("simdev", 1))) devs = {Context("simdev", 0), Context("simdev", 1)};
  const std::vector<std::pair<std::string, std::map<std::string, std::string>>> opts = {
      {"sgd", {{"momentum", "0.9"}, {"wd", "0.01"}}},
      {"nag", {{"momentum", "0.9"}, {"clip_gradient", "0.5"}}},
      {"adam", {{"wd", "0.01"}}},
      {"rmsprop", {}},
      {"rmsprop", {{"centered", "true"}, {"clip_weights", "1.1"}}}};
  const Shape shape(3, 5);
  std::vector<float> w0(shape.Size()), g0(shape.Size());
  for (size_t i = 0; i < w0.size(); ++i) {
    w0[i] = std::sin(static_cast<float>(i));
    g0[i] = std::cos(static_cast<float>(3 * i));
  }
  for (const auto& [name, params] : opts) {
    SCOPED_TRACE(name);
    std::vector<std::vector<float>> results;
    for (const char* type : {"local", "device"}) {
      auto kv = KVStore::Create(type);
      auto opt = OptimizerRegistry::Create(name);
      opt->SetParam("lr", 0.1);
      for (const auto& [k, v] : params) opt->SetParamString(k, v);
      kv->SetOptimizer(std::move(opt));
      kv->Init(0, NDArray(w0, shape, devs[0]));
      std::vector<NDArray> weights{NDArray(shape, devs[0]), NDArray(shape, devs[1])};
      for (int step = 0; step < 3; ++step) {
        kv->Push(0, {NDArray(g0, shape, devs[0]), NDArray(g0, shape, devs[1]) * 0.5f});
        kv->Pull(0, weights);
      }
      std::vector<float> a, b;
      weights[0].SyncCopyToCPU(&a);
      weights[1].SyncCopyToCPU(&b);
      EXPECT_EQ(a, b) << type;
      EXPECT_NE(a, w0) << type;
      results.push_back(a);
    }
    ASSERT_EQ(results[0].size(), results[1].size());
    for (size_t i = 0; i < results[0].size(); ++i) EXPECT_NEAR(results[0][i], results[1][i], 1e-6) << i;
  }
}

TEST(KVStore, StringKeysUseAStrUpdater) {
  auto kv = KVStore::Create("local");
  std::vector<std::string> seen;
  kv->SetUpdater([&](const std::string& key, const NDArray& recv, NDArray* local) {
    seen.push_back(key);
    *local += recv;
  });
  kv->Init("a", Filled(1, Context::cpu(0)));
  kv->Push("a", {Filled(2, Context::cpu(1))});
  NDArray out = Filled(0, Context::cpu(0));
  kv->Pull("a", {out});
  ExpectAll(out, 3);
  EXPECT_EQ(seen, std::vector<std::string>{"a"});

  auto ints = KVStore::Create("local");
  ints->SetUpdater([](const std::string&, const NDArray&, NDArray*) {});
  ints->Init(1, Filled(1, Context::cpu(0)));
  const std::string msg = ErrorOf([&] { ints->Push(1, {Filled(1, Context::cpu(0))}); });
  EXPECT_NE(msg.find("Updater for int keys"), std::string::npos) << msg;
}

TEST(KVStore, GradientCompressionParameters) {
  auto kv = KVStore::Create("local");
  EXPECT_NE(ErrorOf([&] { kv->SetGradientCompression({{"type", "1bit"}}); }).find("unknown type"), std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              kv->SetGradientCompression({{"type", "2bit"}, {"threshold", "-1"}});
            }).find("> 0"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { kv->SetGradientCompression({{"threshold", "1"}}); }).find("'type'"), std::string::npos);
  kv->SetGradientCompression({{"type", "2bit"}});  // default threshold 0.5
  kv->Init(0, Filled(0, Context::cpu(0)));
  kv->Push(0, {Filled(0.7f, Context::cpu(0))});
  NDArray out = Filled(0, Context::cpu(0));
  kv->Pull(0, {out});
  ExpectAll(out, 0.5f);
  EXPECT_NE(ErrorOf([&] {
              kv->SetGradientCompression({{"type", "2bit"}});
            }).find("before the first Push"),
            std::string::npos);
}

std::vector<Context> CpuAndSimdev() {
  std::vector<Context> out{Context::cpu(0)};
  if (Runtime::Get().HasDevice(Context("simdev", 0))) out.emplace_back("simdev", 0);
  return out;
}

TEST(KVStore, TwoBitOpsPackingLayout) {
  // 20 values: codes for +t, -t, 0 cycling; 2 words; decoded values are {+t, -t, 0}. Run as the
  // _quantize_2bit / _dequantize_2bit ops on each device.
  std::vector<float> g(20);
  for (size_t i = 0; i < g.size(); ++i) g[i] = i % 3 == 0 ? 1.0f : i % 3 == 1 ? -1.0f : 0.2f;
  for (const Context& ctx : CpuAndSimdev()) {
    SCOPED_TRACE(ctx.ToString());
    NDArray data(g, Shape(4, 5), ctx), residual = Filled(0, ctx, Shape(4, 5));
    ImperativeCall q;
    q.op = "_quantize_2bit";
    q.inputs = {data, residual};
    q.params = {{"threshold", "0.5"}};
    NDArray words = Invoke(q).at(0);
    ASSERT_EQ(words.GetShape(), Shape(2));
    ASSERT_EQ(words.GetDType(), DType::kUint32);
    std::vector<uint32_t> packed(2);
    words.SyncCopyToCPUBytes(packed.data(), packed.size() * sizeof(uint32_t));
    // Element 0 (+t, code 11) is the highest bit pair of the first byte; element 1 (-t, 10) next,
    // element 2 (0, 00), element 3 (+t) the lowest pair: byte 0 = 11 10 00 11.
    EXPECT_EQ(packed[0] & 0xffu, 0xe3u);
    // Padding codes of the last word (elements 20..31) are 00.
    EXPECT_EQ(packed[1] & 0xffff0000u, 0u);
    NDArray decoded = InvokeOne("_dequantize_2bit", {words}, {{"shape", "(4, 5)"}, {"threshold", "0.5"}});
    std::vector<float> d, r;
    decoded.SyncCopyToCPU(&d);
    residual.SyncCopyToCPU(&r);
    for (size_t i = 0; i < g.size(); ++i) {
      const float want = i % 3 == 0 ? 0.5f : i % 3 == 1 ? -0.5f : 0.0f;
      EXPECT_FLOAT_EQ(d[i], want) << i;
      EXPECT_FLOAT_EQ(r[i], g[i] - want) << i;
    }
  }
}

TEST_P(KVStoreTypes, TwoBitCompressionMatchesMxnet) {
  // MXNet 1.9.1's "device" store with random gradients from two devices (make_mxnet_expected.py);
  // here from every device pair the build has.
  std::vector<std::vector<Context>> pairs{{Context::cpu(0), Context::cpu(1)}};
  if (Runtime::Get().HasDevice(Context("simdev", 1))) {
    pairs.push_back({Context("simdev", 0), Context("simdev", 1)});
    pairs.push_back({Context::cpu(2), Context("simdev", 1)});
  }
  const Shape shape(static_cast<int64_t>(mxnet_expected::kTwoBitPulled[0].size()));
  for (const auto& devs : pairs) {
    SCOPED_TRACE(devs[0].ToString() + " + " + devs[1].ToString());
    auto kv = KVStore::Create(GetParam());
    kv->SetGradientCompression({{"type", "2bit"}, {"threshold", fmt::format("{}", mxnet_expected::kTwoBitThreshold)}});
    kv->Init(0, Filled(0, devs[1], shape));
    for (size_t p = 0; p < mxnet_expected::kTwoBitPushes.size(); ++p) {
      const auto& grads = mxnet_expected::kTwoBitPushes[p];
      kv->Push(0, {NDArray(grads[0], shape, devs[0]), NDArray(grads[1], shape, devs[1])});
      NDArray out = Filled(-9, Context::cpu(3), shape);
      kv->Pull(0, {out});
      std::vector<float> got;
      out.SyncCopyToCPU(&got);
      EXPECT_EQ(got, mxnet_expected::kTwoBitPulled[p]) << "push " << p;
    }
  }
}

TEST(KVStore, OptimizerStatesRoundTrip) {
  const std::string file =
      (std::filesystem::temp_directory_path() / fmt::format("weft-kv-states-{}", ::getpid())).string();
  auto make = [] {
    auto kv = KVStore::Create("local");
    auto opt = OptimizerRegistry::Create("sgd");
    opt->SetParam("lr", 0.1)->SetParam("momentum", 0.9);
    kv->SetOptimizer(std::move(opt));
    kv->Init(0, Filled(1, Context::cpu(0)));
    return kv;
  };
  auto reference = make();
  auto first = make();
  for (int i = 0; i < 2; ++i) {
    reference->Push(0, {Filled(0.5f, Context::cpu(1))});
    first->Push(0, {Filled(0.5f, Context::cpu(1))});
  }
  first->SaveOptimizerStates(file, true);
  NDArray w = Filled(0, Context::cpu(0));
  first->Pull(0, {w});

  auto resumed = KVStore::Create("local");
  resumed->SetOptimizer(OptimizerRegistry::Create("sgd"));  // lr and momentum come from the dump
  resumed->LoadOptimizerStates(file);
  EXPECT_EQ(resumed->optimizer()->GetParam("momentum"), "0.9");
  EXPECT_EQ(resumed->optimizer()->UpdateCount(0), 2u);
  resumed->Init(0, w);
  reference->Push(0, {Filled(0.5f, Context::cpu(1))});
  resumed->Push(0, {Filled(0.5f, Context::cpu(1))});
  std::vector<float> a, b;
  NDArray ra = Filled(0, Context::cpu(0)), rb = Filled(0, Context::cpu(0));
  reference->Pull(0, {ra});
  resumed->Pull(0, {rb});
  ra.SyncCopyToCPU(&a);
  rb.SyncCopyToCPU(&b);
  EXPECT_EQ(a, b);
  // momentum made the third step bigger than plain SGD would: 1 - 0.05 - 0.095 - 0.1355.
  EXPECT_NEAR(a[0], 1 - 0.05f - 0.095f - 0.1355f, 1e-5);

  auto adam = KVStore::Create("local");
  adam->SetOptimizer(OptimizerRegistry::Create("adam"));
  const std::string msg = ErrorOf([&] { adam->LoadOptimizerStates(file); });
  EXPECT_NE(msg.find("sgd"), std::string::npos) << msg;
  EXPECT_NE(ErrorOf([] { KVStore::Create("local")->SaveOptimizerStates("/tmp/x"); }).find("no optimizer"),
            std::string::npos);
  std::filesystem::remove(file);
}

// Issue 19: a hostile __meta__ record (100 000 nested arrays) used to crash in a recursive dump().
TEST(KVStore, HostileStatesMetaIsRefusedClearly) {
  const std::string file =
      (std::filesystem::temp_directory_path() / fmt::format("weft-kv-meta-{}", ::getpid())).string();
  auto save_meta = [&](const std::string& text) {
    NDArray blob(Shape(static_cast<int64_t>(text.size())), Context::cpu(0), false, DType::kUint8);
    blob.SyncCopyFromCPUBytes(text.data(), text.size());
    NDArray::Save(file, std::map<std::string, NDArray>{{"__meta__", blob}});
  };
  auto load = [&] {
    auto kv = KVStore::Create("local");
    kv->SetOptimizer(OptimizerRegistry::Create("sgd"));
    return ErrorOf([&] { kv->LoadOptimizerStates(file); });
  };
  const size_t deep = 100000;
  save_meta(R"({"counts": )" + std::string(deep, '[') + std::string(deep, ']') + "}");
  std::string msg = load();
  EXPECT_NE(msg.find("__meta__ record: the JSON nests deeper than 64 levels"), std::string::npos) << msg.substr(0, 500);
  save_meta("[1, 2]");
  msg = load();
  EXPECT_NE(msg.find("must be a JSON object"), std::string::npos) << msg;
  save_meta("{\"num_update\": ");
  msg = load();
  EXPECT_NE(msg.find("not valid JSON"), std::string::npos) << msg;
  std::filesystem::remove(file);
}

// Found by states_fuzzer (issue 19): an lr_mult key that is not an integer ("(5") made
// std::stoi throw std::invalid_argument out of Optimizer::Deserialize, which terminated the
// process. Keys, counts and state names are integers checked whole; each refusal names the part.
TEST(KVStore, MalformedIndicesInOptimizerStatesAreRefused) {
  // The fuzzer's input, as found.
  const std::string found =
      R"({"counts":{},"lr_mult":{"(5":2.0},"nugamma2":"0.9","lr":"0.05","rescale_grad":"1","wddient":"-1",)"
      R"("lr":"0.05","moment00clip_429pe":"sgd","wd_mult":{}})";
  auto deserialize = [](const std::string& json) {
    return ErrorOf([&] { OptimizerRegistry::Create("sgd")->Deserialize(json); });
  };
  std::string msg = deserialize(found);
  EXPECT_NE(msg.find("the lr_mult key '(5' is not an integer index"), std::string::npos) << msg;
  for (const char* section : {"counts", "lr_mult", "wd_mult"})
    for (const char* key : {"5abc", "1e300", "nan", "99999999999", "", " 3", "+1"}) {
      msg = deserialize(fmt::format(R"({{"{}": {{"{}": 1}}}})", section, key));
      EXPECT_NE(msg.find(fmt::format("the {} key '{}' is not an integer index", section, key)), std::string::npos)
          << msg;
    }
  msg = deserialize(R"({"counts": {"0": -1}})");
  EXPECT_NE(msg.find("a count must be an update count (0..4294967295), got -1"), std::string::npos) << msg;
  msg = deserialize(R"({"num_update": 4294967296})");
  EXPECT_NE(msg.find("num_update must be an update count"), std::string::npos) << msg;
  EXPECT_EQ(deserialize(R"({"counts": {"-2": 3, "7": 1}, "num_update": 3, "lr_mult": {"7": 0.5}})"), "");

  auto opt = OptimizerRegistry::Create("sgd");
  NDArray state = Filled(0, Context::cpu(0));
  for (const char* name : {"1e300:0", "nan:0", "1.5:0", "0:inf", "0:-1", "0", "a:b", "0:99999999999"}) {
    msg = ErrorOf([&] { opt->SetStates({{name, state}}); });
    EXPECT_NE(msg.find(fmt::format("state name '{}' is not '<index>:<k>'", name)), std::string::npos) << msg;
  }
  EXPECT_EQ(ErrorOf([&] { opt->SetStates({{"-3:0", state}, {"4:0", state}}); }), "");
}

TEST(KVStore, NonFiniteOptimizerParametersAreRefused) {
  for (const char* name : {"lr", "wd", "momentum", "rescale_grad"}) {
    for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
      auto opt = OptimizerRegistry::Create("sgd");
      const std::string msg = ErrorOf([&] { opt->SetParam(name, bad); });
      EXPECT_NE(msg.find(fmt::format("parameter '{}' must be a finite number", name)), std::string::npos) << msg;
    }
  }
  auto opt = OptimizerRegistry::Create("sgd");
  EXPECT_NE(ErrorOf([&] { opt->SetParamString("lr", "1e999"); }).find("must be a number"), std::string::npos);
  EXPECT_EQ(ErrorOf([&] { opt->SetParam("lr", 0.5f); }), "");
}

TEST(KVStore, ConcurrentPushersOnDistinctKeys) {
  auto kv = KVStore::Create("local");
  kv->SetUpdater([](int, const NDArray& recv, NDArray* local) { *local += recv; });
  for (int k = 0; k < 4; ++k) kv->Init(k, Filled(0, Context::cpu(0)));
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&, k] {
      for (int i = 0; i < 10; ++i) kv->Push(k, {Filled(1, Context::cpu(k))});
    });
  for (auto& t : threads) t.join();
  for (int k = 0; k < 4; ++k) {
    NDArray out = Filled(0, Context::cpu(k));
    kv->Pull(k, {out});
    ExpectAll(out, 10);
  }
}

}  // namespace
}  // namespace weft
