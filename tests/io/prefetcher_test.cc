// The threaded prefetcher (io/prefetcher.h), PrefetchingIter and the batch plans.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <filesystem>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "io/batch_plan.h"
#include "io/prefetcher.h"
#include "io_test_util.h"
#include "weft/libsvm_iter.h"
#include "weft/prefetching_iter.h"

namespace weft {
namespace {

using io_detail::BatchPlan;
using io_detail::LastBatch;
using io_detail::Prefetcher;
using test::ErrorOf;
using test::TempDir;
using test::WriteFileBytes;

void Nap(uint64_t seed) {
  std::this_thread::sleep_for(std::chrono::microseconds(std::mt19937(static_cast<uint32_t>(seed))() % 400));
}

TEST(Prefetcher, DeliversInOrderWithinItsBound) {
  std::atomic<int> worst{0};
  std::atomic<uint64_t> taken{0};
  const size_t ahead = 5;
  Prefetcher<uint64_t> p(4, ahead, [&](uint64_t k, uint64_t* out, int) {
    if (k >= 200) return false;
    // produced (or being produced) but not yet taken: never more than `ahead`
    const int now = static_cast<int>(k - taken.load()) + 1;
    worst = std::max(worst.load(), now);
    Nap(k);
    *out = k * 3;
    return true;
  });
  for (int epoch = 0; epoch < 3; ++epoch) {
    if (epoch > 0) p.Stop();
    taken = 0;
    p.Start();
    uint64_t v, n = 0;
    while (p.Next(&v)) {
      EXPECT_EQ(v, n * 3);
      taken = ++n;
    }
    EXPECT_EQ(n, 200u);
    EXPECT_FALSE(p.Next(&v));
  }
  // The test's `taken` trails the prefetcher's own count by the Next() in progress: one more.
  EXPECT_LE(worst.load(), static_cast<int>(ahead) + 1);
}

TEST(Prefetcher, ErrorReachesTheConsumerInPlace) {
  std::atomic<bool> fail{true};
  Prefetcher<int> p(3, 8, [&](uint64_t k, int* out, int) {
    if (k >= 20) return false;
    Nap(k + 7);
    if (k == 9 && fail) Fail("item {} is broken", k);
    *out = static_cast<int>(k);
    return true;
  });
  p.Start();
  int v = -1;
  for (int i = 0; i < 9; ++i) {
    ASSERT_TRUE(p.Next(&v));
    EXPECT_EQ(v, i);
  }
  EXPECT_EQ(ErrorOf([&] { p.Next(&v); }), "item 9 is broken");
  EXPECT_FALSE(p.Next(&v));  // the epoch ended with the error
  // Usable again after a restart.
  fail = false;
  p.Stop();
  p.Start();
  int n = 0;
  while (p.Next(&v)) EXPECT_EQ(v, n++);
  EXPECT_EQ(n, 20);
}

// Polls `cond` every 100 µs until it holds (true) or 10 s have passed (false): a wait that fails a
// test instead of hanging it.
template <typename Cond>
bool PollFor10s(Cond cond) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!cond()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

TEST(Prefetcher, StopDrainsAndWorkersCanGiveUpEarly) {
  // Items after 0 stay in production until the worker sees stopping() (or a 10 s deadline, which
  // makes the test fail instead of hang). The test waits until one of them has started before it
  // calls Stop(): with sleeps alone, both workers could sit between items at that moment under a
  // slow (sanitizer) build, and nobody would have anything to give up.
  std::atomic<int> gave_up{0};
  std::atomic<int> in_production{0};
  std::atomic<bool> first_epoch{true};
  Prefetcher<int>* self = nullptr;
  Prefetcher<int> p(2, 4, [&](uint64_t k, int* out, int) {
    const uint64_t epoch = Prefetcher<int>::current_epoch();
    if (k > 0 && first_epoch) {
      ++in_production;
      if (PollFor10s([&] { return self->stopping(epoch); })) {
        ++gave_up;
        return false;
      }
    }
    *out = static_cast<int>(k);
    return true;
  });
  self = &p;
  p.Start();
  int v;
  ASSERT_TRUE(p.Next(&v));
  EXPECT_EQ(v, 0);
  ASSERT_TRUE(PollFor10s([&] { return in_production > 0; })) << "no worker started item 1 within 10 s";
  p.Stop();  // items 1.. are in production: they stop early
  EXPECT_GE(gave_up.load(), 1);
  first_epoch = false;
  p.Start();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(p.Next(&v));
    EXPECT_EQ(v, i);  // a new epoch from item 0
  }
}

#ifdef __linux__
// The nice value each worker ran at, seen from inside the worker (Linux keeps one per thread).
std::vector<int> WorkerNiceValues() {
  std::mutex mu;
  std::vector<int> seen;
  Prefetcher<int> p(2, 2, [&](uint64_t k, int* out, int) {
    if (k >= 8) return false;
    std::lock_guard<std::mutex> lock(mu);
    seen.push_back(getpriority(PRIO_PROCESS, 0));
    *out = 0;
    return true;
  });
  p.Start();
  int v;
  while (p.Next(&v)) {
  }
  return seen;
}

TEST(Prefetcher, WorkersRunBelowTheCallersPriority) {
  const int caller = getpriority(PRIO_PROCESS, 0);
  ::unsetenv("WEFT_IO_THREAD_NICE");
  for (int nice : WorkerNiceValues()) EXPECT_EQ(nice, std::min(19, caller + 19));
  ::setenv("WEFT_IO_THREAD_NICE", "5", 1);
  for (int nice : WorkerNiceValues()) EXPECT_EQ(nice, std::min(19, caller + 5));
  ::setenv("WEFT_IO_THREAD_NICE", "0", 1);
  for (int nice : WorkerNiceValues()) EXPECT_EQ(nice, caller);
  EXPECT_EQ(getpriority(PRIO_PROCESS, 0), caller);  // the caller's own priority is untouched
  ::setenv("WEFT_IO_THREAD_NICE", "20", 1);
  EXPECT_NE(ErrorOf([] { WorkerNiceValues(); }).find("WEFT_IO_THREAD_NICE=20 is out of range"), std::string::npos);
  ::unsetenv("WEFT_IO_THREAD_NICE");
}
#endif

TEST(Prefetcher, DestructionWhileBusyDoesNotHang) {
  for (int i = 0; i < 5; ++i) {
    Prefetcher<int> p(3, 3, [](uint64_t k, int* out, int) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      *out = static_cast<int>(k);
      return true;  // endless
    });
    p.Start();
    int v;
    p.Next(&v);
  }
}

