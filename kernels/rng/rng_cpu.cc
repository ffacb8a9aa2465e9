// ral_rng_uniform and ral_rng_normal on the CPU (kernels/rng/rng.h has the contract): Philox
// blocks split over the context's CPU driver (parallelFor).
#include <cmath>
#include <type_traits>

#include "kernels/common/devices.h"
#include "kernels/common/parallel.h"
#include "kernels/rng/philox.h"
#include "kernels/rng/rng.h"
#include "ral/registration.h"

namespace ral::kernels::cpu {
namespace {

constexpr int64_t kGrainBlocks = 2048;

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
  RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, DeviceKind::kCpu));
  Driver* driver = env.driver;
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

struct Impl {
  template <typename T, int N>
  static Status uniform(ExecutionContext* ctx, const MemRef<T, N>& out, uint64_t seed,
                        uint64_t offset, const RngParams2<T>& p) {
    return generate(ctx, out, seed, offset, Uniform<T>{p.a, p.b});
  }
  template <typename T, int N>
  static Status normal(ExecutionContext* ctx, const MemRef<T, N>& out, uint64_t seed,
                       uint64_t offset, const RngParams2<T>& p) {
    return generate(ctx, out, seed, offset, Normal<T>{p.a, p.b});
  }
};

constexpr char kDevice[] = "cpu";
#define RAL_REGISTER_CPU_RNG_(T) RAL_REGISTER_RNG_UNIFORM(T) RAL_REGISTER_RNG_NORMAL(T)
RAL_KERNEL_FLOAT_TYPES(RAL_REGISTER_CPU_RNG_)

}  // namespace
}  // namespace ral::kernels::cpu

RAL_REGISTRATION_ANCHOR(kernels_rng_cpu);
