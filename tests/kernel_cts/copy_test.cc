// ral_transpose, ral_memcpy and ral_memset on every device against index arithmetic done here:
// element sizes 1 to 8 bytes, ranks 1 to 6, dense, padded and column-major views on either side,
// size-1 and empty dims; nothing outside the destination's view written; a bad permutation an
// error.
#include <cstring>

#include "tensor.h"

namespace ral::kernel_cts {
namespace {

template <typename T>
T randomValue(std::mt19937& rng) {
  T value{};
  if constexpr (std::is_same_v<T, bool>) {
    value = true;
  } else {
    unsigned char bytes[sizeof(T)];
    for (auto& b : bytes) b = static_cast<unsigned char>(rng());
    std::memcpy(static_cast<void*>(&value), bytes, sizeof(T));
  }
  return value;
}

template <typename T>
bool sameBytes(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

class Transpose : public KernelTest {
 protected:
  template <typename T, int N>
  void check(const std::array<int64_t, N>& in_sizes, const std::array<int64_t, N>& perm,
             Layout layout, bool perm_on_device = true) {
    SCOPED_TRACE(::testing::Message() << "rank " << N << " elem " << sizeof(T) << " layout "
                                      << layoutName(layout) << " perm on the "
                                      << (perm_on_device ? "device" : "host"));
    std::array<int64_t, N> out_sizes;
    for (int i = 0; i < N; ++i) out_sizes[i] = in_sizes[perm[i]];
    Tensor<T, N> in(*this, in_sizes, layout), out(*this, out_sizes, Layout::kPadded);
    Tensor<int64_t, 1> p(*this, {N}, Layout::kDense);
    std::memcpy(p.host(), perm.data(), sizeof(perm));
    in.randomize(rng);
    out.randomize(rng);
    in.upload();
    out.upload();
    p.upload();
    const Status s = call("ral_transpose", in.device_view,
                          perm_on_device ? p.device_view : p.host_view, out.device_view);
    ASSERT_TRUE(s.ok()) << s;
    const auto got = out.download();
    forEachIndex<N>(out_sizes, [&](const std::array<int64_t, N>& index) {
      std::array<int64_t, N> from{};
      for (int i = 0; i < N; ++i) from[perm[i]] = index[i];
      ASSERT_TRUE(sameBytes(elementOf(out, got, index), in.at(from)));
    });
    expectOutsideViewUnchanged(out, got);
  }
};

TEST_P(Transpose, MatchesReference) {
  check<float, 2>({37, 53}, {1, 0}, Layout::kDense);
  check<float, 3>({5, 7, 9}, {2, 0, 1}, Layout::kPadded);
  check<double, 4>({3, 4, 5, 6}, {3, 1, 0, 2}, Layout::kDense);
  check<int8_t, 3>({9, 10, 11}, {1, 2, 0}, Layout::kColumnMajor);
  check<bool, 2>({17, 3}, {1, 0}, Layout::kPadded);
  check<int16_t, 2>({33, 65}, {1, 0}, Layout::kDense);
  check<float16, 3>({4, 6, 8}, {0, 2, 1}, Layout::kDense);
  check<int64_t, 6>({2, 3, 2, 3, 2, 3}, {5, 4, 3, 2, 1, 0}, Layout::kPadded);
  check<uint8_t, 1>({1000}, {0}, Layout::kDense);
  check<int32_t, 3>({4, 1, 6}, {2, 0, 1}, Layout::kColumnMajor);
  check<int32_t, 2>({0, 6}, {1, 0}, Layout::kDense);
}

TEST_P(Transpose, PermutationInHostMemory) {
  check<int32_t, 3>({4, 5, 6}, {2, 0, 1}, Layout::kDense, /*perm_on_device=*/false);
}

TEST_P(Transpose, ABadPermutationIsAnError) {
  Tensor<float, 2> in(*this, {3, 4}, Layout::kDense), out(*this, {4, 3}, Layout::kDense);
  Tensor<int64_t, 1> p(*this, {2}, Layout::kDense);
  const int64_t perm[2] = {1, 1};
  std::memcpy(p.host(), perm, sizeof(perm));
  p.upload();
  const Status s = call("ral_transpose", in.device_view, p.device_view, out.device_view);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("not a permutation"), std::string_view::npos) << s;
}

RAL_KERNEL_CTS_INSTANTIATE(Transpose);

class MemoryOps : public KernelTest {
 protected:
  // A strided copy src -> dst, then a fill of dst, each against the reference.
  template <typename T, int N>
  void check(const std::array<int64_t, N>& sizes, Layout src_layout, Layout dst_layout) {
    SCOPED_TRACE(::testing::Message() << "rank " << N << " elem " << sizeof(T) << " layouts "
                                      << layoutName(src_layout) << " -> "
                                      << layoutName(dst_layout));
    Tensor<T, N> src(*this, sizes, src_layout), dst(*this, sizes, dst_layout);
    src.randomize(rng);
    dst.randomize(rng);
    src.upload();
    dst.upload();
    Status s = call("ral_memcpy", src.device_view, dst.device_view);
    ASSERT_TRUE(s.ok()) << s;
    auto got = dst.download();
    forEachIndex<N>(sizes, [&](const std::array<int64_t, N>& index) {
      ASSERT_TRUE(sameBytes(elementOf(dst, got, index), src.at(index)));
    });
    expectOutsideViewUnchanged(dst, got);

    const T value = randomValue<T>(rng);
    s = call("ral_memset", dst.device_view, value);
    ASSERT_TRUE(s.ok()) << s;
    got = dst.download();
    forEachIndex<N>(sizes, [&](const std::array<int64_t, N>& index) {
      ASSERT_TRUE(sameBytes(elementOf(dst, got, index), value));
    });
    expectOutsideViewUnchanged(dst, got);
  }

