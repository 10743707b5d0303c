// InterruptGuard (weft/interrupt.h): the first SIGINT is a stop request, the second ends the
// process, and the handler that was there before comes back.
#include <gtest/gtest.h>

#include <csignal>

#include "weft/base.h"
#include "weft/interrupt.h"

namespace weft {
namespace {

void (*CurrentHandler())(int) {
  struct sigaction now {};
  sigaction(SIGINT, nullptr, &now);
  return now.sa_handler;
}

extern "C" void TestHandler(int) {}

TEST(InterruptGuard, FirstSigintIsAStopRequest) {
  InterruptGuard guard;
  const auto stop = guard.StopRequested();
  EXPECT_FALSE(guard.requested());
  EXPECT_FALSE(stop());
  ASSERT_EQ(std::raise(SIGINT), 0);  // the process survives it
  EXPECT_TRUE(guard.requested());
  EXPECT_TRUE(stop());
  EXPECT_EQ(CurrentHandler(), SIG_DFL);  // so the next one ends the process
}

TEST(InterruptGuard, SecondSigintEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        InterruptGuard guard;
        std::raise(SIGINT);
        std::raise(SIGINT);
        std::exit(0);  // not reached
      },
      testing::KilledBySignal(SIGINT), "");
}

TEST(InterruptGuard, RestoresThePreviousHandlerAndStartsUnset) {
  struct sigaction mine {
  }, before{};
  mine.sa_handler = TestHandler;
  sigemptyset(&mine.sa_mask);
  ASSERT_EQ(sigaction(SIGINT, &mine, &before), 0);
  {
    InterruptGuard guard;
    EXPECT_NE(CurrentHandler(), TestHandler);
    std::raise(SIGINT);
    EXPECT_TRUE(guard.requested());
  }
  EXPECT_EQ(CurrentHandler(), TestHandler);  // also after the request reset it to the default
  {
    InterruptGuard guard;
    EXPECT_FALSE(guard.requested());  // the earlier guard's request does not carry over
  }
  sigaction(SIGINT, &before, nullptr);
}

TEST(InterruptGuard, OneAtATime) {
  InterruptGuard guard;
  try {
    InterruptGuard second;
    FAIL() << "a second guard was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("another guard is alive"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(guard.requested());
}

}  // namespace
}  // namespace weft
