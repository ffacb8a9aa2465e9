// The "cuda" kernels against the "cpu" kernels of the same RAL names: GEMM and convolution (on
// cuDNN) within floating-point tolerance, everything else exactly, and the Philox RNG bit for
// bit. Needs a GPU (and cuDNN for the convolutions); skips (with the reason) elsewhere. Also
// checks, everywhere, that every CUDA kernel name is registered with the CPU kernel's signature.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "conv_test_util.h"
#include "cuda_test_util.h"
#include "drivers/cuda/cuda_driver.h"
#include "ral/context.h"
#include "ral/half.h"
#include "ral/memref.h"
#include "ral/name_encoding.h"
#include "ral/registry.h"

namespace ral::cuda {
namespace {

template <typename Fn>
std::string nameOf(const char* target, const char* device) {
  return encodeApiName(target, device, kSignatureOf<Fn>.view());
}

template <typename T>
using Gemm = void (*)(ExecutionContext*, MemRef<T, 2>, MemRef<T, 2>, MemRef<T, 2>, bool, bool);
template <typename T>
using BatchGemm333 = void (*)(ExecutionContext*, MemRef<T, 3>, MemRef<T, 3>, MemRef<T, 3>, bool,
                              bool);
template <typename T>
using BatchGemm233 = void (*)(ExecutionContext*, MemRef<T, 2>, MemRef<T, 3>, MemRef<T, 3>, bool,
                              bool);
template <typename T, int N>
using RngUniform = void (*)(ExecutionContext*, MemRef<T, N>, uint64_t, uint64_t, T, T);
template <typename T, int N>
using Transpose = void (*)(ExecutionContext*, MemRef<T, N>, MemRef<int64_t, 1>, MemRef<T, N>);
template <typename T, int N>
using Memcpy = void (*)(ExecutionContext*, MemRef<T, N>, MemRef<T, N>);
template <typename T, int N>
using Memset = void (*)(ExecutionContext*, MemRef<T, N>, T);
template <typename T, int N>
using TopK = void (*)(ExecutionContext*, MemRef<T, N>, MemRef<T, N>, MemRef<int64_t, N>, int64_t,
                      bool);
template <typename T, int N>
using Sort = void (*)(ExecutionContext*, MemRef<T, N>, MemRef<T, N>, MemRef<int64_t, N>, bool);

TEST(CudaKernelNamesTest, EveryCudaKernelMirrorsACpuKernel) {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {nameOf<Gemm<float>>("ral_gemm", "cpu"), nameOf<Gemm<float>>("ral_gemm", "cuda")},
      {nameOf<Gemm<float16>>("ral_gemm", "cpu"), nameOf<Gemm<float16>>("ral_gemm", "cuda")},
      {nameOf<Gemm<bfloat16>>("ral_gemm", "cpu"), nameOf<Gemm<bfloat16>>("ral_gemm", "cuda")},
      {nameOf<BatchGemm333<float>>("ral_batch_gemm", "cpu"),
       nameOf<BatchGemm333<float>>("ral_batch_gemm", "cuda")},
      {nameOf<BatchGemm233<bfloat16>>("ral_batch_gemm", "cpu"),
       nameOf<BatchGemm233<bfloat16>>("ral_batch_gemm", "cuda")},
      {nameOf<RngUniform<float, 2>>("ral_rng_uniform", "cpu"),
       nameOf<RngUniform<float, 2>>("ral_rng_uniform", "cuda")},
      {nameOf<RngUniform<float16, 4>>("ral_rng_uniform", "cpu"),
       nameOf<RngUniform<float16, 4>>("ral_rng_uniform", "cuda")},
      {nameOf<Transpose<bool, 6>>("ral_transpose", "cpu"),
       nameOf<Transpose<bool, 6>>("ral_transpose", "cuda")},
      {nameOf<Memcpy<int8_t, 6>>("ral_memcpy", "cpu"),
       nameOf<Memcpy<int8_t, 6>>("ral_memcpy", "cuda")},
      {nameOf<Memset<double, 1>>("ral_memset", "cpu"),
       nameOf<Memset<double, 1>>("ral_memset", "cuda")},
      {nameOf<TopK<int64_t, 3>>("ral_topk", "cpu"), nameOf<TopK<int64_t, 3>>("ral_topk", "cuda")},
      {nameOf<Sort<float, 1>>("ral_sort", "cpu"), nameOf<Sort<float, 1>>("ral_sort", "cuda")},
      {testing::convName<3>("cpu"), testing::convName<3>("cuda")},
      {testing::convName<4>("cpu"), testing::convName<4>("cuda")},
      {testing::convName<5>("cpu"), testing::convName<5>("cuda")},
  };
  Context context;
  for (const auto& [cpu, cuda] : pairs) {
    EXPECT_TRUE(context.resolve(cpu).ok()) << cpu;
    EXPECT_TRUE(context.resolve(cuda).ok()) << cuda;
  }
}

// Runs kernels on both devices with host-side buffers mirrored to the GPU.
class CudaKernelsTest : public ::testing::Test {
 public:
  void SetUp() override {
    RAL_REQUIRE_CUDA_DEVICE();
    auto d = context.driver<CudaDriver>();
    ASSERT_TRUE(d.ok()) << d.status();
    gpu = *d;
  }
  void TearDown() override {
    for (void* p : device_buffers) (void)gpu->deallocate(p);
  }

