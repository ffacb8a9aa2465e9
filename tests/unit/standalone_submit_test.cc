// Asynchronous executions (StandaloneContext::submit, ral/submission.h): chains of modules linked
// by semaphores and by outputs of earlier submissions, on the CPU and on Vulkan; a failure in the
// middle of a chain reaching every later waiter, then a correct chain; timeouts; contexts dropped
// with submissions in flight; many threads submitting to one context.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "ral/standalone_context.h"
#include "ral/submission.h"
#include "ral/trace.h"
#include "tests/support/trace_checks.h"

namespace ral::standalone {
namespace {

using namespace std::chrono_literals;

std::string modulePath(const std::string& name) {
  return std::string(RAL_TEST_MODULE_DIR) + "/" + name + ".ralm";
}

std::shared_ptr<StandaloneContext> load(const std::string& name) {
  auto ctx = StandaloneContext::load(modulePath(name));
  EXPECT_TRUE(ctx.ok()) << name << ": " << ctx.status();
  return ctx.ok() ? *ctx : nullptr;
}

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// An i64 scalar for the `error` module (x -> x + 1; fails for x < 0).
struct Scalar {
  int64_t value;
  DLTensor dl{};
  explicit Scalar(int64_t v) : value(v) {
    dl.data = &value;
    dl.device = {kDLCPU, 0};
    dl.ndim = 0;
    dl.dtype = {kDLInt, 64, 1};
  }
};

int64_t scalarOf(const SharedTensor& t) { return *static_cast<const int64_t*>(t->dl_tensor.data); }

std::shared_ptr<Semaphore> semaphore(StandaloneContext& ctx, uint64_t initial = 0) {
  auto s = ctx.createSemaphore(initial);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : nullptr;
}

TEST(SubmitTest, OneSubmissionReturnsItsOutputsAndSignals) {
  auto ctx = load("error");
  ASSERT_NE(ctx, nullptr);
  auto done = semaphore(*ctx);
  Scalar x(41);
  auto sub = ctx->submit({&x.dl}, {}, {{done, 7}});
  ASSERT_TRUE(sub.ok()) << sub.status();
  ASSERT_TRUE(done->wait(7).ok());
  auto outs = (*sub)->outputs();
  ASSERT_TRUE(outs.ok()) << outs.status();
  ASSERT_EQ(outs->size(), 1u);
  EXPECT_EQ(scalarOf((*outs)[0]), 42);
  EXPECT_TRUE((*sub)->done());
  // Outputs are shared: asked again, the same tensor.
  auto again = (*sub)->outputs();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)[0].get(), (*outs)[0].get());
}

// Three executions of two contexts, each waiting for the one before through a semaphore and
// taking its output: nothing runs until the host releases the first wait, and the last output is
// x + 3.
TEST(SubmitTest, ChainsOfThreeLinkedBySemaphoresAndOutputs) {
  auto a = load("error");
  auto b = load("error");
  ASSERT_TRUE(a && b);
  auto start = semaphore(*a);
  auto chain = semaphore(*a);
  for (int64_t round = 0; round < 3; ++round) {
    const uint64_t base = 10 * static_cast<uint64_t>(round);
    Scalar x(100 * round);
    const uint64_t before = *chain->query();
    auto first = a->submit({&x.dl}, {{start, base + 1}}, {{chain, base + 1}});
    ASSERT_TRUE(first.ok()) << first.status();
    auto second = b->submit({SubmitInput(*first, 0)}, {{chain, base + 1}}, {{chain, base + 2}});
    ASSERT_TRUE(second.ok()) << second.status();
    auto third = a->submit({SubmitInput(*second, 0)}, {{chain, base + 2}}, {{chain, base + 3}});
    ASSERT_TRUE(third.ok()) << third.status();
    // Nothing has run: the first waits for `start`.
    std::this_thread::sleep_for(5ms);
    EXPECT_EQ(*chain->query(), before);
    EXPECT_FALSE((*third)->done());
    ASSERT_TRUE(start->signal(base + 1).ok());
    ASSERT_TRUE(chain->wait(base + 3, 10s).ok());
    auto outs = (*third)->outputs();
    ASSERT_TRUE(outs.ok()) << outs.status();
    EXPECT_EQ(scalarOf((*outs)[0]), 100 * round + 3);
  }
}

