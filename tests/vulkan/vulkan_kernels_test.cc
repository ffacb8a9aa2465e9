// The Vulkan kernels against the CPU kernels of the same names on random inputs: ral_gemm,
// ral_transpose, ral_memcpy, ral_memset (exact), ral_rng_uniform (bit-identical).
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "drivers/vulkan/vulkan_driver.h"
#include "ral/api.h"
#include "ral/api_call.h"
#include "ral/context.h"
#include "ral/half.h"
#include "tests/vulkan/test_support.h"

namespace ral::vulkan {
namespace {

template <typename... A>
Status call(Context& context, const std::string& target, const char* device, A... args) {
  auto exec = context.acquireExecution();
  const std::string name = apiNameFor<A...>(target, device);
  callApi(exec->abi(), name.c_str(), args...);
  return exec->status();
}

enum class Layout { kDense, kPadded, kColumnMajor };

// A tensor in host memory and its copy in Vulkan device memory, with the same layout (padded:
// every dim one longer and a start offset; column-major: dims stored in reverse).
template <typename T, int N>
struct Tensor {
  VulkanDriver* driver;
  std::vector<unsigned char> host;
  void* device = nullptr;
  MemRef<T, N> host_view{}, device_view{};

  Tensor(VulkanDriver* d, const std::array<int64_t, N>& sizes, Layout layout) : driver(d) {
    const int64_t pad = layout == Layout::kPadded ? 1 : 0;
    int64_t running = 1;
    for (int k = 0; k < N; ++k) {
      const int dim = layout == Layout::kColumnMajor ? k : N - 1 - k;
      host_view.sizes[dim] = sizes[dim];
      host_view.strides[dim] = running;
      running *= sizes[dim] + pad;
    }
    host_view.offset = layout == Layout::kPadded ? 3 : 0;
    const size_t bytes = sizeof(T) * static_cast<size_t>(running + host_view.offset + 1);
    host.assign(bytes, 0);
    host_view.allocated = host_view.aligned = reinterpret_cast<T*>(host.data());
    device = *driver->allocate(bytes);
    device_view = host_view;
    device_view.allocated = device_view.aligned = static_cast<T*>(device);
  }
  ~Tensor() { EXPECT_TRUE(driver->deallocate(device).ok()); }
  void randomize(std::mt19937& rng) {
    for (auto& b : host) b = static_cast<unsigned char>(rng());
    if constexpr (std::is_same_v<T, bool>) {
      for (auto& b : host) b &= 1;
    } else if constexpr (std::is_floating_point_v<T>) {
      std::uniform_real_distribution<T> dist(-1, 1);
      T* p = reinterpret_cast<T*>(host.data());
      for (size_t i = 0; i < host.size() / sizeof(T); ++i) p[i] = dist(rng);
    }
  }
  void upload() {
    ASSERT_TRUE(driver->copy(device, host.data(), host.size(), CopyKind::kHostToDevice).ok());
  }
  std::vector<unsigned char> download() const {
    std::vector<unsigned char> out(host.size());
    EXPECT_TRUE(driver->copy(out.data(), device, out.size(), CopyKind::kDeviceToHost).ok());
    return out;
  }
};

class VulkanKernelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = context_.driver<VulkanDriver>();
    ASSERT_TRUE(d.ok()) << d.status();
    driver_ = *d;
  }
  Context context_;
  VulkanDriver* driver_ = nullptr;
  std::mt19937 rng_{1234};
};

TEST_F(VulkanKernelsTest, GemmMatchesCpu) {
  struct Case {
    int64_t m, n, k;
    bool ta, tb;
    Layout layout;
  };
  const Case cases[] = {
      {1, 1, 1, false, false, Layout::kDense},      {64, 64, 64, false, false, Layout::kDense},
      {65, 70, 33, false, false, Layout::kDense},   {100, 37, 129, true, false, Layout::kDense},
      {31, 96, 17, false, true, Layout::kPadded},   {50, 50, 80, true, true, Layout::kColumnMajor},
      {128, 3, 200, false, false, Layout::kPadded}, {7, 200, 0, false, false, Layout::kDense},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.m << "x" << c.n << "x" << c.k << " ta " << c.ta << " tb "
                                      << c.tb << " layout " << static_cast<int>(c.layout));
    Tensor<float, 2> a(driver_, c.ta ? std::array<int64_t, 2>{c.k, c.m} : std::array{c.m, c.k},
                       c.layout);
    Tensor<float, 2> b(driver_, c.tb ? std::array<int64_t, 2>{c.n, c.k} : std::array{c.k, c.n},
                       c.layout);
    Tensor<float, 2> out(driver_, {c.m, c.n}, c.layout);
    a.randomize(rng_);
    b.randomize(rng_);
    out.randomize(rng_);
    a.upload();
    b.upload();
    out.upload();
    ASSERT_TRUE(
        call(context_, "ral_gemm", "cpu", a.host_view, b.host_view, out.host_view, c.ta, c.tb)
            .ok());
    Status s = call(context_, "ral_gemm", "vulkan", a.device_view, b.device_view, out.device_view,
                    c.ta, c.tb);
    ASSERT_TRUE(s.ok()) << s;
    const auto got = out.download();
    const float* want = reinterpret_cast<const float*>(out.host.data());
    const float* have = reinterpret_cast<const float*>(got.data());
    const float tol = 1e-5f * static_cast<float>(c.k + 1);
    for (size_t i = 0; i < out.host.size() / 4; ++i)
      ASSERT_NEAR(have[i], want[i], tol) << "element " << i;
  }
}