  // A device copy of `host`.
  template <typename T>
  T* toDevice(const std::vector<T>& host) {
    auto p = gpu->allocate(std::max<size_t>(1, host.size() * sizeof(T)));
    EXPECT_TRUE(p.ok()) << p.status();
    device_buffers.push_back(*p);
    EXPECT_TRUE(gpu->copy(*p, host.data(), host.size() * sizeof(T), CopyKind::kHostToDevice).ok());
    return static_cast<T*>(*p);
  }
  template <typename T>
  std::vector<T> toHost(const T* dev, size_t n) {
    std::vector<T> out(n);
    EXPECT_TRUE(gpu->copy(out.data(), dev, n * sizeof(T), CopyKind::kDeviceToHost).ok());
    EXPECT_TRUE(gpu->synchronize().ok());
    return out;
  }
  // Calls `name` with argument slots `args` (args[0] is filled with the context).
  void call(const std::string& name, std::vector<void*> args) {
    ExecutionHandle exec = context.acquireExecution();
    void* ctx = exec->abi();
    args.insert(args.begin(), &ctx);
    auto fn = context.resolve(name);
    ASSERT_TRUE(fn.ok()) << fn.status();
    (*fn)(ctx, args.data());
    ASSERT_FALSE(exec->failed()) << name << ": " << exec->status();
  }

  Context context;
  CudaDriver* gpu = nullptr;
  std::vector<void*> device_buffers;
  std::mt19937 rng{1234};
};

template <typename T>
float toF(T v) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return v.toFloat();
  } else {
    return static_cast<float>(v);
  }
}

template <typename T>
void gemmCase(CudaKernelsTest& t, int64_t m, int64_t n, int64_t k, bool ta, bool tb, float tol) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<T> a(m * k), b(k * n), c_cpu(m * n), c_gpu(m * n);
  for (auto& v : a) v = T(dist(t.rng));
  for (auto& v : b) v = T(dist(t.rng));
  auto ma = makeMemRef<T, 2>(a.data(), {ta ? k : m, ta ? m : k});
  auto mb = makeMemRef<T, 2>(b.data(), {tb ? n : k, tb ? k : n});
  auto mc = makeMemRef<T, 2>(c_cpu.data(), {m, n});
  t.call(nameOf<Gemm<T>>("ral_gemm", "cpu"), {&ma, &mb, &mc, &ta, &tb});
  T* da = t.toDevice(a);
  T* db = t.toDevice(b);
  T* dc = t.toDevice(c_gpu);
  auto ga = makeMemRef<T, 2>(da, {ma.sizes[0], ma.sizes[1]});
  auto gb = makeMemRef<T, 2>(db, {mb.sizes[0], mb.sizes[1]});
  auto gc = makeMemRef<T, 2>(dc, {m, n});
  t.call(nameOf<Gemm<T>>("ral_gemm", "cuda"), {&ga, &gb, &gc, &ta, &tb});
  c_gpu = t.toHost(dc, c_gpu.size());
  for (size_t i = 0; i < c_cpu.size(); ++i)
    ASSERT_NEAR(toF(c_gpu[i]), toF(c_cpu[i]), tol * (1 + std::sqrt(static_cast<float>(k))))
        << "element " << i << " (m=" << m << " n=" << n << " k=" << k << " ta=" << ta
        << " tb=" << tb << ")";
}

