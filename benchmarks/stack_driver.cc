#include "stack_driver.h"

#include <cstdlib>
#include <vector>

namespace ral::bench {
namespace {

class StackDriver final : public Driver {
 public:
  ~StackDriver() override {
    for (void* p : free_) std::free(p);
  }
  DeviceKind kind() const override { return DeviceKind::kCpu; }
  std::string deviceName() const override { return "stack"; }

  StatusOr<void*> allocate(size_t bytes, size_t, MemoryKind) override {
    if (!free_.empty()) {
      void* p = free_.back();
      free_.pop_back();
      return p;
    }
    void* p = std::malloc(bytes);
    if (p == nullptr) return outOfMemory("stack driver: ", bytes, " bytes");
    return p;
  }
  Status deallocate(void* ptr) override {
    free_.push_back(ptr);
    return Status();
  }

  Status copy(void*, const void*, size_t, CopyKind, Stream*) override { return no(); }
  Status fill(void*, size_t, const void*, size_t, Stream*) override { return no(); }
  MemoryStats memoryStats() const override { return {}; }
  Status trim() override { return no(); }
  StatusOr<Executable*> load(const ExecutableSpec&) override { return no(); }
  Status launch(Executable*, uint32_t, const LaunchConfig&, const KernelArgs&, Stream*) override {
    return no();
  }
  StatusOr<std::unique_ptr<Stream>> createStream() override { return no(); }
  Status synchronize(Stream*) override { return no(); }
  StatusOr<std::shared_ptr<Semaphore>> createSemaphore(uint64_t) override { return no(); }
  Status queueSignal(Stream*, Semaphore*, uint64_t) override { return no(); }
  Status queueWait(Stream*, Semaphore*, uint64_t) override { return no(); }

 private:
  static Status no() { return unsupported("the stack driver only allocates"); }
  std::vector<void*> free_;
};

}  // namespace

std::unique_ptr<Driver> makeStackDriver() { return std::make_unique<StackDriver>(); }

}  // namespace ral::bench
