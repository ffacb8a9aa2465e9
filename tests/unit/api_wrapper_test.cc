// The generated type-erased wrappers: every argument and result type, MemRef ranks 0..8,
// several results, exceptions, and registration through RAL_API.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "ral/api.h"
#include "ral/context.h"

namespace ral {
namespace {

template <typename T>
T echo(ExecutionContext*, T x) {
  return x;
}

template <typename T>
void roundTrip(T value) {
  Context context;
  auto exec = context.acquireExecution();
  void* ctx = exec->abi();
  T in = value;
  T out{};
  void* args[] = {&ctx, &in, &out};
  internal::apiWrapper<&echo<T>>(ctx, args);
  EXPECT_EQ(std::memcmp(&in, &out, sizeof(T)), 0);
  EXPECT_FALSE(exec->failed());
}

TEST(ApiWrapperTest, EveryScalarTypeRoundTrips) {
  roundTrip<bool>(true);
  roundTrip<int8_t>(-128);
  roundTrip<int16_t>(-32000);
  roundTrip<int32_t>(std::numeric_limits<int32_t>::min());
  roundTrip<int64_t>(std::numeric_limits<int64_t>::max());
  roundTrip<uint8_t>(255);
  roundTrip<uint16_t>(65535);
  roundTrip<uint32_t>(0xdeadbeefu);
  roundTrip<uint64_t>(0xfedcba9876543210ull);
  roundTrip<float16>(float16::fromBits(0x7bff));
  roundTrip<bfloat16>(bfloat16::fromBits(0x3f81));
  roundTrip<float>(-1.5e-30f);
  roundTrip<double>(6.02214076e23);
  int local = 0;
  roundTrip<int*>(&local);
  roundTrip<void*>(&local);
}

template <int N>
MemRef<float, N> echoMemRef(ExecutionContext*, MemRef<float, N> m) {
  return m;
}

template <int N>
void memrefRoundTrip() {
  Context context;
  auto exec = context.acquireExecution();
  void* ctx = exec->abi();
  float storage[4];
  MemRef<float, N> in{};
  in.allocated = storage;
  in.aligned = storage + 1;
  in.offset = 100 + N;
  if constexpr (N > 0) {
    for (int d = 0; d < N; ++d) {
      in.sizes[d] = 10 * d + 1;
      in.strides[d] = 1000 - d;
    }
  }
  MemRef<float, N> out{};
  void* args[] = {&ctx, &in, &out};
  internal::apiWrapper<&echoMemRef<N>>(ctx, args);
  EXPECT_EQ(std::memcmp(&in, &out, sizeof(in)), 0) << "rank " << N;
  static_assert(sizeof(in) == (3 + 2 * N) * 8);
}

TEST(ApiWrapperTest, MemRefRanksZeroToEightRoundTrip) {
  memrefRoundTrip<0>();
  memrefRoundTrip<1>();
  memrefRoundTrip<2>();
  memrefRoundTrip<3>();
  memrefRoundTrip<4>();
  memrefRoundTrip<5>();
  memrefRoundTrip<6>();
  memrefRoundTrip<7>();
  memrefRoundTrip<8>();
}

struct Seen {
  bool b;
  int8_t i8;
  uint64_t u64;
  float16 h;
  double d;
  int64_t rows;
  ExecutionContext* ctx;
} seen;

std::tuple<int64_t, double, MemRef<int32_t, 1>> mixed(ExecutionContext* ctx, bool b, int8_t i8,
                                                      uint64_t u64, const MemRef<float, 2>& m,
                                                      float16 h, double d) {
  seen = {b, i8, u64, h, d, m.sizes[0], ctx};
  MemRef<int32_t, 1> r{};
  r.offset = 42;
  return {m.sizes[0] * m.sizes[1], d * 2, r};
}

TEST(ApiWrapperTest, MixedArgumentsAndSeveralResults) {
  Context context;
  auto exec = context.acquireExecution();
  void* ctx = exec->abi();
  bool b = true;
  int8_t i8 = -7;
  uint64_t u64 = 1ull << 63;
  float buf[6];
  auto m = makeMemRef<float, 2>(buf, {2, 3});
  float16 h(0.5f);
  double d = 3.25;
  int64_t r0 = 0;
  double r1 = 0;
  MemRef<int32_t, 1> r2{};
  void* args[] = {&ctx, &b, &i8, &u64, &m, &h, &d, &r0, &r1, &r2};
  internal::apiWrapper<&mixed>(ctx, args);
  EXPECT_TRUE(seen.b);
  EXPECT_EQ(seen.i8, -7);
  EXPECT_EQ(seen.u64, 1ull << 63);
  EXPECT_EQ(seen.h.bits, h.bits);
  EXPECT_EQ(seen.d, 3.25);
  EXPECT_EQ(seen.rows, 2);
  EXPECT_EQ(seen.ctx, exec.get());
  EXPECT_EQ(r0, 6);
  EXPECT_EQ(r1, 6.5);
  EXPECT_EQ(r2.offset, 42);
}

void throws(ExecutionContext*, int32_t kind) {
  if (kind == 0) throw std::runtime_error("kernel exploded");
  throw 17;
}

TEST(ApiWrapperTest, ExceptionsBecomeErrors) {
  Context context;
  for (int32_t kind : {0, 1}) {
    auto exec = context.acquireExecution();
    void* ctx = exec->abi();
    void* args[] = {&ctx, &kind};
    internal::apiWrapper<&throws>(ctx, args);
    ASSERT_TRUE(exec->failed());
    EXPECT_EQ(exec->status().code(), StatusCode::kInternal);
    EXPECT_NE(exec->status().message().find(kind == 0 ? "kernel exploded" : "unknown"),
              std::string_view::npos);
  }
}

// Registered through the macro into the global registry.
int32_t addI32(ExecutionContext*, int32_t a, int32_t b) { return a + b; }
RAL_API("test_add", "cpu", addI32);
template <typename T>
T scale(ExecutionContext*, T x, T s) {
  return x * s;
}
TAO_RAL_API("test_scale", "cpu", scale<double>);

TEST(ApiWrapperTest, MacroRegistersUnderTheEncodedName) {
  Context context;
  auto fn = context.resolve("test_add___cpu___pvoid_i32_i32___i32");
  ASSERT_TRUE(fn.ok()) << fn.status();
  auto exec = context.acquireExecution();
  void* ctx = exec->abi();
  int32_t a = 40, b = 2, r = 0;
  void* args[] = {&ctx, &a, &b, &r};
  (*fn)(ctx, args);
  EXPECT_EQ(r, 42);
  double x = 1.5, s = 4, y = 0;
  void* args2[] = {&ctx, &x, &s, &y};
  ral_api_call(ctx, "test_scale___cpu___pvoid_f64_f64___f64", args2);
  EXPECT_EQ(y, 6.0);
  EXPECT_FALSE(exec->failed());
}

}  // namespace
}  // namespace ral
