// ral_rng_uniform and ral_rng_normal: counter-based Philox4x32-10 streams (kernels/philox.h has
// the exact mapping every device follows), so results depend only on (seed, offset, shape),
// never on thread count or device.
//
//   void rngUniform(ExecutionContext*, MemRef<T, N> out, uint64_t seed, uint64_t offset,
//                   T low, T high)                                      uniform in [low, high)
//     ral_rng_uniform___cpu___pvoid_m<N>d<T>_ui64_ui64_<T>_<T>___void
//   void rngNormal(ExecutionContext*, MemRef<T, N> out, uint64_t seed, uint64_t offset,
//                  T mean, T stddev)                                    normal(mean, stddev)
//     ral_rng_normal___cpu___pvoid_m<N>d<T>_ui64_ui64_<T>_<T>___void
//   T in f32 f64 f16 bf16; N in 1..4
//
// `offset` counts Philox blocks: a call uses philox::blocksFor(T is f64, out.numel()) of them.
// low <= high (finite) and stddev >= 0 (finite) are checked.
#include <cmath>
#include <type_traits>

#include "kernels/kernel_types.h"
#include "kernels/kernel_util.h"
#include "kernels/parallel.h"
#include "kernels/philox.h"
#include "ral/api.h"

namespace ral::kernels {
namespace {

constexpr int64_t kGrainBlocks = 2048;

template <typename T>
float asFloat(T v) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return v.toFloat();
  } else {
    return static_cast<float>(v);
  }
}

// Element j (0..3, or 0..1 for f64) of a block, before scaling.
template <typename T>
struct Uniform {
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  static constexpr int kPerBlock = std::is_same_v<T, double> ? 2 : 4;
  Acc low, span;
  void block(const philox::Block& b, Acc* v) const {
    for (int j = 0; j < kPerBlock; ++j) {
      Acc u;
      if constexpr (std::is_same_v<T, double>) {
        u = philox::uniform53(b.w[2 * j], b.w[2 * j + 1]);
      } else if constexpr (std::is_same_v<T, float16>) {
        u = philox::uniform11(b.w[j]);
      } else if constexpr (std::is_same_v<T, bfloat16>) {
        u = philox::uniform8(b.w[j]);
      } else {
        u = philox::uniform24(b.w[j]);
      }
      v[j] = low + u * span;
    }
  }
};

template <typename T>
struct Normal {
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  static constexpr int kPerBlock = std::is_same_v<T, double> ? 2 : 4;
  Acc mean, stddev;
  void block(const philox::Block& b, Acc* v) const {
    Acc z[4];
    if constexpr (std::is_same_v<T, double>) {
      philox::normalPair53(b, &z[0], &z[1]);
    } else {
      philox::normalPair24(b.w[0], b.w[1], &z[0], &z[1]);
      philox::normalPair24(b.w[2], b.w[3], &z[2], &z[3]);
    }
    for (int j = 0; j < kPerBlock; ++j) v[j] = mean + stddev * z[j];
  }
};

template <typename T, int N, typename Dist>
Status generate(ExecutionContext* ctx, const MemRef<T, N>& out, uint64_t seed, uint64_t offset,
                const Dist& dist) {
  using Acc = typename Dist::Acc;
  constexpr int kPer = Dist::kPerBlock;
  const int64_t n = out.numel();
  if (n == 0) return Status();
  RAL_ASSIGN_OR_RETURN(Driver * driver, cpuDriver(ctx));
  const int64_t blocks = static_cast<int64_t>(philox::blocksFor(kPer == 2, n));
  const bool dense = out.isContiguous();
  T* data = out.data();
  return parallelFor(driver, blocks, kGrainBlocks, [&](int64_t begin, int64_t end) {
    IndexWalker w(N, out.sizes, out.strides, nullptr, begin * kPer);
    for (int64_t b = begin; b < end; ++b) {
      Acc v[kPer];
      dist.block(philox::streamBlock(seed, offset, static_cast<uint64_t>(b)), v);
      const int64_t first = b * kPer;
      const int count = static_cast<int>(std::min<int64_t>(kPer, n - first));
      for (int j = 0; j < count; ++j) {
        T value = T(v[j]);
        if (dense) {
          data[first + j] = value;
        } else {
          data[w.offsetA()] = value;
          w.next();
        }
      }
    }
    return Status();
  });
}

template <typename T, int N>
void rngUniform(ExecutionContext* ctx, MemRef<T, N> out, uint64_t seed, uint64_t offset, T low,
                T high) {
  RAL_SIGNAL_IF_ERROR(ctx, checkMemRef(out, "ral_rng_uniform", "output"));
  using Acc = typename Uniform<T>::Acc;
  Acc l, h;
  if constexpr (std::is_same_v<T, double>) {
    l = low, h = high;
  } else {
    l = asFloat(low), h = asFloat(high);
  }
  if (!std::isfinite(l) || !std::isfinite(h) || !(l <= h)) {
    ctx->signalError(invalidArgument("ral_rng_uniform: bounds [", l, ", ", h,
                                     ") must be finite with low <= high"));
    return;
  }
  RAL_SIGNAL_IF_ERROR(ctx, generate(ctx, out, seed, offset, Uniform<T>{l, h - l}));
}

template <typename T, int N>
void rngNormal(ExecutionContext* ctx, MemRef<T, N> out, uint64_t seed, uint64_t offset, T mean,
               T stddev) {
  RAL_SIGNAL_IF_ERROR(ctx, checkMemRef(out, "ral_rng_normal", "output"));
  using Acc = typename Normal<T>::Acc;
  Acc m, s;
  if constexpr (std::is_same_v<T, double>) {
    m = mean, s = stddev;
  } else {
    m = asFloat(mean), s = asFloat(stddev);
  }
  if (!std::isfinite(m) || !std::isfinite(s) || !(s >= 0)) {
    ctx->signalError(invalidArgument("ral_rng_normal: mean ", m, " and stddev ", s,
                                     " must be finite with stddev >= 0"));
    return;
  }
  RAL_SIGNAL_IF_ERROR(ctx, generate(ctx, out, seed, offset, Normal<T>{m, s}));
}

#define RAL_REGISTER_RNG_RANK(T, N)                    \
  RAL_API("ral_rng_uniform", "cpu", rngUniform<T, N>); \
  RAL_API("ral_rng_normal", "cpu", rngNormal<T, N>);
#define RAL_REGISTER_RNG(T) RAL_KERNEL_RANKS_1_TO_4(RAL_REGISTER_RNG_RANK, T)
RAL_KERNEL_FLOAT_TYPES(RAL_REGISTER_RNG)

}  // namespace
}  // namespace ral::kernels
