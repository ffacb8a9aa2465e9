// ral_gemm and ral_batch_gemm against a naive double-precision reference: every dtype, transpose
// flags, odd and empty shapes, strided layouts, broadcasting; bad shapes are context errors.
#include <gtest/gtest.h>

#include "kernels/blas/openblas.h"
#include "tests/support/kernels_test_util.h"

namespace ral::testing {
namespace {

template <typename T>
double tolerance(double magnitude, int64_t k) {
  if constexpr (std::is_same_v<T, double>) return 1e-12 * (k + 1) + 1e-13 * magnitude;
  if constexpr (std::is_same_v<T, float>) return 2e-6 * (k + 1) + 1e-6 * magnitude;
  if constexpr (std::is_same_v<T, float16>) return 2e-6 * (k + 1) + 1.0e-3 * magnitude;
  return 2e-6 * (k + 1) + 8e-3 * magnitude;  // bfloat16
}

// Reference op(a) * op(b) at (i, j) from strided views.
template <typename T, int NA, int NB>
double refDot(const MemRef<T, NA>& a, const MemRef<T, NB>& b, int64_t a_off, int64_t b_off,
              int64_t i, int64_t j, int64_t k, bool ta, bool tb) {
  double sum = 0;
  for (int64_t p = 0; p < k; ++p) {
    const int64_t ar = ta ? p : i, ac = ta ? i : p;
    const int64_t br = tb ? j : p, bc = tb ? p : j;
    sum += toDouble(a.data()[a_off + ar * a.strides[NA - 2] + ac * a.strides[NA - 1]]) *
           toDouble(b.data()[b_off + br * b.strides[NB - 2] + bc * b.strides[NB - 1]]);
  }
  return sum;
}

template <typename T>
void checkGemm(Context& context, int64_t m, int64_t n, int64_t k, bool ta, bool tb, Layout la,
               Layout lb, Layout lc, std::mt19937& rng) {
  Buffer<T, 2> a({ta ? k : m, ta ? m : k}, la), b({tb ? n : k, tb ? k : n}, lb), c({m, n}, lc);
  fillRandom(a, rng);
  fillRandom(b, rng);
  fillRandom(c, rng, 100, 200);  // garbage that must be overwritten
  Status s = callCpu(context, "ral_gemm", a.view, b.view, c.view, ta, tb);
  ASSERT_TRUE(s.ok()) << s;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const double want = refDot(a.view, b.view, 0, 0, i, j, k, ta, tb);
      const double got = toDouble(c.view(i, j));
      ASSERT_NEAR(got, want, tolerance<T>(std::abs(want), k))
          << m << "x" << n << "x" << k << " ta=" << ta << " tb=" << tb << " a " << layoutName(la)
          << " b " << layoutName(lb) << " c " << layoutName(lc) << " at " << i << "," << j;
    }
  }
}

template <typename T>
class GemmTest : public ::testing::Test {};
using GemmTypes = ::testing::Types<float, double, float16, bfloat16>;
TYPED_TEST_SUITE(GemmTest, GemmTypes);

TYPED_TEST(GemmTest, MatchesNaiveReference) {
  Context context;
  std::mt19937 rng(42);
  const std::array<int64_t, 3> shapes[] = {{1, 1, 1},  {3, 5, 7},    {17, 1, 9},
                                           {1, 19, 4}, {0, 4, 3},    {4, 0, 3},
                                           {4, 3, 0},  {64, 33, 65}, {130, 70, 257}};
  const Layout layouts[][3] = {{Layout::kDense, Layout::kDense, Layout::kDense},
                               {Layout::kColumnMajor, Layout::kPadded, Layout::kDense},
                               {Layout::kPadded, Layout::kColumnMajor, Layout::kColumnMajor},
                               {Layout::kDense, Layout::kDense, Layout::kPadded}};
  for (const auto& s : shapes)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (const auto& l : layouts)
          checkGemm<TypeParam>(context, s[0], s[1], s[2], ta, tb, l[0], l[1], l[2], rng);
}

