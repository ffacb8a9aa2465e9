// ral_conv on device "cuda" without a GPU, on the simulated CUDA driver (RAL_CUDA_DRIVER_PATH),
// in the cuDNN situations a machine can be in. CMake runs each suite in its own environment
// (ctest -R sim_cuda.conv); a suite started in another one skips, saying why.
//  - FakeCudnn*: RAL_CUDNN_PATH is tests/cuda/fake_cudnn.cc, which computes on the host and
//    records every call: results against the CPU kernel in every layout and configuration, the
//    descriptors and arguments passed, plan and handle caching, cuDNN errors as statuses.
//  - CudnnMissing*: RAL_CUDNN_PATH names no file: every call fails cleanly, the same way.
//  - NotCudnn*: RAL_CUDNN_PATH names a library that is not cuDNN; OldCudnn*: a cuDNN 7.
//  - SystemCudnn*: RAL_CUDNN_PATH unset: whatever cuDNN the machine has, which cannot reach a
//    GPU here; a real cuDNN checks RAL's descriptors on the way.
// Argument errors are reported before cuDNN is needed, in every situation.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "tests/support/conv_test_util.h"
#include "cuda_test_util.h"
#include "ral/context.h"

namespace ral::cuda::testing {
namespace {

// Every suite runs on the simulated device, whatever this machine has (set before any Context
// loads the driver).
const bool kSimulated = [] {
  return setenv("RAL_CUDA_DRIVER_PATH", RAL_SIM_CUDA_LIBRARY, 1) == 0;
}();

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// The simulated device's driver of `context`, or why not.
std::string simulatedDriver(Context& context, Driver** gpu) {
  if (!kSimulated) return "cannot point RAL_CUDA_DRIVER_PATH at the simulated CUDA driver";
  const std::string reason = noDeviceReason();
  if (!reason.empty()) return reason;
  auto d = context.driver(DeviceKind::kCuda);
  if (!d.ok()) return d.status().toString();
  *gpu = *d;
  return "";
}

// Every rank's name resolves on the cuda device, like the CPU kernel's.
void expectNamesResolve(Context& context) {
  for (const std::string& name : {convName<3>("cuda"), convName<4>("cuda"), convName<5>("cuda")})
    EXPECT_TRUE(context.resolve(name).ok()) << name;
  EXPECT_EQ(convName<4>("cuda"),
            "ral_conv___cuda___pvoid_m4df32_m4df32_m1df32_m4df32_m1di64_f32_f32___void");
}

// A config of the wrong length and a y of the wrong shape are INVALID_ARGUMENT whatever the state
// of cuDNN; `then` runs after each.
template <typename Then>
void expectArgumentErrorsFirst(Context& context, Driver* gpu, Then then) {
  std::mt19937 rng(11);
  ConvCase cs = basicConv(1, 4, 6, {6, 6}, {3, 3});
  cs.groups = 2;
  {
    ConvOperands<4> ops(cs, rng);
    ops.config_view.sizes[0] = 11;
    const Status s = ops.cudaCall(context, gpu, nullptr);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
    EXPECT_TRUE(contains(s.message(), "ral_conv: config has 11 values, expected 12")) << s;
    then();
  }
  {
    ConvOperands<4> ops(cs, rng);
    ops.y.view.sizes[3] = 5;
    const Status s = ops.cudaCall(context, gpu, nullptr);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
    EXPECT_TRUE(contains(s.message(), "y is [1x6x4x5]")) << s;
    then();
  }
}

// ---- the fake cuDNN

// cuDNN 9's status codes (the fake's version).
constexpr int kCudnnNotInitialized = 1001;
constexpr int kCudnnNotSupported = 3000;
constexpr int kCudnnExecutionFailed = 5000;

// The fake's controls (tests/cuda/fake_cudnn.cc), from the library ral_conv loads.
struct FakeCudnn {
  const char* (*log)() = nullptr;
  void (*clear)() = nullptr;
  void (*fail)(const char*, int) = nullptr;
  int (*live)() = nullptr;
  void (*refuse_unpacked)(int) = nullptr;
};

class FakeCudnnConvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (env("RAL_CUDNN_PATH").find("libral_fake_cudnn") == std::string::npos)
      GTEST_SKIP() << "RAL_CUDNN_PATH is not the fake cuDNN (run through ctest)";
    const std::string why = simulatedDriver(*context, &gpu);
    if (!why.empty()) GTEST_SKIP() << why;
    void* lib = dlopen(env("RAL_CUDNN_PATH").c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib, nullptr) << dlerror();
    fake.log = reinterpret_cast<const char* (*)()>(dlsym(lib, "ral_fake_cudnn_log"));
    fake.clear = reinterpret_cast<void (*)()>(dlsym(lib, "ral_fake_cudnn_clear"));
    fake.fail = reinterpret_cast<void (*)(const char*, int)>(dlsym(lib, "ral_fake_cudnn_fail"));
    fake.live = reinterpret_cast<int (*)()>(dlsym(lib, "ral_fake_cudnn_live"));
    fake.refuse_unpacked =
        reinterpret_cast<void (*)(int)>(dlsym(lib, "ral_fake_cudnn_refuse_unpacked"));
    ASSERT_TRUE(fake.log && fake.clear && fake.fail && fake.live && fake.refuse_unpacked);
    fake.refuse_unpacked(0);
    fake.clear();
  }

