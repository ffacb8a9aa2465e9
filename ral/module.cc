#include "ral/module.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "module_generated.h"
#include "ral/context.h"
#include "ral/host_library.h"
#include "ral/host_variant.h"
#include "ral/manifest_checksum.h"
#include "ral/memref.h"
#include "ral/module_checks.h"
#include "ral/name_encoding.h"
#include "ral/trace.h"

namespace ral {

namespace {

constexpr size_t kHeaderBytes = 12;  // size prefix, root offset, file identifier
constexpr size_t kMaxFileBytes = FLATBUFFERS_MAX_BUFFER_SIZE - 1;

std::string printable(const uint8_t* p, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    if (p[i] >= 0x20 && p[i] < 0x7f) {
      s += static_cast<char>(p[i]);
    } else {
      static const char kHex[] = "0123456789abcdef";
      s += "\\x";
      s += kHex[p[i] >> 4];
      s += kHex[p[i] & 15];
    }
  }
  return s;
}

// Structural checks that need no FlatBuffers parsing, so their messages can be specific.
Status checkHeader(const uint8_t* data, size_t size) {
  if (size == 0) return invalidArgument("the file is empty");
  if (size < kHeaderBytes)
    return dataLoss("the file is ", size, " bytes, too small to be a RAL module (truncated?)");
  const char* id = fb::ModuleIdentifier();
  if (std::memcmp(data + 8, id, 4) != 0)
    return invalidArgument("not a RAL module: the file identifier is '", printable(data + 8, 4),
                           "', expected '", id, "'");
  if (size > kMaxFileBytes)
    return unsupported("the file is ", size, " bytes; module files are limited to 2 GiB");
  uint32_t declared;
  std::memcpy(&declared, data, 4);
  const uint64_t expected = uint64_t{declared} + 4;
  if (expected > size)
    return dataLoss("the file is truncated: it is ", size, " bytes but its header says ", expected);
  if (expected < size)
    return dataLoss("the file has ", size - expected,
                    " unexpected bytes after the module data (header says ", expected, ")");
  return Status();
}

std::string str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

// The FlatBuffers verifier checks the alignment of a vector's length, not of its 8-byte
// elements; a builder always aligns them, so a misaligned one means a damaged file.
template <typename T>
StatusOr<std::vector<int64_t>> dims(const flatbuffers::Vector<T>* v, std::string_view what) {
  if (v == nullptr) return std::vector<int64_t>();
  if (v->size() != 0 && reinterpret_cast<uintptr_t>(v->Data()) % alignof(T) != 0)
    return dataLoss(what, ": its dimensions are misaligned in the file (the file is damaged)");
  return std::vector<int64_t>(v->begin(), v->end());
}

StatusOr<TensorSignature> readSignature(const fb::TensorSignature* s, std::string_view what) {
  if (s == nullptr) return invalidArgument(what, " is missing");
  RAL_RETURN_IF_ERROR(module_checks::checkDType(static_cast<uint8_t>(s->dtype()), what));
  RAL_RETURN_IF_ERROR(module_checks::checkDevice(static_cast<uint8_t>(s->device()), what));
  TensorSignature sig;
  sig.name = str(s->name());
  sig.dtype = static_cast<DType>(s->dtype());
  sig.device = static_cast<DeviceKind>(s->device());
  if (s->dims() && s->dims()->size() > static_cast<size_t>(kMaxMemRefRank))
    return invalidArgument(what, " has rank ", s->dims()->size(), "; at most ", kMaxMemRefRank,
                           " is supported");
  RAL_ASSIGN_OR_RETURN(sig.dims, dims(s->dims(), what));
  RAL_ASSIGN_OR_RETURN(sig.strides, dims(s->strides(), what));
  RAL_RETURN_IF_ERROR(module_checks::checkSignature(sig, what));
  return sig;
}

}  // namespace

ExecutableSpec ExecutableRef::spec(size_t variant) const {
  ExecutableSpec s;
  s.name = name;
  s.format = format;
  if (variant < variants.size()) {
    s.target = variants[variant].target;
    s.data = variants[variant].data;
    s.size = variants[variant].size;
  }
  if (format == ExecutableFormat::kHostFunction) {
    // The driver takes function pointers; without a loaded library there are none.
    s.data = host_functions.empty() ? nullptr : host_functions.data();
    s.size = host_functions.size() * sizeof(void*);
  }
  s.entries = entries;
  return s;
}

