// Module: a loaded module file (.ralm).
//
// load() memory-maps the file (or copies the given bytes), checks the FlatBuffers structure and
// then the contents (ABI version, signatures, constants in bounds, entry present, code checksums)
// before using any of it, loads the host shared object from memory (memfd_create, never a
// temporary file) and checks its symbols against the manifest. link() resolves the import table
// once for the executions of one Context. Every failure is a Status that says what to fix.
#ifndef RAL_MODULE_H_
#define RAL_MODULE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "ral/abi.h"
#include "ral/context_type.h"
#include "ral/driver.h"
#include "ral/module_spec.h"
#include "ral/registry.h"
#include "ral/status.h"

namespace ral {

class Context;

// A constant inside the loaded file (64-byte aligned, used in place).
struct ConstantRef {
  std::string name;
  DType dtype = DType::kInvalid;
  std::vector<int64_t> shape;
  const void* data = nullptr;
  size_t size = 0;
};

// A device executable inside the loaded file. A `host` executable's data is the NUL-terminated
// names of its entries' symbols in the host library, in entry order; loading the library resolves
// them into `host_functions` (ral_host_kernel pointers, drivers/cpu/host_kernel.h).
// An executable's code is one or more variants, each for one target architecture: one with an
// empty target (for any device of the format's kind) or one per target (ral-compile
// --gpu-arch); `data` and `size` are those of the first.
struct ExecutableRef {
  struct Variant {
    std::string target;
    const void* data = nullptr;
    size_t size = 0;
  };
  std::string name;
  ExecutableFormat format = ExecutableFormat::kHostFunction;
  const void* data = nullptr;
  size_t size = 0;
  std::vector<EntryPoint> entries;
  std::vector<Variant> variants;  // at least one
  std::vector<void*> host_functions;
  // What Driver::load() takes for variant `variant`; valid while the module lives.
  ExecutableSpec spec(size_t variant = 0) const;
};

// The host library built for a newer CPU level (ral/host_variant.h), inside the loaded file.
struct HostVariantRef {
  std::string target;  // "x86-64-v3", "x86-64-v4"
  const uint8_t* data = nullptr;
  size_t size = 0;
};

struct LoadOptions {
  // dlopen the host library and check its symbols. Tools that only read a module turn it off:
  // no code of the module runs, and the module cannot be linked or run.
  bool load_host_library = true;
};

class Module {
 public:
  using EntryFn = void (*)(void* ctx);

  static StatusOr<std::shared_ptr<Module>> load(const std::string& path,
                                                const LoadOptions& options = {});
  // Copies `data` (the caller's buffer may go away).
  static StatusOr<std::shared_ptr<Module>> load(const void* data, size_t size,
                                                const LoadOptions& options = {});
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  uint32_t abiVersion() const { return abi_version_; }
  const std::string& name() const { return name_; }
  const std::string& entryName() const { return entry_name_; }
  const std::vector<TensorSignature>& inputs() const { return inputs_; }
  const std::vector<TensorSignature>& outputs() const { return outputs_; }
  const std::vector<std::string>& imports() const { return imports_; }
  const std::vector<ExecutableRef>& executables() const { return executables_; }
  const std::vector<ConstantRef>& constants() const { return constants_; }
  const ConstantRef* findConstant(std::string_view name) const;
  const ExecutableRef* findExecutable(std::string_view name) const;
  size_t hostLibrarySize() const { return host_library_size_; }
  // The host library's bytes (inside the loaded file; valid while the module lives).
  const uint8_t* hostLibraryData() const { return host_library_; }
  // moduleChecksum() of the host library (verified on load).
  uint64_t hostLibraryChecksum() const { return host_library_checksum_; }
  // The host library's variants (checksums verified on load), and the target of the one loaded:
  // the best this CPU runs, or RAL_HOST_VARIANT's; "" for the baseline library.
  const std::vector<HostVariantRef>& hostVariants() const { return host_variants_; }
  const std::string& loadedHostTarget() const { return loaded_host_target_; }
  size_t fileSize() const { return size_; }
  // Where it came from: the path, or "<memory>".
  const std::string& source() const { return source_; }

  bool hostLibraryLoaded() const { return library_ != nullptr; }
  // The entry function; null when the host library was not loaded.
  EntryFn entry() const { return entry_; }

  // Fills the import table for executions of `context` (its execution type and registry), or
  // fails listing every name that does not resolve. Done once: later calls for the same type and
  // registry return the first result. The loaded code has one table, so a module serves one
  // execution type; load it again for a context of another type.
  Status link(const Context& context);
  bool linked() const;

 private:
  Module() = default;
  static StatusOr<std::shared_ptr<Module>> fromStorage(std::shared_ptr<Module> module,
                                                       const LoadOptions& options);
  Status parse();
  Status openHostLibrary();
  Status resolveHostKernels();

  std::string source_;
  // The file bytes: a read-only mapping or an owned 64-byte aligned copy.
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* mapping_ = nullptr;
  size_t mapping_size_ = 0;
  void* owned_ = nullptr;

  uint32_t abi_version_ = 0;
  std::string name_;
  std::string entry_name_;
  std::vector<TensorSignature> inputs_;
  std::vector<TensorSignature> outputs_;
  std::vector<std::string> imports_;
  std::vector<ExecutableRef> executables_;
  std::vector<ConstantRef> constants_;
  const uint8_t* host_library_ = nullptr;
  size_t host_library_size_ = 0;
  uint64_t host_library_checksum_ = 0;
  std::vector<HostVariantRef> host_variants_;
  std::string loaded_host_target_;

  void* library_ = nullptr;  // dlopen handle
  EntryFn entry_ = nullptr;
  ral_import* import_table_ = nullptr;

  mutable std::mutex link_mutex_;
  bool link_done_ = false;
  Status link_status_;
  const ContextType* linked_type_ = nullptr;
  const Registry* linked_registry_ = nullptr;
};

// The device a module's code runs on: that of its inputs and outputs (ral-compile --device), else
// the one its imports name (e.g. a custom call on "vulkan"); kCpu when nothing names another.
// Two different devices are an error (Unsupported, naming both and where they come from).
StatusOr<DeviceKind> moduleDevice(const Module& module);

}  // namespace ral

#endif  // RAL_MODULE_H_