  // The calls since the last clear, then clears.
  std::string takeLog() {
    (void)gpu->synchronize();
    std::string log = fake.log();
    fake.clear();
    return log;
  }
  // The lines of `log` that start with `call`.
  static std::vector<std::string> lines(const std::string& log, const std::string& call) {
    std::vector<std::string> out;
    size_t at = 0;
    while (at < log.size()) {
      const size_t end = log.find('\n', at);
      const std::string line = log.substr(at, end - at);
      if (line.compare(0, call.size() + 1, call + " ") == 0 || line == call) out.push_back(line);
      at = end == std::string::npos ? log.size() : end + 1;
    }
    return out;
  }

  std::unique_ptr<Context> context = std::make_unique<Context>();
  Driver* gpu = nullptr;
  FakeCudnn fake;
  std::mt19937 rng{1234};
};

TEST_F(FakeCudnnConvTest, NamesResolveForEveryRank) { expectNamesResolve(*context); }

// An operand in host memory CUDA does not know is an error naming it (a kernel reading it would
// fault the GPU and end the process's CUDA context), before cuDNN is called; the next call works.
TEST_F(FakeCudnnConvTest, HostMemoryOperandsAreErrorsNamingThem) {
  std::mt19937 rng(12);
  const ConvCase cs = basicConv(1, 4, 6, {6, 6}, {3, 3});
  ConvOperands<4> ops(cs, rng);
  DeviceTensor<4> dx(gpu, ops.x), dw(gpu, ops.w), dy(gpu, ops.y);
  DeviceTensor<1> db(gpu, ops.bias);
  ASSERT_TRUE(gpu->synchronize().ok());
  const MemRef<float, 4> host_x = ops.x.view, host_y = ops.y.view;
  for (const auto& [x, y, what] : {std::tuple{host_x, dy.view, "the x"},
                                   std::tuple{dx.view, host_y, "the y"}}) {
    const Status s = callConv<4>(*context, "cuda", x, dw.view, db.view, y, ops.config_view,
                                 cs.alpha, cs.beta);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
    EXPECT_TRUE(contains(s.message(), std::string("ral_conv: ") + what)) << s;
    EXPECT_TRUE(contains(s.message(), "is not memory the cuda device can access")) << s;
  }
  EXPECT_EQ(takeLog().find("cudnnConvolution"), std::string::npos);
  expectCudaMatchesCpu(*context, gpu, cs, rng);
}

TEST_F(FakeCudnnConvTest, ShapesGroupsStridesDilationsPadsMatchTheCpu) {
  for (const ConvCase& cs : convShapeCases()) expectCudaMatchesCpu(*context, gpu, cs, rng);
}

TEST_F(FakeCudnnConvTest, LayoutsChannelsLastAndResidualsMatchTheCpu) {
  const Store pairs[][2] = {{Store::kEveryOtherChannel, Store::kPadded},
                            {Store::kColumnMajor, Store::kDense},
                            {Store::kPadded, Store::kEveryOtherChannel},
                            {Store::kChannelsLast, Store::kColumnMajor}};
  for (ConvCase cs : convShapeCases()) {
    for (const auto& p : pairs) {
      cs.xs = p[0];
      cs.ys = p[1];
      for (int64_t flags : {0, 4, 1, 5}) {
        cs.flags = flags;
        expectCudaMatchesCpu(*context, gpu, cs, rng);
      }
    }
    // Filters stored KRSC (cuDNN's NHWC filter format) and in other orders (a packed copy), a
    // strided bias.
    cs.xs = cs.ys = Store::kDense;
    for (Store ws : {Store::kChannelsLast, Store::kColumnMajor, Store::kPadded}) {
      cs.ws = ws;
      expectCudaMatchesCpu(*context, gpu, cs, rng);
    }
    cs.ws = Store::kDense;
    cs.bs = Store::kEveryOtherChannel;
    cs.act = 1;
    expectCudaMatchesCpu(*context, gpu, cs, rng);
    cs.bs = Store::kDense;
    cs.act = 0;
  }
}

TEST_F(FakeCudnnConvTest, ActivationsWithAndWithoutResidualMatchTheCpu) {
  ConvCase cs = basicConv(2, 6, 4, {6, 5}, {3, 3});
  cs.groups = 2;
  cs.pb = {1, 0};
  cs.pe = {1, 1};
  for (int64_t flags : {0, 1, 4, 5}) {
    for (int act : {0, 1, 2, 3, 4}) {
      for (bool bias : {true, false}) {
        cs.flags = flags;
        cs.act = act;
        cs.bias = bias;
        cs.alpha = -0.3f;
        cs.beta = 0.4f;
        expectCudaMatchesCpu(*context, gpu, cs, rng);
      }
    }
  }
  // Clips: relu6-style (CLIPPED_RELU), one infinite bound, crossing bounds (min(max(v, a), b)
  // is b), both infinite.
  cs.act = 2;
  cs.flags = 0;
  const float inf = std::numeric_limits<float>::infinity();
  const float bounds[][2] = {{0, 0.5f}, {-inf, 0.1f}, {-0.2f, inf}, {0.5f, -0.5f}, {-inf, inf}};
  for (const auto& b : bounds) {
    cs.alpha = b[0];
    cs.beta = b[1];
    expectCudaMatchesCpu(*context, gpu, cs, rng);
  }
}