StatusOr<std::shared_ptr<Module>> Module::load(const std::string& path,
                                               const LoadOptions& options) {
  auto fail = [&](Status s) {
    return s.withContext(internal::strCat("loading module '", path, "'"));
  };
  // O_NONBLOCK: a FIFO with no writer would block open; it is refused below as not regular.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int e = errno;
    return fail(Status(e == ENOENT ? StatusCode::kNotFound : StatusCode::kUnavailable,
                       internal::strCat("cannot open the file: ", std::strerror(e))));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return fail(invalidArgument("not a regular file"));
  }
  std::shared_ptr<Module> module(new Module());
  module->source_ = path;
  const auto size = static_cast<size_t>(st.st_size);
  if (size > 0) {
    void* m = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      const int e = errno;
      close(fd);
      return fail(unavailable("cannot map the file: ", std::strerror(e)));
    }
    module->mapping_ = m;
    module->mapping_size_ = size;
    module->data_ = static_cast<const uint8_t*>(m);
  }
  close(fd);
  module->size_ = size;
  auto loaded = fromStorage(std::move(module), options);
  if (!loaded.ok()) return fail(loaded.status());
  return loaded;
}

StatusOr<std::shared_ptr<Module>> Module::load(const void* data, size_t size,
                                               const LoadOptions& options) {
  std::shared_ptr<Module> module(new Module());
  module->source_ = "<memory>";
  if (size > 0) {
    if (data == nullptr) return invalidArgument("loading a module: the data pointer is null");
    if (size > kMaxFileBytes)
      return unsupported("loading a module: ", size, " bytes; module files are limited to 2 GiB");
    // FlatBuffers alignment is relative to the start of the buffer: keep the copy 64-aligned.
    const size_t rounded =
        (size + kConstantAlignment - 1) / kConstantAlignment * kConstantAlignment;
    void* owned = std::aligned_alloc(kConstantAlignment, rounded);
    if (owned == nullptr) return outOfMemory("loading a module: cannot allocate ", size, " bytes");
    std::memcpy(owned, data, size);
    module->owned_ = owned;
    module->data_ = static_cast<const uint8_t*>(owned);
  }
  module->size_ = size;
  auto loaded = fromStorage(std::move(module), options);
  if (!loaded.ok()) return loaded.status().withContext("loading a module");
  return loaded;
}

Module::~Module() {
  if (link_done_) trace::unwatchImports(import_table_);
  if (library_ != nullptr) dlclose(library_);
  if (mapping_ != nullptr) munmap(mapping_, mapping_size_);
  std::free(owned_);
}

StatusOr<std::shared_ptr<Module>> Module::fromStorage(std::shared_ptr<Module> module,
                                                      const LoadOptions& options) {
  RAL_RETURN_IF_ERROR(module->parse());
  if (options.load_host_library) RAL_RETURN_IF_ERROR(module->openHostLibrary());
  return module;
}

