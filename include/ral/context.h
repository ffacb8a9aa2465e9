// Context: everything one loaded module shares across its executions in one host:
// drivers (created lazily, on first use), a typed resource cache, API resolution for
// ral_api_call and import tables, the module's executables and constants as each device sees
// them ("load if not loaded", once per device), and a pool of ExecutionContexts. Thread-safe.
#ifndef RAL_CONTEXT_H_
#define RAL_CONTEXT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ral/abi.h"
#include "ral/api_cache.h"
#include "ral/communicator.h"
#include "ral/context_type.h"
#include "ral/device_uri.h"
#include "ral/driver.h"
#include "ral/execution_context.h"
#include "ral/module.h"
#include "ral/registry.h"
#include "ral/status.h"

namespace ral {

class Context;

// An ExecutionContext borrowed from a Context's pool; returned (reset) on destruction.
class ExecutionHandle {
 public:
  ExecutionHandle() = default;
  ExecutionHandle(Context* owner, std::unique_ptr<ExecutionContext> ctx)
      : owner_(owner), ctx_(std::move(ctx)) {}
  ExecutionHandle(ExecutionHandle&&) noexcept = default;
  ExecutionHandle& operator=(ExecutionHandle&& other) noexcept;
  ~ExecutionHandle();

  ExecutionContext* get() const { return ctx_.get(); }
  ExecutionContext* operator->() const { return ctx_.get(); }
  ExecutionContext& operator*() const { return *ctx_; }
  explicit operator bool() const { return ctx_ != nullptr; }

 private:
  Context* owner_ = nullptr;
  std::unique_ptr<ExecutionContext> ctx_;
};

class Context {
 public:
  // `execution_type`: the type of the ExecutionContexts this context creates (hosts pass
  // their own, so their overrides are preferred); `registry`: where names resolve.
  explicit Context(const ContextType* execution_type = &ExecutionContext::kType,
                   const Registry* registry = &Registry::global());
  virtual ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const ContextType* executionType() const { return execution_type_; }
  const Registry& registry() const { return *registry_; }

  // ---- API resolution
  StatusOr<ral_fn> resolve(std::string_view name) const {
    return registry_->findFunction(name, execution_type_);
  }
  // Fills a module's import table, or changes nothing and lists every missing name.
  Status resolveImports(ral_import* imports, size_t count) const {
    return resolveImports_(imports, count);
  }
  // The ral_api_call path: a lock-free hit on the name pointer, else a resolution that is then
  // cached. Returns nullptr and sets `*error` when the name does not resolve.
  ral_fn lookupApi(const char* name, Status* error) {
    if (ral_fn fn = api_cache_.find(name)) return fn;
    return lookupApiSlow(name, error);
  }

  // ---- drivers
  // The driver of `kind`, created on first use from the factory installed here or the default
  // one. A creation failure is remembered and returned to every later caller.
  StatusOr<Driver*> driver(DeviceKind kind);
  template <typename D>
  StatusOr<D*> driver() {
    RAL_ASSIGN_OR_RETURN(Driver * d, driver(D::kDeviceKind));
    if (auto* typed = dynamic_cast<D*>(d)) return typed;
    return failedPrecondition("the '", deviceKindName(D::kDeviceKind),
                              "' driver of this context is not of the requested class");
  }
  // Installs the factory used for `kind` instead of the default; only before its first use.
  Status setDriverFactory(DeviceKind kind, DriverFactory factory);
  // Makes the driver of `device.kind` use device `device.ordinal` (see ral/device_uri.h's
  // resolveDevice); only before that driver's first use.
  Status selectDevice(const DeviceInfo& device);
  // Parses and resolves the device URI `uri` (ral/device_uri.h) and selects it. When a module is
  // set, the URI must name a device of the kind the module runs on. Errors list the devices.
  Status selectDevice(std::string_view uri);
  // The ordinal selected for `kind`, or -1: the driver's default ($RAL_<KIND>_DEVICE, else 0).
  // Driver factories read it.
  int deviceOrdinal(DeviceKind kind) const {
    return device_ordinals_[static_cast<int>(kind)].load(std::memory_order_acquire);
  }

  // ---- typed resource cache
  // Returns the T stored under `key`, creating it with `make()` on the first request. `make`
  // returns std::unique_ptr<T> or StatusOr<std::unique_ptr<T>>; a failure is not cached. Creation
  // of one key happens once even when many threads ask at the same time.
  template <typename T, typename Make>
  StatusOr<T*> getOrCreate(uint64_t key, Make&& make);
  template <typename T, typename Make>
  StatusOr<T*> getOrCreate(const void* key, Make&& make) {
    return getOrCreate<T>(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(key)),
                          std::forward<Make>(make));
  }

  // ---- the module's executables and constants
  // The module this context runs. Hosts set it once, before the first execution; the context
  // keeps it alive.
  Status setModule(std::shared_ptr<const Module> module);
  const Module* module() const { return module_.get(); }
  // Executable `index` of the module, loaded on the `kind` driver on first use; later calls are
  // a lock-free array lookup (generated code launches by index, never by name).
  StatusOr<Executable*> moduleExecutable(DeviceKind kind, uint32_t index);
  // Constant `index` of the module as device `kind` addresses it: the module's own bytes on the
  // CPU (read-only, in the mapped file), a copy in device memory, made once, elsewhere.
  StatusOr<void*> moduleConstant(DeviceKind kind, uint32_t index);