// The middle execution fails: its signal semaphore fails with its error, the execution after it
// (which waits for that semaphore and takes its output) fails with the same message, and so does
// a host waiting at the end. A new chain on the same contexts is correct.
TEST(SubmitTest, AFailureInTheMiddleReachesEveryLaterWaiter) {
  auto ctx = load("error");
  ASSERT_NE(ctx, nullptr);
  auto s = semaphore(*ctx);
  Scalar ok(1), bad(-5);
  auto first = ctx->submit({&ok.dl}, {}, {{s, 1}});
  auto middle = ctx->submit({&bad.dl}, {{s, 1}}, {{s, 2}});
  auto last = ctx->submit({SubmitInput(*middle, 0)}, {{s, 2}}, {{s, 3}});
  ASSERT_TRUE(first.ok() && middle.ok() && last.ok());
  Status end = s->wait(3, 10s);
  ASSERT_FALSE(end.ok());
  EXPECT_TRUE(contains(end.message(), "error module: the input is negative")) << end;
  EXPECT_TRUE((*first)->wait().ok());
  Status m = (*middle)->wait();
  EXPECT_TRUE(contains(m.message(), "the input is negative")) << m;
  EXPECT_TRUE(contains(m.message(), "module 'error'")) << m;
  Status l = (*last)->wait();
  ASSERT_FALSE(l.ok());
  EXPECT_TRUE(contains(l.message(), "the input is negative")) << l;
  EXPECT_FALSE((*last)->outputs().ok());

  auto fresh = semaphore(*ctx);
  Scalar x(5);
  auto again = ctx->submit({&x.dl}, {}, {{fresh, 1}});
  auto next = ctx->submit({SubmitInput(*again, 0)}, {{fresh, 1}}, {{fresh, 2}});
  ASSERT_TRUE(again.ok() && next.ok());
  auto outs = (*next)->outputs();
  ASSERT_TRUE(outs.ok()) << outs.status();
  EXPECT_EQ(scalarOf((*outs)[0]), 7);
}

// Errors about the call itself come back from submit() and queue nothing; errors about inputs
// come through the submission, and the next one works.
TEST(SubmitTest, BadSubmissionsAreErrors) {
  auto ctx = load("error");
  ASSERT_NE(ctx, nullptr);
  Scalar x(1);
  auto none = ctx->submit({});
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(contains(none.status().message(), "takes 1 input(s), got 0")) << none.status();
  auto null_input = ctx->submit({static_cast<const DLTensor*>(nullptr)});
  EXPECT_FALSE(null_input.ok());
  auto null_wait = ctx->submit({&x.dl}, {{nullptr, 1}});
  ASSERT_FALSE(null_wait.ok());
  EXPECT_TRUE(contains(null_wait.status().message(), "wait semaphore 0 is null"));
  auto null_signal = ctx->submit({&x.dl}, {}, {{nullptr, 1}});
  EXPECT_FALSE(null_signal.ok());

  float f = 1;
  DLTensor wrong{};
  wrong.data = &f;
  wrong.device = {kDLCPU, 0};
  wrong.dtype = {kDLFloat, 32, 1};
  auto s = semaphore(*ctx);
  auto bad = ctx->submit({&wrong}, {}, {{s, 1}});
  ASSERT_TRUE(bad.ok()) << bad.status();
  Status st = (*bad)->wait();
  EXPECT_FALSE(st.ok());
  EXPECT_FALSE(s->wait(1).ok());  // its signal failed with it

  // An output index the earlier submission does not have.
  auto good = ctx->submit({&x.dl});
  ASSERT_TRUE(good.ok());
  auto out_of_range = ctx->submit({SubmitInput(*good, 3)});
  ASSERT_TRUE(out_of_range.ok());
  Status oor = (*out_of_range)->wait();
  EXPECT_TRUE(contains(oor.message(), "output 3 of a submission that has 1 output(s)")) << oor;

  auto fine = ctx->submit({&x.dl});
  ASSERT_TRUE(fine.ok());
  auto outs = (*fine)->outputs();
  ASSERT_TRUE(outs.ok()) << outs.status();
  EXPECT_EQ(scalarOf((*outs)[0]), 2);
}