TEST_F(CudaKernelsTest, GemmMatchesCpu) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      gemmCase<float>(*this, 65, 33, 47, ta, tb, 1e-4f);
      gemmCase<float16>(*this, 64, 32, 48, ta, tb, 2e-2f);
      gemmCase<bfloat16>(*this, 31, 17, 64, ta, tb, 1e-1f);
    }
}

TEST_F(CudaKernelsTest, BatchGemmWithBroadcastMatchesCpu) {
  const int64_t batch = 3, m = 9, n = 7, k = 5;
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> a(m * k), b(batch * k * n), c_cpu(batch * m * n), c_gpu(batch * m * n);
  for (auto& v : a) v = dist(rng);
  for (auto& v : b) v = dist(rng);
  bool ta = false, tb = false;
  auto ma = makeMemRef<float, 2>(a.data(), {m, k});
  auto mb = makeMemRef<float, 3>(b.data(), {batch, k, n});
  auto mc = makeMemRef<float, 3>(c_cpu.data(), {batch, m, n});
  call(nameOf<BatchGemm233<float>>("ral_batch_gemm", "cpu"), {&ma, &mb, &mc, &ta, &tb});
  auto ga = makeMemRef<float, 2>(toDevice(a), {m, k});
  auto gb = makeMemRef<float, 3>(toDevice(b), {batch, k, n});
  float* dc = toDevice(c_gpu);
  auto gc = makeMemRef<float, 3>(dc, {batch, m, n});
  call(nameOf<BatchGemm233<float>>("ral_batch_gemm", "cuda"), {&ga, &gb, &gc, &ta, &tb});
  c_gpu = toHost(dc, c_gpu.size());
  for (size_t i = 0; i < c_cpu.size(); ++i) ASSERT_NEAR(c_gpu[i], c_cpu[i], 1e-4f) << i;
}

template <typename T>
void rngCase(CudaKernelsTest& t, T low, T high) {
  const int64_t rows = 37, cols = 29;
  std::vector<T> cpu(rows * cols * 2), gpu_out(rows * cols * 2);
  // Strided: every other column of a wider buffer.
  auto mc = makeMemRef<T, 2>(cpu.data(), {rows, cols});
  mc.strides[0] = cols * 2;
  mc.strides[1] = 2;
  uint64_t seed = 0x1234567890abcdefull, offset = 77;
  t.call(nameOf<RngUniform<T, 2>>("ral_rng_uniform", "cpu"), {&mc, &seed, &offset, &low, &high});
  T* dev = t.toDevice(gpu_out);
  auto gc = mc;
  gc.allocated = gc.aligned = dev;
  t.call(nameOf<RngUniform<T, 2>>("ral_rng_uniform", "cuda"), {&gc, &seed, &offset, &low, &high});
  gpu_out = t.toHost(dev, gpu_out.size());
  ASSERT_EQ(std::memcmp(cpu.data(), gpu_out.data(), cpu.size() * sizeof(T)), 0)
      << "the CUDA Philox stream differs from the CPU's";
}

TEST_F(CudaKernelsTest, RngUniformIsBitIdenticalToCpu) {
  rngCase<float>(*this, -2.5f, 7.0f);
  rngCase<double>(*this, -1.0, 3.0);
  rngCase<float16>(*this, float16(0.0f), float16(1.0f));
  rngCase<bfloat16>(*this, bfloat16(-4.0f), bfloat16(4.0f));
}

