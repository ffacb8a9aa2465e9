// The conformance suite's backends: how each driver is created and where its kernels come from.
//  - cpu: host-function executables (kernels_host.cc);
//  - vulkan (when built): SPIR-V compiled from GLSL at build time, on whatever device the
//    Vulkan loader offers (Mesa's lavapipe in CI), pipeline cache off;
//  - cuda_sim (when built): the CUDA driver over libral_sim_cuda.so, whose module images name
//    exported host functions of this binary (main() points RAL_CUDA_DRIVER_PATH at it);
//  - hsa_sim (when built): the HSA driver over libral_sim_hsa.so, whose code objects name
//    exported host functions of this binary (main() points RAL_HSA_RUNTIME_PATH at it).
#include <cstring>
#include <string>

#include "cts.h"
#include "drivers/cpu/cpu_driver.h"
#include "kernels_host.h"
#ifdef RAL_CTS_VULKAN
#include "drivers/vulkan/vulkan_driver.h"
#endif
#ifdef RAL_CTS_CUDA
#include "drivers/cuda/cuda_driver.h"
#include "drivers/cuda/cuda_library.h"
#include "ral/driver_services.h"
#endif
#ifdef RAL_CTS_HSA
#include "drivers/hsa/hsa_driver.h"
#endif

namespace ral::cts {
#ifdef RAL_CTS_VULKAN
// The SPIR-V of the test shaders, embedded at build time.
namespace spirv {
extern const uint32_t add_one[];
extern const size_t add_one_size;
extern const uint32_t fill_index[];
extern const size_t fill_index_size;
extern const uint32_t args[];
extern const size_t args_size;
}  // namespace spirv

#endif

namespace {

const char* kernelName(KernelId id) {
  switch (id) {
    case KernelId::kAddOne:
      return "add_one";
    case KernelId::kFillIndex:
      return "fill_index";
    case KernelId::kArgs:
      return "args";
  }
  return "";
}

// A simulated driver's kernel: text naming host functions of this binary, entry 0 the kernel.
[[maybe_unused]] ExecutableSpec textKernel(KernelId id, ExecutableFormat format, const char* text) {
  ExecutableSpec spec;
  spec.name = std::string("cts.") + kernelName(id);
  spec.format = format;
  spec.data = text;
  spec.size = std::strlen(text);
  spec.entries = {{kernelName(id), {0, 0, 0}}};
  return spec;
}

template <typename D>
StatusOr<std::unique_ptr<Driver>> upcast(StatusOr<std::unique_ptr<D>> driver) {
  if (!driver.ok()) return driver.status();
  return std::unique_ptr<Driver>(std::move(driver).value());
}

class CpuBackend final : public CtsBackend {
 public:
  std::string name() const override { return "cpu"; }
  StatusOr<std::unique_ptr<Driver>> createDriver() const override {
    return upcast(cpu::CpuDriver::create({2, {}}));
  }
  ExecutableSpec kernel(KernelId id) const override {
    static const ral_host_kernel tables[3][1] = {{cpuAddOne}, {cpuFillIndex}, {cpuArgs}};
    ExecutableSpec spec;
    spec.name = std::string("cts.") + kernelName(id);
    spec.format = ExecutableFormat::kHostFunction;
    spec.data = tables[static_cast<int>(id)];
    spec.size = sizeof(ral_host_kernel);
    spec.entries = {{kernelName(id), {0, 0, 0}}};
    return spec;
  }
  ExecutableSpec missingEntry() const override {
    static const ral_host_kernel table[] = {cpuAddOne, nullptr};
    ExecutableSpec spec = kernel(KernelId::kAddOne);
    spec.name = "cts.missing_entry";
    spec.data = table;
    spec.size = sizeof(table);
    spec.entries.push_back({"no_such_entry", {0, 0, 0}});
    return spec;
  }
};

#ifdef RAL_CTS_VULKAN
class VulkanBackend final : public CtsBackend {
 public:
  std::string name() const override { return "vulkan"; }
  StatusOr<std::unique_ptr<Driver>> createDriver() const override {
    vulkan::VulkanDriverOptions options;
    options.pipeline_cache_dir = "off";
    return upcast(vulkan::VulkanDriver::create(options));
  }
  ExecutableSpec kernel(KernelId id) const override {
    ExecutableSpec spec;
    spec.name = std::string("cts.") + kernelName(id);
    spec.format = ExecutableFormat::kSpirv;
    switch (id) {
      case KernelId::kAddOne:
        spec.data = spirv::add_one;
        spec.size = spirv::add_one_size;
        break;
      case KernelId::kFillIndex:
        spec.data = spirv::fill_index;
        spec.size = spirv::fill_index_size;
        break;
      case KernelId::kArgs:
        spec.data = spirv::args;
        spec.size = spirv::args_size;
        break;
    }
    spec.entries = {{"main", {0, 0, 0}}};
    return spec;
  }
};
#endif

#ifdef RAL_CTS_CUDA
// Module images of the simulated CUDA driver: entry, exported symbol, parameter sizes.
constexpr char kSimAddOne[] = RAL_SIM_CUDA_MODULE_MAGIC "\nadd_one ral_cts_sim_add_one 8 4\n";
constexpr char kSimFillIndex[] =
    RAL_SIM_CUDA_MODULE_MAGIC "\nfill_index ral_cts_sim_fill_index 8 4 4\n";
constexpr char kSimArgs[] = RAL_SIM_CUDA_MODULE_MAGIC "\nargs ral_cts_sim_args 8 1 2 4 8 16\n";

class CudaSimBackend final : public CtsBackend {
 public:
  std::string name() const override { return "cuda_sim"; }
  StatusOr<std::unique_ptr<Driver>> createDriver() const override {
    return upcast(cuda::CudaDriver::create());
  }
  ExecutableSpec kernel(KernelId id) const override {
    const char* images[] = {kSimAddOne, kSimFillIndex, kSimArgs};
    return textKernel(id, ExecutableFormat::kPtx, images[static_cast<int>(id)]);
  }
  void* createNativeStream(Driver& driver) const override {
    auto lib = cuda::CudaLibrary::get();
    auto* queue = driver.service<CudaQueueService>();
    if (!lib.ok() || queue == nullptr || !queue->makeCurrent().ok()) return nullptr;
    CUstream stream = nullptr;
    if (!RAL_CUDA_CALL(**lib, cuStreamCreate, &stream, CU_STREAM_NON_BLOCKING).ok()) return nullptr;
    return stream;
  }
  Status destroyNativeStream(Driver& driver, void* native) const override {
    RAL_ASSIGN_OR_RETURN(const cuda::CudaLibrary* lib, cuda::CudaLibrary::get());
    RAL_RETURN_IF_ERROR(driver.service<CudaQueueService>()->makeCurrent());
    return RAL_CUDA_CALL(*lib, cuStreamDestroy_v2, static_cast<CUstream>(native));
  }
};
#endif

#ifdef RAL_CTS_HSA
// Code objects of the simulated HSA runtime: kernel, exported symbol, kernarg segment bytes.
constexpr char kHsaAddOne[] = RAL_SIM_HSA_CODE_OBJECT_MAGIC "\nadd_one ral_cts_hsa_add_one 16\n";
constexpr char kHsaFillIndex[] =
    RAL_SIM_HSA_CODE_OBJECT_MAGIC "\nfill_index ral_cts_hsa_fill_index 16\n";
constexpr char kHsaArgs[] = RAL_SIM_HSA_CODE_OBJECT_MAGIC "\nargs ral_cts_hsa_args 48\n";

class HsaSimBackend final : public CtsBackend {
 public:
  std::string name() const override { return "hsa_sim"; }
  StatusOr<std::unique_ptr<Driver>> createDriver() const override {
    return upcast(hsa::HsaDriver::create());
  }
  ExecutableSpec kernel(KernelId id) const override {
    const char* objects[] = {kHsaAddOne, kHsaFillIndex, kHsaArgs};
    return textKernel(id, ExecutableFormat::kHsaco, objects[static_cast<int>(id)]);
  }
};
#endif

}  // namespace

const std::vector<const CtsBackend*>& backends() {
  static const auto* const list = new std::vector<const CtsBackend*>{
      new CpuBackend(),
#ifdef RAL_CTS_VULKAN
      new VulkanBackend(),
#endif
#ifdef RAL_CTS_CUDA
      new CudaSimBackend(),
#endif
#ifdef RAL_CTS_HSA
      new HsaSimBackend(),
#endif
  };
  return *list;
}

}  // namespace ral::cts
