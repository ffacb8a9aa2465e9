// The collective kernels on the CPU (kernels/collective/collective.h has the contract): operands
// are host memory already, so a dense operand goes to the communicator as it is and a strided
// one through a dense copy.
#include "kernels/collective/collective.h"
#include "kernels/common/devices.h"
#include "kernels/copy/strided_copy.h"
#include "ral/registration.h"

namespace ral::kernels::cpu {
namespace {

template <int N>
void denseStrides(const int64_t* sizes, int64_t* strides) {
  int64_t s = 1;
  for (int d = N - 1; d >= 0; --d) {
    strides[d] = s;
    s *= sizes[d];
  }
}

// A dense host copy of `m` in `scratch`, or m's own memory when it is dense.
template <typename T, int N>
StatusOr<const T*> denseIn(const KernelEnv& env, const char* kernel, const MemRef<T, N>& m,
                           Scratch* scratch) {
  if (m.isContiguous()) return static_cast<const T*>(m.data());
  RAL_RETURN_IF_ERROR(scratch->allocate(env.driver, sizeof(T) * m.numel()));
  int64_t strides[N > 0 ? N : 1];
  denseStrides<N>(m.sizes, strides);
  RAL_RETURN_IF_ERROR(stridedCopy(Tag{}, env, kernel, sizeof(T), N, m.sizes, m.data(), m.strides,
                                  scratch->as<T>(), strides, "input", "dense copy"));
  return static_cast<const T*>(scratch->as<T>());
}

// Where the communicator writes `m`: its own memory when dense, else `scratch`.
template <typename T, int N>
StatusOr<T*> denseOut(const KernelEnv& env, const MemRef<T, N>& m, Scratch* scratch) {
  if (m.isContiguous()) return m.data();
  RAL_RETURN_IF_ERROR(scratch->allocate(env.driver, sizeof(T) * m.numel()));
  return scratch->as<T>();
}

template <typename T, int N>
Status writeBack(const KernelEnv& env, const char* kernel, const T* dense, const MemRef<T, N>& m) {
  if (dense == m.data()) return Status();
  int64_t strides[N > 0 ? N : 1];
  denseStrides<N>(m.sizes, strides);
  return stridedCopy(Tag{}, env, kernel, sizeof(T), N, m.sizes, dense, strides, m.data(), m.strides,
                     "dense result", "output");
}

struct Impl {
  // fn(src, dst): `in` as dense host memory, and dense host memory that becomes `out`.
  template <typename T, int N, typename Fn>
  static Status run(ExecutionContext* ctx, const char* kernel, const MemRef<T, N>& in,
                    const MemRef<T, N>& out, Fn&& fn) {
    RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, DeviceKind::kCpu));
    Scratch in_copy, out_copy;
    RAL_ASSIGN_OR_RETURN(const T* src, (denseIn<T, N>(env, kernel, in, &in_copy)));
    RAL_ASSIGN_OR_RETURN(T * dst, (denseOut<T, N>(env, out, &out_copy)));
    RAL_RETURN_IF_ERROR(fn(src, dst));
    return writeBack<T, N>(env, kernel, dst, out);
  }
  template <typename T, int N, typename Fn>
  static Status read(ExecutionContext* ctx, const char* kernel, const MemRef<T, N>& in, Fn&& fn) {
    RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, DeviceKind::kCpu));
    Scratch in_copy;
    RAL_ASSIGN_OR_RETURN(const T* src, (denseIn<T, N>(env, kernel, in, &in_copy)));
    return fn(src);
  }
  template <typename T, int N, typename Fn>
  static Status write(ExecutionContext* ctx, const char* kernel, const MemRef<T, N>& out, Fn&& fn) {
    RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, DeviceKind::kCpu));
    Scratch out_copy;
    RAL_ASSIGN_OR_RETURN(T * dst, (denseOut<T, N>(env, out, &out_copy)));
    RAL_RETURN_IF_ERROR(fn(dst));
    return writeBack<T, N>(env, kernel, dst, out);
  }
};

constexpr char kDevice[] = "cpu";
RAL_REGISTER_COLLECTIVES()

}  // namespace
}  // namespace ral::kernels::cpu

RAL_REGISTRATION_ANCHOR(kernels_collective_cpu);
