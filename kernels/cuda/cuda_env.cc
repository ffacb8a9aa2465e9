#include "kernels/cuda/cuda_env.h"

#include "kernels/cuda/embedded_fatbin.h"
#include "ral/context.h"

namespace ral::kernels::cuda {
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
  RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, DeviceKind::kCuda));
  return cudaEnv(env);
}

StatusOr<CudaEnv> cudaEnv(const KernelEnv& env) {
  Context* context = env.context;
  Driver* driver = env.driver;
  RAL_ASSIGN_OR_RETURN(CudaQueueService * queue,
                       requireService<CudaQueueService>(driver, "a CUDA queue"));
  static const char kKey = 0;
  RAL_ASSIGN_OR_RETURN(
      LoadedKernels * loaded,
      context->getOrCreate<LoadedKernels>(&kKey, [&]() -> StatusOr<std::unique_ptr<LoadedKernels>> {
        RAL_ASSIGN_OR_RETURN(Executable * exe, driver->load(builtinKernelSpec()));
        return std::make_unique<LoadedKernels>(LoadedKernels{exe});
      }));
  return CudaEnv{driver, queue, env.stream, loaded->executable};
}

DeviceScratch::~DeviceScratch() {
  if (ptr_ != nullptr) (void)driver_->deallocate(ptr_);
}

Status DeviceScratch::allocate(const CudaEnv& env, size_t bytes) {
  driver_ = env.driver;
  RAL_ASSIGN_OR_RETURN(ptr_, env.queue->allocateOn(bytes, env.stream));
  return Status();
}

}  // namespace ral::kernels::cuda
