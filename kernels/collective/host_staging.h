// How the collective kernels hand their operands to a communicator, for every device: the
// communicator works on dense host memory, so an operand reaches it as it is when it already is
// that (a dense CPU buffer), and through copies otherwise (a strided view through a dense copy on
// its device; device memory through the driver's copies to and from host memory, which the
// collective waits for). Written once against the Driver interface and the strided copy
// primitive; the registration files instantiate it per device (kernels/generic_ops.h).
#ifndef RAL_KERNELS_COLLECTIVE_HOST_STAGING_H_
#define RAL_KERNELS_COLLECTIVE_HOST_STAGING_H_

#include <type_traits>

#include "kernels/common/devices.h"
#include "kernels/common/kernel_util.h"
#include "kernels/copy/strided_copy.h"
#include "ral/context.h"
#include "ral/memref.h"

namespace ral::kernels {

template <class Dev>
class HostStaging {
  static constexpr bool kOnHost = std::is_same_v<Dev, cpu::Tag>;

 public:
  // fn(src, dst): `in` as dense host memory, and dense host memory that becomes `out`.
  template <typename T, int N, typename Fn>
  static Status run(ExecutionContext* ctx, const char* kernel, const MemRef<T, N>& in,
                    const MemRef<T, N>& out, Fn&& fn) {
    RAL_ASSIGN_OR_RETURN(Env env, envOf(ctx));
    Scratch in_host, in_dense, out_host, out_dense;
    RAL_ASSIGN_OR_RETURN(const T* src,
                         (readable<T, N>(env, kernel, in, "input", &in_dense, &in_host)));
    RAL_ASSIGN_OR_RETURN(T * dst, (writable<T, N>(env, kernel, out, &out_host)));
    RAL_RETURN_IF_ERROR(fn(src, dst));
    return writeBack<T, N>(env, kernel, dst, out, &out_dense);
  }
  template <typename T, int N, typename Fn>
  static Status read(ExecutionContext* ctx, const char* kernel, const MemRef<T, N>& in, Fn&& fn) {
    RAL_ASSIGN_OR_RETURN(Env env, envOf(ctx));
    Scratch in_host, in_dense;
    RAL_ASSIGN_OR_RETURN(const T* src,
                         (readable<T, N>(env, kernel, in, "input", &in_dense, &in_host)));
    return fn(src);
  }
  template <typename T, int N, typename Fn>
  static Status write(ExecutionContext* ctx, const char* kernel, const MemRef<T, N>& out, Fn&& fn) {
    RAL_ASSIGN_OR_RETURN(Env env, envOf(ctx));
    Scratch out_host, out_dense;
    RAL_ASSIGN_OR_RETURN(T * dst, (writable<T, N>(env, kernel, out, &out_host)));
    RAL_RETURN_IF_ERROR(fn(dst));
    return writeBack<T, N>(env, kernel, dst, out, &out_dense);
  }

 private:
  struct Env {
    KernelEnv device;  // the operands' device
    Driver* host;      // where host copies come from: the context's CPU driver
  };

  static StatusOr<Env> envOf(ExecutionContext* ctx) {
    RAL_ASSIGN_OR_RETURN(KernelEnv device, kernelEnv(ctx, Dev::kKind));
    RAL_ASSIGN_OR_RETURN(Driver * host, ctx->context()->driver(DeviceKind::kCpu));
    return Env{device, host};
  }

  template <int N>
  static void denseStrides(const int64_t* sizes, int64_t* strides) {
    int64_t s = 1;
    for (int d = N - 1; d >= 0; --d) {
      strides[d] = s;
      s *= sizes[d];
    }
  }

  // `m` dense, on its device: itself, or a dense copy in `scratch`.
  template <typename T, int N>
  static StatusOr<const T*> denseOnDevice(const KernelEnv& env, const char* kernel,
                                          const MemRef<T, N>& m, Scratch* scratch) {
    if (m.isContiguous()) return static_cast<const T*>(m.data());
    RAL_RETURN_IF_ERROR(scratch->allocate(env.driver, sizeof(T) * m.numel()));
    int64_t strides[N];
    denseStrides<N>(m.sizes, strides);
    RAL_RETURN_IF_ERROR(stridedCopy(Dev{}, env, kernel, sizeof(T), N, m.sizes, m.data(), m.strides,
                                    scratch->as<T>(), strides, "input", "dense copy"));
    return static_cast<const T*>(scratch->as<T>());
  }

  template <typename T, int N>
  static StatusOr<const T*> readable(const Env& env, const char* kernel, const MemRef<T, N>& m,
                                     const char* what, Scratch* dense, Scratch* host) {
    if constexpr (!kOnHost) {
      if (m.numel() > 0)
        RAL_RETURN_IF_ERROR(checkDeviceAccess(*env.device.driver, m, kernel, what));
    }
    RAL_ASSIGN_OR_RETURN(const T* on_device, (denseOnDevice<T, N>(env.device, kernel, m, dense)));
    if constexpr (kOnHost) {
      return on_device;
    } else {
      const size_t bytes = sizeof(T) * m.numel();
      RAL_RETURN_IF_ERROR(host->allocate(env.host, bytes));
      if (bytes == 0) return static_cast<const T*>(host->as<T>());
      RAL_RETURN_IF_ERROR(env.device.driver->copy(host->as<T>(), on_device, bytes,
                                                  CopyKind::kDeviceToHost, env.device.stream));
      RAL_RETURN_IF_ERROR(env.device.driver->synchronize(env.device.stream));
      return static_cast<const T*>(host->as<T>());
    }
  }

  template <typename T, int N>
  static StatusOr<T*> writable(const Env& env, const char* kernel, const MemRef<T, N>& m,
                               Scratch* host) {
    if constexpr (kOnHost) {
      if (m.isContiguous()) return m.data();
    } else {
      if (m.numel() > 0)
        RAL_RETURN_IF_ERROR(checkDeviceAccess(*env.device.driver, m, kernel, "output"));
    }
    RAL_RETURN_IF_ERROR(host->allocate(env.host, sizeof(T) * m.numel()));
    return host->as<T>();
  }

  // `m` = the dense host result `dense` (nothing to do when the result was written in place).
  template <typename T, int N>
  static Status writeBack(const Env& env, const char* kernel, const T* result,
                          const MemRef<T, N>& m, Scratch* scratch) {
    if (result == m.data() || m.numel() == 0) return Status();
    int64_t strides[N];
    denseStrides<N>(m.sizes, strides);
    const KernelEnv& dev = env.device;
    if constexpr (kOnHost) {
      return stridedCopy(Dev{}, dev, kernel, sizeof(T), N, m.sizes, result, strides, m.data(),
                         m.strides, "dense result", "output");
    } else {
      const size_t bytes = sizeof(T) * m.numel();
      T* target = m.data();
      if (!m.isContiguous()) {
        RAL_RETURN_IF_ERROR(scratch->allocate(dev.driver, bytes));
        target = scratch->as<T>();
      }
      RAL_RETURN_IF_ERROR(
          dev.driver->copy(target, result, bytes, CopyKind::kHostToDevice, dev.stream));
      if (target != m.data())
        RAL_RETURN_IF_ERROR(stridedCopy(Dev{}, dev, kernel, sizeof(T), N, m.sizes, target, strides,
                                        m.data(), m.strides, "dense result", "output"));
      // The host copy and the device scratch go when this returns.
      return dev.driver->synchronize(dev.stream);
    }
  }
};

}  // namespace ral::kernels

#endif  // RAL_KERNELS_COLLECTIVE_HOST_STAGING_H_
