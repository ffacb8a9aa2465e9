// How the collective kernels hand their operands to a transport, for every device.
//  - Staging<Dev>: brings an operand to where the transport reads it and back. To host memory
//    (the host communicator): a dense CPU buffer as it is, a strided view through a dense copy,
//    device memory through the driver's copies to and from host memory, which the collective
//    waits for. To the operands' device (a device communicator, such as NCCL): dense device
//    memory as it is, a strided view through a dense copy on the device, all queued on the
//    execution's stream; the transport's finish() waits for that work before scratch is freed.
//  - HostCalls: the host communicator's calls, in the form the kernels make them (collective.h).
//  - HostStaging<Dev>: the `Impl` of collective.h that stages through host memory; what every
//    device registers (kernels/generic_ops.h), and what CUDA falls back to without NCCL.
// Written once against the Driver interface and the strided copy primitive.
#ifndef RAL_KERNELS_COLLECTIVE_HOST_STAGING_H_
#define RAL_KERNELS_COLLECTIVE_HOST_STAGING_H_

#include <cstring>
#include <type_traits>

#include "kernels/common/devices.h"
#include "kernels/common/kernel_util.h"
#include "kernels/copy/strided_copy.h"
#include "ral/communicator.h"
#include "ral/context.h"
#include "ral/memref.h"

namespace ral::kernels {

// Where a transport reads and writes its buffers.
enum class StageTo { kHost, kDevice };

template <class Dev>
class Staging {
  static constexpr bool kOnHost = std::is_same_v<Dev, cpu::Tag>;

 public:
  // fn(calls, src, dst): `in` as dense memory at `to`, and dense memory at `to` that becomes
  // `out`. calls.finish() runs last, whatever failed before it.
  template <typename T, int N, class Calls, typename Fn>
  static Status run(ExecutionContext* ctx, const char* kernel, StageTo to, Calls& calls,
                    const MemRef<T, N>& in, const MemRef<T, N>& out, Fn&& fn) {
    RAL_ASSIGN_OR_RETURN(Env env, envOf(ctx, to));
    Scratch in_stage, in_dense, out_stage, out_dense;
    const Status s = [&]() -> Status {
      RAL_ASSIGN_OR_RETURN(const T* src,
                           (readable<T, N>(env, kernel, calls, in, &in_dense, &in_stage)));
      RAL_ASSIGN_OR_RETURN(T * dst, (writable<T, N>(env, kernel, calls, out, &out_stage)));
      RAL_RETURN_IF_ERROR(fn(calls, src, dst));
      return writeBack<T, N>(env, kernel, dst, out, &out_dense);
    }();
    return finished(s, calls.finish());
  }
  template <typename T, int N, class Calls, typename Fn>
  static Status read(ExecutionContext* ctx, const char* kernel, StageTo to, Calls& calls,
                     const MemRef<T, N>& in, Fn&& fn) {
    RAL_ASSIGN_OR_RETURN(Env env, envOf(ctx, to));
    Scratch in_stage, in_dense;
    const Status s = [&]() -> Status {
      RAL_ASSIGN_OR_RETURN(const T* src,
                           (readable<T, N>(env, kernel, calls, in, &in_dense, &in_stage)));
      return fn(calls, src);
    }();
    return finished(s, calls.finish());
  }
  template <typename T, int N, class Calls, typename Fn>
  static Status write(ExecutionContext* ctx, const char* kernel, StageTo to, Calls& calls,
                      const MemRef<T, N>& out, Fn&& fn) {
    RAL_ASSIGN_OR_RETURN(Env env, envOf(ctx, to));
    Scratch out_stage, out_dense;
    const Status s = [&]() -> Status {
      RAL_ASSIGN_OR_RETURN(T * dst, (writable<T, N>(env, kernel, calls, out, &out_stage)));
      RAL_RETURN_IF_ERROR(fn(calls, dst));
      return writeBack<T, N>(env, kernel, dst, out, &out_dense);
    }();
    return finished(s, calls.finish());
  }

 private:
  struct Env {
    KernelEnv device;  // the operands' device
    Driver* stage;     // where dense buffers for the transport come from
    bool to_host;      // the transport reads host memory and the device is not the host
  };

  static Status finished(const Status& work, Status finish) { return work.ok() ? finish : work; }

  static StatusOr<Env> envOf(ExecutionContext* ctx, StageTo to) {
    RAL_ASSIGN_OR_RETURN(KernelEnv device, kernelEnv(ctx, Dev::kKind));
    const bool to_host = !kOnHost && to == StageTo::kHost;
    Driver* stage = device.driver;
    if (to_host) {
      RAL_ASSIGN_OR_RETURN(stage, ctx->context()->driver(DeviceKind::kCpu));
    }
    return Env{device, stage, to_host};
  }

  template <int N>
  static void denseStrides(const int64_t* sizes, int64_t* strides) {
    int64_t s = 1;
    for (int d = N - 1; d >= 0; --d) {
      strides[d] = s;
      s *= sizes[d];
    }
  }

  // `m` dense, on its device: itself (when `direct`), or a dense copy in `scratch`.
  template <typename T, int N>
  static StatusOr<const T*> denseOnDevice(const KernelEnv& env, const char* kernel,
                                          const MemRef<T, N>& m, bool direct, Scratch* scratch) {
    if (m.isContiguous() && direct) return static_cast<const T*>(m.data());
    RAL_RETURN_IF_ERROR(scratch->allocate(env.driver, sizeof(T) * m.numel()));
    int64_t strides[N];
    denseStrides<N>(m.sizes, strides);
    RAL_RETURN_IF_ERROR(stridedCopy(Dev{}, env, kernel, sizeof(T), N, m.sizes, m.data(), m.strides,
                                    scratch->as<T>(), strides, "input", "dense copy"));
    return static_cast<const T*>(scratch->as<T>());
  }