TEST_F(VulkanKernelsTest, GemmRejectsBadOperands) {
  Tensor<float, 2> a(driver_, {4, 5}, Layout::kDense), b(driver_, {6, 3}, Layout::kDense);
  Tensor<float, 2> c(driver_, {4, 3}, Layout::kDense);
  Status s = call(context_, "ral_gemm", "vulkan", a.device_view, b.device_view, c.device_view,
                  false, false);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  // Host memory is not Vulkan memory.
  Tensor<float, 2> b2(driver_, {5, 3}, Layout::kDense);
  s = call(context_, "ral_gemm", "vulkan", a.host_view, b2.device_view, c.device_view, false,
           false);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("not (entirely) Vulkan device memory"), std::string_view::npos) << s;
  s = call(context_, "ral_gemm", "vulkan", a.device_view, b2.device_view, c.device_view, false,
           false);
  EXPECT_TRUE(s.ok()) << s;
}

template <typename T, int N>
void checkTranspose(Context& context, VulkanDriver* d, std::mt19937& rng,
                    const std::array<int64_t, N>& in_sizes, const std::array<int64_t, N>& perm,
                    Layout layout) {
  SCOPED_TRACE(::testing::Message()
               << "rank " << N << " elem " << sizeof(T) << " layout " << static_cast<int>(layout));
  std::array<int64_t, N> out_sizes;
  for (int i = 0; i < N; ++i) out_sizes[i] = in_sizes[perm[i]];
  Tensor<T, N> in(d, in_sizes, layout), out(d, out_sizes, Layout::kPadded);
  Tensor<int64_t, 1> p(d, {N}, Layout::kDense);
  std::memcpy(p.host.data(), perm.data(), sizeof(perm));
  in.randomize(rng);
  out.randomize(rng);
  in.upload();
  out.upload();
  p.upload();
  ASSERT_TRUE(call(context, "ral_transpose", "cpu", in.host_view, p.host_view, out.host_view).ok());
  Status s =
      call(context, "ral_transpose", "vulkan", in.device_view, p.device_view, out.device_view);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out.download(), out.host);
}

TEST_F(VulkanKernelsTest, TransposeMatchesCpu) {
  checkTranspose<float, 2>(context_, driver_, rng_, {37, 53}, {1, 0}, Layout::kDense);
  checkTranspose<float, 3>(context_, driver_, rng_, {5, 7, 9}, {2, 0, 1}, Layout::kPadded);
  checkTranspose<double, 4>(context_, driver_, rng_, {3, 4, 5, 6}, {3, 1, 0, 2}, Layout::kDense);
  checkTranspose<int8_t, 3>(context_, driver_, rng_, {9, 10, 11}, {1, 2, 0}, Layout::kColumnMajor);
  checkTranspose<bool, 2>(context_, driver_, rng_, {17, 3}, {1, 0}, Layout::kPadded);
  checkTranspose<int16_t, 2>(context_, driver_, rng_, {33, 65}, {1, 0}, Layout::kDense);
  checkTranspose<float16, 3>(context_, driver_, rng_, {4, 6, 8}, {0, 2, 1}, Layout::kDense);
  checkTranspose<int64_t, 6>(context_, driver_, rng_, {2, 3, 2, 3, 2, 3}, {5, 4, 3, 2, 1, 0},
                             Layout::kPadded);
  checkTranspose<uint8_t, 1>(context_, driver_, rng_, {1000}, {0}, Layout::kDense);
}

TEST_F(VulkanKernelsTest, TransposeRejectsABadPermutation) {
  Tensor<float, 2> in(driver_, {3, 4}, Layout::kDense), out(driver_, {4, 3}, Layout::kDense);
  Tensor<int64_t, 1> p(driver_, {2}, Layout::kDense);
  const int64_t perm[2] = {1, 1};
  std::memcpy(p.host.data(), perm, sizeof(perm));
  p.upload();
  Status s =
      call(context_, "ral_transpose", "vulkan", in.device_view, p.device_view, out.device_view);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("not a permutation"), std::string_view::npos);
}