Status Module::parse() {
  using namespace module_checks;
  RAL_RETURN_IF_ERROR(checkHeader(data_, size_));
  flatbuffers::Verifier verifier(data_, size_, /*max_depth=*/32, /*max_tables=*/100000);
  if (!fb::VerifySizePrefixedModuleBuffer(verifier))
    return dataLoss("the file is corrupt (its structure does not verify)");
  const fb::Module* m = fb::GetSizePrefixedModule(data_);

  abi_version_ = m->abi_version();
  if (abi_version_ != RAL_ABI_VERSION)
    return failedPrecondition("the module was built for RAL ABI version ", abi_version_,
                              " but this runtime implements version ", RAL_ABI_VERSION,
                              "; rebuild the module with a matching compiler");
  // Before any field is trusted: every byte of the manifest, payloads through their checksums.
  if (m->manifest_checksum() == 0)
    return dataLoss(
        "the module file has no manifest checksum (written by a RAL from before it "
        "existed?); rebuild it with ral-compile or ral-pack");
  if (internal::manifestChecksum(*m) != m->manifest_checksum())
    return dataLoss(
        "the module manifest (signatures, names, imports, executable and constant "
        "descriptions) fails its checksum: the file is corrupt");
  name_ = str(m->name());
  if (name_.empty()) return invalidArgument("the module has no name");
  entry_name_ = str(m->entry());
  RAL_RETURN_IF_ERROR(checkSymbol(entry_name_, "the entry symbol"));

  if (m->inputs())
    for (flatbuffers::uoffset_t i = 0; i < m->inputs()->size(); ++i) {
      RAL_ASSIGN_OR_RETURN(auto sig,
                           readSignature(m->inputs()->Get(i), internal::strCat("input ", i)));
      inputs_.push_back(std::move(sig));
    }
  if (m->outputs())
    for (flatbuffers::uoffset_t i = 0; i < m->outputs()->size(); ++i) {
      RAL_ASSIGN_OR_RETURN(auto sig,
                           readSignature(m->outputs()->Get(i), internal::strCat("output ", i)));
      outputs_.push_back(std::move(sig));
    }

  if (m->imports())
    for (flatbuffers::uoffset_t i = 0; i < m->imports()->size(); ++i) {
      const flatbuffers::String* s = m->imports()->Get(i);
      if (s == nullptr) return invalidArgument("import #", i, " is missing");
      RAL_RETURN_IF_ERROR(checkImportName(s->string_view(), i));
      imports_.push_back(s->str());
    }

  // Host code: present, an ELF shared object, intact.
  const auto* host = m->host_library();
  host_library_ = host ? host->data() : nullptr;
  host_library_size_ = host ? host->size() : 0;
  // Corruption first (a clearer message than whatever a damaged ELF header looks like).
  host_library_checksum_ = m->host_library_checksum();
  if (host_library_size_ > 0 &&
      moduleChecksum(host_library_, host_library_size_) != host_library_checksum_)
    return dataLoss("the host library fails its checksum: the file is corrupt");
  RAL_RETURN_IF_ERROR(checkHostLibraryHeader(host_library_, host_library_size_));
  if (m->host_variants()) {
    std::vector<std::string_view> targets;
    std::vector<const void*> datas;
    std::vector<size_t> sizes;
    for (flatbuffers::uoffset_t i = 0; i < m->host_variants()->size(); ++i) {
      const fb::HostVariant* v = m->host_variants()->Get(i);
      if (v == nullptr) return invalidArgument("host variant #", i, " is missing");
      HostVariantRef ref;
      ref.target = str(v->target());
      ref.data = v->data() ? v->data()->data() : nullptr;
      ref.size = v->data() ? v->data()->size() : 0;
      if (moduleChecksum(ref.data, ref.size) != v->checksum())
        return dataLoss("host variant '", ref.target, "' fails its checksum: the file is corrupt");
      host_variants_.push_back(std::move(ref));
    }
    for (const HostVariantRef& v : host_variants_) {
      targets.push_back(v.target);
      datas.push_back(v.data);
      sizes.push_back(v.size);
    }
    RAL_RETURN_IF_ERROR(checkHostVariants(targets, datas, sizes));
  }

  std::vector<std::string_view> names;
  if (m->executables())
    for (flatbuffers::uoffset_t i = 0; i < m->executables()->size(); ++i) {
      const fb::Executable* e = m->executables()->Get(i);
      if (e == nullptr) return invalidArgument("executable #", i, " is missing");
      ExecutableRef ref;
      ref.name = str(e->name());
      const std::string what = internal::strCat("executable '", ref.name, "'");
      RAL_RETURN_IF_ERROR(checkFormat(static_cast<uint8_t>(e->format()), what));
      ref.format = static_cast<ExecutableFormat>(e->format());
      ref.data = e->data() ? e->data()->data() : nullptr;
      ref.size = e->data() ? e->data()->size() : 0;
      if (e->entries())
        for (const fb::ExecutableEntry* entry : *e->entries()) {
          if (entry == nullptr) return invalidArgument(what, " has a missing entry");
          EntryPoint ep;
          ep.name = str(entry->name());
          if (const fb::WorkgroupSize* wg = entry->workgroup_size())
            ep.workgroup_size = Dim3{wg->x(), wg->y(), wg->z()};
          ref.entries.push_back(std::move(ep));
        }
      if (moduleChecksum(ref.data, ref.size) != e->checksum())
        return dataLoss(what, " fails its checksum: the file is corrupt");
      std::vector<std::string_view> targets;
      std::vector<size_t> sizes;
      size_t bytes = ref.size;
      if (e->variants()) {
        for (flatbuffers::uoffset_t v = 0; v < e->variants()->size(); ++v) {
          const fb::ExecutableVariant* variant = e->variants()->Get(v);
          if (variant == nullptr) return invalidArgument(what, " variant #", v, " is missing");
          ExecutableRef::Variant code;
          code.target = str(variant->target());
          code.data = variant->data() ? variant->data()->data() : nullptr;
          code.size = variant->data() ? variant->data()->size() : 0;
          if (moduleChecksum(code.data, code.size) != variant->checksum())
            return dataLoss(what, " variant '", code.target,
                            "' fails its checksum: the file is corrupt");
          bytes += code.size;
          ref.variants.push_back(std::move(code));
        }
        if (ref.variants.empty()) return invalidArgument(what, " has an empty variant list");
      }
      for (const ExecutableRef::Variant& v : ref.variants) {
        targets.push_back(v.target);
        sizes.push_back(v.size);
      }
      RAL_RETURN_IF_ERROR(checkExecutable(ref.name, bytes, ref.entries));
      RAL_RETURN_IF_ERROR(checkExecutableVariants(ref.name, ref.format, ref.size, targets, sizes));
      if (ref.variants.empty()) {
        ref.variants.push_back(ExecutableRef::Variant{"", ref.data, ref.size});
      } else {
        ref.data = ref.variants[0].data;
        ref.size = ref.variants[0].size;
      }
      executables_.push_back(std::move(ref));
    }
  for (const auto& e : executables_) names.push_back(e.name);
  RAL_RETURN_IF_ERROR(checkUniqueNames(names, "executables"));

  if (m->constants())
    for (flatbuffers::uoffset_t i = 0; i < m->constants()->size(); ++i) {
      const fb::Constant* c = m->constants()->Get(i);
      if (c == nullptr) return invalidArgument("constant #", i, " is missing");
      ConstantRef ref;
      ref.name = str(c->name());
      RAL_RETURN_IF_ERROR(checkDType(static_cast<uint8_t>(c->dtype()),
                                     internal::strCat("constant '", ref.name, "'")));
      ref.dtype = static_cast<DType>(c->dtype());
      if (c->shape() && c->shape()->size() > static_cast<size_t>(kMaxMemRefRank))
        return invalidArgument("constant '", ref.name, "' has rank ", c->shape()->size(),
                               "; at most ", kMaxMemRefRank, " is supported");
      RAL_ASSIGN_OR_RETURN(ref.shape, dims(c->shape(), "constant '" + ref.name + "'"));
      ref.data = c->data() ? c->data()->data() : nullptr;
      ref.size = c->data() ? c->data()->size() : 0;
      RAL_RETURN_IF_ERROR(checkConstant(ref.name, ref.dtype, ref.shape, ref.size));
      if (moduleChecksum(ref.data, ref.size) != c->checksum())
        return dataLoss("constant '", ref.name, "' fails its checksum: the file is corrupt");
      // The verifier proved the bytes lie inside the file; in-place use also needs alignment.
      if (ref.size > 0 && reinterpret_cast<uintptr_t>(ref.data) % kConstantAlignment != 0)
        return invalidArgument("constant '", ref.name, "' is not ", kConstantAlignment,
                               "-byte aligned in the file");
      constants_.push_back(std::move(ref));
    }
  names.clear();
  for (const auto& c : constants_) names.push_back(c.name);
  return checkUniqueNames(names, "constants");
}