// A DataIter whose batch `fail_at` throws (a loader thread's error, MXNet's exception note).
class CountingIter : public DataIter {
 public:
  explicit CountingIter(int fail_at) : fail_at_(fail_at) {}
  void BeforeFirst() override {
    n_ = 0;
    ++resets;
  }
  bool Next() override {
    if (n_ == 6) return false;
    if (n_ == fail_at_) {
      fail_at_ = -1;  // fails once
      Fail("CountingIter: batch {} failed", n_);
    }
    data_ = NDArray(std::vector<float>{static_cast<float>(n_++)}, Shape(1), Context::cpu(0));
    return true;
  }
  NDArray GetData() override { return data_; }
  NDArray GetLabel() override { return data_; }
  int GetPadNum() override { return 0; }
  std::vector<int> GetIndex() override { return {n_ - 1}; }
  std::vector<DataDesc> ProvideData() const override { return {{"data", Shape(1)}}; }
  int resets = 0;

 private:
  int fail_at_;
  int n_ = 0;
  NDArray data_;
};

TEST(PrefetchingIter, RethrowsAtNextAndRecoversAfterReset) {
  auto base = std::make_unique<CountingIter>(3);
  CountingIter* raw = base.get();
  PrefetchingIter it(std::move(base), 2);
  EXPECT_EQ(it.ProvideData()[0].shape, Shape(1));
  it.BeforeFirst();  // nothing taken yet: no reset of the wrapped iterator
  EXPECT_EQ(raw->resets, 0);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(it.Next());
    EXPECT_EQ(it.GetData().At(0), static_cast<float>(i));
  }
  EXPECT_EQ(ErrorOf([&] { it.Next(); }), "CountingIter: batch 3 failed");
  EXPECT_FALSE(it.Next());
  it.BeforeFirst();
  EXPECT_EQ(raw->resets, 1);
  int n = 0;
  while (it.Next()) EXPECT_EQ(it.GetIndex()[0], n++);
  EXPECT_EQ(n, 6);
}

