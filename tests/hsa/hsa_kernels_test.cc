// The "hsa" library kernels (GEMM, RNG, memcpy/memset/transpose through the strided copy) on the
// simulated HSA runtime, against the "cpu" kernels of the same RAL names: GEMM within
// floating-point tolerance, everything else exactly, the Philox RNG bit for bit.
//
// The embedded library (real HSACO from kernels/hsa/device_kernels.py) is what loads: the
// simulation reads each kernel's descriptor from the ELF (kernarg, group and private segment
// sizes) and runs the host function ral_sim_hsa_kernel_<name> below for each dispatch. Those
// functions do what the device code does, work-item by work-item over the dispatched grid, and
// record any launch that does not match the kernel's contract (workgroup shape, grid-stride
// count, workgroup memory), so the host side's argument structs, grids and variant choice are
// all checked. The device code itself is checked by tests/hsa/library_code_objects.py (layouts)
// and runs only on an AMD GPU.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "drivers/hsa/hsa_driver.h"
#include "kernels/hsa/device_args.h"
#include "kernels/hsa/hsa_env.h"
#include "kernels/rng/philox.h"
#include "ral/context.h"
#include "ral/half.h"
#include "ral/memref.h"
#include "ral/name_encoding.h"
#include "ral/registry.h"
#include "tests/sim_hsa/sim_hsa_kernel.h"