template <typename T, int N>
void checkMemcpyMemset(Context& context, VulkanDriver* d, std::mt19937& rng,
                       const std::array<int64_t, N>& sizes, Layout src_layout, Layout dst_layout) {
  SCOPED_TRACE(::testing::Message()
               << "rank " << N << " elem " << sizeof(T) << " layouts "
               << static_cast<int>(src_layout) << "," << static_cast<int>(dst_layout));
  Tensor<T, N> src(d, sizes, src_layout), dst(d, sizes, dst_layout);
  src.randomize(rng);
  dst.randomize(rng);
  src.upload();
  dst.upload();
  ASSERT_TRUE(call(context, "ral_memcpy", "cpu", src.host_view, dst.host_view).ok());
  Status s = call(context, "ral_memcpy", "vulkan", src.device_view, dst.device_view);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(dst.download(), dst.host);

  T value{};
  if constexpr (std::is_same_v<T, bool>) {
    value = true;
  } else {
    std::vector<unsigned char> bytes(sizeof(T));
    for (auto& b : bytes) b = static_cast<unsigned char>(rng());
    std::memcpy(static_cast<void*>(&value), bytes.data(), sizeof(T));
  }
  ASSERT_TRUE(call(context, "ral_memset", "cpu", dst.host_view, value).ok());
  s = call(context, "ral_memset", "vulkan", dst.device_view, value);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(dst.download(), dst.host);
}

TEST_F(VulkanKernelsTest, MemcpyAndMemsetMatchCpu) {
  for (Layout a : {Layout::kDense, Layout::kPadded, Layout::kColumnMajor}) {
    for (Layout b : {Layout::kDense, Layout::kPadded}) {
      checkMemcpyMemset<float, 2>(context_, driver_, rng_, {33, 17}, a, b);
      checkMemcpyMemset<int8_t, 3>(context_, driver_, rng_, {5, 6, 7}, a, b);
      checkMemcpyMemset<bfloat16, 2>(context_, driver_, rng_, {19, 4}, a, b);
      checkMemcpyMemset<double, 4>(context_, driver_, rng_, {2, 3, 4, 5}, a, b);
      checkMemcpyMemset<bool, 1>(context_, driver_, rng_, {301}, a, b);
      checkMemcpyMemset<int64_t, 6>(context_, driver_, rng_, {2, 2, 3, 2, 2, 3}, a, b);
    }
  }
}

template <typename T, int N>
void checkRng(Context& context, VulkanDriver* d, const std::array<int64_t, N>& sizes, Layout layout,
              uint64_t seed, uint64_t offset, T low, T high) {
  SCOPED_TRACE(::testing::Message() << "rank " << N << " elem " << sizeof(T) << " seed " << seed
                                    << " offset " << offset);
  Tensor<T, N> out(d, sizes, layout);
  out.upload();
  ASSERT_TRUE(call(context, "ral_rng_uniform", "cpu", out.host_view, seed, offset, low, high).ok());
  Status s = call(context, "ral_rng_uniform", "vulkan", out.device_view, seed, offset, low, high);
  ASSERT_TRUE(s.ok()) << s;
  const auto got = out.download();
  ASSERT_EQ(got.size(), out.host.size());
  size_t mismatches = 0;
  for (size_t i = 0; i < got.size(); ++i) mismatches += got[i] != out.host[i];
  EXPECT_EQ(mismatches, 0u) << "bytes differ from the CPU";
}

TEST_F(VulkanKernelsTest, RngUniformIsBitIdenticalToCpu) {
  checkRng<float, 1>(context_, driver_, {1}, Layout::kDense, 0, 0, 0.0f, 1.0f);
  checkRng<float, 1>(context_, driver_, {100003}, Layout::kDense, 42, 7, 0.0f, 1.0f);
  checkRng<float, 2>(context_, driver_, {129, 67}, Layout::kPadded, 0xdeadbeefcafef00dull, 12345,
                     -3.5f, 2.25f);
  checkRng<float, 3>(context_, driver_, {7, 9, 11}, Layout::kColumnMajor, 99, 0xfffffffeull, -1e-3f,
                     1e3f);  // the 64-bit counter carries
  checkRng<float, 4>(context_, driver_, {3, 5, 7, 9}, Layout::kDense, 1, 0, 0.1f, 0.1000001f);
  checkRng<double, 1>(context_, driver_, {100001}, Layout::kDense, 7, 3, 0.0, 1.0);
  checkRng<double, 2>(context_, driver_, {33, 65}, Layout::kPadded, 0x123456789abcdefull,
                      0x1ffffffffull, -10.0, 1e6);
  checkRng<double, 4>(context_, driver_, {2, 3, 5, 7}, Layout::kColumnMajor, 5, 11, -0.5, 0.5);
}

TEST_F(VulkanKernelsTest, RngRejectsBadBounds) {
  Tensor<float, 1> out(driver_, {16}, Layout::kDense);
  Status s = call(context_, "ral_rng_uniform", "vulkan", out.device_view, uint64_t{1}, uint64_t{0},
                  2.0f, 1.0f);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ral::vulkan
