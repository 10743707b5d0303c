// autograd::RecordFunction: a call whose gradient the caller computes (MXNet's
// mx.autograd.Function) — the gradient it gets and gives, its place in a larger graph, when the
// tape destroys it (exactly once), and the calls refused.
#include "autograd_util.h"

namespace weft {
namespace {

using test::Array;
using test::ErrorOf;
using test::ExpectNear;
using test::Read;

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

// (a, b) -> (a * b, a + b); the gradient reads its saved inputs. Counts its calls and
// destructions in the test's counters.
class MulAdd final : public autograd::FunctionGradient {
 public:
  MulAdd(NDArray a, NDArray b, int* calls, int* destroyed)
      : a_(std::move(a)), b_(std::move(b)), calls_(calls), destroyed_(destroyed) {}
  ~MulAdd() override { ++*destroyed_; }
  std::vector<NDArray> Backward(const std::vector<NDArray>& og, const std::vector<bool>& need, bool) override {
    ++*calls_;
    last_need = need;
    if (fail) Fail("MulAdd: the user's backward failed");
    std::vector<NDArray> g{og[0] * b_ + og[1], og[0] * a_ + og[1]};
    if (wrong_shape) g[0] = Array({1}, Shape{1});
    return g;
  }
  std::string Describe() const override { return "MulAdd"; }

  bool fail = false, wrong_shape = false;
  std::vector<bool> last_need;

 private:
  NDArray a_, b_;
  int *calls_, *destroyed_;
};

struct Recorded {
  NDArray p, q;
  MulAdd* fn = nullptr;  // owned by the tape
};

// Runs the forward with recording paused, then records it (the caller records).
Recorded RecordMulAdd(const NDArray& a, const NDArray& b, int* calls, int* destroyed) {
  Recorded r;
  {
    auto pause = autograd::Pause();
    r.p = a * b;
    r.q = a + b;
  }
  auto fn = std::make_unique<MulAdd>(a.Detach(), b.Detach(), calls, destroyed);
  r.fn = fn.get();
  EXPECT_TRUE(autograd::RecordFunction({a, b}, {&r.p, &r.q}, std::move(fn)));
  return r;
}

// a = [1, 2] marked with a gradient buffer, b = [3, 4] a constant, and the counters of a MulAdd.
struct Marked {
  NDArray a = Array({1, 2}, Shape{2}), b = Array({3, 4}, Shape{2});
  int calls = 0, destroyed = 0;
  Marked() { autograd::AttachGrad(&a); }
  Recorded Record() { return RecordMulAdd(a, b, &calls, &destroyed); }
};

TEST(AutogradFunction, GradientAndLifetime) {
  NDArray a = Array({1, -2, 3}, Shape{3}), b = Array({0.5f, 4, -1}, Shape{3});
  autograd::AttachGrad(&a);
  autograd::AttachGrad(&b);
  int calls = 0, destroyed = 0;
  {
    auto rec = autograd::Record();
    Recorded r = RecordMulAdd(a, b, &calls, &destroyed);
    // Recorded ops after the function: loss = 3p + q*q (head gradient ones).
    NDArray loss = r.p * 3.0f + r.q * r.q;
    autograd::Backward({loss}, {}, /*retain_graph=*/true);
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(destroyed, 0);  // retained: the graph can be differentiated again
    // dq = 2q = 2(a+b); da = 3b + dq, db = 3a + dq.
    ExpectNear(Read(autograd::GetGrad(a)), {1.5f + 3, 12 + 4, -3 + 4});
    ExpectNear(Read(autograd::GetGrad(b)), {3 + 3, -6 + 4, 9 + 4});
    autograd::Backward({loss});
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(destroyed, 1);  // released by the backward without retain_graph
  }
  EXPECT_EQ(destroyed, 1);
}

TEST(AutogradFunction, UnusedOutputGetsZerosAndConstantInputNeedsNothing) {
  Marked t;  // b is a constant
  auto rec = autograd::Record();
  Recorded r = t.Record();
  autograd::Backward({r.p});  // nothing flows into q: its gradient is zeros
  ExpectNear(Read(autograd::GetGrad(t.a)), {3, 4});
  EXPECT_EQ(t.calls, 1);
  EXPECT_EQ(t.destroyed, 1);
}

TEST(AutogradFunction, DestroyedOnceWhenTheGraphGoes) {
  Marked t;
  {
    auto rec = autograd::Record();
    Recorded r = t.Record();
    NDArray z = r.p + 1.0f;
    r.p = NDArray();
    r.q = NDArray();
    NDArray::WaitAll();
    EXPECT_EQ(t.destroyed, 0);  // z refers into the graph
    z = NDArray();
    NDArray::WaitAll();  // work pushed on the graph's arrays may hold them until it runs
    EXPECT_EQ(t.destroyed, 1);
  }
  EXPECT_EQ(t.calls, 0);
  EXPECT_EQ(t.destroyed, 1);
}

TEST(AutogradFunction, NotRecordedWithoutGraphInputs) {
  NDArray a = Array({1}, Shape{1}), b = Array({2}, Shape{1});
  int destroyed = 0, calls = 0;
  auto rec = autograd::Record();
  NDArray p = a * b;
  EXPECT_FALSE(autograd::RecordFunction({a, b}, {&p}, std::make_unique<MulAdd>(a, b, &calls, &destroyed)));
  EXPECT_EQ(destroyed, 1);
  EXPECT_EQ(p.autograd_node(), nullptr);
}

TEST(AutogradFunction, ErrorsOfTheCallersGradient) {
  Marked t;
  auto rec = autograd::Record();
  Recorded r = t.Record();
  r.fn->fail = true;
  EXPECT_HAS(ErrorOf([&] { autograd::Backward({r.p}, {}, true); }), "the user's backward failed");
  r.fn->fail = false;
  r.fn->wrong_shape = true;
  const std::string e = ErrorOf([&] { autograd::Backward({r.p}, {}, true); });
  EXPECT_HAS(e, "MulAdd returned an array of shape (1,)");
  EXPECT_HAS(e, "gradient of input 0");
  r.fn->wrong_shape = false;
  EXPECT_HAS(ErrorOf([&] { autograd::Grad({r.p}, {t.a}, {}, true, /*create_graph=*/true); }), "create_graph");
  EXPECT_HAS(ErrorOf([&] { autograd::GetSymbol(r.p); }), "MulAdd, whose computation the tape did not see");
  EXPECT_EQ(t.destroyed, 0);
}

TEST(AutogradFunction, RefusedCalls) {
  Marked t;
  NDArray p = t.a * t.b;
  auto record = [&](const std::vector<NDArray>& in, NDArray* out) {
    return ErrorOf(
        [&] { autograd::RecordFunction(in, {out}, std::make_unique<MulAdd>(t.a, t.b, &t.calls, &t.destroyed)); });
  };
  EXPECT_HAS(record({t.a, t.b}, &p), "not recording");
  EXPECT_EQ(t.destroyed, 1);  // refused calls destroy the gradient too: the frontend's state is freed
  auto rec = autograd::Record();
  NDArray y = t.a * 2.0f;
  EXPECT_HAS(record({t.a}, &y), "already part of a recorded graph");
  EXPECT_HAS(record({t.a}, &t.a), "already part of a recorded graph");
  EXPECT_EQ(t.destroyed, 3);
  EXPECT_TRUE(autograd::GetGrad(t.a).GetShape() == t.a.GetShape());  // a is still the marked variable
}

}  // namespace
}  // namespace weft