namespace emu {

using namespace ral::kernels::hsa;  // NOLINT: the argument structs

std::mutex mutex;
std::vector<std::string> contract_errors;

void contractError(const std::string& what) {
  std::lock_guard<std::mutex> lock(mutex);
  contract_errors.push_back(what);
}

// A linear kernel's launch: 256-wide workgroups in x only, `threads` = the grid's work-items.
bool linearLaunch(const RalSimHsaDispatch* d, int64_t threads, const char* kernel) {
  if (d->workgroup_size[0] != kLinearBlock || d->workgroup_size[1] != 1 ||
      d->workgroup_size[2] != 1 || d->grid_size[1] != 1 || d->grid_size[2] != 1 ||
      d->grid_size[0] % kLinearBlock != 0 || threads != d->grid_size[0]) {
    contractError(std::string(kernel) + ": launch does not match the grid-stride contract");
    return false;
  }
  return true;
}

int64_t offsetOf(const int64_t* sizes, const int64_t* strides, int64_t i) {
  int64_t off = 0;
  for (int d = kMaxRank - 1; d >= 0; --d) {
    off += (i % sizes[d]) * strides[d];
    i /= sizes[d];
  }
  return off;
}

template <typename U>
void copy(const RalSimHsaDispatch* d, const void* kernarg) {
  CopyArgs a;
  std::memcpy(&a, kernarg, sizeof(a));
  if (!linearLaunch(d, a.threads, "ral_strided_copy")) return;
  for (int64_t t = 0; t < static_cast<int64_t>(d->grid_size[0]); ++t)
    for (int64_t i = t; i < a.count; i += a.threads)
      static_cast<U*>(a.dst)[offsetOf(a.sizes, a.dst_strides, i)] =
          static_cast<const U*>(a.src)[offsetOf(a.sizes, a.src_strides, i)];
}

template <typename U>
void fill(const RalSimHsaDispatch* d, const void* kernarg) {
  FillArgs a;
  std::memcpy(&a, kernarg, sizeof(a));
  if (!linearLaunch(d, a.threads, "ral_strided_fill")) return;
  for (int64_t t = 0; t < static_cast<int64_t>(d->grid_size[0]); ++t)
    for (int64_t i = t; i < a.count; i += a.threads)
      static_cast<U*>(a.dst)[offsetOf(a.sizes, a.dst_strides, i)] = static_cast<U>(a.value);
}

template <typename T>
void rng(const RalSimHsaDispatch* d, const void* kernarg) {
  namespace philox = ral::philox;
  RngArgs a;
  std::memcpy(&a, kernarg, sizeof(a));
  if (!linearLaunch(d, a.threads, "ral_rng_uniform")) return;
  constexpr bool kF64 = std::is_same_v<T, double>;
  constexpr int64_t kPer = kF64 ? 2 : 4;
  const auto blocks = static_cast<int64_t>(philox::blocksFor(kF64, static_cast<uint64_t>(a.count)));
  T* out = static_cast<T*>(a.out);
  for (int64_t t = 0; t < static_cast<int64_t>(d->grid_size[0]); ++t)
    for (int64_t b = t; b < blocks; b += a.threads) {
      const philox::Block w = philox::streamBlock(a.seed, a.offset, static_cast<uint64_t>(b));
      for (int64_t j = 0; j < kPer && b * kPer + j < a.count; ++j) {
        T& slot = out[offsetOf(a.sizes, a.strides, b * kPer + j)];
        if constexpr (kF64) {
          slot = a.low + philox::uniform53(w.w[2 * j], w.w[2 * j + 1]) * a.span;
        } else {
          const auto low = static_cast<float>(a.low), span = static_cast<float>(a.span);
          float u = philox::uniform24(w.w[j]);
          if constexpr (std::is_same_v<T, ral::float16>) u = philox::uniform11(w.w[j]);
          if constexpr (std::is_same_v<T, ral::bfloat16>) u = philox::uniform8(w.w[j]);
          const float product = u * span;
          slot = T(low + product);
        }
      }
    }
}

template <typename T>
float wide(T v) {
  return static_cast<float>(v);
}
template <>
float wide(ral::float16 v) {
  return v.toFloat();
}
template <>
float wide(ral::bfloat16 v) {
  return v.toFloat();
}

template <typename T>
void gemm(const RalSimHsaDispatch* d, const void* kernarg) {
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  GemmArgs a;
  std::memcpy(&a, kernarg, sizeof(a));
  const uint32_t tile = kGemmTile;
  if (d->workgroup_size[0] != tile || d->workgroup_size[1] != tile || d->workgroup_size[2] != 1 ||
      d->grid_size[0] % tile != 0 || d->grid_size[1] % tile != 0 || d->grid_size[2] != 1 ||
      d->group_segment_size < 2 * tile * tile * sizeof(Acc)) {
    contractError("ral_gemm: launch does not match the 16x16 tile contract");
    return;
  }
  const auto* pa = static_cast<const T*>(a.a);
  const auto* pb = static_cast<const T*>(a.b);
  auto* pc = static_cast<T*>(a.c);
  for (int64_t row = 0; row < static_cast<int64_t>(d->grid_size[1]); ++row)
    for (int64_t col = 0; col < static_cast<int64_t>(d->grid_size[0]); ++col) {
      if (row >= a.m || col >= a.n) continue;
      Acc acc = 0;
      for (int64_t k = 0; k < a.k; ++k)
        acc += static_cast<Acc>(wide(pa[row * a.a_rs + k * a.a_cs])) *
               static_cast<Acc>(wide(pb[k * a.b_rs + col * a.b_cs]));
      pc[row * a.c_rs + col * a.c_cs] = T(acc);
    }
}

}  // namespace emu

#define RAL_EMULATE(name, fn)                                                       \
  extern "C" __attribute__((visibility("default"))) void ral_sim_hsa_kernel_##name( \
      const RalSimHsaDispatch* d, const void* kernarg) {                            \
    fn(d, kernarg);                                                                 \
  }
