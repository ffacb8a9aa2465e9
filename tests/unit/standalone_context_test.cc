// The standalone context: every test module run end to end, zero-copy and copied outputs,
// DLPack in and out, and every bad input with a clear error followed by a correct execution.
#include "ral/standalone_context.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "tests/support/test_cpu_driver.h"

namespace ral::standalone {
namespace {

using ral::testing::AllocationCounters;
using ral::testing::countingCpuDriverFactory;
using ral::testing::defaultTestOptions;

std::string modulePath(const std::string& name) {
  return std::string(RAL_TEST_MODULE_DIR) + "/" + name + ".ralm";
}

std::shared_ptr<StandaloneContext> load(const std::string& name,
                                        StandaloneContext::Options options = defaultTestOptions()) {
  auto ctx = StandaloneContext::load(modulePath(name), std::move(options));
  EXPECT_TRUE(ctx.ok()) << name << ": " << ctx.status();
  return ctx.ok() ? *ctx : nullptr;
}

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// A DLTensor over a host buffer (dense unless strides are given).
struct Tensor {
  std::vector<float> data;
  std::vector<int64_t> shape, strides;
  DLTensor dl{};
  Tensor(std::vector<int64_t> s, std::vector<float> d, std::vector<int64_t> st = {})
      : data(std::move(d)), shape(std::move(s)), strides(std::move(st)) {
    dl.data = data.data();
    dl.device = {kDLCPU, 0};
    dl.ndim = static_cast<int32_t>(shape.size());
    dl.dtype = {kDLFloat, 32, 1};
    dl.shape = shape.empty() ? nullptr : shape.data();
    dl.strides = strides.empty() ? nullptr : strides.data();
  }
};

// Options whose CPU driver counts its allocations in `counters`.
StandaloneContext::Options countingOptions(std::shared_ptr<AllocationCounters> counters) {
  StandaloneContext::Options options;
  options.cpu_driver_factory = countingCpuDriverFactory(std::move(counters));
  return options;
}

std::vector<float> values(const DLTensor& t) {
  int64_t n = 1;
  for (int d = 0; d < t.ndim; ++d) n *= t.shape[d];
  std::vector<float> v;
  const auto* p = static_cast<const float*>(t.data);
  std::vector<int64_t> idx(t.ndim, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = 0;
    for (int d = 0; d < t.ndim; ++d) off += idx[d] * (t.strides ? t.strides[d] : 1);
    if (!t.strides) off = k;
    v.push_back(p[off]);
    for (int d = t.ndim - 1; d >= 0; --d) {
      if (++idx[d] < t.shape[d]) break;
      idx[d] = 0;
    }
  }
  return v;
}

std::vector<float> iota(size_t n, float start) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

TEST(StandaloneContextTest, IdentityOutputIsTheModulesOwnBuffer) {
  auto counters = std::make_shared<AllocationCounters>();
  auto ctx = load("identity", countingOptions(counters));
  ASSERT_TRUE(ctx);
  Tensor x({2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = ctx->run({&x.dl});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  const DLTensor& y = (*out)[0]->dl_tensor;
  EXPECT_EQ(y.ndim, 2);
  EXPECT_EQ(y.shape[0], 2);
  EXPECT_EQ(y.shape[1], 3);
  EXPECT_EQ(y.dtype.code, kDLFloat);
  EXPECT_EQ(y.dtype.bits, 32);
  EXPECT_EQ(y.device.device_type, kDLCPU);
  EXPECT_EQ(values(y), x.data);
  EXPECT_EQ(counters->allocations, 1);  // the module's ral_alloc, handed over without a copy
  EXPECT_EQ(counters->live(), 1);
  out->clear();
  EXPECT_EQ(counters->live(), 0);
}

TEST(StandaloneContextTest, IdentityReadsStridedInputs) {
  auto ctx = load("identity");
  ASSERT_TRUE(ctx);
  // A 2x3 view of the transposed 3x2 buffer {1..6}: element (i, j) at j * 2 + i.
  std::vector<float> buf = {1, 2, 3, 4, 5, 6};
  const int64_t shape[] = {2, 3}, strides[] = {1, 2};
  Execution exec = ctx->newExecution();
  ASSERT_TRUE(exec.bindInput(0, TensorRef{buf.data(), DType::kF32, 2, shape, strides}).ok());
  ASSERT_TRUE(exec.run().ok()) << exec.ctx()->status();
  auto y = exec.takeOutput(0);
  ASSERT_TRUE(y.ok());
  DLTensorPtr owned(*y);
  EXPECT_EQ(values(owned->dl_tensor), (std::vector<float>{1, 3, 5, 2, 4, 6}));
}

TEST(StandaloneContextTest, AddOfEveryRankWithDynamicShapes) {
  const std::vector<std::vector<int64_t>> shapes[] = {
      {{}},        {{5}, {0}, {1}}, {{2, 3}, {4, 1}, {0, 7}},
      {{2, 3, 4}}, {{1, 2, 1, 3}},  {{1, 2, 1, 2, 1, 2, 1, 2}}};
  const int ranks[] = {0, 1, 2, 3, 4, 8};
  for (int r = 0; r < 6; ++r) {
    auto ctx = load("add_r" + std::to_string(ranks[r]));
    ASSERT_TRUE(ctx);
    for (const auto& shape : shapes[r]) {
      int64_t n = 1;
      for (int64_t s : shape) n *= s;
      Tensor a(shape, iota(n, 1)), b(shape, iota(n, 100));
      auto out = ctx->run({&a.dl, &b.dl});
      ASSERT_TRUE(out.ok()) << out.status();
      const DLTensor& y = (*out)[0]->dl_tensor;
      ASSERT_EQ(y.ndim, ranks[r]);
      for (int d = 0; d < y.ndim; ++d) EXPECT_EQ(y.shape[d], shape[d]);
      std::vector<float> want(n);
      for (int64_t i = 0; i < n; ++i) want[i] = a.data[i] + b.data[i];
      EXPECT_EQ(values(y), want);
    }
  }
}

TEST(StandaloneContextTest, AddOfANonContiguousInput) {
  auto ctx = load("add_r2");
  ASSERT_TRUE(ctx);
  Tensor a({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor bt({2, 3}, {10, 40, 20, 50, 30, 60}, {1, 2});  // column-major
  auto out = ctx->run({&a.dl, &bt.dl});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(values((*out)[0]->dl_tensor), (std::vector<float>{11, 22, 33, 44, 55, 66}));
  // The shape assertion inside the module is an error, not a crash.
  Tensor c({3, 2}, iota(6, 0));
  auto bad = ctx->run({&a.dl, &c.dl});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(bad.status().message(), "add: the inputs have different shapes"))
      << bad.status();
}

TEST(StandaloneContextTest, InputsInAnotherLayoutAreCopiedIntoTheModulesLayout) {
  // add_r2_rowmajor: input a is row-major, input b dense rows (strided<[?,1]>).
  auto counters = std::make_shared<AllocationCounters>();
  auto ctx = load("add_r2_rowmajor", countingOptions(counters));
  ASSERT_TRUE(ctx);
  EXPECT_EQ(ctx->module().inputs()[0].layoutString(), "row-major");
  EXPECT_EQ(ctx->module().inputs()[1].layoutString(), "strided<[?,1]>");
  Tensor a_cols({2, 3}, {1, 4, 2, 5, 3, 6}, {1, 2});                // column-major: copied
  Tensor b_rows({2, 3}, {10, 20, 30, -1, -1, 40, 50, 60}, {5, 1});  // rows 5 apart: as it is
  auto out = ctx->run({&a_cols.dl, &b_rows.dl});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(values((*out)[0]->dl_tensor), (std::vector<float>{11, 22, 33, 44, 55, 66}));
  EXPECT_EQ(counters->allocations, 2);  // a's copy and the output; b is bound as it is
  EXPECT_EQ(counters->live(), 1);       // the copy went with its execution
  // b in column-major order is copied too; a zero-stride (broadcast) a as well.
  Tensor a_bcast({2, 3}, {1, 2, 3}, {0, 1});
  Tensor b_cols({2, 3}, {10, 40, 20, 50, 30, 60}, {1, 2});
  auto out2 = ctx->run({&a_bcast.dl, &b_cols.dl});
  ASSERT_TRUE(out2.ok()) << out2.status();
  EXPECT_EQ(values((*out2)[0]->dl_tensor), (std::vector<float>{11, 22, 33, 41, 52, 63}));
  out->clear();
  out2->clear();
  EXPECT_EQ(counters->live(), 0);
}

TEST(StandaloneContextTest, StrictZeroCopyRefusesOtherLayoutsByName) {
  StandaloneContext::Options options = defaultTestOptions();
  options.strict_zero_copy = true;
  auto ctx = load("add_r2_rowmajor", options);
  ASSERT_TRUE(ctx);
  Tensor a({2, 3}, iota(6, 1)), b({2, 3}, iota(6, 1));
  Tensor a_cols({2, 3}, {1, 4, 2, 5, 3, 6}, {1, 2});
  Tensor b_rows({2, 3}, {1, 2, 3, -1, -1, 4, 5, 6}, {5, 1});
  auto bad = ctx->run({&a_cols.dl, &b.dl});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(bad.status().message(),
                       "input 0 (2x3xf32) has strides [1,2] but the module was compiled for layout "
                       "row-major (?x?xf32); strict zero-copy is on"))
      << bad.status();
  bad = ctx->run({&a.dl, &a_cols.dl});
  EXPECT_TRUE(contains(bad.status().message(),
                       "input 1 (2x3xf32) has strides [1,2] but the module "
                       "was compiled for layout strided<[?,1]>"))
      << bad.status();
  // Views the layouts accept run; so do size-1 dimensions with any stride, and empty inputs.
  auto ok = ctx->run({&a.dl, &b_rows.dl});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(values((*ok)[0]->dl_tensor), (std::vector<float>{2, 4, 6, 8, 10, 12}));
  Tensor row({1, 3}, iota(3, 1), {99, 1}), empty({0, 3}, {}, {1, 7});
  EXPECT_TRUE(ctx->run({&row.dl, &row.dl}).ok());
  EXPECT_TRUE(ctx->run({&empty.dl, &empty.dl}).ok());
}

TEST(StandaloneContextTest, RebindingReplacesACopyAndOutOfMemoryIsAClearError) {
  auto counters = std::make_shared<AllocationCounters>();
  auto ctx = load("add_r2_rowmajor", countingOptions(counters));
  ASSERT_TRUE(ctx);
  Tensor a_cols({2, 3}, {1, 4, 2, 5, 3, 6}, {1, 2}), b({2, 3}, iota(6, 10));
  {
    Execution exec = ctx->newExecution();
    ASSERT_TRUE(exec.bindInput(0, a_cols.dl).ok());
    ASSERT_TRUE(exec.bindInput(0, a_cols.dl).ok());  // the first copy is freed
    EXPECT_EQ(counters->live(), 1);
    ASSERT_TRUE(exec.bindInput(1, b.dl).ok());
    ASSERT_TRUE(exec.run().ok()) << exec.ctx()->status();
    auto y = exec.takeOutput(0);
    ASSERT_TRUE(y.ok());
    DLTensorPtr owned(*y);
    EXPECT_EQ(values(owned->dl_tensor), (std::vector<float>{11, 13, 15, 17, 19, 21}));
  }
  EXPECT_EQ(counters->live(), 0);
  // No memory for the copy: an error naming the input; nothing leaks; the next run is correct.
  counters->max_live = 0;
  auto oom = ctx->run({&a_cols.dl, &b.dl});
  EXPECT_EQ(oom.status().code(), StatusCode::kOutOfMemory);
  EXPECT_TRUE(contains(oom.status().message(), "copying input 0 (2x3xf32) into layout row-major"))
      << oom.status();
  counters->max_live = -1;
  auto out = ctx->run({&a_cols.dl, &b.dl});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(values((*out)[0]->dl_tensor), (std::vector<float>{11, 13, 15, 17, 19, 21}));
}

TEST(StandaloneContextTest, CompiledModulesReadEveryViewCorrectly) {
  // Modules from ral-compile returning their input (row-major, and any strides): a column-major
  // view comes back with the same elements either way.
  for (const char* name : {"passthrough", "passthrough_any"}) {
    auto loaded = StandaloneContext::load(modulePath(name));
    if (!loaded.ok()) GTEST_SKIP() << "built without the MLIR compiler: " << loaded.status();
  }
  auto row_major = load("passthrough");
  auto any = load("passthrough_any");
  std::vector<float> buf = iota(12, 0);
  const int64_t shape[] = {3, 4}, cols[] = {1, 3}, dense[] = {4, 1};
  for (auto& ctx : {row_major, any}) {
    for (const int64_t* strides : {cols, dense}) {
      Execution exec = ctx->newExecution();
      ASSERT_TRUE(exec.bindInput(0, TensorRef{buf.data(), DType::kF32, 2, shape, strides}).ok());
      ASSERT_TRUE(exec.run().ok()) << exec.ctx()->status();
      auto y = exec.takeOutput(0);
      ASSERT_TRUE(y.ok());
      DLTensorPtr owned(*y);
      std::vector<float> want;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j) want.push_back(buf[i * strides[0] + j * strides[1]]);
      EXPECT_EQ(values(owned->dl_tensor), want);
    }
  }
}

TEST(StandaloneContextTest, OutputsThatAliasAnInputAreCopied) {
  auto counters = std::make_shared<AllocationCounters>();
  auto ctx = load("alias", countingOptions(counters));
  ASSERT_TRUE(ctx);
  Tensor x({5}, {1, 2, 3, 4, 5});
  auto out = ctx->run({&x.dl});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(counters->allocations, 2);  // both outputs copied: RAL does not own input memory
  const DLTensor& same = (*out)[0]->dl_tensor;
  const DLTensor& odd = (*out)[1]->dl_tensor;
  EXPECT_NE(same.data, x.dl.data);
  x.data[0] = -1;  // the caller's buffer is theirs again
  EXPECT_EQ(values(same), (std::vector<float>{1, 2, 3, 4, 5}));
  EXPECT_EQ(values(odd), (std::vector<float>{1, 3, 5}));
  EXPECT_EQ(odd.shape[0], 3);
  out->clear();
  EXPECT_EQ(counters->live(), 0);
}

TEST(StandaloneContextTest, ModuleErrorMidRunThenNextExecutionIsCorrect) {
  auto counters = std::make_shared<AllocationCounters>();
  auto ctx = load("error", countingOptions(counters));
  ASSERT_TRUE(ctx);
  int64_t v = -3;
  DLTensor x{};
  x.data = &v;
  x.device = {kDLCPU, 0};
  x.dtype = {kDLInt, 64, 1};
  for (int round = 0; round < 3; ++round) {
    v = -3;
    auto bad = ctx->run({&x});
    EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(bad.status().message(), "module 'error': error module: the input is negative");
    EXPECT_EQ(counters->live(), 0);  // the temporary and the sent output were released
    v = 41;
    auto good = ctx->run({&x});
    ASSERT_TRUE(good.ok()) << good.status();
    EXPECT_EQ((*good)[0]->dl_tensor.ndim, 0);
    EXPECT_EQ(*static_cast<int64_t*>((*good)[0]->dl_tensor.data), 42);
    EXPECT_EQ(counters->live(), 1);  // only the output; the module's dealloc of it was ignored
  }
}

TEST(StandaloneContextTest, ModuleCallingByName) {
  auto ctx = load("by_name");
  ASSERT_TRUE(ctx);
  Tensor x({4}, {1, 2, 3, 4});
  auto out = ctx->run({&x.dl});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(values((*out)[0]->dl_tensor), (std::vector<float>{2, 4, 6, 8}));
}

TEST(StandaloneContextTest, EmptyModule) {
  auto ctx = load("empty");
  ASSERT_TRUE(ctx);
  Tensor a({2}, {1, 2}), b({0}, {});
  auto out = ctx->run({&a.dl, &b.dl});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(values((*out)[0]->dl_tensor), (std::vector<float>{0}));
}

TEST(StandaloneContextTest, BadInputsAreClearErrorsAndTheNextRunIsCorrect) {
  auto ctx = load("identity");
  ASSERT_TRUE(ctx);
  Tensor good({2, 3}, iota(6, 1));
  auto expectGoodRun = [&] {
    auto out = ctx->run({&good.dl});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(values((*out)[0]->dl_tensor), good.data);
  };
  auto expectError = [&](const std::vector<const DLTensor*>& inputs, StatusCode code,
                         const char* text) {
    auto out = ctx->run(inputs);
    EXPECT_EQ(out.status().code(), code) << out.status();
    EXPECT_TRUE(contains(out.status().message(), text)) << out.status();
    expectGoodRun();
  };
  // Count.
  expectError({}, StatusCode::kInvalidArgument, "module 'identity' takes 1 input(s), got 0");
  expectError({&good.dl, &good.dl}, StatusCode::kInvalidArgument, "got 2");
  expectError({nullptr}, StatusCode::kInvalidArgument, "input 0 is null");
  // Element type.
  Tensor ints({2, 3}, iota(6, 1));
  ints.dl.dtype = {kDLInt, 32, 1};
  expectError({&ints.dl}, StatusCode::kInvalidArgument,
              "input 0: expected element type f32 (2x3xf32), got i32 (2x3xi32)");
  Tensor lanes({2, 3}, iota(6, 1));
  lanes.dl.dtype.lanes = 4;
  expectError({&lanes.dl}, StatusCode::kUnsupported, "4 lanes");
  // Rank.
  Tensor rank3({1, 2, 3}, iota(6, 1));
  expectError({&rank3.dl}, StatusCode::kInvalidArgument,
              "input 0: expected rank 2 (2x3xf32), got rank 3 (1x2x3xf32)");
  // Static dimension.
  Tensor wrong({3, 2}, iota(6, 1));
  expectError({&wrong.dl}, StatusCode::kInvalidArgument,
              "input 0: dimension 0 must be 2 (2x3xf32), got 3 (3x2xf32)");
  // Null data.
  Tensor null({2, 3}, iota(6, 1));
  null.dl.data = nullptr;
  expectError({&null.dl}, StatusCode::kInvalidArgument, "input 0 (2x3xf32) has null data");
  // Device.
  Tensor gpu({2, 3}, iota(6, 1));
  gpu.dl.device = {kDLCUDA, 0};
  expectError({&gpu.dl}, StatusCode::kInvalidArgument, "expected a tensor on cpu (2x3xf32), got one on cuda");
  Tensor negative({2, -3}, iota(6, 1));
  expectError({&negative.dl}, StatusCode::kInvalidArgument, "invalid shape");

  // The execution-level API: index out of range, unbound input, run twice, take twice.
  Execution exec = ctx->newExecution();
  EXPECT_EQ(exec.bindInput(1, good.dl).code(), StatusCode::kOutOfRange);
  Status unbound = exec.run();
  EXPECT_TRUE(contains(unbound.message(), "input 0 (2x3xf32) is not bound")) << unbound;
  ASSERT_TRUE(exec.bindInput(0, good.dl).ok());
  ASSERT_TRUE(exec.run().ok());
  EXPECT_EQ(exec.run().code(), StatusCode::kFailedPrecondition);
  auto y = exec.takeOutput(0);
  ASSERT_TRUE(y.ok());
  DLTensorPtr owned(*y);
  EXPECT_EQ(exec.takeOutput(0).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(exec.takeOutput(1).status().code(), StatusCode::kOutOfRange);
  expectGoodRun();
}

TEST(StandaloneContextTest, UntakenOutputsAndUnfreedTemporariesAreReleased) {
  auto counters = std::make_shared<AllocationCounters>();
  auto ctx = load("add_r1", countingOptions(counters));
  ASSERT_TRUE(ctx);
  Tensor a({3}, {1, 2, 3}), b({3}, {4, 5, 6});
  {
    Execution exec = ctx->newExecution();
    ASSERT_TRUE(exec.bindInput(0, a.dl).ok());
    ASSERT_TRUE(exec.bindInput(1, b.dl).ok());
    ASSERT_TRUE(exec.run().ok());
    EXPECT_EQ(counters->live(), 1);
  }  // never taken
  EXPECT_EQ(counters->live(), 0);
}

TEST(StandaloneContextTest, RerunWithTheSameBindings) {
  auto ctx = load("add_r1");
  ASSERT_TRUE(ctx);
  Tensor a({2}, {1, 2}), b({2}, {3, 4});
  Execution exec = ctx->newExecution();
  ASSERT_TRUE(exec.bindInput(0, a.dl).ok());
  ASSERT_TRUE(exec.bindInput(1, b.dl).ok());
  for (int i = 0; i < 3; ++i) {
    a.data[0] = static_cast<float>(i);
    ASSERT_TRUE(exec.run().ok());
    auto y = exec.takeOutput(0);
    ASSERT_TRUE(y.ok());
    DLTensorPtr owned(*y);
    EXPECT_EQ(values(owned->dl_tensor), (std::vector<float>{3.0f + i, 6}));
    exec.resetOutputs();
  }
}

TEST(StandaloneContextTest, OutputsOutliveTheirContext) {
  DLTensorPtr kept;
  {
    auto ctx = load("add_r1");
    ASSERT_TRUE(ctx);
    Tensor a({2}, {1, 2}), b({2}, {3, 4});
    auto out = ctx->run({&a.dl, &b.dl});
    ASSERT_TRUE(out.ok());
    kept = std::move((*out)[0]);
  }
  EXPECT_EQ(values(kept->dl_tensor), (std::vector<float>{4, 6}));
  kept.reset();  // frees through the context's driver, still alive until now
}

TEST(StandaloneContextTest, ExecutionContextsArePooled) {
  auto ctx = load("add_r0");
  ASSERT_TRUE(ctx);
  StandaloneExecutionContext* first;
  {
    Execution e = ctx->newExecution();
    first = e.ctx();
  }
  Execution again = ctx->newExecution();
  EXPECT_EQ(again.ctx(), first);
  EXPECT_EQ(again.ctx()->type(), &StandaloneExecutionContext::kType);
}

TEST(StandaloneContextTest, MissingCpuDriverIsAClearError) {
  StandaloneContext::Options options;
  options.cpu_driver_factory = [](Context&) -> StatusOr<std::unique_ptr<Driver>> {
    return unavailable("no CPU here");
  };
  auto ctx = StandaloneContext::load(modulePath("add_r1"), options);
  EXPECT_EQ(ctx.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(contains(ctx.status().message(), "needs a CPU driver")) << ctx.status();
  EXPECT_TRUE(contains(ctx.status().message(), "no CPU here")) << ctx.status();
}

TEST(DLPackTest, ElementTypesMapBothWays) {
  for (int i = 1; i < kNumDTypes; ++i) {
    const auto t = static_cast<DType>(i);
    auto back = dtypeFromDLPack(dtypeToDLPack(t));
    ASSERT_TRUE(back.ok()) << dtypeName(t);
    EXPECT_EQ(*back, t);
  }
  EXPECT_EQ(*dtypeFromDLPack({kDLUInt, 1, 1}), DType::kBool);
  EXPECT_FALSE(dtypeFromDLPack({kDLComplex, 64, 1}).ok());
  EXPECT_FALSE(dtypeFromDLPack({kDLFloat, 8, 1}).ok());
  EXPECT_EQ(*deviceFromDLPack({kDLCUDA, 0}), DeviceKind::kCuda);
  EXPECT_FALSE(deviceFromDLPack({kDLExtDev, 0}).ok());
}

}  // namespace
}  // namespace ral::standalone
