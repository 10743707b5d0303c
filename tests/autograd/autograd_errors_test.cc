// Bad use of autograd: each refused with a message naming the array or op (MXNet's wording where
// MXNet has one), and nothing half-done; and the tape's memory going back to the pool.
#include "autograd_util.h"
#include "weft/storage.h"

namespace weft {
namespace {

using test::Array;
using test::ErrorOf;
using test::Read;

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(AutogradErrors, BackwardOnAnArrayNotRecorded) {
  NDArray x = Array({1, 2}, Shape{2});
  autograd::AttachGrad(&x);
  NDArray y = x * 2.0f;  // not recording
  const std::string e = ErrorOf([&] { autograd::Backward({y}); });
  EXPECT_HAS(e, "Cannot differentiate node because it is not in a computational graph");
  EXPECT_HAS(e, "head 0 (an array of shape (2,) float32 on cpu(0))");
}

TEST(AutogradErrors, BackwardTwiceWithoutRetainGraph) {
  NDArray x = Array({1, 2}, Shape{2});
  autograd::AttachGrad(&x);
  NDArray y = test::Recorded([&] { return x * x; });
  autograd::Backward({y});
  const std::string e = ErrorOf([&] { autograd::Backward({y}); });
  EXPECT_HAS(e, "freed by an earlier backward without retain_graph");
  // A graph that shares a freed node cannot be differentiated through it either.
  NDArray a = Array({1, 2}, Shape{2});
  autograd::AttachGrad(&a);
  NDArray b, c, d;
  {
    auto rec = autograd::Record();
    b = a * a;
    c = b + 1.0f;
    d = b * 2.0f;
  }
  autograd::Backward({c});
  EXPECT_HAS(ErrorOf([&] { autograd::Backward({d}); }), "whose values an earlier backward without retain_graph freed");
}

TEST(AutogradErrors, NothingRequiresGradients) {
  NDArray x = Array({1, 2}, Shape{2});
  autograd::AttachGrad(&x, kNullOp);
  NDArray y = test::Recorded([&] { return x * 2.0f; });
  EXPECT_HAS(ErrorOf([&] { autograd::Backward({y}); }),
             "There are no inputs in computation graph that require gradients.");
  EXPECT_HAS(ErrorOf([&] { autograd::Grad({y}, {y}); }),
             "Cannot differentiate with respect to the 1-th variable because it does not require gradient");
}

TEST(AutogradErrors, InPlaceWriteWhileRecording) {
  NDArray x = Array({1, 2}, Shape{2});
  autograd::AttachGrad(&x);
  auto rec = autograd::Record();
  NDArray y = x * 2.0f;
  const std::string e = ErrorOf([&] { y += 1.0f; });
  EXPECT_HAS(e, "_plus_scalar: output 0");
  EXPECT_HAS(e, "Assigning to NDArrays that are already in a computational graph");
  EXPECT_EQ(Read(y), (std::vector<float>{2, 4}));           // refused before anything ran
  EXPECT_HAS(ErrorOf([&] { x *= 3.0f; }), "variable var");  // a marked variable is part of the graph too
}

// MXNet refuses a recorded call that writes into one of its inputs, whether or not the gradient
// needs that input's value (x[idx] = y with y recorded; a = a * w).
TEST(AutogradErrors, OutputWrittenIntoAnInputWhileRecording) {
  NDArray w = Array({1, 2}, Shape{2}), a = Array({3, 4}, Shape{2}), v = Array({1}, Shape{1});
  autograd::AttachGrad(&w);
  autograd::AttachGrad(&v);
  // _slice_assign(x, y, out=x), MXNet's x[0:1] = y: x is not part of the graph, y is.
  ImperativeCall assign;
  assign.op = "_slice_assign";
  assign.inputs = {a, v};
  assign.params = {{"begin", "(0,)"}, {"end", "(1,)"}};
  std::vector<NDArray> out{a};
  {
    auto rec = autograd::Record();
    for (const char* op : {"elemwise_mul", "elemwise_add"}) {
      ImperativeCall call;
      call.op = op;
      call.inputs = {a, w};
      const std::string e = ErrorOf([&] { Invoke(call, &out); });
      EXPECT_HAS(e, std::string(op) + ": the call writes an output into input 0");
      EXPECT_HAS(e, "Inplace operations (+=, -=, x[:]=, etc) are not supported when recording with autograd");
    }
    EXPECT_HAS(ErrorOf([&] { Invoke(assign, &out); }), "Inplace operations");
  }
  // Outside a record section the same call is fine.
  EXPECT_NO_THROW(Invoke(assign, &out));
  EXPECT_EQ(Read(a)[0], 1.f);
}

TEST(AutogradErrors, BackwardAfterAKeptValueWasOverwritten) {
  NDArray x = Array({1, 2}, Shape{2});
  autograd::AttachGrad(&x);
  NDArray y, z;
  {
    auto rec = autograd::Record();
    y = x * x;     // keeps x
    z = x + 1.0f;  // keeps nothing
  }
  x = 5.0f;                 // MXNet would differentiate with x = 5 and return 10
  autograd::Backward({z});  // z's gradient reads no value: fine
  const std::string e = ErrorOf([&] { autograd::Backward({y}); });
  EXPECT_HAS(e, "(elemwise_mul) needs its input 'lhs'");
  EXPECT_HAS(e, "was written since");
  EXPECT_EQ(Read(autograd::GetGrad(x)), (std::vector<float>{1, 1}));  // z's gradient, nothing more
  // The same after an optimizer update of a weight the graph read.
  NDArray w = Array({1, 2, 3, 4}, Shape{2, 2}), data = Array({1, 1}, Shape{1, 2});
  autograd::AttachGrad(&w);
  NDArray out = test::Recorded([&] {
    return InvokeOne("FullyConnected", {data, w}, {{"num_hidden", "2"}, {"no_bias", "True"}});
  });
  ImperativeCall sgd;
  sgd.op = "sgd_update";
  sgd.params = {{"lr", "0.1"}};
  sgd.inputs = {w, autograd::GetGrad(w)};
  std::vector<NDArray> updated{w};
  Invoke(sgd, &updated);
  EXPECT_HAS(ErrorOf([&] { autograd::Backward({out}); }), "(FullyConnected) needs its input 'weight'");
}

TEST(AutogradErrors, MarkVariablesRefusals) {
  NDArray x = Array({1, 2}, Shape{2});
  EXPECT_HAS(ErrorOf([&] { autograd::MarkVariables({&x}, {kWriteTo}, {NDArray(Shape{3}, Context::cpu(0))}); }),
             "the gradient buffer of variable 0 is an array of shape (3,)");
  EXPECT_HAS(ErrorOf([&] { autograd::MarkVariables({&x}, {kWriteTo}, {x}); }), "shares memory with variable 0");
  NDArray g1 = Array({0, 0}, Shape{2}), g2 = Array({0, 0}, Shape{2});
  EXPECT_HAS(ErrorOf([&] {
               autograd::MarkVariables({&x, &x}, {kWriteTo}, {g1, g2});
             }),
             "variable 1 is variable 0 again");
  EXPECT_HAS(ErrorOf([&] { autograd::MarkVariables({&x}, {static_cast<OpReqType>(7)}, {g1}); }),
             "grad_req 7 of variable 0");
  EXPECT_EQ(x.autograd_node(), nullptr);  // nothing was marked
  // Marking again is allowed (MXNet 1.9.1 accepts it): a new leaf with the new buffer.
  autograd::MarkVariables({&x}, {kWriteTo}, {g1});
  autograd::MarkVariables({&x}, {kWriteTo}, {g2});
  {
    auto rec = autograd::Record();
    autograd::Backward({x * 3.0f});
  }
  EXPECT_EQ(Read(g1), (std::vector<float>{0, 0}));
  EXPECT_EQ(Read(g2), (std::vector<float>{3, 3}));
}

TEST(AutogradErrors, HeadGradientOfTheWrongShape) {
  NDArray x = Array({1, 2}, Shape{2});
  autograd::AttachGrad(&x);
  auto rec = autograd::Record();
  NDArray y = x * 2.0f;
  EXPECT_HAS(ErrorOf([&] { autograd::Backward({y}, {Array({1}, Shape{1})}); }),
             "the head gradient of head 0 is an array of shape (1,)");
}

TEST(AutogradErrors, SecondOrderWithoutARule) {
  NDArray x = Array({1, 2, 3, 4}, Shape{2, 2}), w = Array({1, 0, 0, 1}, Shape{2, 2});
  autograd::AttachGrad(&x);
  NDArray y;
  {
    auto rec = autograd::Record();
    y = InvokeOne("FullyConnected", {x, w}, {{"num_hidden", "2"}, {"no_bias", "True"}});
    y = InvokeOne("softmax", {y});
  }
  std::vector<NDArray> dx = autograd::Grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true);
  EXPECT_HAS(ErrorOf([&] { autograd::Backward({dx[0]}); }), "has no gradient for it");
}

TEST(AutogradErrors, GetSymbolOfAnArrayNotRecorded) {
  EXPECT_HAS(ErrorOf([&] { autograd::GetSymbol(Array({1}, Shape{1})); }), "is not part of a recorded graph");
}

TEST(AutogradMemory, BackwardFreesTheTapeAsItGoes) {
  // Ten tanh layers on 1 MiB: the tape keeps every output (tanh's backward reads it).
  const Context cpu = Context::cpu(0);
  NDArray x(Shape{256, 1024}, cpu, false);
  x = 0.5f;
  autograd::AttachGrad(&x);
  auto in_use = [&] {
    NDArray::WaitAll();
    return Storage::Get()->Stats(cpu).bytes_in_use;
  };
  for (bool retain : {true, false}) {
    const uint64_t before = in_use();
    NDArray y = x;
    {
      auto rec = autograd::Record();
      for (int i = 0; i < 10; ++i) y = InvokeOne("Activation", {y}, {{"act_type", "tanh"}});
    }
    const uint64_t recorded = in_use();
    EXPECT_GE(recorded - before, 10u << 20);  // ten outputs kept
    autograd::Backward({y}, {}, retain);
    const uint64_t after = in_use();
    if (retain) {
      EXPECT_GE(after - before, 10u << 20);
    } else {
      EXPECT_LE(after - before, 2u << 20) << "only y itself (and pool rounding) should remain";
    }
  }
}

}  // namespace
}  // namespace weft
