// The `Impl` of the CUDA collective kernels (collective.h): NCCL on device memory when the
// Context's CUDA collectives use it (nccl.h, RAL_CUDA_COLLECTIVES), host staging otherwise.
// Operands NCCL cannot take as they are (strided views, memory that is not the device's) go
// through a dense copy on the device, queued on the execution's stream like the NCCL call.
// Included by registration_cuda.cc before it registers the generic ops.
#ifndef RAL_KERNELS_COLLECTIVE_NCCL_STAGING_H_
#define RAL_KERNELS_COLLECTIVE_NCCL_STAGING_H_

#include "kernels/collective/host_staging.h"
#include "kernels/collective/nccl.h"

namespace ral::kernels::cuda {

struct NcclStaging {
  template <typename T, int N, typename Fn>
  static Status run(ExecutionContext* ctx, const char* kernel, Communicator& comm,
                    const MemRef<T, N>& in, const MemRef<T, N>& out, Fn&& fn) {
    return either(
        ctx, kernel, comm,
        [&] { return HostStaging<Tag>::run<T, N>(ctx, kernel, comm, in, out, fn); },
        [&](auto& calls) {
          return Staging<Tag>::run<T, N>(ctx, kernel, StageTo::kDevice, calls, in, out, fn);
        });
  }
  template <typename T, int N, typename Fn>
  static Status read(ExecutionContext* ctx, const char* kernel, Communicator& comm,
                     const MemRef<T, N>& in, Fn&& fn) {
    return either(
        ctx, kernel, comm, [&] { return HostStaging<Tag>::read<T, N>(ctx, kernel, comm, in, fn); },
        [&](auto& calls) {
          return Staging<Tag>::read<T, N>(ctx, kernel, StageTo::kDevice, calls, in, fn);
        });
  }
  template <typename T, int N, typename Fn>
  static Status write(ExecutionContext* ctx, const char* kernel, Communicator& comm,
                      const MemRef<T, N>& out, Fn&& fn) {
    return either(
        ctx, kernel, comm,
        [&] { return HostStaging<Tag>::write<T, N>(ctx, kernel, comm, out, fn); },
        [&](auto& calls) {
          return Staging<Tag>::write<T, N>(ctx, kernel, StageTo::kDevice, calls, out, fn);
        });
  }

 private:
  // host() where host staging serves the Context's CUDA collectives, device(calls) with NCCL.
  template <typename Host, typename Device>
  static Status either(ExecutionContext* ctx, const char* kernel, Communicator& comm, Host&& host,
                       Device&& device) {
    StatusOr<NcclCommunicator*> nccl = ncclCommunicatorOf(ctx, comm);
    if (!nccl.ok()) return nccl.status().withContext(kernel);
    if (*nccl == nullptr) return host();
    NcclCommunicator::StreamCalls calls = (*nccl)->calls(ctx->stream());
    return device(calls);
  }
};

}  // namespace ral::kernels::cuda

namespace ral::kernels {
template <>
struct CollectiveImplOf<cuda::Tag> {
  using type = cuda::NcclStaging;
};
}  // namespace ral::kernels

#endif  // RAL_KERNELS_COLLECTIVE_NCCL_STAGING_H_