// A tiny module submitted back to back with plain inputs runs on the submitting thread once its
// executions are measured as short (submission_queue.h): those submissions are done when submit()
// returns, their failures (a failing module, a wrong dtype) are the submission's errors naming
// the module, and the next submission is right.
TEST(SubmitTest, ShortPlainSubmissionsRunOnTheSubmittingThread) {
  auto ctx = load("error");
  ASSERT_NE(ctx, nullptr);
  bool ran_inline = false;
  for (int i = 0; i < 200; ++i) {
    Scalar x(i);
    auto sub = ctx->submit({&x.dl});
    ASSERT_TRUE(sub.ok()) << sub.status();
    ran_inline = ran_inline || (*sub)->done();
    auto outs = (*sub)->outputs();
    ASSERT_TRUE(outs.ok()) << outs.status();
    ASSERT_EQ(outs->size(), 1u);
    EXPECT_EQ(scalarOf((*outs)[0]), i + 1);
  }
  // Each failure is submitted until one ran inline (a slow timed execution, say under a
  // sanitizer or a loaded machine, sends the next few to the queue thread).
  float f = 1;
  DLTensor wrong{};
  wrong.data = &f;
  wrong.device = {kDLCPU, 0};
  wrong.dtype = {kDLFloat, 32, 1};
  Scalar negative(-1);
  for (const DLTensor* input : std::vector<const DLTensor*>{&negative.dl, &wrong}) {
    bool failed_inline = false;
    for (int attempt = 0; attempt < 200 && !failed_inline; ++attempt) {
      auto sub = ctx->submit({input});
      ASSERT_TRUE(sub.ok()) << sub.status();
      failed_inline = (*sub)->done();
      Status st = (*sub)->wait();
      EXPECT_FALSE(st.ok());
      EXPECT_TRUE(contains(st.message(), "submission of module 'error'")) << st;
      EXPECT_FALSE((*sub)->outputs().ok());
    }
    ran_inline = ran_inline && failed_inline;
  }
  Scalar x(41);
  auto fine = ctx->submit({&x.dl});
  ASSERT_TRUE(fine.ok()) << fine.status();
  auto outs = (*fine)->outputs();
  ASSERT_TRUE(outs.ok()) << outs.status();
  EXPECT_EQ(scalarOf((*outs)[0]), 42);
  if (!ran_inline) GTEST_SKIP() << "no submission ran on the submitting thread here";
}

TEST(SubmitTest, WaitsTimeOutAndAFailedWaitFailsTheSubmission) {
  auto ctx = load("error");
  ASSERT_NE(ctx, nullptr);
  auto gate = semaphore(*ctx);
  Scalar x(1);
  auto sub = ctx->submit({&x.dl}, {{gate, 1}});
  ASSERT_TRUE(sub.ok());
  Status early = (*sub)->wait(20ms);
  EXPECT_EQ(early.code(), StatusCode::kDeadlineExceeded) << early;
  EXPECT_FALSE((*sub)->done());
  gate->fail(aborted("upstream gave up"));
  Status failed = (*sub)->wait(10s);
  EXPECT_EQ(failed.code(), StatusCode::kAborted) << failed;
  EXPECT_TRUE(contains(failed.message(), "upstream gave up")) << failed;
  EXPECT_TRUE(contains(failed.message(), "wait semaphore 0")) << failed;
  // The queue goes on.
  auto next = ctx->submit({&x.dl});
  ASSERT_TRUE(next.ok());
  EXPECT_TRUE((*next)->wait(10s).ok());
}

// Dropping the context (and the submission handles) with submissions waiting: they run once the
// gate opens, their outputs stay valid, and nothing leaks or races (ASan, TSan).
TEST(SubmitTest, ContextsDroppedWithSubmissionsInFlight) {
  auto gate = std::shared_ptr<Semaphore>();
  std::shared_ptr<Submission> last;
  {
    auto ctx = load("error");
    ASSERT_NE(ctx, nullptr);
    gate = semaphore(*ctx);
    std::vector<std::unique_ptr<Scalar>> inputs;
    for (int i = 0; i < 8; ++i) {
      inputs.push_back(std::make_unique<Scalar>(i));
      auto sub = ctx->submit({&inputs.back()->dl}, {{gate, 1}});
      ASSERT_TRUE(sub.ok());
      last = *sub;
    }
    // The inputs must outlive the submissions: released after the gate below.
    ASSERT_TRUE(gate->signal(1).ok());
    ASSERT_TRUE(last->wait(10s).ok());
  }
  auto outs = last->outputs();
  ASSERT_TRUE(outs.ok());
  EXPECT_EQ(scalarOf((*outs)[0]), 8);

  // Dropped before the gate opens: the context lives until its queue is done.
  auto gate2 = std::shared_ptr<Semaphore>();
  Scalar x(9);
  {
    auto ctx = load("error");
    ASSERT_NE(ctx, nullptr);
    gate2 = semaphore(*ctx);
    auto sub = ctx->submit({&x.dl}, {{gate2, 1}});
    ASSERT_TRUE(sub.ok());
    last = *sub;
  }
  ASSERT_TRUE(gate2->signal(1).ok());
  auto late = last->outputs();
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_EQ(scalarOf((*late)[0]), 10);
  last.reset();
}

