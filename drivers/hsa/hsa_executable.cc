#include "drivers/hsa/hsa_executable.h"

#include <utility>

namespace ral::hsa {

HsaExecutable::~HsaExecutable() {
  if (executable_.handle != 0) (void)device_->hsa().hsa_executable_destroy(executable_);
  if (reader_.handle != 0) (void)device_->hsa().hsa_code_object_reader_destroy(reader_);
}

StatusOr<std::unique_ptr<HsaExecutable>> HsaExecutable::load(std::shared_ptr<HsaDevice> device,
                                                             const ExecutableSpec& spec,
                                                             const void* owner) {
  if (spec.format != ExecutableFormat::kHsaco)
    return unsupported("hsa: executable '", spec.name, "' is ", executableFormatName(spec.format),
                       "; the HSA driver loads hsaco code objects");
  if (spec.data == nullptr || spec.size == 0)
    return invalidArgument("hsa: executable '", spec.name, "' has no data");
  if (spec.entries.empty())
    return invalidArgument("hsa: executable '", spec.name, "' lists no entry point");
  const std::string& arch = device->gpu().arch;
  if (!spec.target.empty() && spec.target != arch)
    return unsupported("hsa: executable '", spec.name, "' was compiled for ", spec.target,
                       "; this GPU agent is ", arch);
  ExecutableSpec kept = spec;
  kept.data = nullptr;  // the loaded executable holds the code
  kept.size = 0;
  std::unique_ptr<HsaExecutable> exe(new HsaExecutable(device, std::move(kept), owner));
  const HsaLibrary& lib = device->lib();
  auto bad = [&](const Status& s) {
    return Status(
        s.code() == StatusCode::kInternal ? StatusCode::kInvalidArgument : s.code(),
        internal::strCat("hsa: executable '", spec.name, "' is not a code object this agent (",
                         arch, ") can load: ", s.message()));
  };
  Status s = RAL_HSA_CALL(lib, hsa_code_object_reader_create_from_memory, spec.data, spec.size,
                          &exe->reader_);
  if (!s.ok()) return bad(s);
  s = RAL_HSA_CALL(lib, hsa_executable_create_alt, HSA_PROFILE_FULL,
                   HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, nullptr, &exe->executable_);
  if (!s.ok()) return s;
  s = RAL_HSA_CALL(lib, hsa_executable_load_agent_code_object, exe->executable_,
                   device->gpu().agent, exe->reader_, nullptr, nullptr);
  if (s.ok()) s = RAL_HSA_CALL(lib, hsa_executable_freeze, exe->executable_, nullptr);
  uint32_t invalid = 0;
  if (s.ok()) s = RAL_HSA_CALL(lib, hsa_executable_validate, exe->executable_, &invalid);
  if (s.ok() && invalid != 0) s = invalidArgument("validation result ", invalid);
  if (!s.ok()) return bad(s);
  for (const EntryPoint& entry : spec.entries) {
    const std::string symbol_name = entry.name + ".kd";
    hsa_executable_symbol_t symbol{0};
    hsa_agent_t agent = device->gpu().agent;
    s = RAL_HSA_CALL(lib, hsa_executable_get_symbol_by_name, exe->executable_, symbol_name.c_str(),
                     &agent, &symbol);
    if (!s.ok())
      return notFound("hsa: executable '", spec.name, "' has no kernel '", entry.name,
                      "': ", s.message());
    HsaKernel k;
    const struct {
      hsa_executable_symbol_info_t attribute;
      void* out;
    } fields[] = {
        {HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &k.object},
        {HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, &k.kernarg_size},
        {HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT, &k.kernarg_alignment},
        {HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, &k.group_segment_size},
        {HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE, &k.private_segment_size},
    };
    for (const auto& field : fields)
      RAL_RETURN_IF_ERROR(
          RAL_HSA_CALL(lib, hsa_executable_symbol_get_info, symbol, field.attribute, field.out));
    if (k.kernarg_alignment < 16) k.kernarg_alignment = 16;
    exe->kernels_.push_back(k);
  }
  return exe;
}

}  // namespace ral::hsa