RAL_EMULATE(ral_strided_copy_1, emu::copy<uint8_t>)
RAL_EMULATE(ral_strided_copy_2, emu::copy<uint16_t>)
RAL_EMULATE(ral_strided_copy_4, emu::copy<uint32_t>)
RAL_EMULATE(ral_strided_copy_8, emu::copy<uint64_t>)
RAL_EMULATE(ral_strided_fill_1, emu::fill<uint8_t>)
RAL_EMULATE(ral_strided_fill_2, emu::fill<uint16_t>)
RAL_EMULATE(ral_strided_fill_4, emu::fill<uint32_t>)
RAL_EMULATE(ral_strided_fill_8, emu::fill<uint64_t>)
RAL_EMULATE(ral_rng_uniform_f32, emu::rng<float>)
RAL_EMULATE(ral_rng_uniform_f64, emu::rng<double>)
RAL_EMULATE(ral_rng_uniform_f16, emu::rng<ral::float16>)
RAL_EMULATE(ral_rng_uniform_bf16, emu::rng<ral::bfloat16>)
RAL_EMULATE(ral_gemm_f32, emu::gemm<float>)
RAL_EMULATE(ral_gemm_f64, emu::gemm<double>)
RAL_EMULATE(ral_gemm_f16, emu::gemm<ral::float16>)
RAL_EMULATE(ral_gemm_bf16, emu::gemm<ral::bfloat16>)
#undef RAL_EMULATE

namespace ral::hsa {
namespace {

template <typename Fn>
std::string nameOf(const char* target, const char* device) {
  return encodeApiName(target, device, kSignatureOf<Fn>.view());
}

template <typename T>
using Gemm = void (*)(ExecutionContext*, MemRef<T, 2>, MemRef<T, 2>, MemRef<T, 2>, bool, bool);
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

TEST(HsaKernelNamesTest, EveryHsaKernelMirrorsACpuKernel) {
  const std::vector<std::string> names = {
      nameOf<Gemm<float>>("ral_gemm", "hsa"),
      nameOf<Gemm<double>>("ral_gemm", "hsa"),
      nameOf<Gemm<float16>>("ral_gemm", "hsa"),
      nameOf<Gemm<bfloat16>>("ral_gemm", "hsa"),
      nameOf<BatchGemm233<bfloat16>>("ral_batch_gemm", "hsa"),
      nameOf<RngUniform<float, 4>>("ral_rng_uniform", "hsa"),
      nameOf<RngUniform<bfloat16, 1>>("ral_rng_uniform", "hsa"),
      nameOf<Transpose<bool, 6>>("ral_transpose", "hsa"),
      nameOf<Memcpy<int8_t, 6>>("ral_memcpy", "hsa"),
      nameOf<Memset<double, 1>>("ral_memset", "hsa"),
  };
  Context context;
  for (const std::string& hsa : names) {
    std::string cpu = hsa;
    cpu.replace(cpu.find("___hsa___"), 9, "___cpu___");
    EXPECT_TRUE(context.resolve(cpu).ok()) << cpu;
    EXPECT_TRUE(context.resolve(hsa).ok()) << hsa;
  }
}

class HsaKernelsTest : public ::testing::Test {
 public:
  void SetUp() override {
    auto d = context.driver<HsaDriver>();
    ASSERT_TRUE(d.ok()) << d.status();
    gpu = *d;
    std::lock_guard<std::mutex> lock(emu::mutex);
    emu::contract_errors.clear();
  }
  void TearDown() override {
    for (void* p : device_buffers) (void)gpu->deallocate(p);
    std::lock_guard<std::mutex> lock(emu::mutex);
    for (const std::string& e : emu::contract_errors) ADD_FAILURE() << e;
  }

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
  // Calls `name` with argument slots `args` (args[0] is filled with the context); returns the
  // execution's status.
  Status call(const std::string& name, std::vector<void*> args) {
    ExecutionHandle exec = context.acquireExecution();
    void* ctx = exec->abi();
    args.insert(args.begin(), &ctx);
    auto fn = context.resolve(name);
    if (!fn.ok()) return fn.status();
    (*fn)(ctx, args.data());
    return exec->failed() ? exec->status() : Status();
  }
  // A MemRef over `data` with the same view as `m`.
  template <typename T, int N>
  static MemRef<T, N> on(const MemRef<T, N>& m, T* data) {
    MemRef<T, N> r = m;
    r.allocated = r.aligned = data;
    return r;
  }