TEST(SubmitTest, ManyThreadsSubmitToOneContext) {
  auto ctx = load("error");
  ASSERT_NE(ctx, nullptr);
  constexpr int kThreads = 4, kEach = 50;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::unique_ptr<Scalar>> inputs;
      std::vector<std::shared_ptr<Submission>> subs;
      for (int i = 0; i < kEach; ++i) {
        inputs.push_back(std::make_unique<Scalar>(t * 1000 + i));
        auto sub = ctx->submit({&inputs.back()->dl});
        if (!sub.ok()) {
          ++wrong;
          continue;
        }
        // Every other one chains on the one before it.
        if (i % 2 == 1) {
          auto chained = ctx->submit({SubmitInput(subs.back(), 0)});
          if (!chained.ok()) ++wrong;
          auto outs = (*chained)->outputs();
          if (!outs.ok() || scalarOf((*outs)[0]) != t * 1000 + i + 1) ++wrong;
        }
        subs.push_back(*sub);
      }
      for (int i = 0; i < kEach; ++i) {
        auto outs = subs[i]->outputs();
        if (!outs.ok() || scalarOf((*outs)[0]) != t * 1000 + i + 1) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

// Short executions may run on the submitting thread when nothing is queued (submission_queue.h);
// never ahead of a submission queued before them: a ready submission behind one that waits for
// a semaphore stays pending until that one ran.
TEST(SubmitTest, ReadySubmissionsNeverOvertakeWaitingOnes) {
  auto ctx = load("error");
  ASSERT_NE(ctx, nullptr);
  Scalar x(41);
  for (int i = 0; i < 20; ++i) {  // short executions, measured: later ones may run at once
    auto sub = ctx->submit({&x.dl});
    ASSERT_TRUE(sub.ok()) << sub.status();
    auto outs = (*sub)->outputs();
    ASSERT_TRUE(outs.ok()) << outs.status();
    EXPECT_EQ(scalarOf((*outs)[0]), 42);
  }
  auto gate = semaphore(*ctx), order = semaphore(*ctx);
  Scalar y(7);
  auto first = ctx->submit({&y.dl}, {{gate, 1}}, {{order, 1}});
  auto second = ctx->submit({&x.dl}, {}, {{order, 2}});
  ASSERT_TRUE(first.ok() && second.ok());
  std::this_thread::sleep_for(5ms);
  EXPECT_FALSE((*second)->done());
  EXPECT_EQ(*order->query(), 0u);
  ASSERT_TRUE(gate->signal(1).ok());
  ASSERT_TRUE((*second)->wait(10s).ok());
  EXPECT_EQ(*order->query(), 2u);  // signals in submission order: 1 was set before 2
  EXPECT_EQ(scalarOf((*(*first)->outputs())[0]), 8);
  EXPECT_EQ(scalarOf((*(*second)->outputs())[0]), 42);
}

// `steps` row softmaxes of a rows x cols matrix, in double: the reference.
void softmaxRows(std::vector<double>& ref, int64_t rows, int64_t cols, int steps) {
  for (int step = 0; step < steps; ++step) {
    for (int64_t r = 0; r < rows; ++r) {
      double m = -INFINITY, sum = 0;
      for (int64_t c = 0; c < cols; ++c) m = std::max(m, ref[r * cols + c]);
      for (int64_t c = 0; c < cols; ++c) sum += std::exp(ref[r * cols + c] - m);
      for (int64_t c = 0; c < cols; ++c) ref[r * cols + c] = std::exp(ref[r * cols + c] - m) / sum;
    }
  }
}

// Softmax compiled for the CPU and for Vulkan: three applications chained by semaphores and
// outputs, against a double reference. On a device that orders executions (`device_ordered`),
// the thread that ran the submissions never waited for the device or a semaphore (the trace
// shows its waits).
void expectSoftmaxChain(const std::string& module, bool device_ordered) {
  auto ctx = load(module);
  ASSERT_NE(ctx, nullptr);
  const int64_t rows = 5, cols = 9;
  std::vector<float> x(rows * cols);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 3;
  const int64_t shape[] = {rows, cols};
  DLTensor in{};
  in.data = x.data();
  in.device = {kDLCPU, 0};
  in.ndim = 2;
  in.dtype = {kDLFloat, 32, 1};
  in.shape = const_cast<int64_t*>(shape);
  const std::string trace_path = ::testing::TempDir() + "ral_softmax_chain_trace.json";
  ASSERT_TRUE(trace::start(trace_path).ok());
  auto s = semaphore(*ctx);
  auto first = ctx->submit({&in}, {}, {{s, 1}});
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = ctx->submit({SubmitInput(*first, 0)}, {{s, 1}}, {{s, 2}});
  ASSERT_TRUE(second.ok());
  auto third = ctx->submit({SubmitInput(*second, 0)}, {{s, 2}}, {{s, 3}});
  ASSERT_TRUE(third.ok());
  ASSERT_TRUE(s->wait(3, 30s).ok());
  ASSERT_TRUE(trace::stop().ok());
  const std::vector<std::string> waits = testing::hostWaitsOnSubmissionThreads(trace_path);
  if (device_ordered) {
    EXPECT_TRUE(waits.empty()) << waits.size() << " host wait(s), the first: " << waits.front();
  }
  auto outs = (*third)->outputs();
  ASSERT_TRUE(outs.ok()) << outs.status();
  const float* y = static_cast<const float*>((*outs)[0]->dl_tensor.data);
  std::vector<double> ref(x.begin(), x.end());
  softmaxRows(ref, rows, cols, 3);
  for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(y[i], ref[i], 1e-6) << module << " " << i;

  // A longer chain whose context is dropped at once: the submissions (on Vulkan, their queued
  // device work) finish, and the last output matches twelve more softmaxes.
  std::shared_ptr<Submission> last = *third;
  {
    auto dropped = load(module);
    ASSERT_NE(dropped, nullptr);
    for (int step = 0; step < 12; ++step) {
      auto next = dropped->submit({SubmitInput(last, 0)});
      ASSERT_TRUE(next.ok()) << next.status();
      last = *next;
    }
  }
  auto end = last->outputs();
  ASSERT_TRUE(end.ok()) << end.status();
  softmaxRows(ref, rows, cols, 12);
  const float* z = static_cast<const float*>((*end)[0]->dl_tensor.data);
  for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(z[i], ref[i], 1e-6) << module << " " << i;

  // A submission that waits for a semaphore the host sets only after reading the output of the
  // one before it, queued behind it: that one still completes (on a device, the queue thread
  // signals the work it queued before it blocks).
  auto gate = semaphore(*ctx);
  auto a = ctx->submit({&in});
  auto b = ctx->submit({SubmitInput(*a, 0)}, {{gate, 1}});
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*a)->wait(30s).ok()) << module;
  ASSERT_TRUE(gate->signal(1).ok());
  auto two = (*b)->outputs();
  ASSERT_TRUE(two.ok()) << two.status();
}

