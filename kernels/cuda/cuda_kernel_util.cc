#include "kernels/cuda/cuda_kernel_util.h"

#include "kernels/cuda/embedded_fatbin.h"
#include "ral/context.h"

namespace ral::cuda_kernels {
namespace {

constexpr const char* kEntryNames[] = {
    "ral_cuda_empty",       "ral_strided_copy_1",  "ral_strided_copy_2",  "ral_strided_copy_4",
    "ral_strided_copy_8",   "ral_strided_fill_1",  "ral_strided_fill_2",  "ral_strided_fill_4",
    "ral_strided_fill_8",   "ral_rng_uniform_f32", "ral_rng_uniform_f64", "ral_rng_uniform_f16",
    "ral_rng_uniform_bf16", "ral_order_rows_f32",  "ral_order_rows_f64",  "ral_order_rows_i32",
    "ral_order_rows_i64",
};
static_assert(sizeof(kEntryNames) / sizeof(kEntryNames[0]) == static_cast<size_t>(Entry::kCount),
              "one name per entry");

// The loaded executable, cached per Context so the hot path takes no lock.
struct LoadedKernels {
  Executable* executable;
};

}  // namespace

const ExecutableSpec& builtinKernelSpec() {
  static const ExecutableSpec* const spec = [] {
    auto* s = new ExecutableSpec();
    s->name = std::string("ral_cuda_builtin_kernels_") + embeddedFatbinMd5();
    s->format = ExecutableFormat::kFatbin;
    s->data = embeddedFatbin();
    s->size = embeddedFatbinSize();
    for (const char* name : kEntryNames) s->entries.push_back(EntryPoint{name, {0, 0, 0}});
    return s;
  }();
  return *spec;
}

StatusOr<CudaEnv> cudaEnv(ExecutionContext* ctx) {
  if (ctx == nullptr || ctx->context() == nullptr)
    return failedPrecondition("the execution context has no Context");
  Context* context = ctx->context();
  RAL_ASSIGN_OR_RETURN(cuda::CudaDriver * driver, context->driver<cuda::CudaDriver>());
  static const char kKey = 0;
  RAL_ASSIGN_OR_RETURN(
      LoadedKernels * loaded,
      context->getOrCreate<LoadedKernels>(&kKey, [&]() -> StatusOr<std::unique_ptr<LoadedKernels>> {
        RAL_ASSIGN_OR_RETURN(Executable * exe, driver->load(builtinKernelSpec()));
        return std::make_unique<LoadedKernels>(LoadedKernels{exe});
      }));
  return CudaEnv{driver, static_cast<Stream*>(ctx->stream()), loaded->executable};
}

Status stridedCopy(const CudaEnv& env, size_t elem_size, const StridedView& src,
                   const void* src_ptr, const StridedView& dst, void* dst_ptr, int64_t count) {
  CopyParams p{};
  p.src = src;
  p.dst = dst;
  p.count = count;
  p.src_ptr = src_ptr;
  p.dst_ptr = dst_ptr;
  switch (elem_size) {
    case 1:
      return launchLinear(env, Entry::kCopy1, count, p);
    case 2:
      return launchLinear(env, Entry::kCopy2, count, p);
    case 4:
      return launchLinear(env, Entry::kCopy4, count, p);
    case 8:
      return launchLinear(env, Entry::kCopy8, count, p);
    default:
      return unsupported("cuda: strided copy of ", elem_size, "-byte elements");
  }
}

DeviceScratch::~DeviceScratch() {
  if (ptr_ != nullptr) (void)driver_->deallocate(ptr_);
}

Status DeviceScratch::allocate(const CudaEnv& env, size_t bytes) {
  driver_ = env.driver;
  RAL_ASSIGN_OR_RETURN(ptr_, env.driver->allocateOn(bytes, env.stream));
  return Status();
}

}  // namespace ral::cuda_kernels