  Context context;
  HsaDriver* gpu = nullptr;
  std::vector<void*> device_buffers;
  std::mt19937 rng{1234};
};

template <typename T>
float toF(T v) {
  return emu::wide(v);
}

// c = op(a) op(b) on both devices; a, b and c are views into larger buffers (a row pitch of
// size + 3), so no operand is contiguous.
template <typename T>
void gemmCase(HsaKernelsTest& t, int64_t m, int64_t n, int64_t k, bool ta, bool tb, float tol) {
  std::uniform_real_distribution<float> dist(-1, 1);
  const int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
  std::vector<T> a(ar * (ac + 3) + 1), b(br * (bc + 3) + 1), c_cpu(m * (n + 3) + 1);
  for (auto& v : a) v = T(dist(t.rng));
  for (auto& v : b) v = T(dist(t.rng));
  for (auto& v : c_cpu) v = T(7.0f);
  std::vector<T> c_gpu = c_cpu;
  auto ma = makeMemRef<T, 2>(a.data(), {ar, ac});
  ma.strides[0] = ac + 3;
  auto mb = makeMemRef<T, 2>(b.data(), {br, bc});
  mb.strides[0] = bc + 3;
  auto mc = makeMemRef<T, 2>(c_cpu.data(), {m, n});
  mc.strides[0] = n + 3;
  ASSERT_TRUE(t.call(nameOf<Gemm<T>>("ral_gemm", "cpu"), {&ma, &mb, &mc, &ta, &tb}).ok());
  auto ga = HsaKernelsTest::on(ma, t.toDevice(a));
  auto gb = HsaKernelsTest::on(mb, t.toDevice(b));
  T* dc = t.toDevice(c_gpu);
  auto gc = HsaKernelsTest::on(mc, dc);
  Status s = t.call(nameOf<Gemm<T>>("ral_gemm", "hsa"), {&ga, &gb, &gc, &ta, &tb});
  ASSERT_TRUE(s.ok()) << s;
  c_gpu = t.toHost(dc, c_gpu.size());
  for (size_t i = 0; i < c_cpu.size(); ++i)
    ASSERT_NEAR(toF(c_gpu[i]), toF(c_cpu[i]), tol * (1 + std::sqrt(static_cast<float>(k))))
        << "element " << i << " (m=" << m << " n=" << n << " k=" << k << " ta=" << ta
        << " tb=" << tb << ")";
}

TEST_F(HsaKernelsTest, GemmMatchesCpu) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      gemmCase<float>(*this, 65, 33, 47, ta, tb, 1e-5f);
      gemmCase<double>(*this, 17, 40, 9, ta, tb, 1e-12f);
      gemmCase<float16>(*this, 20, 32, 48, ta, tb, 2e-2f);
      gemmCase<bfloat16>(*this, 31, 17, 64, ta, tb, 1e-1f);
    }
  gemmCase<float>(*this, 1, 1, 1, false, false, 1e-6f);
  gemmCase<float>(*this, 1, 70, 3, false, true, 1e-6f);
  gemmCase<float>(*this, 5, 4, 0, false, false, 0.0f);  // k = 0: c = 0
  gemmCase<float>(*this, 0, 4, 3, false, false, 0.0f);  // empty c: nothing launched
}