TEST(GemmNameTest, EncodedNamesMatchTheAbi) {
  EXPECT_EQ((cpuName<MemRef<float, 2>, MemRef<float, 2>, MemRef<float, 2>, bool, bool>("ral_gemm")),
            "ral_gemm___cpu___pvoid_m2df32_m2df32_m2df32_i1_i1___void");
  for (const char* name : {"ral_gemm___cpu___pvoid_m2df32_m2df32_m2df32_i1_i1___void",
                           "ral_gemm___cpu___pvoid_m2df64_m2df64_m2df64_i1_i1___void",
                           "ral_gemm___cpu___pvoid_m2df16_m2df16_m2df16_i1_i1___void",
                           "ral_gemm___cpu___pvoid_m2dbf16_m2dbf16_m2dbf16_i1_i1___void",
                           "ral_batch_gemm___cpu___pvoid_m3df32_m3df32_m3df32_i1_i1___void",
                           "ral_batch_gemm___cpu___pvoid_m2df32_m4df32_m4df32_i1_i1___void"}) {
    EXPECT_TRUE(Registry::global().findFunction(name, &ExecutionContext::kType).ok()) << name;
  }
}

template <typename T, int RA, int RB, int RC>
void checkBatch(Context& context, const std::array<int64_t, RA>& as,
                const std::array<int64_t, RB>& bs, const std::array<int64_t, RC>& cs, bool ta,
                bool tb, Layout layout, std::mt19937& rng) {
  Buffer<T, RA> a(as, layout);
  Buffer<T, RB> b(bs, Layout::kDense);
  Buffer<T, RC> c(cs, layout);
  fillRandom(a, rng);
  fillRandom(b, rng);
  Status s = callCpu(context, "ral_batch_gemm", a.view, b.view, c.view, ta, tb);
  ASSERT_TRUE(s.ok()) << s;
  const int64_t m = cs[RC - 2], n = cs[RC - 1], k = ta ? as[RA - 2] : as[RA - 1];
  int64_t batches = 1;
  for (int d = 0; d < RC - 2; ++d) batches *= cs[d];
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t idx[4] = {}, rest = bi;
    for (int d = RC - 3; d >= 0; --d) idx[d] = rest % cs[d], rest /= cs[d];
    auto offset = [&](const auto& view, int rank) {
      int64_t off = 0;
      for (int d = 0; d < rank - 2; ++d) {
        const int64_t i = idx[(RC - 2) - (rank - 2) + d];
        off += (view.sizes[d] == 1 ? 0 : i) * view.strides[d];
      }
      return off;
    };
    int64_t c_off = 0;
    for (int d = 0; d < RC - 2; ++d) c_off += idx[d] * c.view.strides[d];
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const double want =
            refDot(a.view, b.view, offset(a.view, RA), offset(b.view, RB), i, j, k, ta, tb);
        const double got = toDouble(
            c.view.data()[c_off + i * c.view.strides[RC - 2] + j * c.view.strides[RC - 1]]);
        ASSERT_NEAR(got, want, tolerance<T>(std::abs(want), k)) << "batch " << bi;
      }
    }
  }
}

TYPED_TEST(GemmTest, BatchedRank3And4WithBroadcast) {
  using T = TypeParam;
  Context context;
  std::mt19937 rng(7);
  for (Layout layout : {Layout::kDense, Layout::kPadded, Layout::kColumnMajor}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        const int64_t m = 5, n = 3, k = 4;
        const int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
        checkBatch<T, 3, 3, 3>(context, {3, ar, ac}, {3, br, bc}, {3, m, n}, ta, tb, layout, rng);
        checkBatch<T, 4, 4, 4>(context, {2, 3, ar, ac}, {2, 3, br, bc}, {2, 3, m, n}, ta, tb,
                               layout, rng);
        checkBatch<T, 4, 4, 4>(context, {1, 3, ar, ac}, {2, 1, br, bc}, {2, 3, m, n}, ta, tb,
                               layout, rng);
        checkBatch<T, 2, 3, 3>(context, {ar, ac}, {4, br, bc}, {4, m, n}, ta, tb, layout, rng);
        checkBatch<T, 3, 2, 3>(context, {4, ar, ac}, {br, bc}, {4, m, n}, ta, tb, layout, rng);
        checkBatch<T, 2, 4, 4>(context, {ar, ac}, {2, 2, br, bc}, {2, 2, m, n}, ta, tb, layout,
                               rng);
        checkBatch<T, 4, 2, 4>(context, {2, 2, ar, ac}, {br, bc}, {2, 2, m, n}, ta, tb, layout,
                               rng);
        checkBatch<T, 3, 3, 3>(context, {0, ar, ac}, {0, br, bc}, {0, m, n}, ta, tb, layout, rng);
      }
    }
  }
}