TEST_F(CudaKernelsTest, TransposeMemcpyMemsetMatchCpu) {
  const int64_t d0 = 4, d1 = 5, d2 = 6;
  std::vector<int32_t> in(d0 * d1 * d2);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int32_t>(i * 3 + 1);
  std::vector<int64_t> perm = {2, 0, 1};
  std::vector<int32_t> out_cpu(in.size()), out_gpu(in.size());
  auto mi = makeMemRef<int32_t, 3>(in.data(), {d0, d1, d2});
  auto mp = makeMemRef<int64_t, 1>(perm.data(), {3});
  auto mo = makeMemRef<int32_t, 3>(out_cpu.data(), {d2, d0, d1});
  call(nameOf<Transpose<int32_t, 3>>("ral_transpose", "cpu"), {&mi, &mp, &mo});
  auto gi = makeMemRef<int32_t, 3>(toDevice(in), {d0, d1, d2});
  int32_t* dout = toDevice(out_gpu);
  auto go = makeMemRef<int32_t, 3>(dout, {d2, d0, d1});
  call(nameOf<Transpose<int32_t, 3>>("ral_transpose", "cuda"), {&gi, &mp, &go});
  // The permutation may also live on the device.
  auto gp = makeMemRef<int64_t, 1>(toDevice(perm), {3});
  call(nameOf<Transpose<int32_t, 3>>("ral_transpose", "cuda"), {&gi, &gp, &go});
  EXPECT_EQ(toHost(dout, in.size()), out_cpu);

  // Strided memcpy (a transposed view into a dense one) and a strided memset.
  auto src = makeMemRef<int32_t, 2>(toDevice(in), {d1 * d2, d0});
  src.strides[0] = 1;
  src.strides[1] = d1 * d2;
  std::vector<int32_t> dense(in.size());
  int32_t* ddense = toDevice(dense);
  auto dst = makeMemRef<int32_t, 2>(ddense, {d1 * d2, d0});
  call(nameOf<Memcpy<int32_t, 2>>("ral_memcpy", "cuda"), {&src, &dst});
  auto csrc = src;
  csrc.allocated = csrc.aligned = in.data();
  auto cdst = makeMemRef<int32_t, 2>(dense.data(), {d1 * d2, d0});
  call(nameOf<Memcpy<int32_t, 2>>("ral_memcpy", "cpu"), {&csrc, &cdst});
  EXPECT_EQ(toHost(ddense, dense.size()), dense);
  int32_t value = -7;
  auto every_other = makeMemRef<int32_t, 1>(ddense, {static_cast<int64_t>(dense.size() / 2)});
  every_other.strides[0] = 2;
  call(nameOf<Memset<int32_t, 1>>("ral_memset", "cuda"), {&every_other, &value});
  auto cpu_every_other = every_other;
  cpu_every_other.allocated = cpu_every_other.aligned = dense.data();
  call(nameOf<Memset<int32_t, 1>>("ral_memset", "cpu"), {&cpu_every_other, &value});
  EXPECT_EQ(toHost(ddense, dense.size()), dense);
}

template <typename T>
void orderCase(CudaKernelsTest& t, int64_t rows, int64_t n, int64_t k, bool largest) {
  std::vector<T> in(rows * n);
  std::uniform_int_distribution<int> small(0, 9);  // many ties
  for (auto& v : in) v = static_cast<T>(small(t.rng));
  if constexpr (std::is_floating_point_v<T>) in[1] = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> v_cpu(rows * k), v_gpu(rows * k);
  std::vector<int64_t> i_cpu(rows * k), i_gpu(rows * k);
  auto mi = makeMemRef<T, 2>(in.data(), {rows, n});
  auto mv = makeMemRef<T, 2>(v_cpu.data(), {rows, k});
  auto mx = makeMemRef<int64_t, 2>(i_cpu.data(), {rows, k});
  T* dv = t.toDevice(v_gpu);
  int64_t* dx = t.toDevice(i_gpu);
  auto gi = makeMemRef<T, 2>(t.toDevice(in), {rows, n});
  auto gv = makeMemRef<T, 2>(dv, {rows, k});
  auto gx = makeMemRef<int64_t, 2>(dx, {rows, k});
  if (k == n) {
    t.call(nameOf<Sort<T, 2>>("ral_sort", "cpu"), {&mi, &mv, &mx, &largest});
    t.call(nameOf<Sort<T, 2>>("ral_sort", "cuda"), {&gi, &gv, &gx, &largest});
  } else {
    t.call(nameOf<TopK<T, 2>>("ral_topk", "cpu"), {&mi, &mv, &mx, &k, &largest});
    t.call(nameOf<TopK<T, 2>>("ral_topk", "cuda"), {&gi, &gv, &gx, &k, &largest});
  }
  v_gpu = t.toHost(dv, v_gpu.size());
  i_gpu = t.toHost(dx, i_gpu.size());
  EXPECT_EQ(i_gpu, i_cpu);
  EXPECT_EQ(std::memcmp(v_gpu.data(), v_cpu.data(), v_cpu.size() * sizeof(T)), 0);
}

