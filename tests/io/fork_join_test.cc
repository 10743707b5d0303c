// io_detail::ForkJoin (ImageRecordIter's engine decoding team): every index once, on every team
// member, loop after loop; an exception reaches Run's caller and the team works on afterwards.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <stdexcept>
#include <vector>

#include "io/fork_join.h"

namespace weft::io_detail {
namespace {

TEST(ForkJoin, EveryIndexOnceLoopAfterLoop) {
  for (int threads : {1, 2, 4}) {
    ForkJoin team(threads);
    EXPECT_EQ(team.threads(), threads);
    for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}}) {
      std::vector<std::atomic<int>> hits(n);
      std::atomic<int> bad_thread{0};
      team.Run(n, [&](size_t i, int t) {
        hits[i].fetch_add(1);
        if (t < 0 || t >= threads) bad_thread.fetch_add(1);
      });
      for (size_t i = 0; i < n; ++i) EXPECT_EQ(hits[i].load(), 1) << threads << " threads, n " << n << ", i " << i;
      EXPECT_EQ(bad_thread.load(), 0);
    }
  }
}

TEST(ForkJoin, AnExceptionReachesTheCallerAndTheTeamGoesOn) {
  ForkJoin team(3);
  EXPECT_THROW(team.Run(100,
                        [](size_t i, int) {
                          if (i == 42) throw std::runtime_error("index 42");
                        }),
               std::runtime_error);
  std::atomic<size_t> sum{0};
  team.Run(10, [&](size_t i, int) { sum.fetch_add(i); });
  EXPECT_EQ(sum.load(), 45u);
}

}  // namespace
}  // namespace weft::io_detail