  // ---- collectives
  // The communicator collective kernels (kernels/collective/) reach the other ranks through: the
  // one given to setCommunicator(), else one the host's factory makes on first use and keeps. A
  // factory's failure is returned and not kept: the next collective asks again (the job may be
  // set up by then). FAILED_PRECONDITION when the host gave neither.
  StatusOr<Communicator*> communicator();
  // Hosts call these before the first collective, while no execution runs.
  void setCommunicator(std::shared_ptr<Communicator> communicator);
  using CommunicatorFactory = std::function<StatusOr<std::shared_ptr<Communicator>>()>;
  void setCommunicatorFactory(CommunicatorFactory factory);

  // ---- executions
  // A reset ExecutionContext from the pool (created when the pool is empty).
  ExecutionHandle acquireExecution();
  void releaseExecution(std::unique_ptr<ExecutionContext> ctx);

 protected:
  // Hosts create their own ExecutionContext subclass here.
  virtual std::unique_ptr<ExecutionContext> newExecutionContext();

 private:
  using Holder = std::shared_ptr<void>;
  struct ResourceKey {
    const void* type;
    uint64_t key;
    bool operator==(const ResourceKey& o) const { return type == o.type && key == o.key; }
  };
  struct ResourceKeyHash {
    size_t operator()(const ResourceKey& k) const {
      return std::hash<const void*>()(k.type) ^ (std::hash<uint64_t>()(k.key) * 31);
    }
  };
  struct ResourceSlot {
    std::mutex create_mutex;
    std::atomic<void*> value{nullptr};
    Holder holder;
  };
  template <typename T>
  static const void* typeTag() {
    static const char tag = 0;
    return &tag;
  }

  Status resolveImports_(ral_import* imports, size_t count) const;
  ral_fn lookupApiSlow(const char* name, Status* error);
  std::shared_ptr<ResourceSlot> resourceSlot(const ResourceKey& key);
  void* findResource(const ResourceKey& key) const;

  const ContextType* execution_type_;
  const Registry* registry_;

  ApiCache api_cache_;
  std::mutex api_mutex_;
  std::unordered_map<std::string, std::unique_ptr<ApiCache::Entry>> api_entries_;

  // One per kind, so a factory may ask its Context for a driver of another kind.
  std::mutex driver_mutexes_[kNumDeviceKinds];
  std::atomic<Driver*> drivers_[kNumDeviceKinds] = {};
  std::unique_ptr<Driver> owned_drivers_[kNumDeviceKinds];
  Status driver_errors_[kNumDeviceKinds];
  DriverFactory driver_factories_[kNumDeviceKinds];
  std::atomic<int> device_ordinals_[kNumDeviceKinds] = {-1, -1, -1, -1};

  mutable std::shared_mutex resource_mutex_;
  std::unordered_map<ResourceKey, std::shared_ptr<ResourceSlot>, ResourceKeyHash> resources_;

  std::mutex pool_mutex_;
  std::vector<std::unique_ptr<ExecutionContext>> pool_;

  std::mutex communicator_mutex_;
  std::shared_ptr<Communicator> communicator_;
  CommunicatorFactory communicator_factory_;

  std::shared_ptr<const Module> module_;
  std::mutex module_mutex_;  // serializes first loads and uploads
  // Per device kind, one slot per module executable / constant (null until first use).
  std::unique_ptr<std::atomic<Executable*>[]> executables_[kNumDeviceKinds];
  std::unique_ptr<std::atomic<void*>[]> constants_[kNumDeviceKinds];
};

template <typename T, typename Make>
StatusOr<T*> Context::getOrCreate(uint64_t key, Make&& make) {
  const ResourceKey rk{typeTag<T>(), key};
  if (void* v = findResource(rk)) return static_cast<T*>(v);
  std::shared_ptr<ResourceSlot> slot = resourceSlot(rk);
  std::lock_guard<std::mutex> lock(slot->create_mutex);
  if (void* v = slot->value.load(std::memory_order_acquire)) return static_cast<T*>(v);
  std::unique_ptr<T> made;
  using Made = std::invoke_result_t<Make>;
  if constexpr (std::is_same_v<Made, std::unique_ptr<T>>) {
    made = make();
  } else {
    static_assert(std::is_same_v<Made, StatusOr<std::unique_ptr<T>>>,
                  "make() must return std::unique_ptr<T> or StatusOr<std::unique_ptr<T>>");
    RAL_ASSIGN_OR_RETURN(made, make());
  }
  if (!made) return internalError("resource factory returned null");
  T* raw = made.get();
  slot->holder = Holder(made.release(), [](void* p) { delete static_cast<T*>(p); });
  slot->value.store(raw, std::memory_order_release);
  return raw;
}

}  // namespace ral

#endif  // RAL_CONTEXT_H_
