// ral_rng_uniform and ral_rng_normal for every device: the argument checks, entry points and
// registration tables, written once. Counter-based Philox4x32-10 streams (kernels/rng/philox.h
// has the exact mapping every device follows), so results depend only on (seed, offset, shape),
// never on thread count or device.
//
//   void rngUniform(ExecutionContext*, MemRef<T, N> out, uint64_t seed, uint64_t offset,
//                   T low, T high)                                      uniform in [low, high)
//     ral_rng_uniform___<dev>___pvoid_m<N>d<T>_ui64_ui64_<T>_<T>___void
//   void rngNormal(ExecutionContext*, MemRef<T, N> out, uint64_t seed, uint64_t offset,
//                  T mean, T stddev)                                    normal(mean, stddev)
//     ral_rng_normal___<dev>___pvoid_m<N>d<T>_ui64_ui64_<T>_<T>___void
//   N in 1..4; T in f32 f64 f16 bf16 (cpu, cuda), f32 f64 (vulkan); normal on cpu only.
//
// `offset` counts Philox blocks: a call uses philox::blocksFor(T is f64, out.numel()) of them.
// low <= high (finite) and stddev >= 0 (finite) are checked.
//
// A device file (rng_<device>.cc) supplies `Impl` with
//   template <typename T, int N> static Status uniform(ExecutionContext*, const MemRef<T, N>&,
//       uint64_t seed, uint64_t offset, const Params<T>& p);   // p: low, span = high - low
//   template <typename T, int N> static Status normal(...)     // p: mean, stddev
// called for a checked, non-empty output.
#ifndef RAL_KERNELS_RNG_RNG_H_
#define RAL_KERNELS_RNG_RNG_H_

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/common/kernel_types.h"
#include "kernels/common/kernel_util.h"
#include "ral/api.h"
#include "ral/half.h"
#include "ral/memref.h"

namespace ral::kernels {

// The precision a distribution is computed in: double for f64, float otherwise.
template <typename T>
using RngAcc = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Two parameters in RngAcc<T>: (low, span) for uniform, (mean, stddev) for normal.
template <typename T>
struct RngParams2 {
  RngAcc<T> a, b;
};

template <typename T>
RngAcc<T> rngAcc(T v) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return v.toFloat();
  } else {
    return static_cast<RngAcc<T>>(v);
  }
}

// low and span = high - low (rounded to RngAcc<T>, as every device computes it).
template <typename T>
StatusOr<RngParams2<T>> checkUniform(T low, T high) {
  const RngAcc<T> l = rngAcc(low), h = rngAcc(high);
  if (!std::isfinite(l) || !std::isfinite(h) || !(l <= h))
    return invalidArgument("ral_rng_uniform: bounds [", l, ", ", h,
                           ") must be finite with low <= high");
  return RngParams2<T>{l, static_cast<RngAcc<T>>(h - l)};
}

template <typename T>
StatusOr<RngParams2<T>> checkNormal(T mean, T stddev) {
  const RngAcc<T> m = rngAcc(mean), s = rngAcc(stddev);
  if (!std::isfinite(m) || !std::isfinite(s) || !(s >= 0))
    return invalidArgument("ral_rng_normal: mean ", m, " and stddev ", s,
                           " must be finite with stddev >= 0");
  return RngParams2<T>{m, s};
}

template <class Impl, typename T, int N>
void rngUniformKernel(ExecutionContext* ctx, MemRef<T, N> out, uint64_t seed, uint64_t offset,
                      T low, T high) {
  RAL_SIGNAL_IF_ERROR(ctx, checkMemRef(out, "ral_rng_uniform", "output"));
  auto p = checkUniform(low, high);
  RAL_SIGNAL_IF_ERROR(ctx, p.status());
  if (out.numel() == 0) return;
  RAL_SIGNAL_IF_ERROR(ctx, (Impl::template uniform<T, N>(ctx, out, seed, offset, *p)));
}

template <class Impl, typename T, int N>
void rngNormalKernel(ExecutionContext* ctx, MemRef<T, N> out, uint64_t seed, uint64_t offset,
                     T mean, T stddev) {
  RAL_SIGNAL_IF_ERROR(ctx, checkMemRef(out, "ral_rng_normal", "output"));
  auto p = checkNormal(mean, stddev);
  RAL_SIGNAL_IF_ERROR(ctx, p.status());
  if (out.numel() == 0) return;
  RAL_SIGNAL_IF_ERROR(ctx, (Impl::template normal<T, N>(ctx, out, seed, offset, *p)));
}

}  // namespace ral::kernels

// The registration tables for element type T, ranks 1-4, of device `Impl` named `kDevice` (both
// defined where they are used).
#define RAL_RNG_UNIFORM_RANK_(T, N) \
  RAL_API("ral_rng_uniform", kDevice, ::ral::kernels::rngUniformKernel<Impl, T, N>);
#define RAL_RNG_NORMAL_RANK_(T, N) \
  RAL_API("ral_rng_normal", kDevice, ::ral::kernels::rngNormalKernel<Impl, T, N>);
#define RAL_REGISTER_RNG_UNIFORM(T) RAL_KERNEL_RANKS_1_TO_4(RAL_RNG_UNIFORM_RANK_, T)
#define RAL_REGISTER_RNG_NORMAL(T) RAL_KERNEL_RANKS_1_TO_4(RAL_RNG_NORMAL_RANK_, T)

#endif  // RAL_KERNELS_RNG_RNG_H_