TEST_F(CudaKernelsTest, TopkAndSortMatchCpuIncludingTiesAndNaN) {
  for (bool largest : {false, true}) {
    orderCase<float>(*this, 7, 100, 100, largest);
    orderCase<float>(*this, 7, 100, 13, largest);
    orderCase<double>(*this, 3, 1000, 5, largest);
    orderCase<int32_t>(*this, 5, 33, 33, largest);
    orderCase<int64_t>(*this, 2, 4097, 4097, largest);
  }
}

// ral_conv on cuDNN against oneDNN on the CPU: every shape family, layout, activation, residual
// and transposed case of the simulated-driver tests (cuda_conv_test.cc), on the real library.
TEST_F(CudaKernelsTest, ConvMatchesCpu) {
  using testing::ConvCase;
  using testing::Store;
  {
    const Status probe =
        testing::cudaConvStatus(context, gpu, testing::basicConv(1, 1, 1, {1, 1}, {1, 1}), rng);
    if (!probe.ok() && probe.message().find("cuDNN") != std::string_view::npos)
      GTEST_SKIP() << "no usable cuDNN: " << probe;
    ASSERT_TRUE(probe.ok()) << probe;
  }
  for (ConvCase cs : testing::convShapeCases()) {
    for (int64_t flags : {0, 1, 4, 5}) {
      cs.flags = flags;
      cs.act = flags & 1 ? 1 : 0;
      testing::expectCudaMatchesCpu(context, gpu, cs, rng);
    }
    cs.flags = 4;
    cs.xs = Store::kEveryOtherChannel;
    cs.ys = Store::kPadded;
    cs.ws = Store::kChannelsLast;
    testing::expectCudaMatchesCpu(context, gpu, cs, rng);
    cs.flags = 0;
    cs.xs = Store::kColumnMajor;
    cs.ws = Store::kColumnMajor;
    cs.bs = Store::kEveryOtherChannel;
    testing::expectCudaMatchesCpu(context, gpu, cs, rng);
  }
  ConvCase act = testing::basicConv(2, 6, 4, {6, 5}, {3, 3});
  act.groups = 2;
  act.pb = {1, 0};
  act.pe = {1, 1};
  for (int64_t flags : {0, 1, 4, 5}) {
    for (int a : {0, 1, 2, 3, 4}) {
      act.flags = flags;
      act.act = a;
      act.alpha = a == 2 && flags == 0 ? 0.0f : -0.3f;  // clip to [0, b] is CLIPPED_RELU
      act.beta = 0.4f;
      testing::expectCudaMatchesCpu(context, gpu, act, rng);
    }
  }
  for (ConvCase cs : testing::convTransposedCases()) {
    testing::expectCudaMatchesCpu(context, gpu, cs, rng);
    cs.flags = 8 | 4 | 1;
    cs.act = 4;
    testing::expectCudaMatchesCpu(context, gpu, cs, rng);
  }
  ConvCase big = testing::basicConv(4, 64, 64, {28, 28}, {3, 3});  // cuDNN's fast kernels
  big.pb = big.pe = {1, 1};
  for (int64_t flags : {0, 4, 5}) {
    big.flags = flags;
    big.act = 1;
    testing::expectCudaMatchesCpu(context, gpu, big, rng);
  }
}

}  // namespace
}  // namespace ral::cuda