TEST_F(FakeCudnnConvTest, TransposedConvolutionsMatchTheCpu) {
  for (ConvCase cs : convTransposedCases()) {
    expectCudaMatchesCpu(*context, gpu, cs, rng);
    cs.flags = 8 | 4 | 1;  // channels_last and residual, with silu
    cs.act = 4;
    expectCudaMatchesCpu(*context, gpu, cs, rng);
    cs.flags = 8 | 2;  // constant filter, no bias, strided operands
    cs.act = 1;
    cs.bias = false;
    cs.xs = Store::kEveryOtherChannel;
    cs.ys = Store::kPadded;
    cs.ws = Store::kColumnMajor;
    expectCudaMatchesCpu(*context, gpu, cs, rng);
  }
}

TEST_F(FakeCudnnConvTest, InputWithoutElementsGivesActivatedBias) {
  ConvCase cs = basicConv(2, 0, 3, {4, 4}, {3, 3});  // no input channels
  cs.pb = cs.pe = {1, 1};
  cs.act = 1;
  expectCudaMatchesCpu(*context, gpu, cs, rng);
  cs.flags = 1;  // with the residual
  expectCudaMatchesCpu(*context, gpu, cs, rng);
  cs = basicConv(1, 2, 3, {0, 3}, {1, 1});  // empty spatial dim, all-padding windows
  cs.pb = {1, 0};
  cs.pe = {1, 0};
  cs.act = 2;
  cs.alpha = -0.5f;
  cs.beta = 0.25f;
  expectCudaMatchesCpu(*context, gpu, cs, rng);
  const std::string log = takeLog();
  EXPECT_TRUE(lines(log, "cudnnConvolutionForward").empty()) << log;
}

TEST_F(FakeCudnnConvTest, OutputOverlappingTheInputIsComputedInScratch) {
  // y is x itself: a 1x1 convolution with as many outputs as inputs.
  ConvCase cs = basicConv(1, 4, 4, {5, 5}, {1, 1});
  cs.act = 1;
  ConvOperands<4> ops(cs, rng);
  HostTensor<4> want({1, 4, 5, 5}, Store::kDense, 1);
  ASSERT_TRUE(callConv<4>(*context, "cpu", ops.x.view, ops.w.view, ops.bias.view, want.view,
                          ops.config_view, 0, 0)
                  .ok());
  DeviceTensor<4> dx(gpu, ops.x), dw(gpu, ops.w);
  DeviceTensor<1> db(gpu, ops.bias);
  const Status s =
      callConv<4>(*context, "cuda", dx.view, dw.view, db.view, dx.view, ops.config_view, 0, 0);
  ASSERT_TRUE(s.ok()) << s;
  const std::vector<float> got = dx.read(ops.x.storage.size());
  for (int64_t i = 0; i < ops.x.numel(); ++i)
    ASSERT_NEAR(got[static_cast<size_t>(i)], want.storage[static_cast<size_t>(i)], 1e-4) << i;
  const std::string log = takeLog();
  // Computed into scratch, then copied into y.
  EXPECT_EQ(lines(log, "cudnnTransformTensor").size(), 1u) << log;
}

