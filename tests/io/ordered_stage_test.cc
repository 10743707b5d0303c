// io_detail::OrderedStage (LibSVMIter's line cutting): steps run in item order whatever order the
// threads arrive in, one at a time; a failed step ends the epoch's steps until Reset.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "io/ordered_stage.h"

namespace weft::io_detail {
namespace {

// Threads for items n-1, ..., 1, 0 start in that order, 5 ms apart (so the later items usually
// arrive first); `step(k)` is item k's step. Returns the order the steps ran in and each Enter's
// result.
std::vector<uint64_t> RunReversed(OrderedStage& stage, uint64_t n, const std::function<bool(uint64_t)>& step,
                                  std::vector<int>* results) {
  std::vector<uint64_t> order;
  std::atomic<int> inside{0}, overlapped{0};
  results->assign(n, -1);
  std::vector<std::thread> threads;
  for (uint64_t k = n; k-- > 0;) {
    threads.emplace_back([&, k] {
      (*results)[k] = stage.Enter(k, [&] {
        if (inside.fetch_add(1) != 0) overlapped.fetch_add(1);
        order.push_back(k);  // one step at a time: no lock needed
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        inside.fetch_sub(1);
        return step(k);
      });
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(overlapped.load(), 0) << "two steps ran at once";
  return order;
}

TEST(OrderedStage, StepsRunInItemOrderWhateverTheArrival) {
  OrderedStage stage;
  std::vector<int> results;
  for (int epoch = 0; epoch < 2; ++epoch) {
    const std::vector<uint64_t> order = RunReversed(
        stage, 6, [](uint64_t) { return true; }, &results);
    EXPECT_EQ(order, (std::vector<uint64_t>{0, 1, 2, 3, 4, 5})) << "epoch " << epoch;
    EXPECT_EQ(results, (std::vector<int>{1, 1, 1, 1, 1, 1}));
    stage.Reset();
  }
}

TEST(OrderedStage, AFailedStepEndsTheEpochsStepsUntilReset) {
  OrderedStage stage;
  std::vector<int> results;
  const std::vector<uint64_t> order = RunReversed(
      stage, 6, [](uint64_t k) { return k != 2; }, &results);
  EXPECT_EQ(order, (std::vector<uint64_t>{0, 1, 2}));  // 3, 4 and 5 return at once
  EXPECT_EQ(results, (std::vector<int>{1, 1, 0, 0, 0, 0}));
  stage.Reset();
  EXPECT_TRUE(stage.Enter(0, [] { return true; }));
  EXPECT_TRUE(stage.Enter(1, [] { return true; }));
}

}  // namespace
}  // namespace weft::io_detail