size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1))
    ++n;
  return n;
}

// A trace of a chain of three: a `submission` span per submission, each holding its execution.
TEST(SubmitTest, TracesShowEachSubmissionAndItsExecution) {
  auto ctx = load("error");
  ASSERT_NE(ctx, nullptr);
  const std::string path = ::testing::TempDir() + "ral_submit_trace.json";
  ASSERT_TRUE(trace::start(path).ok());
  auto s = semaphore(*ctx);
  Scalar x(1);
  auto a = ctx->submit({&x.dl}, {}, {{s, 1}});
  auto b = ctx->submit({SubmitInput(*a, 0)}, {{s, 1}}, {{s, 2}});
  auto c = ctx->submit({SubmitInput(*b, 0)}, {{s, 2}}, {{s, 3}});
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE((*c)->wait(10s).ok());
  ASSERT_TRUE(trace::stop().ok());
  std::ifstream in(path);
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(count(json, R"("cat": "submission")"), 3u) << json;
  EXPECT_EQ(count(json, R"("cat": "execution")"), 3u) << json;
  EXPECT_NE(json.find(R"("module": "error", "waits": 1, "signals": 1)"), std::string::npos) << json;
}

// A 1-D f32 tensor over `data`.
DLTensor vector(std::vector<float>& data, int64_t* shape) {
  DLTensor t{};
  t.data = data.data();
  t.device = {kDLCPU, 0};
  t.ndim = 1;
  t.dtype = {kDLFloat, 32, 1};
  shape[0] = static_cast<int64_t>(data.size());
  t.shape = shape;
  return t;
}