TEST_F(HsaKernelsTest, BatchGemmWithBroadcastMatchesCpu) {
  const int64_t batch = 3, m = 9, n = 7, k = 5;
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> a(m * k), b(batch * k * n), c_cpu(batch * m * n), c_gpu(batch * m * n);
  for (auto& v : a) v = dist(rng);
  for (auto& v : b) v = dist(rng);
  bool ta = false, tb = true;
  auto ma = makeMemRef<float, 2>(a.data(), {m, k});
  auto mb = makeMemRef<float, 3>(b.data(), {batch, n, k});
  auto mc = makeMemRef<float, 3>(c_cpu.data(), {batch, m, n});
  ASSERT_TRUE(
      call(nameOf<BatchGemm233<float>>("ral_batch_gemm", "cpu"), {&ma, &mb, &mc, &ta, &tb}).ok());
  auto ga = on(ma, toDevice(a));
  auto gb = on(mb, toDevice(b));
  float* dc = toDevice(c_gpu);
  auto gc = on(mc, dc);
  Status s = call(nameOf<BatchGemm233<float>>("ral_batch_gemm", "hsa"), {&ga, &gb, &gc, &ta, &tb});
  ASSERT_TRUE(s.ok()) << s;
  c_gpu = toHost(dc, c_gpu.size());
  for (size_t i = 0; i < c_cpu.size(); ++i) ASSERT_NEAR(c_gpu[i], c_cpu[i], 1e-5f) << i;
}

template <typename T>
void rngCase(HsaKernelsTest& t, int64_t rows, int64_t cols, T low, T high) {
  std::vector<T> cpu(std::max<int64_t>(rows * cols * 2, 1), T(0.0f));
  std::vector<T> gpu_out = cpu;
  // Strided: every other column of a wider buffer.
  auto mc = makeMemRef<T, 2>(cpu.data(), {rows, cols});
  mc.strides[0] = cols * 2;
  mc.strides[1] = 2;
  uint64_t seed = 0x1234567890abcdefull, offset = 77;
  ASSERT_TRUE(
      t.call(nameOf<RngUniform<T, 2>>("ral_rng_uniform", "cpu"), {&mc, &seed, &offset, &low, &high})
          .ok());
  T* dev = t.toDevice(gpu_out);
  auto gc = HsaKernelsTest::on(mc, dev);
  Status s = t.call(nameOf<RngUniform<T, 2>>("ral_rng_uniform", "hsa"),
                    {&gc, &seed, &offset, &low, &high});
  ASSERT_TRUE(s.ok()) << s;
  gpu_out = t.toHost(dev, gpu_out.size());
  ASSERT_EQ(std::memcmp(cpu.data(), gpu_out.data(), cpu.size() * sizeof(T)), 0)
      << "the HSA Philox stream differs from the CPU's (" << rows << "x" << cols << ")";
}

TEST_F(HsaKernelsTest, RngUniformIsBitIdenticalToCpu) {
  rngCase<float>(*this, 37, 29, -2.5f, 7.0f);
  rngCase<double>(*this, 37, 29, -1.0, 3.0);
  rngCase<float16>(*this, 37, 29, float16(0.0f), float16(1.0f));
  rngCase<bfloat16>(*this, 37, 29, bfloat16(-4.0f), bfloat16(4.0f));
  rngCase<float>(*this, 1, 1, 0.0f, 1.0f);
  rngCase<double>(*this, 1, 3, 0.0, 1.0);  // an odd count of f64: half a Philox block
  rngCase<float>(*this, 0, 5, 0.0f, 1.0f);
  rngCase<float>(*this, 300, 300, 0.0f, 1.0f);  // more blocks than one grid-stride pass
}