Status Module::openHostLibrary() {
  std::vector<std::string_view> targets;
  for (const HostVariantRef& v : host_variants_) targets.push_back(v.target);
  RAL_ASSIGN_OR_RETURN(const int variant,
                       internal::pickHostVariant(targets, std::getenv("RAL_HOST_VARIANT")));
  const uint8_t* code = host_library_;
  size_t code_size = host_library_size_;
  if (variant >= 0) {
    code = host_variants_[variant].data;
    code_size = host_variants_[variant].size;
    loaded_host_target_ = host_variants_[variant].target;
  }
  RAL_ASSIGN_OR_RETURN(library_, internal::dlopenFromMemory(code, code_size, name_));
  // Each symbol must be of its kind and defined by the library itself: a data symbol named as
  // the entry would be jumped to, a symbol found in a dependency would run foreign code.
  auto entry = internal::findSymbol(library_, entry_name_.c_str(), internal::SymbolKind::kFunction,
                                    "the entry function");
  if (!entry.ok()) {
    if (entry.status().code() == StatusCode::kNotFound)
      return notFound("the host library does not define the entry function '", entry_name_,
                      "' named by the module");
    return entry.status().withContext("the module's host library");
  }
  entry_ = reinterpret_cast<EntryFn>(*entry);
  // The import table is optional (absent when there is nothing to import).
  auto optionalData = [&](const char* symbol) -> StatusOr<void*> {
    auto found = internal::findSymbol(library_, symbol, internal::SymbolKind::kData, "the symbol");
    if (!found.ok() && found.status().code() == StatusCode::kNotFound) return nullptr;
    if (!found.ok()) return found.status().withContext("the module's host library");
    return found;
  };
  RAL_ASSIGN_OR_RETURN(void* count_address, optionalData("ral_import_count"));
  auto* count = static_cast<const uint32_t*>(count_address);
  const size_t n = count ? *count : 0;
  // An empty table may be a zero-sized symbol at the end of a segment: only looked up when used.
  ral_import* table = nullptr;
  if (n > 0) {
    RAL_ASSIGN_OR_RETURN(void* table_address, optionalData("ral_imports"));
    table = static_cast<ral_import*>(table_address);
  }
  if (n != imports_.size() || (n > 0 && table == nullptr))
    return invalidArgument("the host library's import table (ral_imports, ral_import_count = ", n,
                           ") does not match the ", imports_.size(),
                           " imports the module file lists");
  for (size_t i = 0; i < n; ++i)
    if (table[i].name == nullptr || imports_[i] != table[i].name)
      return invalidArgument("import #", i, " of the host library is '",
                             table[i].name ? table[i].name : "(null)",
                             "' but the module file lists '", imports_[i], "'");
  import_table_ = table;
  return resolveHostKernels();
}

