#include "ral/context.h"

namespace ral {

ExecutionHandle& ExecutionHandle::operator=(ExecutionHandle&& other) noexcept {
  if (this != &other) {
    if (owner_ && ctx_) owner_->releaseExecution(std::move(ctx_));
    owner_ = other.owner_;
    ctx_ = std::move(other.ctx_);
    other.owner_ = nullptr;
  }
  return *this;
}

ExecutionHandle::~ExecutionHandle() {
  if (owner_ && ctx_) owner_->releaseExecution(std::move(ctx_));
}

Context::Context(const ContextType* execution_type, const Registry* registry)
    : execution_type_(execution_type), registry_(registry) {}

Context::~Context() {
  // Executions, resources and uploaded constants may hold device memory: release them before
  // the drivers.
  pool_.clear();
  resources_.clear();
  for (int k = 0; k < kNumDeviceKinds; ++k) {
    if (!constants_[k] || k == static_cast<int>(DeviceKind::kCpu)) continue;
    Driver* d = drivers_[k].load();
    for (size_t i = 0; d != nullptr && i < module_->constants().size(); ++i)
      if (void* p = constants_[k][i].load()) (void)d->deallocate(p);
  }
  for (auto& d : owned_drivers_) d.reset();
}

Status Context::resolveImports_(ral_import* imports, size_t count) const {
  return ::ral::resolveImports(*registry_, execution_type_, imports, count);
}

ral_fn Context::lookupApiSlow(const char* name, Status* error) {
  if (name == nullptr) {
    if (error) *error = invalidArgument("ral_api_call: api name is null");
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(api_mutex_);
  auto it = api_entries_.find(name);
  if (it == api_entries_.end()) {
    auto fn = registry_->findFunction(name, execution_type_);
    if (!fn.ok()) {
      if (error) *error = fn.status();
      return nullptr;
    }
    it = api_entries_.emplace(name, std::make_unique<ApiCache::Entry>(ApiCache::Entry{name, *fn}))
             .first;
  }
  api_cache_.insert(name, it->second.get());
  return it->second->fn;
}

StatusOr<Communicator*> Context::communicator() {
  std::lock_guard<std::mutex> lock(communicator_mutex_);
  if (communicator_) return communicator_.get();
  if (!communicator_factory_)
    return failedPrecondition(
        "this module calls collectives, but its host context has no communicator (standalone: "
        "set RAL_WORLD_SIZE and RAL_RANK with a rendezvous, or pass one in the context's options; "
        "PyTorch: initialize torch.distributed)");
  StatusOr<std::shared_ptr<Communicator>> made = communicator_factory_();
  if (!made.ok()) return made.status();
  communicator_ = std::move(*made);
  return communicator_.get();
}

void Context::setCommunicator(std::shared_ptr<Communicator> communicator) {
  std::lock_guard<std::mutex> lock(communicator_mutex_);
  communicator_ = std::move(communicator);
}

void Context::setCommunicatorFactory(CommunicatorFactory factory) {
  std::lock_guard<std::mutex> lock(communicator_mutex_);
  communicator_factory_ = std::move(factory);
}

StatusOr<Driver*> Context::driver(DeviceKind kind) {
  const int i = static_cast<int>(kind);
  if (i < 0 || i >= kNumDeviceKinds) return invalidArgument("invalid device kind ", i);
  if (Driver* d = drivers_[i].load(std::memory_order_acquire)) return d;
  std::lock_guard<std::mutex> lock(driver_mutexes_[i]);
  if (Driver* d = drivers_[i].load(std::memory_order_acquire)) return d;
  if (!driver_errors_[i].ok()) return driver_errors_[i];
  DriverFactory factory = driver_factories_[i];
  if (!factory) {
    auto fallback = defaultDriverFactory(kind);
    if (!fallback.ok()) {
      driver_errors_[i] = fallback.status();
      return driver_errors_[i];
    }
    factory = *fallback;
  }
  auto made = factory(*this);
  if (!made.ok()) {
    driver_errors_[i] = made.status().withContext(
        internal::strCat("creating the '", deviceKindName(kind), "' driver"));
    return driver_errors_[i];
  }
  if (*made == nullptr) {
    driver_errors_[i] =
        internalError("the '", deviceKindName(kind), "' driver factory returned null");
    return driver_errors_[i];
  }
  owned_drivers_[i] = std::move(*made);
  drivers_[i].store(owned_drivers_[i].get(), std::memory_order_release);
  return owned_drivers_[i].get();
}

Status Context::setDriverFactory(DeviceKind kind, DriverFactory factory) {
  const int i = static_cast<int>(kind);
  if (i < 0 || i >= kNumDeviceKinds) return invalidArgument("invalid device kind ", i);
  std::lock_guard<std::mutex> lock(driver_mutexes_[i]);
  if (drivers_[i].load() != nullptr || !driver_errors_[i].ok())
    return failedPrecondition("the '", deviceKindName(kind),
                              "' driver is already in use; set its factory before first use");
  driver_factories_[i] = std::move(factory);
  return Status();
}

Status Context::selectDevice(const DeviceInfo& device) {
  const int i = static_cast<int>(device.kind);
  if (i < 0 || i >= kNumDeviceKinds) return invalidArgument("invalid device kind ", i);
  if (device.ordinal < 0) return invalidArgument("invalid device ordinal ", device.ordinal);
  std::lock_guard<std::mutex> lock(driver_mutexes_[i]);
  const int current = device_ordinals_[i].load();
  // The host has one CPU device: choosing it changes nothing, even after the driver exists.
  const bool same = current == device.ordinal || (device.kind == DeviceKind::kCpu && current < 0);
  if ((drivers_[i].load() != nullptr || !driver_errors_[i].ok()) && !same)
    return failedPrecondition("the '", deviceKindName(device.kind),
                              "' driver is already in use; select its device before first use");
  device_ordinals_[i].store(device.ordinal, std::memory_order_release);
  return Status();
}

Status Context::selectDevice(std::string_view uri) {
  RAL_ASSIGN_OR_RETURN(DeviceUri parsed, parseDeviceUri(uri));
  if (module_ != nullptr) {
    RAL_ASSIGN_OR_RETURN(DeviceKind runs_on, moduleDevice(*module_));
    if (runs_on != parsed.kind)
      return invalidArgument("module '", module_->name(), "' runs on ", deviceKindName(runs_on),
                             ", not on device '", uri,
                             "' (ral-compile --device=", deviceKindName(parsed.kind),
                             " builds it for ", deviceKindName(parsed.kind), ")");
  }
  // The kind alone keeps the driver's default device (and needs no enumeration).
  if (parsed.selector == DeviceUri::Selector::kDefault) return Status();
  RAL_ASSIGN_OR_RETURN(DeviceInfo device, resolveDevice(parsed));
  return selectDevice(device);
}

void* Context::findResource(const ResourceKey& key) const {
  std::shared_lock<std::shared_mutex> lock(resource_mutex_);
  auto it = resources_.find(key);
  return it == resources_.end() ? nullptr : it->second->value.load(std::memory_order_acquire);
}

std::shared_ptr<Context::ResourceSlot> Context::resourceSlot(const ResourceKey& key) {
  std::unique_lock<std::shared_mutex> lock(resource_mutex_);
  auto& slot = resources_[key];
  if (!slot) slot = std::make_shared<ResourceSlot>();
  return slot;
}

Status Context::setModule(std::shared_ptr<const Module> module) {
  if (module == nullptr) return invalidArgument("setModule: no module given");
  std::lock_guard<std::mutex> lock(module_mutex_);
  if (module_ != nullptr) return failedPrecondition("this context already runs a module");
  const size_t executables = module->executables().size();
  const size_t constants = module->constants().size();
  for (int k = 0; k < kNumDeviceKinds; ++k) {
    executables_[k] = std::make_unique<std::atomic<Executable*>[]>(executables);
    constants_[k] = std::make_unique<std::atomic<void*>[]>(constants);
  }
  module_ = std::move(module);
  return Status();
}

namespace {

// The variant of `ref` the driver ranks best (the first of equals), or an error naming the
// module's targets and the device.
StatusOr<size_t> bestVariant(const Driver& driver, const ExecutableRef& ref,
                             const std::string& module_name) {
  int best_rank = -1;
  size_t best = 0;
  std::string targets;
  for (size_t i = 0; i < ref.variants.size(); ++i) {
    const std::string& target = ref.variants[i].target;
    const int rank = driver.targetRank(ref.format, target);
    if (rank > best_rank) {
      best_rank = rank;
      best = i;
    }
    targets += internal::strCat(i == 0 ? "" : ", ", target.empty() ? "any device" : target);
  }
  if (best_rank >= 0) return best;
  return failedPrecondition("module '", module_name, "' has ", deviceKindName(driver.kind()),
                            " kernels (executable '", ref.name, "', ",
                            executableFormatName(ref.format), ") for ", targets,
                            "; none runs on device ", driver.deviceName(),
                            ": recompile with --gpu-arch naming the device's architecture");
}

}  // namespace

StatusOr<Executable*> Context::moduleExecutable(DeviceKind kind, uint32_t index) {
  const int k = static_cast<int>(kind);
  if (k < 0 || k >= kNumDeviceKinds) return invalidArgument("invalid device kind ", k);
  if (module_ == nullptr) return failedPrecondition("no module is set on this context");
  const auto& all = module_->executables();
  if (index >= all.size())
    return outOfRange("module '", module_->name(), "' has ", all.size(),
                      " executables; executable #", index, " does not exist");
  if (Executable* e = executables_[k][index].load(std::memory_order_acquire)) return e;
  RAL_ASSIGN_OR_RETURN(Driver * driver, this->driver(kind));
  std::lock_guard<std::mutex> lock(module_mutex_);
  if (Executable* e = executables_[k][index].load(std::memory_order_acquire)) return e;
  const ExecutableRef& ref = all[index];
  RAL_ASSIGN_OR_RETURN(size_t variant, bestVariant(*driver, ref, module_->name()));
  ExecutableSpec spec = ref.spec(variant);
  // Drivers cache by name and may outlive one module: the key names this module's code.
  spec.name = internal::strCat(module_->name(), "/", ref.name, "@", module_->hostLibraryChecksum(),
                               spec.target.empty() ? "" : "#", spec.target);
  auto loaded = driver->load(spec);
  if (!loaded.ok())
    return loaded.status().withContext(internal::strCat("loading executable '", ref.name,
                                                        "' of module '", module_->name(), "' on ",
                                                        deviceKindName(kind)));
  executables_[k][index].store(*loaded, std::memory_order_release);
  return *loaded;
}

StatusOr<void*> Context::moduleConstant(DeviceKind kind, uint32_t index) {
  const int k = static_cast<int>(kind);
  if (k < 0 || k >= kNumDeviceKinds) return invalidArgument("invalid device kind ", k);
  if (module_ == nullptr) return failedPrecondition("no module is set on this context");
  const auto& all = module_->constants();
  if (index >= all.size())
    return outOfRange("module '", module_->name(), "' has ", all.size(), " constants; constant #",
                      index, " does not exist");
  const ConstantRef& ref = all[index];
  // Host code reads the module's bytes in place; generated code never writes to a constant.
  if (kind == DeviceKind::kCpu) return const_cast<void*>(ref.data);
  if (void* p = constants_[k][index].load(std::memory_order_acquire)) return p;
  RAL_ASSIGN_OR_RETURN(Driver * driver, this->driver(kind));
  std::lock_guard<std::mutex> lock(module_mutex_);
  if (void* p = constants_[k][index].load(std::memory_order_acquire)) return p;
  auto fail = [&](const Status& s) {
    return s.withContext(internal::strCat("uploading constant '", ref.name, "' (", ref.size,
                                          " bytes) to ", deviceKindName(kind)));
  };
  auto memory = driver->allocate(ref.size > 0 ? ref.size : 1, 64, MemoryKind::kDevice);
  if (!memory.ok()) return fail(memory.status());
  if (ref.size > 0) {
    Status copied = driver->copy(*memory, ref.data, ref.size, CopyKind::kHostToDevice);
    if (copied.ok()) copied = driver->synchronize();
    if (!copied.ok()) {
      (void)driver->deallocate(*memory);
      return fail(copied);
    }
  }
  constants_[k][index].store(*memory, std::memory_order_release);
  return *memory;
}

ExecutionHandle Context::acquireExecution() {
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    if (!pool_.empty()) {
      auto ctx = std::move(pool_.back());
      pool_.pop_back();
      return ExecutionHandle(this, std::move(ctx));
    }
  }
  return ExecutionHandle(this, newExecutionContext());
}

void Context::releaseExecution(std::unique_ptr<ExecutionContext> ctx) {
  ctx->reset();
  std::lock_guard<std::mutex> lock(pool_mutex_);
  pool_.push_back(std::move(ctx));
}

std::unique_ptr<ExecutionContext> Context::newExecutionContext() {
  return std::make_unique<ExecutionContext>(this, execution_type_);
}

}  // namespace ral