std::vector<std::vector<uint32_t>> Epoch(BatchPlan& plan, std::vector<int>* pads = nullptr) {
  std::vector<std::vector<uint32_t>> out;
  BatchPlan::Batch b;
  uint64_t k = 0;
  for (; plan.GetBatch(k, &b); ++k) {
    out.push_back(b.samples);
    if (pads) pads->push_back(b.pad);
  }
  plan.BeginEpoch(k);
  return out;
}

using Batches = std::vector<std::vector<uint32_t>>;

TEST(BatchPlan, LastBatchModes) {
  // 7 samples, batches of 3.
  BatchPlan round(7, 3, LastBatch::kRoundBatch, false, 0);
  std::vector<int> pads;
  EXPECT_EQ(Epoch(round, &pads), (Batches{{0, 1, 2}, {3, 4, 5}, {6, 0, 1}}));
  EXPECT_EQ(pads, (std::vector<int>{0, 0, 2}));
  pads.clear();
  EXPECT_EQ(Epoch(round, &pads), (Batches{{2, 3, 4}, {5, 6, 0}}));  // goes on after the wrapped rows
  EXPECT_EQ(pads, (std::vector<int>{0, 1}));
  EXPECT_EQ(Epoch(round), (Batches{{1, 2, 3}, {4, 5, 6}}));  // ends evenly
  EXPECT_EQ(Epoch(round), (Batches{{0, 1, 2}, {3, 4, 5}, {6, 0, 1}}));
  BatchPlan partial(7, 3, LastBatch::kPartial, false, 0);
  pads.clear();
  EXPECT_EQ(Epoch(partial, &pads), (Batches{{0, 1, 2}, {3, 4, 5}, {6}}));
  EXPECT_EQ(pads.back(), 2);
  EXPECT_EQ(Epoch(partial), (Batches{{0, 1, 2}, {3, 4, 5}, {6}}));
  BatchPlan pad(7, 3, LastBatch::kPad, false, 0);
  EXPECT_EQ(Epoch(pad), (Batches{{0, 1, 2}, {3, 4, 5}, {6, 0, 1}}));
  EXPECT_EQ(Epoch(pad), (Batches{{0, 1, 2}, {3, 4, 5}, {6, 0, 1}}));
  BatchPlan discard(7, 3, LastBatch::kDiscard, false, 0);
  EXPECT_EQ(Epoch(discard), (Batches{{0, 1, 2}, {3, 4, 5}}));
  BatchPlan roll(7, 3, LastBatch::kRollOver, false, 0);
  EXPECT_EQ(Epoch(roll), (Batches{{0, 1, 2}, {3, 4, 5}}));
  EXPECT_EQ(Epoch(roll), (Batches{{6, 0, 1}, {2, 3, 4}}));
  EXPECT_EQ(Epoch(roll), (Batches{{5, 6, 0}, {1, 2, 3}, {4, 5, 6}}));
  // A reset with nothing delivered keeps the epoch; an undelivered wrap does not carry over.
  BatchPlan keep(7, 3, LastBatch::kRoundBatch, true, 9);
  BatchPlan::Batch first, again;
  keep.GetBatch(0, &first);
  keep.BeginEpoch(0);
  keep.GetBatch(0, &again);
  EXPECT_EQ(first.samples, again.samples);
  keep.BeginEpoch(1);
  keep.GetBatch(0, &again);
  EXPECT_EQ(again.positions.front(), 7u);  // the second order, from its start
  EXPECT_NE(ErrorOf([] { BatchPlan(2, 3, LastBatch::kRoundBatch, false, 0); }).find("larger than the 2"),
            std::string::npos);
}

