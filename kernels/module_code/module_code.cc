#include "kernels/module_code/module_code.h"

#include <limits>
#include <vector>

#include "ral/trace.h"

namespace ral::kernels {

namespace {

constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();
constexpr int64_t kMaxArgs = 4096;

}  // namespace

Status launchModuleKernel(ExecutionContext* ctx, DeviceKind kind, Stream* stream,
                          const LaunchRequest& r) {
  Context* context = ctx->context();
  if (context == nullptr || context->module() == nullptr)
    return failedPrecondition("ral_kernel_launch: the execution's context runs no module");
  const auto& executables = context->module()->executables();
  if (r.executable < 0 || r.executable >= static_cast<int64_t>(executables.size()))
    return outOfRange("ral_kernel_launch: module '", context->module()->name(), "' has ",
                      executables.size(), " executables, not #", r.executable);
  const ExecutableRef& ref = executables[static_cast<size_t>(r.executable)];
  if (r.entry < 0 || r.entry >= static_cast<int64_t>(ref.entries.size()))
    return outOfRange("ral_kernel_launch: executable '", ref.name, "' has ", ref.entries.size(),
                      " entries, not #", r.entry);
  const std::string& entry_name = ref.entries[static_cast<size_t>(r.entry)].name;
  for (int d = 0; d < 3; ++d) {
    if (r.grid[d] < 0 || r.grid[d] > kMaxDim || r.block[d] < 1 || r.block[d] > kMaxDim)
      return invalidArgument(
          "ral_kernel_launch: kernel '", entry_name, "' launched with grid ", r.grid[0], "x",
          r.grid[1], "x", r.grid[2], " and block ", r.block[0], "x", r.block[1], "x", r.block[2],
          " (each grid size must be in [0, 2^31), each block size in [1, 2^31))");
  }
  if (r.shared_bytes < 0 || r.shared_bytes > kMaxDim)
    return invalidArgument("ral_kernel_launch: kernel '", entry_name, "' asks for ", r.shared_bytes,
                           " bytes of shared memory");
  if (r.count < 0 || r.count > kMaxArgs || (r.count > 0 && (!r.args || !r.arg_sizes)))
    return invalidArgument("ral_kernel_launch: kernel '", entry_name, "' launched with ", r.count,
                           " arguments", r.count > 0 ? " and no argument array" : "");
  // An empty grid is an empty tensor: nothing to do.
  if (r.grid[0] == 0 || r.grid[1] == 0 || r.grid[2] == 0) return Status();

  auto exe = context->moduleExecutable(kind, static_cast<uint32_t>(r.executable));
  if (!exe.ok()) return exe.status().withContext("ral_kernel_launch");
  LaunchConfig config;
  config.grid = Dim3{static_cast<uint32_t>(r.grid[0]), static_cast<uint32_t>(r.grid[1]),
                     static_cast<uint32_t>(r.grid[2])};
  config.block = Dim3{static_cast<uint32_t>(r.block[0]), static_cast<uint32_t>(r.block[1]),
                      static_cast<uint32_t>(r.block[2])};
  config.shared_memory_bytes = static_cast<uint32_t>(r.shared_bytes);
  // Argument sizes as the driver takes them; kernels have a handful of arguments.
  size_t small[32];
  std::vector<size_t> large;
  size_t* sizes = small;
  if (r.count > 32) {
    large.resize(static_cast<size_t>(r.count));
    sizes = large.data();
  }
  for (int64_t i = 0; i < r.count; ++i) {
    if (r.arg_sizes[i] <= 0 || r.args[i] == nullptr)
      return invalidArgument("ral_kernel_launch: kernel '", entry_name, "' argument ", i,
                             " is empty");
    sizes[i] = static_cast<size_t>(r.arg_sizes[i]);
  }
  const KernelArgs args{r.args, sizes, static_cast<size_t>(r.count)};
  RAL_ASSIGN_OR_RETURN(Driver * driver, context->driver(kind));
  // Inside the import's ral_kernel_launch span: which kernel it ran (the copy only when tracing).
  trace::Scope span("kernel", entry_name);
  Status launched = driver->launch(*exe, static_cast<uint32_t>(r.entry), config, args, stream);
  if (!launched.ok())
    return launched.withContext(internal::strCat("ral_kernel_launch: kernel '", entry_name, "'"));
  return Status();
}

StatusOr<void*> moduleConstantData(ExecutionContext* ctx, DeviceKind kind, int64_t index,
                                   DType dtype, int rank, const int64_t** shape) {
  Context* context = ctx->context();
  if (context == nullptr || context->module() == nullptr)
    return failedPrecondition("ral_constant: the execution's context runs no module");
  const auto& constants = context->module()->constants();
  if (index < 0 || index >= static_cast<int64_t>(constants.size()))
    return outOfRange("ral_constant: module '", context->module()->name(), "' has ",
                      constants.size(), " constants, not #", index);
  const ConstantRef& ref = constants[static_cast<size_t>(index)];
  if (ref.dtype != dtype || static_cast<int>(ref.shape.size()) != rank)
    return invalidArgument("ral_constant: constant '", ref.name, "' is ", dtypeName(ref.dtype),
                           " of rank ", ref.shape.size(), ", but the code reads it as ",
                           dtypeName(dtype), " of rank ", rank);
  *shape = ref.shape.data();
  auto data = context->moduleConstant(kind, static_cast<uint32_t>(index));
  if (!data.ok()) return data.status().withContext("ral_constant");
  return *data;
}

}  // namespace ral::kernels