  // ral_write_element then ral_read_element on single elements of a padded tensor, as a GPU
  // module's host code uses them: every element written is read back, nothing else changes.
  template <typename T>
  void elements() {
    SCOPED_TRACE(::testing::Message() << "elem " << sizeof(T));
    Tensor<T, 2> t(*this, {3, 5}, Layout::kPadded);
    t.randomize(rng);
    t.upload();
    std::vector<unsigned char> want(t.host(), t.host() + t.bytes());
    for (const std::array<int64_t, 2>& at : {std::array<int64_t, 2>{0, 0}, {2, 4}, {1, 3}}) {
      MemRef<T, 0> element{};
      element.allocated = element.aligned = t.device_view.aligned;
      element.offset = t.device_view.offset + at[0] * t.device_view.strides[0] + at[1];
      const T value = randomValue<T>(rng);
      Status s = call("ral_write_element", element, value);
      ASSERT_TRUE(s.ok()) << s;
      T got{};
      s = callReturning("ral_read_element", &got, element);
      ASSERT_TRUE(s.ok()) << s;
      ASSERT_TRUE(sameBytes(got, value));
      std::memcpy(&want[element.offset * sizeof(T)], &value, sizeof(T));
    }
    const auto got = t.download();
    ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size()), 0) << "another element changed";
  }
};

TEST_P(MemoryOps, CopiesAndFillsAgreeWithReference) {
  for (Layout a : {Layout::kDense, Layout::kPadded, Layout::kColumnMajor}) {
    for (Layout b : {Layout::kDense, Layout::kPadded}) {
      check<float, 2>({33, 17}, a, b);
      check<int8_t, 3>({5, 6, 7}, a, b);
      check<bfloat16, 2>({19, 4}, a, b);
      check<double, 4>({2, 3, 4, 5}, a, b);
      check<bool, 1>({301}, a, b);
      check<int64_t, 6>({2, 2, 3, 2, 2, 3}, a, b);
      check<float16, 4>({3, 1, 4, 5}, a, b);
    }
  }
  check<float, 2>({0, 7}, Layout::kDense, Layout::kPadded);
}

TEST_P(MemoryOps, SingleElementsReadAndWrite) {
  elements<float>();
  elements<double>();
  elements<int64_t>();
  elements<int8_t>();
  elements<bool>();
  elements<float16>();
  // A pointer that is not the device's memory is an error naming the kernel.
  if (!onCpu()) {
    float host = 1;
    MemRef<float, 0> foreign{&host, &host, 0};
    float got = 0;
    const Status s = callReturning("ral_read_element", &got, foreign);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("ral_read_element"), std::string::npos) << s;
  }
}

RAL_KERNEL_CTS_INSTANTIATE(MemoryOps);

}  // namespace
}  // namespace ral::kernel_cts