// Partial execution (tests/modules/partial.mlir: out0 = x + 1, out1 = 2 * y): the host makes
// input 1 ready only after it has read output 0 (y = 3 * out0), which a runtime that binds every
// input before the entry runs could never finish. Then a ready semaphore that fails: the
// submission fails with its error, output 0 (handed out before) stays valid.
void expectPartialExecution(const std::string& module) {
  auto ctx = load(module);
  ASSERT_NE(ctx, nullptr);
  for (int round = 0; round < 2; ++round) {
    const bool fail_input = round == 1;
    std::vector<float> x = {1, -2, 3.5f, 0, 7}, y(x.size(), 0.0f);
    int64_t xs[1], ys[1];
    DLTensor dx = vector(x, xs), dy = vector(y, ys);
    auto input_ready = semaphore(*ctx), output0 = semaphore(*ctx), output1 = semaphore(*ctx),
         done = semaphore(*ctx);
    auto sub = ctx->submit({&dx, SubmitInput(&dy, {input_ready, 1})}, {}, {{done, 1}},
                           {{output0, 1}, {output1, 1}});
    ASSERT_TRUE(sub.ok()) << sub.status();
    ASSERT_TRUE(output0->wait(1, 30s).ok()) << module;
    // Output 0 is out; the execution waits for input 1.
    std::this_thread::sleep_for(5ms);
    EXPECT_FALSE((*sub)->done());
    EXPECT_EQ(*output1->query(), 0u);
    auto out0 = (*sub)->output(0);
    ASSERT_TRUE(out0.ok()) << out0.status();
    const float* a = static_cast<const float*>((*out0)->dl_tensor.data);
    ASSERT_EQ((*out0)->dl_tensor.shape[0], static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(a[i], x[i] + 1) << module << " " << i;
    if (fail_input) {
      input_ready->fail(aborted("the producer of input 1 gave up"));
      Status end = done->wait(1, 30s);
      EXPECT_TRUE(contains(end.message(), "the producer of input 1 gave up")) << end;
      EXPECT_FALSE(output1->wait(1, 30s).ok());
      EXPECT_FALSE((*sub)->outputs().ok());
      EXPECT_EQ(static_cast<const float*>((*out0)->dl_tensor.data)[4], 8.0f);  // still valid
      continue;
    }
    for (size_t i = 0; i < y.size(); ++i) y[i] = 3 * a[i];
    ASSERT_TRUE(input_ready->signal(1).ok());
    ASSERT_TRUE(done->wait(1, 30s).ok());
    ASSERT_TRUE(output1->wait(1, 0s).ok());
    auto outs = (*sub)->outputs();
    ASSERT_TRUE(outs.ok()) << outs.status();
    EXPECT_EQ((*outs)[0].get(), out0->get());
    const float* b = static_cast<const float*>((*outs)[1]->dl_tensor.data);
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(b[i], 6 * (x[i] + 1)) << module << " " << i;
  }
  // Output semaphores must match the outputs.
  Scalar unused(0);
  auto s = semaphore(*ctx);
  auto bad = ctx->submit({&unused.dl, &unused.dl}, {}, {}, {{s, 1}});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(contains(bad.status().message(), "got 1 output semaphores")) << bad.status();
}

TEST(SubmitTest, PartialExecutionOnTheCpu) {
  if (!std::ifstream(modulePath("compiled_partial")).good())
    GTEST_SKIP() << "built without the MLIR compiler";
  expectPartialExecution("compiled_partial");
}

TEST(SubmitTest, PartialExecutionOnVulkan) {
  if (!std::ifstream(modulePath("compiled_partial_vulkan")).good())
    GTEST_SKIP() << "built without the MLIR compiler";
  if (!Context().driver(DeviceKind::kVulkan).ok()) GTEST_SKIP() << "no Vulkan device";
  expectPartialExecution("compiled_partial_vulkan");
}

TEST(SubmitTest, CompiledSoftmaxChainOnTheCpu) {
  if (!std::ifstream(modulePath("compiled_softmax")).good())
    GTEST_SKIP() << "built without the MLIR compiler";
  expectSoftmaxChain("compiled_softmax", /*device_ordered=*/false);
}

TEST(SubmitTest, CompiledSoftmaxChainOnVulkan) {
  if (!std::ifstream(modulePath("compiled_softmax_vulkan")).good())
    GTEST_SKIP() << "built without the MLIR compiler";
  if (!Context().driver(DeviceKind::kVulkan).ok()) GTEST_SKIP() << "no Vulkan device";
  expectSoftmaxChain("compiled_softmax_vulkan", /*device_ordered=*/true);
}

}  // namespace
}  // namespace ral::standalone