// The descriptors and scalars ral_conv hands cuDNN, for one configuration of each kind.
TEST_F(FakeCudnnConvTest, DescriptorsAlgorithmsWorkspacesAndScalars) {
  // 2-D, groups 2, strides and dilations, symmetric pads, residual, relu: the convolution adds
  // the residual (beta 1), then bias and relu follow.
  ConvCase cs = basicConv(2, 4, 6, {7, 9}, {3, 2});
  cs.groups = 2;
  cs.stride = {1, 2};
  cs.dil = {2, 1};
  cs.pb = cs.pe = {2, 1};
  cs.flags = 1;
  cs.act = 1;
  expectCudaMatchesCpu(*context, gpu, cs, rng);
  std::string log = takeLog();
  // The heuristics' first usable algorithm (GEMM, 2: the ones before are unsupported, TF32 or
  // need a terabyte) and exactly its workspace.
  EXPECT_EQ(lines(log, "cudnnGetConvolutionForwardAlgorithm_v7").size(), 1u) << log;
  EXPECT_EQ(lines(log, "cudnnGetConvolutionForwardWorkspaceSize algo=2 -> 4096").size(), 1u) << log;
  auto conv = lines(log, "cudnnConvolutionForward");
  ASSERT_EQ(conv.size(), 1u) << log;
  EXPECT_EQ(conv[0],
            "cudnnConvolutionForward algo=2 ws=4096 alpha=1 beta=1 x=[2,4,7,9]/[252,63,9,1] "
            "w=NCHW[6,2,3,2] conv=pad[2,1] stride[1,2] dil[2,1] groups 2 mode 1 math 3 "
            "y=[2,6,7,5]/[210,35,5,1]");
  auto add = lines(log, "cudnnAddTensor");
  ASSERT_EQ(add.size(), 1u) << log;
  EXPECT_EQ(add[0], "cudnnAddTensor alpha=1 beta=1 a=[1,6,1,1]/[6,1,1,1] c=[2,6,7,5]/[210,35,5,1]");
  auto act = lines(log, "cudnnActivationForward");
  ASSERT_EQ(act.size(), 1u) << log;
  EXPECT_EQ(act[0],
            "cudnnActivationForward act=relu alpha=1 beta=0 in_place y=[2,6,7,5]/[210,35,5,1]");

  // Bias and relu without a residual: one fused call, z is y with alpha2 0.
  cs.flags = 0;
  expectCudaMatchesCpu(*context, gpu, cs, rng);
  log = takeLog();
  auto fused = lines(log, "cudnnConvolutionBiasActivationForward");
  ASSERT_EQ(fused.size(), 1u) << log;
  EXPECT_TRUE(contains(fused[0], "alpha1=1 alpha2=0 z=y")) << fused[0];
  EXPECT_TRUE(contains(fused[0], "bias=[1,6,1,1]/[6,1,1,1] act=relu")) << fused[0];
  EXPECT_TRUE(lines(log, "cudnnConvolutionForward").empty()) << log;
  EXPECT_TRUE(lines(log, "cudnnAddTensor").empty()) << log;

  // 1-D, channels-last: a unit height; NHWC strides.
  cs = basicConv(2, 3, 4, {9}, {3});
  cs.pb = cs.pe = {1};
  cs.flags = 4;
  cs.act = 3;
  expectCudaMatchesCpu(*context, gpu, cs, rng);
  log = takeLog();
  conv = lines(log, "cudnnConvolutionForward");
  ASSERT_EQ(conv.size(), 1u) << log;
  EXPECT_TRUE(contains(conv[0],
                       "beta=0 x=[2,3,1,9]/[27,1,27,3] w=NCHW[4,3,1,3] conv=pad[0,1] "
                       "stride[1,1] dil[1,1] groups 1"))
      << conv[0];
  EXPECT_TRUE(contains(conv[0], "y=[2,4,1,9]/[36,1,36,4]")) << conv[0];
  EXPECT_EQ(lines(log, "cudnnActivationForward act=sigmoid").size(), 1u) << log;

  // A filter stored KRSC goes as cuDNN's NHWC filter format, not copied.
  cs = basicConv(1, 3, 4, {5, 6}, {3, 2});
  cs.ws = Store::kChannelsLast;
  expectCudaMatchesCpu(*context, gpu, cs, rng);
  log = takeLog();
  conv = lines(log, "cudnnConvolutionForward");
  ASSERT_EQ(conv.size(), 1u) << log;
  EXPECT_TRUE(contains(conv[0], "w=NHWC[4,3,3,2]")) << conv[0];
  EXPECT_TRUE(lines(log, "cudnnTransformTensor").empty()) << log;

  // A column-major filter is copied to a packed one first.
  cs.ws = Store::kColumnMajor;
  expectCudaMatchesCpu(*context, gpu, cs, rng);
  log = takeLog();
  auto copy = lines(log, "cudnnTransformTensor");
  ASSERT_EQ(copy.size(), 1u) << log;
  EXPECT_EQ(copy[0],
            "cudnnTransformTensor alpha=1 beta=0 x=[4,3,3,2]/[1,4,12,36] y=[4,3,3,2]/[18,6,2,1]");

  // Asymmetric pads cuDNN cannot express: x is zeroed into a padded copy, the convolution pads
  // the common part.
  cs = basicConv(1, 2, 3, {11}, {3});
  cs.stride = {2};
  cs.dil = {2};
  cs.pb = {2};
  expectCudaMatchesCpu(*context, gpu, cs, rng);
  log = takeLog();
  EXPECT_EQ(lines(log, "cudnnSetTensor value=0 y=[1,2,1,13]/[26,13,13,1]").size(), 1u) << log;
  EXPECT_EQ(lines(log,
                  "cudnnTransformTensor alpha=1 beta=0 x=[1,2,1,11]/[22,11,11,1] "
                  "y=[1,2,1,11]/[26,13,13,1]")
                .size(),
            1u)
      << log;
  conv = lines(log, "cudnnConvolutionForward");
  ASSERT_EQ(conv.size(), 1u) << log;
  EXPECT_TRUE(contains(conv[0], "x=[1,2,1,13]/[26,13,13,1]")) << conv[0];
  EXPECT_TRUE(contains(conv[0], "conv=pad[0,0] stride[1,2] dil[1,2]")) << conv[0];

  // Transposed, groups 2, output padding below the stride: cuDNN's data gradient on y directly;
  // the filter is [C, F/groups, K...].
  cs = basicConv(1, 4, 6, {4, 5}, {3, 2});
  cs.flags = 8 | 1;
  cs.groups = 2;
  cs.stride = {2, 3};
  cs.pb = cs.pe = {1, 0};
  cs.op = {1, 2};
  expectCudaMatchesCpu(*context, gpu, cs, rng);
  log = takeLog();
  EXPECT_EQ(lines(log, "cudnnGetConvolutionBackwardDataWorkspaceSize algo=1 -> 2048").size(), 1u)
      << log;
  auto data = lines(log, "cudnnConvolutionBackwardData");
  ASSERT_EQ(data.size(), 1u) << log;
  EXPECT_EQ(data[0],
            "cudnnConvolutionBackwardData algo=1 ws=2048 alpha=1 beta=1 w=NCHW[4,3,3,2] "
            "dy=[1,4,4,5]/[80,20,5,1] conv=pad[1,0] stride[2,3] dil[1,1] groups 2 mode 1 math 3 "
            "dx=[1,6,8,16]/[768,128,16,1]");

  // Transposed with an output padding beyond the end padding: computed into zeroed scratch and
  // the window copied into y, adding the residual.
  cs = basicConv(1, 3, 2, {5, 4}, {2, 3});
  cs.flags = 8 | 1;
  cs.dil = {3, 2};
  cs.op = {2, 1};
  expectCudaMatchesCpu(*context, gpu, cs, rng);
  log = takeLog();
  data = lines(log, "cudnnConvolutionBackwardData");
  ASSERT_EQ(data.size(), 1u) << log;
  EXPECT_TRUE(contains(data[0], "beta=0")) << data[0];
  EXPECT_TRUE(contains(data[0], "dx=[1,2,8,8]/[")) << data[0];
  EXPECT_EQ(lines(log, "cudnnSetTensor value=0").size(), 1u) << log;
  auto window = lines(log, "cudnnTransformTensor");
  ASSERT_EQ(window.size(), 1u) << log;
  EXPECT_TRUE(contains(window[0], "alpha=1 beta=1 x=[1,2,10,9]/")) << window[0];

  // A general clip: max and min against a constant 1 scaled by the bounds.
  cs = basicConv(1, 2, 3, {4, 4}, {3, 3});
  cs.act = 2;
  cs.alpha = -0.25f;
  cs.beta = 0.5f;
  expectCudaMatchesCpu(*context, gpu, cs, rng);
  log = takeLog();
  EXPECT_EQ(lines(log, "cudnnSetTensor value=1 y=[1,1,1,1]/[1,1,1,1]").size(), 1u) << log;
  auto ops = lines(log, "cudnnOpTensor");
  ASSERT_EQ(ops.size(), 2u) << log;
  EXPECT_TRUE(contains(ops[0], "op=max alpha1=1 alpha2=-0.25 beta=0")) << ops[0];
  EXPECT_TRUE(contains(ops[1], "op=min alpha1=1 alpha2=0.5 beta=0")) << ops[1];
  // [0, b] is CLIPPED_RELU.
  cs.alpha = 0;
  cs.beta = 6;
  expectCudaMatchesCpu(*context, gpu, cs, rng);
  log = takeLog();
  EXPECT_EQ(lines(log, "cudnnActivationForward act=clipped_relu 6.000000").size(), 1u) << log;
  // silu is swish with beta 1.
  cs.act = 4;
  expectCudaMatchesCpu(*context, gpu, cs, rng);
  log = takeLog();
  EXPECT_EQ(lines(log, "cudnnActivationForward act=swish 1.000000").size(), 1u) << log;
}