TEST_F(HsaKernelsTest, TransposeMemcpyMemsetMatchCpu) {
  const int64_t d0 = 4, d1 = 5, d2 = 6;
  std::vector<int32_t> in(d0 * d1 * d2);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int32_t>(i * 3 + 1);
  std::vector<int64_t> perm = {2, 0, 1};
  std::vector<int32_t> out_cpu(in.size()), out_gpu(in.size());
  auto mi = makeMemRef<int32_t, 3>(in.data(), {d0, d1, d2});
  auto mp = makeMemRef<int64_t, 1>(perm.data(), {3});
  auto mo = makeMemRef<int32_t, 3>(out_cpu.data(), {d2, d0, d1});
  ASSERT_TRUE(call(nameOf<Transpose<int32_t, 3>>("ral_transpose", "cpu"), {&mi, &mp, &mo}).ok());
  auto gi = on(mi, toDevice(in));
  int32_t* dout = toDevice(out_gpu);
  auto go = on(mo, dout);
  // The permutation in host memory, then in device memory.
  Status s = call(nameOf<Transpose<int32_t, 3>>("ral_transpose", "hsa"), {&gi, &mp, &go});
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(toHost(dout, in.size()), out_cpu);
  std::fill(out_gpu.begin(), out_gpu.end(), 0);
  dout = toDevice(out_gpu);
  go = on(mo, dout);
  auto gp = on(mp, toDevice(perm));
  s = call(nameOf<Transpose<int32_t, 3>>("ral_transpose", "hsa"), {&gi, &gp, &go});
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(toHost(dout, in.size()), out_cpu);

  // A strided memcpy (a transposed view into a dense one) of every element size, and a strided
  // memset.
  auto src = makeMemRef<int32_t, 2>(in.data(), {d1 * d2, d0});
  src.strides[0] = 1;
  src.strides[1] = d1 * d2;
  std::vector<int32_t> dense(in.size());
  int32_t* ddense = toDevice(dense);
  auto gsrc = on(src, toDevice(in));
  auto dst = makeMemRef<int32_t, 2>(ddense, {d1 * d2, d0});
  s = call(nameOf<Memcpy<int32_t, 2>>("ral_memcpy", "hsa"), {&gsrc, &dst});
  ASSERT_TRUE(s.ok()) << s;
  auto cdst = on(dst, dense.data());
  ASSERT_TRUE(call(nameOf<Memcpy<int32_t, 2>>("ral_memcpy", "cpu"), {&src, &cdst}).ok());
  EXPECT_EQ(toHost(ddense, dense.size()), dense);
  int32_t value = -7;
  auto every_other = makeMemRef<int32_t, 1>(ddense, {static_cast<int64_t>(dense.size() / 2)});
  every_other.strides[0] = 2;
  s = call(nameOf<Memset<int32_t, 1>>("ral_memset", "hsa"), {&every_other, &value});
  ASSERT_TRUE(s.ok()) << s;
  auto cpu_every_other = on(every_other, dense.data());
  ASSERT_TRUE(
      call(nameOf<Memset<int32_t, 1>>("ral_memset", "cpu"), {&cpu_every_other, &value}).ok());
  EXPECT_EQ(toHost(ddense, dense.size()), dense);
}

template <typename T>
void stridedCopyAndFillCase(HsaKernelsTest& t, T fill_value) {
  // A rank-4 view with a size-1 dim and a reversed-order (column-major) source.
  const int64_t s0 = 3, s1 = 1, s2 = 4, s3 = 5;
  std::vector<T> in(s0 * s1 * s2 * s3), out_cpu(in.size()), out_gpu(in.size());
  for (size_t i = 0; i < in.size(); ++i)
    std::memset(static_cast<void*>(&in[i]), static_cast<int>(i * 7 + 1), sizeof(T));
  auto src = makeMemRef<T, 4>(in.data(), {s0, s1, s2, s3});
  src.strides[3] = 1 * s2 * s0;
  src.strides[2] = s0;
  src.strides[1] = 1;
  src.strides[0] = 1;
  auto dst = makeMemRef<T, 4>(out_cpu.data(), {s0, s1, s2, s3});
  ASSERT_TRUE(t.call(nameOf<Memcpy<T, 4>>("ral_memcpy", "cpu"), {&src, &dst}).ok());
  auto gsrc = HsaKernelsTest::on(src, t.toDevice(in));
  T* dout = t.toDevice(out_gpu);
  auto gdst = HsaKernelsTest::on(dst, dout);
  Status s = t.call(nameOf<Memcpy<T, 4>>("ral_memcpy", "hsa"), {&gsrc, &gdst});
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(std::memcmp(t.toHost(dout, in.size()).data(), out_cpu.data(), in.size() * sizeof(T)), 0)
      << sizeof(T) << "-byte copy";
  // A fill of the transposed view.
  auto fill_cpu = HsaKernelsTest::on(src, out_cpu.data());
  auto fill_gpu = HsaKernelsTest::on(src, dout);
  fill_cpu.strides[2] = fill_gpu.strides[2] = 2 * s0;  // every other row of s2
  fill_cpu.sizes[2] = fill_gpu.sizes[2] = 2;
  ASSERT_TRUE(t.call(nameOf<Memset<T, 4>>("ral_memset", "cpu"), {&fill_cpu, &fill_value}).ok());
  s = t.call(nameOf<Memset<T, 4>>("ral_memset", "hsa"), {&fill_gpu, &fill_value});
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(std::memcmp(t.toHost(dout, in.size()).data(), out_cpu.data(), in.size() * sizeof(T)), 0)
      << sizeof(T) << "-byte fill";
}