TEST(GemmErrorTest, BadShapesAreContextErrors) {
  Context context;
  Buffer<float, 2> a({3, 4}, Layout::kDense), b({5, 2}, Layout::kDense), c({3, 2}, Layout::kDense);
  Status s = callCpu(context, "ral_gemm", a.view, b.view, c.view, false, false);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("ral_gemm"), std::string::npos) << s;
  Buffer<float, 2> b_ok({4, 2}, Layout::kDense), c_bad({2, 2}, Layout::kDense);
  EXPECT_EQ(callCpu(context, "ral_gemm", a.view, b_ok.view, c_bad.view, false, false).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(callCpu(context, "ral_gemm", a.view, b_ok.view, c.view, true, false).code(),
            StatusCode::kInvalidArgument);
  MemRef<float, 2> negative = a.view;
  negative.sizes[0] = -1;
  EXPECT_EQ(callCpu(context, "ral_gemm", negative, b_ok.view, c.view, false, false).code(),
            StatusCode::kInvalidArgument);
  MemRef<float, 2> null_data = a.view;
  null_data.aligned = nullptr;
  EXPECT_EQ(callCpu(context, "ral_gemm", null_data, b_ok.view, c.view, false, false).code(),
            StatusCode::kInvalidArgument);
  Buffer<float, 3> a3({2, 3, 4}, Layout::kDense), b3({3, 4, 2}, Layout::kDense),
      c3({2, 3, 2}, Layout::kDense);
  s = callCpu(context, "ral_batch_gemm", a3.view, b3.view, c3.view, false, false);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("batch"), std::string::npos) << s;
  // The next call is correct.
  for (int64_t i = 0; i < 12; ++i) a.at(i) = 1.0f;
  for (int64_t i = 0; i < 8; ++i) b_ok.at(i) = 2.0f;
  ASSERT_TRUE(callCpu(context, "ral_gemm", a.view, b_ok.view, c.view, false, false).ok());
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(c.at(i), 8.0f);
}

TEST(GemmErrorTest, OutputOverlappingAnInputStillCorrect) {
  Context context;
  // c is a itself (square): the kernel computes into scratch first.
  Buffer<double, 2> a({3, 3}, Layout::kDense), id({3, 3}, Layout::kDense);
  for (int64_t i = 0; i < 9; ++i) a.at(i) = static_cast<double>(i);
  for (int64_t i = 0; i < 3; ++i) id.view(i, i) = 2.0;
  ASSERT_TRUE(callCpu(context, "ral_gemm", a.view, id.view, a.view, false, false).ok());
  for (int64_t i = 0; i < 9; ++i) EXPECT_EQ(a.at(i), 2.0 * i);
}

TEST(OpenBlasTest, LoadsWithTheRecommendedCoreType) {
  auto blas = kernels::cpu::openBlas();
  ASSERT_TRUE(blas.ok()) << blas.status();
  const std::string recommended = kernels::cpu::recommendedOpenBlasCoreType();
  if (!(*blas)->was_already_loaded && !recommended.empty() && (*blas)->coretype_chosen_by_ral) {
    EXPECT_EQ((*blas)->coretype, recommended);
  }
  EXPECT_FALSE(kernels::cpu::openBlasDescription().empty());
  ASSERT_TRUE(kernels::cpu::setOpenBlasThreads(1).ok());
  EXPECT_EQ((*blas)->get_num_threads(), 1);
}

}  // namespace
}  // namespace ral::testing
