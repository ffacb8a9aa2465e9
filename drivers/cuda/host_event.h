// HostEvent and HostEventPool: the host notification a host wait timepoint blocks on,
// recycled through a pool so waiting allocates nothing in the steady state.
#ifndef RAL_DRIVERS_CUDA_HOST_EVENT_H_
#define RAL_DRIVERS_CUDA_HOST_EVENT_H_

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

namespace ral::cuda {

class HostEvent {
 public:
  void set();
  void reset();
  // True once set; false when `deadline` passes first.
  bool waitUntil(std::chrono::steady_clock::time_point deadline);
  void wait();

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool set_ = false;
};

class HostEventPool {
 public:
  HostEventPool() = default;
  ~HostEventPool();
  HostEventPool(const HostEventPool&) = delete;
  HostEventPool& operator=(const HostEventPool&) = delete;

  // A reset event.
  HostEvent* acquire();
  void release(HostEvent* event);

 private:
  std::mutex mutex_;
  std::vector<HostEvent*> free_;
};

}  // namespace ral::cuda

#endif  // RAL_DRIVERS_CUDA_HOST_EVENT_H_