TEST(BatchPlan, ShuffledOrdersAreRepeatablePermutations) {
  auto run = [](uint32_t seed) {
    BatchPlan plan(10, 5, LastBatch::kRoundBatch, true, seed);
    Batches all;
    for (int e = 0; e < 3; ++e)
      for (auto& b : Epoch(plan)) all.push_back(b);
    return all;
  };
  const Batches a = run(4);
  EXPECT_EQ(a, run(4));
  EXPECT_NE(a, run(5));
  for (int e = 0; e < 3; ++e) {
    std::set<uint32_t> s(a[2 * e].begin(), a[2 * e].end());
    s.insert(a[2 * e + 1].begin(), a[2 * e + 1].end());
    EXPECT_EQ(s.size(), 10u);
  }
  EXPECT_NE(a[0], a[2]);
}

// ---- process exit while iterators are mid-epoch ------------------------------------------------

std::atomic<bool> g_exit_began{false};

// An iterator whose loader never rests: each batch is a small array made on the engine, the
// epoch has no end and the queue no practical bound, so a worker is producing whenever exit()
// comes. A batch started once exit has begun says so on stderr.
class EndlessIter : public ThreadedDataIter {
 public:
  EndlessIter() { StartWorkers(std::make_unique<Maker>(), 2, size_t{1} << 20); }

 private:
  struct Maker : Producer {
    bool Produce(uint64_t k, DataBatch* out, const Worker&) override {
      if (g_exit_began.load()) std::fputs("a loader thread made a batch after exit began\n", stderr);
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      out->data = NDArray(std::vector<float>{static_cast<float>(k)});
      return true;
    }
    void Restart(uint64_t) override {}
  };
};

// Registered with atexit before any iterator exists, so it runs after weft's own exit handler
// (and after the engine and plugins shut down); a loader still running then has 50 ms to show.
void NoteExitBegan() {
  g_exit_began = true;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

void ExitMidEpoch() {
  std::atexit(NoteExitBegan);
  TempDir dir("exit");
  std::string text;
  for (int i = 0; i < 20000; ++i) text += std::to_string(i % 2) + " " + std::to_string(i % 97) + ":0.5 100:1.25\n";
  WriteFileBytes(dir / "d.t", text);
  EndlessIter endless;
  LibSVMIter libsvm({.data_libsvm = dir / "d.t", .data_shape = Shape(101), .batch_size = 8, .prefetch_buffer = 1000});
  if (!endless.Next() || !libsvm.Next()) std::_Exit(2);
  std::filesystem::remove_all(dir / "");  // exit skips the destructor; the open file stays readable
  std::exit(0);                           // both iterators are live, their workers busy
}

// Issue 30: "pure virtual method called" when a process exits while a LibSVMIter is mid-epoch (its
// loader thread ran on into the engine and devices being torn down by static destruction). The
// child must exit with 0 and print nothing.
TEST(IterExit, ExitWhileIteratorsAreMidEpochIsClean) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // "^$": POSIX regex without REG_NEWLINE, so it matches the empty stderr only.
  EXPECT_EXIT(ExitMidEpoch(), ::testing::ExitedWithCode(0), "^$");
}

void NextAfterShutdown() {
  EndlessIter it;
  if (!it.Next()) std::_Exit(2);
  StopDataIterWorkers();  // what MXNotifyShutdown does
  const std::string old_error = ErrorOf([&] { it.Next(); });
  EndlessIter newer;  // made after it: no worker starts
  const std::string new_error = ErrorOf([&] { newer.Next(); });
  StopDataIterWorkers();  // idempotent
  it.BeforeFirst();       // still safe to drive and destroy
  for (const std::string& e : {old_error, new_error})
    if (e.find("the process is shutting down") == std::string::npos) std::_Exit(3);
  std::fputs("refused after shutdown\n", stderr);
  std::exit(0);
}

TEST(IterExit, NextAfterStopDataIterWorkersIsAnError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(NextAfterShutdown(), ::testing::ExitedWithCode(0), "refused after shutdown");
}

}  // namespace
}  // namespace weft
