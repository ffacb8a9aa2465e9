// The simulated GPU runtimes' stand-ins for RAL's GPU library kernels (kernels/gpu): the embedded
// library is what loads (real HSACO from kernels/gpu/device_kernels.py on the simulated HSA
// runtime, its PTX on the simulated CUDA driver); the simulations read each kernel's name and
// argument sizes from the binary and run the host function ral_sim_hsa_kernel_<name> or
// ral_sim_cuda_kernel_<name> below for each launch. These functions do what the device code does,
// work-item by work-item over the launched grid, and record any launch that does not match the
// kernel's contract (workgroup shape, grid-stride count, workgroup memory), so the host side's
// argument structs, grids and variant choice are all checked by the kernel conformance suite on
// both devices. The device code itself is checked by tests/gpu_library (run by an interpreter of
// its MLIR; layouts of the binaries) and runs only on a GPU.
#include "tests/kernel_cts/gpu_sim_kernels.h"

#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/gpu/device_args.h"
#include "kernels/rng/philox.h"
#include "ral/half.h"
#include "tests/sim_cuda/sim_cuda_kernel.h"
#include "tests/sim_hsa/sim_hsa_kernel.h"

namespace emu {

using namespace ral::kernels::gpu;  // NOLINT: the argument structs

std::mutex mutex;
std::vector<std::string> contract_errors;

void contractError(const std::string& what) {
  std::lock_guard<std::mutex> lock(mutex);
  contract_errors.push_back(what);
}

// A launch in HSA's terms: the grid in work-items.
struct Launch {
  uint64_t grid_size[3];
  uint32_t workgroup_size[3];
  uint64_t group_bytes;  // workgroup memory; UINT64_MAX where the runtime does not say (CUDA)
};

// A linear kernel's launch: 256-wide workgroups in x only, `threads` = the grid's work-items.
bool linearLaunch(const Launch* d, int64_t threads, const char* kernel) {
  if (d->workgroup_size[0] != kLinearBlock || d->workgroup_size[1] != 1 ||
      d->workgroup_size[2] != 1 || d->grid_size[1] != 1 || d->grid_size[2] != 1 ||
      d->grid_size[0] % kLinearBlock != 0 || static_cast<uint64_t>(threads) != d->grid_size[0]) {
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
void copy(const Launch* d, const void* kernarg) {
  CopyArgs a;
  std::memcpy(&a, kernarg, sizeof(a));
  if (!linearLaunch(d, a.threads, "ral_strided_copy")) return;
  for (int64_t t = 0; t < static_cast<int64_t>(d->grid_size[0]); ++t)
    for (int64_t i = t; i < a.count; i += a.threads)
      static_cast<U*>(a.dst)[offsetOf(a.sizes, a.dst_strides, i)] =
          static_cast<const U*>(a.src)[offsetOf(a.sizes, a.src_strides, i)];
}

template <typename U>
void fill(const Launch* d, const void* kernarg) {
  FillArgs a;
  std::memcpy(&a, kernarg, sizeof(a));
  if (!linearLaunch(d, a.threads, "ral_strided_fill")) return;
  for (int64_t t = 0; t < static_cast<int64_t>(d->grid_size[0]); ++t)
    for (int64_t i = t; i < a.count; i += a.threads)
      static_cast<U*>(a.dst)[offsetOf(a.sizes, a.dst_strides, i)] = static_cast<U>(a.value);
}

template <typename T>
void rng(const Launch* d, const void* kernarg) {
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

// The value in the precision the device code computes in: f64 stays f64, the rest is f32.
template <typename T>
auto wide(T v) {
  if constexpr (std::is_same_v<T, ral::float16> || std::is_same_v<T, ral::bfloat16>) {
    return v.toFloat();
  } else if constexpr (std::is_same_v<T, double>) {
    return v;
  } else {
    return static_cast<float>(v);
  }
}

template <typename T>
void gemm(const Launch* d, const void* kernarg) {
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  GemmArgs a;
  std::memcpy(&a, kernarg, sizeof(a));
  const uint32_t tile = kGemmTile;
  if (d->workgroup_size[0] != tile || d->workgroup_size[1] != tile || d->workgroup_size[2] != 1 ||
      d->grid_size[0] % tile != 0 || d->grid_size[1] % tile != 0 || d->grid_size[2] != 1 ||
      d->group_bytes < 2 * tile * tile * sizeof(Acc)) {
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

// The ordering kernel's steps in the order the device runs them: workgroup g takes rows g,
// g + groups, ...; loads its scratch slot, sorts it bitonically (stage by stage, as the
// workgroup's barriers separate them), then writes the first k.
template <typename T>
bool pairBefore(T va, int64_t ia, T vb, int64_t ib, int64_t n, bool desc) {
  const auto valueBefore = [desc](T x, T y) {
    const bool nx = x != x, ny = y != y;  // NaN: larger than every number
    if (nx || ny) return desc ? (nx && !ny) : (!nx && ny);
    return desc ? x > y : x < y;
  };
  if (ia >= n) return false;
  if (ib >= n) return true;
  if (valueBefore(va, vb)) return true;
  if (valueBefore(vb, va)) return false;
  return ia < ib;
}

template <typename T>
void orderRows(const Launch* d, const void* kernarg) {
  OrderArgs a;
  std::memcpy(&a, kernarg, sizeof(a));
  if (d->workgroup_size[0] != kLinearBlock || d->workgroup_size[1] != 1 ||
      d->workgroup_size[2] != 1 || d->grid_size[1] != 1 || d->grid_size[2] != 1 ||
      static_cast<int64_t>(d->grid_size[0]) != a.groups * kLinearBlock || a.groups < 1 ||
      a.padded != (int64_t{1} << a.log2_padded) || a.padded < a.n || a.k > a.n) {
    contractError("ral_order_rows: launch does not match the one-workgroup-per-row contract");
    return;
  }
  const auto* in = static_cast<const T*>(a.in);
  for (int64_t g = 0; g < a.groups; ++g) {
    int64_t* idx = a.scratch_index + g * a.padded;
    T* val = static_cast<T*>(a.scratch_value) + g * a.padded;
    for (int64_t r = g; r < a.rows; r += a.groups) {
      const int64_t xo = offsetOf(a.sizes, a.in_strides, r);
      for (int64_t i = 0; i < a.padded; ++i) {
        idx[i] = i;
        if (i < a.n) val[i] = in[xo + i * a.in_step];
      }
      for (int64_t s = 1; s <= a.log2_padded; ++s)
        for (int64_t j = int64_t{1} << (s - 1); j > 0; j >>= 1)
          for (int64_t i = 0; i < a.padded; ++i) {
            const int64_t l = i ^ j;
            if (l <= i) continue;
            const bool ascending = (i & (int64_t{1} << s)) == 0;
            const bool swap = ascending
                                  ? pairBefore(val[l], idx[l], val[i], idx[i], a.n, a.descending)
                                  : pairBefore(val[i], idx[i], val[l], idx[l], a.n, a.descending);
            if (swap) {
              std::swap(idx[i], idx[l]);
              std::swap(val[i], val[l]);
            }
          }
      T* values = static_cast<T*>(a.values) + offsetOf(a.sizes, a.values_strides, r);
      int64_t* indices = a.indices + offsetOf(a.sizes, a.indices_strides, r);
      for (int64_t i = 0; i < a.k; ++i) {
        values[i * a.values_step] = val[i];
        indices[i * a.indices_step] = idx[i];
      }
    }
  }
}

}  // namespace emu

namespace emu {

Launch fromHsa(const RalSimHsaDispatch* d) {
  return Launch{{d->grid_size[0], d->grid_size[1], d->grid_size[2]},
                {d->workgroup_size[0], d->workgroup_size[1], d->workgroup_size[2]},
                d->group_segment_size};
}

Launch fromCuda(const RalSimCudaLaunch* l) {
  Launch d{};
  for (int i = 0; i < 3; ++i) {
    d.grid_size[i] = uint64_t{l->grid[i]} * l->block[i];
    d.workgroup_size[i] = l->block[i];
  }
  d.group_bytes = UINT64_MAX;
  return d;
}

// CUDA passes each 8-byte field of the argument struct as a parameter of its own.
template <typename Args>
Args fromParams(void** params) {
  unsigned char bytes[sizeof(Args)];
  for (size_t i = 0; i < sizeof(Args) / 8; ++i) std::memcpy(bytes + 8 * i, params[i], 8);
  Args a;
  std::memcpy(&a, bytes, sizeof(a));
  return a;
}

}  // namespace emu

#define RAL_EMULATE(name, fn, Args)                                                  \
  extern "C" __attribute__((visibility("default"))) void ral_sim_hsa_kernel_##name(  \
      const RalSimHsaDispatch* d, const void* kernarg) {                             \
    const emu::Launch l = emu::fromHsa(d);                                           \
    fn(&l, kernarg);                                                                 \
  }                                                                                  \
  extern "C" __attribute__((visibility("default"))) void ral_sim_cuda_kernel_##name( \
      const RalSimCudaLaunch* launch, void** params) {                               \
    const emu::Launch l = emu::fromCuda(launch);                                     \
    const Args a = emu::fromParams<Args>(params);                                    \
    fn(&l, &a);                                                                      \
  }
RAL_EMULATE(ral_strided_copy_1, emu::copy<uint8_t>, ral::kernels::gpu::CopyArgs)
RAL_EMULATE(ral_strided_copy_2, emu::copy<uint16_t>, ral::kernels::gpu::CopyArgs)
RAL_EMULATE(ral_strided_copy_4, emu::copy<uint32_t>, ral::kernels::gpu::CopyArgs)
RAL_EMULATE(ral_strided_copy_8, emu::copy<uint64_t>, ral::kernels::gpu::CopyArgs)
RAL_EMULATE(ral_strided_fill_1, emu::fill<uint8_t>, ral::kernels::gpu::FillArgs)
RAL_EMULATE(ral_strided_fill_2, emu::fill<uint16_t>, ral::kernels::gpu::FillArgs)
RAL_EMULATE(ral_strided_fill_4, emu::fill<uint32_t>, ral::kernels::gpu::FillArgs)
RAL_EMULATE(ral_strided_fill_8, emu::fill<uint64_t>, ral::kernels::gpu::FillArgs)
RAL_EMULATE(ral_rng_uniform_f32, emu::rng<float>, ral::kernels::gpu::RngArgs)
RAL_EMULATE(ral_rng_uniform_f64, emu::rng<double>, ral::kernels::gpu::RngArgs)
RAL_EMULATE(ral_rng_uniform_f16, emu::rng<ral::float16>, ral::kernels::gpu::RngArgs)
RAL_EMULATE(ral_rng_uniform_bf16, emu::rng<ral::bfloat16>, ral::kernels::gpu::RngArgs)
RAL_EMULATE(ral_gemm_f32, emu::gemm<float>, ral::kernels::gpu::GemmArgs)
RAL_EMULATE(ral_gemm_f64, emu::gemm<double>, ral::kernels::gpu::GemmArgs)
RAL_EMULATE(ral_gemm_f16, emu::gemm<ral::float16>, ral::kernels::gpu::GemmArgs)
RAL_EMULATE(ral_gemm_bf16, emu::gemm<ral::bfloat16>, ral::kernels::gpu::GemmArgs)
RAL_EMULATE(ral_order_rows_f32, emu::orderRows<float>, ral::kernels::gpu::OrderArgs)
RAL_EMULATE(ral_order_rows_f64, emu::orderRows<double>, ral::kernels::gpu::OrderArgs)
RAL_EMULATE(ral_order_rows_i32, emu::orderRows<int32_t>, ral::kernels::gpu::OrderArgs)
RAL_EMULATE(ral_order_rows_i64, emu::orderRows<int64_t>, ral::kernels::gpu::OrderArgs)
#undef RAL_EMULATE

namespace ral::kernel_cts {

std::vector<std::string> takeContractErrors() {
  std::lock_guard<std::mutex> lock(emu::mutex);
  std::vector<std::string> errors;
  errors.swap(emu::contract_errors);
  return errors;
}

}  // namespace ral::kernel_cts