  // The transport takes memory as it is where calls.direct() says so, in device mode.
  template <typename T, int N, class Calls>
  static StatusOr<const T*> readable(const Env& env, const char* kernel, const Calls& calls,
                                     const MemRef<T, N>& m, Scratch* dense, Scratch* host) {
    if constexpr (!kOnHost) {
      if (m.numel() > 0)
        RAL_RETURN_IF_ERROR(checkDeviceAccess(*env.device.driver, m, kernel, "input"));
    }
    const bool direct = env.to_host || m.numel() == 0 || calls.direct(m.data());
    RAL_ASSIGN_OR_RETURN(const T* on_device,
                         (denseOnDevice<T, N>(env.device, kernel, m, direct, dense)));
    if (!env.to_host) return on_device;
    const size_t bytes = sizeof(T) * m.numel();
    RAL_RETURN_IF_ERROR(host->allocate(env.stage, bytes));
    if (bytes == 0) return static_cast<const T*>(host->as<T>());
    RAL_RETURN_IF_ERROR(env.device.driver->copy(host->as<T>(), on_device, bytes,
                                                CopyKind::kDeviceToHost, env.device.stream));
    RAL_RETURN_IF_ERROR(env.device.driver->synchronize(env.device.stream));
    return static_cast<const T*>(host->as<T>());
  }

  template <typename T, int N, class Calls>
  static StatusOr<T*> writable(const Env& env, const char* kernel, const Calls& calls,
                               const MemRef<T, N>& m, Scratch* stage) {
    if constexpr (!kOnHost) {
      if (m.numel() > 0)
        RAL_RETURN_IF_ERROR(checkDeviceAccess(*env.device.driver, m, kernel, "output"));
    }
    if (!env.to_host && m.isContiguous() && (m.numel() == 0 || calls.direct(m.data())))
      return m.data();
    RAL_RETURN_IF_ERROR(stage->allocate(env.stage, sizeof(T) * m.numel()));
    return stage->as<T>();
  }

  // `m` = the dense result `result` (nothing to do when the result was written in place).
  template <typename T, int N>
  static Status writeBack(const Env& env, const char* kernel, const T* result,
                          const MemRef<T, N>& m, Scratch* scratch) {
    if (result == m.data() || m.numel() == 0) return Status();
    int64_t strides[N];
    denseStrides<N>(m.sizes, strides);
    const KernelEnv& dev = env.device;
    if (!env.to_host)  // `result` is dense memory of the operands' device
      return stridedCopy(Dev{}, dev, kernel, sizeof(T), N, m.sizes, result, strides, m.data(),
                         m.strides, "dense result", "output");
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
};

// The host communicator's calls as the kernels make them.
struct HostCalls {
  Communicator& comm;

  Status allReduce(const void* in, void* out, int64_t count, DType dtype, ReduceOp op) {
    return comm.allReduce(in, out, count, dtype, op);
  }
  Status allGather(const void* in, void* out, int64_t count, DType dtype) {
    return comm.allGather(in, out, count, dtype);
  }
  Status reduceScatter(const void* in, void* out, int64_t count, DType dtype, ReduceOp op) {
    return comm.reduceScatter(in, out, count, dtype, op);
  }
  // Host communicators broadcast in place: the output, holding the input, is sent from the root.
  Status broadcast(const void* in, void* out, int64_t count, DType dtype, int root) {
    if (in != out && count > 0) std::memcpy(out, in, dtypeSize(dtype) * count);
    return comm.broadcast(out, count, dtype, root);
  }
  Status allToAll(const void* in, void* out, int64_t count, DType dtype) {
    return comm.allToAll(in, out, count, dtype);
  }
  Status send(const void* data, int64_t count, DType dtype, int peer, int tag) {
    return comm.send(data, count, dtype, peer, tag);
  }
  Status recv(void* data, int64_t count, DType dtype, int peer, int tag) {
    return comm.recv(data, count, dtype, peer, tag);
  }
  // Every call above is done when it returns.
  Status finish() { return Status(); }
  // Host memory is taken as it is.
  bool direct(const void*) const { return true; }
};

template <class Dev>
struct HostStaging {
  template <typename T, int N, typename Fn>
  static Status run(ExecutionContext* ctx, const char* kernel, Communicator& comm,
                    const MemRef<T, N>& in, const MemRef<T, N>& out, Fn&& fn) {
    HostCalls calls{comm};
    return Staging<Dev>::template run<T, N>(ctx, kernel, StageTo::kHost, calls, in, out, fn);
  }
  template <typename T, int N, typename Fn>
  static Status read(ExecutionContext* ctx, const char* kernel, Communicator& comm,
                     const MemRef<T, N>& in, Fn&& fn) {
    HostCalls calls{comm};
    return Staging<Dev>::template read<T, N>(ctx, kernel, StageTo::kHost, calls, in, fn);
  }
  template <typename T, int N, typename Fn>
  static Status write(ExecutionContext* ctx, const char* kernel, Communicator& comm,
                      const MemRef<T, N>& out, Fn&& fn) {
    HostCalls calls{comm};
    return Staging<Dev>::template write<T, N>(ctx, kernel, StageTo::kHost, calls, out, fn);
  }
};

// The Impl a device's collectives are registered with: host staging, unless the device's
// registration file specializes this before registering (CUDA: nccl_staging.h).
template <class Dev>
struct CollectiveImplOf {
  using type = HostStaging<Dev>;
};

}  // namespace ral::kernels

#endif  // RAL_KERNELS_COLLECTIVE_HOST_STAGING_H_