TEST_F(FakeCudnnConvTest, PlansAreCachedPerShapeAndHandlesPerStream) {
  ConvCase cs = basicConv(1, 4, 8, {9, 9}, {3, 3});
  cs.pb = cs.pe = {1, 1};
  expectCudaMatchesCpu(*context, gpu, cs, rng);
  std::string log = takeLog();
  EXPECT_EQ(lines(log, "cudnnCreate").size(), 1u) << log;
  EXPECT_EQ(lines(log, "cudnnGetConvolutionForwardAlgorithm_v7").size(), 1u) << log;
  EXPECT_FALSE(lines(log, "cudnnCreateTensorDescriptor").empty()) << log;
  // The same shape again: no descriptor, no query, no handle.
  expectCudaMatchesCpu(*context, gpu, cs, rng);
  log = takeLog();
  EXPECT_EQ(log.find("cudnnCreate"), std::string::npos) << log;
  EXPECT_TRUE(lines(log, "cudnnGetConvolutionForwardAlgorithm_v7").empty()) << log;
  EXPECT_EQ(lines(log, "cudnnConvolutionForward").size(), 1u) << log;
  // Another shape: a new plan, the same handle.
  cs.in = {10, 9};
  expectCudaMatchesCpu(*context, gpu, cs, rng);
  log = takeLog();
  EXPECT_TRUE(lines(log, "cudnnCreate").empty()) << log;
  EXPECT_EQ(lines(log, "cudnnGetConvolutionForwardAlgorithm_v7").size(), 1u) << log;
  // Another stream: its own handle, the cached plan.
  auto stream = gpu->createStream();
  ASSERT_TRUE(stream.ok()) << stream.status();
  ConvOperands<4> ops(cs, rng);
  const std::vector<float> want = ops.cpuResult(*context);
  std::vector<float> got;
  const Status s = ops.cudaCall(*context, gpu, &got, stream->get());
  ASSERT_TRUE(s.ok()) << s;
  expectSameY(ops, got, want);
  log = takeLog();
  EXPECT_EQ(lines(log, "cudnnCreate").size(), 1u) << log;
  EXPECT_TRUE(lines(log, "cudnnGetConvolutionForwardAlgorithm_v7").empty()) << log;
  // Handles and plans go with the Context.
  EXPECT_GT(fake.live(), 0);
  stream->reset();
  context.reset();
  EXPECT_EQ(fake.live(), 0);
}