Status Module::resolveHostKernels() {
  for (ExecutableRef& e : executables_) {
    if (e.format != ExecutableFormat::kHostFunction) continue;
    std::string expected;
    for (const EntryPoint& entry : e.entries) expected.append(entry.name).push_back('\0');
    if (e.size != expected.size() || std::memcmp(e.data, expected.data(), e.size) != 0)
      return invalidArgument("host executable '", e.name,
                             "' does not hold the symbol names of its entries");
    e.host_functions.clear();
    for (const EntryPoint& entry : e.entries) {
      auto fn = internal::findSymbol(library_, entry.name.c_str(), internal::SymbolKind::kFunction,
                                     "the function");
      if (!fn.ok()) {
        if (fn.status().code() == StatusCode::kNotFound)
          return notFound("host executable '", e.name, "' entry '", entry.name,
                          "' is not defined by the host library");
        return fn.status().withContext(internal::strCat("host executable '", e.name, "'"));
      }
      e.host_functions.push_back(*fn);
    }
  }
  return Status();
}

const ConstantRef* Module::findConstant(std::string_view name) const {
  for (const auto& c : constants_)
    if (c.name == name) return &c;
  return nullptr;
}

const ExecutableRef* Module::findExecutable(std::string_view name) const {
  for (const auto& e : executables_)
    if (e.name == name) return &e;
  return nullptr;
}

Status Module::link(const Context& context) {
  std::lock_guard<std::mutex> lock(link_mutex_);
  if (library_ == nullptr)
    return failedPrecondition("module '", name_,
                              "' was loaded without its host library and cannot run");
  const ContextType* type = context.executionType();
  const Registry* registry = &context.registry();
  if (link_done_) {
    if (type != linked_type_ || registry != linked_registry_)
      return failedPrecondition("module '", name_, "' is already linked for '", linked_type_->name,
                                "' executions; load it again to use it with '", type->name,
                                "' executions");
    return link_status_;
  }
  // A failure is not remembered: the missing functions may be registered later (e.g. by a
  // library loaded afterwards).
  Status status = context.resolveImports(import_table_, imports_.size());
  if (!status.ok()) return status.withContext(internal::strCat("linking module '", name_, "'"));
  linked_type_ = type;
  linked_registry_ = registry;
  link_done_ = true;
  trace::watchImports(import_table_, imports_.size());
  return link_status_;
}

bool Module::linked() const {
  std::lock_guard<std::mutex> lock(link_mutex_);
  return link_done_ && link_status_.ok();
}

StatusOr<DeviceKind> moduleDevice(const Module& module) {
  DeviceKind device = DeviceKind::kCpu;
  std::string from;
  auto note = [&](DeviceKind d, const std::string& what) -> Status {
    if (d == DeviceKind::kCpu || d == device) return Status();
    if (device != DeviceKind::kCpu)
      return unsupported("module '", module.name(), "' uses two devices: ", deviceKindName(device),
                         " (", from, ") and ", deviceKindName(d), " (", what, ")");
    device = d;
    from = what;
    return Status();
  };
  for (size_t i = 0; i < module.inputs().size(); ++i)
    RAL_RETURN_IF_ERROR(note(module.inputs()[i].device, internal::strCat("input ", i)));
  for (size_t i = 0; i < module.outputs().size(); ++i)
    RAL_RETURN_IF_ERROR(note(module.outputs()[i].device, internal::strCat("output ", i)));
  for (const std::string& name : module.imports()) {
    auto parts = parseApiName(name);
    if (!parts.ok()) continue;  // the loader checked the names; nothing to learn here
    auto kind = deviceKindFromName(parts->device);
    if (kind.ok()) RAL_RETURN_IF_ERROR(note(*kind, name));
  }
  return device;
}

}  // namespace ral