TEST_F(HsaKernelsTest, StridedCopiesAndFillsOfEveryElementSize) {
  stridedCopyAndFillCase<int8_t>(*this, -3);
  stridedCopyAndFillCase<float16>(*this, float16(1.5f));
  stridedCopyAndFillCase<float>(*this, -0.25f);
  stridedCopyAndFillCase<double>(*this, 1e300);
}

TEST_F(HsaKernelsTest, BadArgumentsAreErrorsAndTheNextCallWorks) {
  std::vector<float> a(6, 1.0f), c(4, 0.0f);
  auto ga = makeMemRef<float, 2>(toDevice(a), {2, 3});
  float* dc = toDevice(c);
  auto gc = makeMemRef<float, 2>(dc, {2, 2});
  bool f = false;
  // op(a) 2x3 times op(b) 2x3: the shapes do not chain.
  Status s = call(nameOf<Gemm<float>>("ral_gemm", "hsa"), {&ga, &ga, &gc, &f, &f});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
  // c overlapping an input.
  auto overlap = makeMemRef<float, 2>(ga.data(), {2, 2});
  auto gb = makeMemRef<float, 2>(ga.data(), {3, 2});
  s = call(nameOf<Gemm<float>>("ral_gemm", "hsa"), {&ga, &gb, &overlap, &f, &f});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("overlaps"), std::string::npos) << s;
  // Then a good call.
  s = call(nameOf<Gemm<float>>("ral_gemm", "hsa"), {&ga, &gb, &gc, &f, &f});
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(toHost(dc, 4), std::vector<float>(4, 3.0f));
}

// Run with RAL_SIM_HSA_ISA naming a processor the library was not built for (a ctest of its
// own): the kernels fail with an error naming the processors the library has.
TEST_F(HsaKernelsTest, ALibraryWithoutTheGpusProcessorIsAClearError) {
  const char* isa = std::getenv(RAL_SIM_HSA_ISA_ENV);
  if (isa == nullptr || std::string(isa).find("gfx1030") == std::string::npos)
    GTEST_SKIP() << "runs with " << RAL_SIM_HSA_ISA_ENV << "=amdgcn-amd-amdhsa--gfx1030";
  std::vector<float> a(4, 1.0f);
  auto ga = makeMemRef<float, 2>(toDevice(a), {2, 2});
  auto gc = makeMemRef<float, 2>(toDevice(a), {2, 2});
  bool f = false;
  Status s = call(nameOf<Gemm<float>>("ral_gemm", "hsa"), {&ga, &ga, &gc, &f, &f});
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s;
  for (const auto& v : kernels::hsa::kernelLibrary())
    EXPECT_NE(s.message().find(v.arch), std::string::npos) << s;
  EXPECT_NE(s.message().find("gfx1030"), std::string::npos) << s;
}

}  // namespace
}  // namespace ral::hsa