TEST_F(FakeCudnnConvTest, ParallelCallsOnOneContext) {
  // Two shapes, each planned once while four threads call; every result right.
  ConvCase a = basicConv(1, 8, 8, {10, 10}, {3, 3});
  a.pb = a.pe = {1, 1};
  ConvCase b = basicConv(2, 6, 4, {7, 9}, {3, 2});
  b.groups = 2;
  b.flags = 1;
  std::vector<std::unique_ptr<ConvOperands<4>>> ops;
  std::vector<std::vector<float>> want;
  for (int t = 0; t < 4; ++t) {
    ops.push_back(std::make_unique<ConvOperands<4>>(t % 2 ? b : a, rng));
    want.push_back(ops.back()->cpuResult(*context));
  }
  std::vector<std::thread> threads;
  std::vector<std::string> errors(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5 && errors[t].empty(); ++i) {
        std::vector<float> got;
        const Status s = ops[t]->cudaCall(*context, gpu, &got);
        if (!s.ok()) errors[t] = s.toString();
        for (size_t j = 0; j < got.size() && errors[t].empty(); ++j)
          if (std::abs(got[j] - want[t][j]) > 2e-4f * std::max(1.0f, std::abs(want[t][j])))
            errors[t] = "mismatch at " + std::to_string(j);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_TRUE(errors[t].empty()) << "caller " << t << ": " << errors[t];
  const std::string log = takeLog();
  EXPECT_EQ(lines(log, "cudnnGetConvolutionForwardAlgorithm_v7").size(), 2u) << log;
  EXPECT_EQ(lines(log, "cudnnCreate").size(), 1u) << log;
}

TEST_F(FakeCudnnConvTest, UnsupportedConfigurationsNameTheValue) {
  ConvCase cs = basicConv(2, 3, 4, {6, 6}, {3, 3});
  for (int act : {5, 6, 7}) {
    cs.act = act;
    const Status s = cudaConvStatus(*context, gpu, cs, rng);
    EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s;
    EXPECT_TRUE(contains(s.message(), "ral_conv: activation " + std::to_string(act))) << s;
    EXPECT_TRUE(contains(s.message(), act == 5 ? "hardswish" : "gelu")) << s;
  }
  cs.act = 0;
  for (Store xs : {Store::kBroadcastBatch, Store::kReversed}) {
    cs.xs = xs;
    const Status s = cudaConvStatus(*context, gpu, cs, rng);
    EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s;
    EXPECT_TRUE(contains(s.message(), "ral_conv: x [2x3x6x6] has strides")) << s;
    EXPECT_TRUE(contains(s.message(), "positive strides")) << s;
  }
  cs.xs = Store::kDense;
  cs.ys = Store::kReversed;
  Status s = cudaConvStatus(*context, gpu, cs, rng);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s;
  EXPECT_TRUE(contains(s.message(), "ral_conv: y [2x4x4x4] has strides")) << s;
  cs.ys = Store::kDense;
  cs.ws = Store::kReversed;
  s = cudaConvStatus(*context, gpu, cs, rng);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s;
  EXPECT_TRUE(contains(s.message(), "ral_conv: w [4x3x3x3] has strides")) << s;
  // None of them reached cuDNN's convolution, and the next call is right.
  EXPECT_TRUE(lines(takeLog(), "cudnnConvolutionForward").empty());
  cs.ws = Store::kDense;
  expectCudaMatchesCpu(*context, gpu, cs, rng);
}

TEST_F(FakeCudnnConvTest, CudnnErrorsAreStatusesAndTheNextCallWorks) {
  ConvCase cs = basicConv(1, 2, 3, {5, 5}, {3, 3});
  // Handle creation (nothing cached; the next call creates it).
  fake.fail("cudnnCreate", kCudnnNotInitialized);
  Status s = cudaConvStatus(*context, gpu, cs, rng);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s;
  EXPECT_TRUE(contains(s.message(), "cudnnCreate failed: CUDNN_STATUS_NOT_INITIALIZED")) << s;
  EXPECT_TRUE(contains(s.message(), "libral_fake_cudnn.so")) << s;
  expectCudaMatchesCpu(*context, gpu, cs, rng);
  // The convolution itself: the status names the call, cuDNN's text and the configuration.
  fake.fail("cudnnConvolutionForward", kCudnnExecutionFailed);
  s = cudaConvStatus(*context, gpu, cs, rng);
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s;
  EXPECT_TRUE(contains(s.message(), "ral_conv (2-D conv, groups 1")) << s;
  EXPECT_TRUE(
      contains(s.message(), "cudnnConvolutionForward failed: CUDNN_STATUS_EXECUTION_FAILED"))
      << s;
  expectCudaMatchesCpu(*context, gpu, cs, rng);
  // A fused call cuDNN does not support falls back to the separate steps.
  cs.act = 1;
  fake.clear();
  fake.fail("cudnnConvolutionBiasActivationForward", kCudnnNotSupported);
  expectCudaMatchesCpu(*context, gpu, cs, rng);
  const std::string log = takeLog();
  EXPECT_EQ(lines(log, "cudnnConvolutionBiasActivationForward").size(), 1u) << log;
  EXPECT_EQ(lines(log, "cudnnConvolutionForward").size(), 1u) << log;
  EXPECT_EQ(lines(log, "cudnnAddTensor").size(), 1u) << log;
  EXPECT_EQ(lines(log, "cudnnActivationForward act=relu").size(), 1u) << log;
  // Other fused failures are errors.
  fake.fail("cudnnConvolutionBiasActivationForward", kCudnnExecutionFailed);
  s = cudaConvStatus(*context, gpu, cs, rng);
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s;
  EXPECT_TRUE(contains(s.message(), "cudnnConvolutionBiasActivationForward failed")) << s;
  cs.act = 0;
  // A failed plan is not cached.
  cs.in = {6, 6};
  fake.fail("cudnnGetConvolutionForwardAlgorithm_v7", kCudnnNotSupported);
  s = cudaConvStatus(*context, gpu, cs, rng);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s;
  expectCudaMatchesCpu(*context, gpu, cs, rng);
}

// cuDNN 9 offers no algorithm at all for some operands as they are stored (seen on an H200 with
// cuDNN 9.14: channels-last x with a channel stride of 2, transposed convolutions over NHWC):
// the convolution then runs over packed channels-first copies, with the same result.
TEST_F(FakeCudnnConvTest, OperandsCuDnnRefusesGoThroughPackedCopies) {
  fake.refuse_unpacked(1);
  ConvCase strided = basicConv(2, 3, 4, {9}, {3});
  strided.pb = strided.pe = {1};
  strided.act = 1;
  strided.flags = 4;  // channels-last
  strided.xs = Store::kEveryOtherChannel;
  strided.ys = Store::kPadded;
  expectCudaMatchesCpu(*context, gpu, strided, rng);
  std::string log = takeLog();
  EXPECT_EQ(lines(log, "cudnnGetConvolutionForwardAlgorithm_v7").size(), 2u) << log;
  EXPECT_GE(lines(log, "cudnnTransformTensor").size(), 2u) << log;  // x in, y out
  ConvCase transposed = basicConv(1, 4, 6, {4, 5}, {3, 2});
  transposed.groups = 2;
  transposed.stride = {2, 3};
  transposed.dil = {1, 2};
  transposed.pb = {1, 0};
  transposed.pe = {0, 1};
  transposed.op = {1, 2};
  transposed.act = 4;
  transposed.flags = 4 | 8;  // channels-last, transposed
  expectCudaMatchesCpu(*context, gpu, transposed, rng);
  log = takeLog();
  EXPECT_EQ(lines(log, "cudnnGetConvolutionBackwardDataAlgorithm_v7").size(), 2u) << log;
  // Operands cuDNN takes as they are: one query, no copies.
  ConvCase dense = basicConv(1, 3, 4, {7, 6}, {3, 3});
  expectCudaMatchesCpu(*context, gpu, dense, rng);
  log = takeLog();
  EXPECT_EQ(lines(log, "cudnnGetConvolutionForwardAlgorithm_v7").size(), 1u) << log;
  fake.refuse_unpacked(0);
}

TEST_F(FakeCudnnConvTest, ArgumentErrorsComeBeforeCudnn) {
  expectArgumentErrorsFirst(*context, gpu, [&] {
    EXPECT_EQ(std::string(fake.log()), "");
    ConvCase good = basicConv(1, 4, 6, {6, 6}, {3, 3});
    good.groups = 2;
    expectCudaMatchesCpu(*context, gpu, good, rng);
    fake.clear();
  });
}

// ---- no cuDNN, or not a usable one: every call fails the same clean way

class NoCudnnTest : public ::testing::Test {
 protected:
  // `path_part`: what RAL_CUDNN_PATH must contain for this suite; the caller returns when this
  // skipped.
  void requireEnvironment(const std::string& path_part) {
    if (env("RAL_CUDNN_PATH").find(path_part) == std::string::npos)
      GTEST_SKIP() << "RAL_CUDNN_PATH does not name " << path_part << " (run through ctest)";
    const std::string why = simulatedDriver(context, &gpu);
    if (!why.empty()) GTEST_SKIP() << why;
  }
  // Convolutions of every rank and kind fail with `code` and a message holding every part of
  // `parts`, identical on every call.
  void expectEveryCallFails(StatusCode code, const std::vector<std::string>& parts) {
    std::mt19937 rng(3);
    std::vector<ConvCase> cases = {basicConv(1, 2, 3, {5, 5}, {3, 3}), basicConv(2, 3, 4, {9}, {3}),
                                   basicConv(1, 2, 2, {3, 4, 2}, {2, 2, 1})};
    cases.push_back(convTransposedCases()[1]);
    std::string first;
    for (int round = 0; round < 2; ++round) {
      for (const ConvCase& cs : cases) {
        const Status s = cudaConvStatus(context, gpu, cs, rng);
        EXPECT_EQ(s.code(), code) << s;
        for (const std::string& part : parts) EXPECT_TRUE(contains(s.message(), part)) << s;
        if (first.empty()) first = std::string(s.message());
        EXPECT_EQ(std::string(s.message()), first);
      }
    }
    // An empty batch computes nothing, so it needs no cuDNN.
    EXPECT_TRUE(cudaConvStatus(context, gpu, basicConv(0, 3, 4, {5, 5}, {3, 3}), rng).ok());
  }

  Context context;
  Driver* gpu = nullptr;
};

using CudnnMissingConvTest = NoCudnnTest;

TEST_F(CudnnMissingConvTest, EveryCallFailsNamingTheLibraryAndTheVariable) {
  requireEnvironment("libcudnn_missing");
  if (IsSkipped()) return;
  expectNamesResolve(context);
  expectEveryCallFails(StatusCode::kUnavailable, {"ral_conv: cuda: cannot load cuDNN (libcudnn)",
                                                  env("RAL_CUDNN_PATH"), "RAL_CUDNN_PATH"});
}

TEST_F(CudnnMissingConvTest, ArgumentErrorsComeBeforeCudnn) {
  requireEnvironment("libcudnn_missing");
  if (IsSkipped()) return;
  expectArgumentErrorsFirst(context, gpu, [] {});
}

using NotCudnnConvTest = NoCudnnTest;

TEST_F(NotCudnnConvTest, ALibraryWithoutCudnnSymbolsIsRefused) {
  requireEnvironment("libral_sim_cuda");
  if (IsSkipped()) return;
  expectEveryCallFails(StatusCode::kUnavailable, {"cuDNN library '" + env("RAL_CUDNN_PATH") +
                                                      "' has no symbol 'cudnnGetVersion'",
                                                  "RAL_CUDNN_PATH"});
}

using OldCudnnConvTest = NoCudnnTest;

TEST_F(OldCudnnConvTest, CudnnSevenIsRefused) {
  requireEnvironment("libral_fake_cudnn");
  if (IsSkipped()) return;
  if (env("RAL_FAKE_CUDNN_VERSION") != "7605") GTEST_SKIP() << "RAL_FAKE_CUDNN_VERSION is not 7605";
  expectEveryCallFails(StatusCode::kUnavailable,
                       {"is version 7.6.5; RAL needs cuDNN 8 or newer", "RAL_CUDNN_PATH"});
}

// ---- the machine's own cuDNN, if any

using SystemCudnnConvTest = NoCudnnTest;

TEST_F(SystemCudnnConvTest, FailsCleanlyWithoutAGpu) {
  if (!env("RAL_CUDNN_PATH").empty()) GTEST_SKIP() << "RAL_CUDNN_PATH is set (run through ctest)";
  const std::string why = simulatedDriver(context, &gpu);
  if (!why.empty()) GTEST_SKIP() << why;
  // With a real driver, a real cuDNN would work on the real GPU with the simulated device's
  // pointers.
  if (void* real = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL); real != nullptr) {
    dlclose(real);
    GTEST_SKIP() << "this machine has a CUDA driver; the real-GPU tests cover its cuDNN";
  }
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the system cuDNN is not built with sanitizers";
#endif
  expectNamesResolve(context);
  // Either no cuDNN (the load error), or one that loads and then cannot create a handle without
  // a GPU, after building every descriptor of the plan (a real cuDNN checks them: an error from
  // any other call would show here). Every call fails the same way.
  std::mt19937 rng(5);
  std::vector<ConvCase> cases;
  for (ConvCase cs : convShapeCases()) {
    cases.push_back(cs);
    // Channels-last, strided operands, KRSC and copied filters, a residual.
    cs.flags = 4 | 1;
    cs.xs = Store::kEveryOtherChannel;
    cs.ws = Store::kChannelsLast;
    cases.push_back(cs);
    cs.flags = 0;
    cs.xs = Store::kChannelsLast;
    cs.ys = Store::kPadded;
    cs.ws = Store::kColumnMajor;
    cs.bs = Store::kEveryOtherChannel;
    cs.act = 2;
    cs.alpha = -1;
    cs.beta = 1;
    cases.push_back(cs);
  }
  for (ConvCase cs : convTransposedCases()) {
    cases.push_back(cs);
    cs.flags |= 4;
    cs.ys = Store::kEveryOtherChannel;
    cases.push_back(cs);
  }
  ConvCase clip = basicConv(1, 2, 3, {4, 4}, {3, 3});
  clip.act = 2;
  clip.alpha = -1;
  clip.beta = 1;
  clip.flags = 4 | 1;
  cases.push_back(clip);
  clip.act = 4;
  cases.push_back(clip);
  std::string first;
  for (const ConvCase& cs : cases) {
    if (cs.n == 0) continue;
    const Status s = cudaConvStatus(context, gpu, cs, rng);
    EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s << " for " << cs.describe();
    const std::string message(s.message());
    const bool loaded = !contains(message, "cannot load cuDNN");
    if (loaded) {
      EXPECT_TRUE(contains(message, "cudnnCreate failed")) << s << " for " << cs.describe();
      EXPECT_TRUE(contains(message, "libcudnn")) << s;
    } else {
      EXPECT_TRUE(contains(message, "libcudnn.so.9")) << s;
    }
    EXPECT_TRUE(contains(message, "RAL_CUDNN_PATH")) << s;
    // The same error every time (after the configuration each message names).
    const std::string tail = message.substr(message.find(loaded ? "cuDNN " : "cuda: cannot"));
    if (first.empty()) first = tail;
    EXPECT_EQ(tail, first) << cs.describe();
  }
  expectArgumentErrorsFirst(context, gpu, [] {});
}

}  // namespace
}  // namespace ral::cuda::testing
