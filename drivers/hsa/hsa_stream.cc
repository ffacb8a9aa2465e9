#include "drivers/hsa/hsa_stream.h"

#include <cstring>
#include <thread>
#include <utility>
#include <vector>

namespace ral::hsa {
namespace {

constexpr uint32_t kFences = (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                             (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE) |
                             (1u << HSA_PACKET_HEADER_BARRIER);
constexpr uint64_t kWaitPeriodNs = 1000000;

}  // namespace

struct HsaStream::Handler {
  HsaStream* stream = nullptr;
  std::shared_ptr<HsaSemaphore> semaphore;
  uint64_t value = 0;
  std::atomic<bool> handled{false};
};

HsaStream::HsaStream(std::shared_ptr<HsaDevice> device, const void* owner)
    : device_(std::move(device)), owner_(owner) {}

StatusOr<std::unique_ptr<HsaStream>> HsaStream::create(std::shared_ptr<HsaDevice> device,
                                                       const void* owner) {
  std::unique_ptr<HsaStream> stream(new HsaStream(std::move(device), owner));
  RAL_RETURN_IF_ERROR(stream->createQueue());
  return stream;
}

Status HsaStream::createQueue() {
  hsa_queue_t* queue = nullptr;
  RAL_RETURN_IF_ERROR(RAL_HSA_CALL(device_->lib(), hsa_queue_create, device_->gpu().agent,
                                   device_->queueSize(), HSA_QUEUE_TYPE_SINGLE, onQueueError, this,
                                   UINT32_MAX, UINT32_MAX, &queue));
  queue_.store(queue);
  broken_.store(false);
  return Status();
}

HsaStream::~HsaStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Op& op : pending_)
      if (op.wait != nullptr)
        op.wait->fail(
            cancelled("hsa: the stream was destroyed with work still waiting for a "
                      "semaphore"));
  }
  (void)synchronize();
  if (hsa_queue_t* queue = queue_.exchange(nullptr)) (void)device_->hsa().hsa_queue_destroy(queue);
}

void HsaStream::onQueueError(hsa_status_t status, hsa_queue_t* source, void* data) {
  auto* stream = static_cast<HsaStream*>(data);
  if (source != stream->queue_.load()) return;  // a queue the stream already replaced
  stream->broken_.store(true);
  Status failure;
  {
    std::lock_guard<std::mutex> lock(stream->mutex_);
    for (const Op& op : stream->pending_)
      if (op.wait != nullptr && !(failure = op.wait->failure()).ok()) break;
  }
  if (failure.ok())
    failure = internalError("hsa: the queue of the stream failed: ",
                            stream->device_->lib().describe(status));
  stream->fail(std::move(failure));
}

void HsaStream::fail(Status status) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failure_.ok()) return;
  failure_ = status;
  broken_.store(true);
  const HsaSymbols& hsa = device_->hsa();
  for (Op& op : pending_) {
    if (op.handler != nullptr) op.handler->semaphore->fail(status);
    // Unblocks whatever depends on it (copies, synchronize, the signal handler).
    if (hsa.hsa_signal_load_scacquire(op.done) > 0) hsa.hsa_signal_store_screlease(op.done, -1);
  }
}

Status HsaStream::usable() const {
  if (!failure_.ok()) return failure_;
  if (queue_.load() == nullptr) return unavailable("hsa: the stream has no queue");
  return Status();
}

bool HsaStream::onSignalled(hsa_signal_value_t value, void* arg) {
  auto* holder = static_cast<std::shared_ptr<Handler>*>(arg);
  Handler& h = **holder;
  if (value == 0) (void)h.semaphore->signal(h.value);  // a lower value: another signal won
  {
    std::lock_guard<std::mutex> lock(h.stream->mutex_);
    h.handled.store(true);
  }
  h.stream->handled_.notify_all();
  delete holder;
  return false;
}

Status HsaStream::writePacket(const void* packet, uint32_t header_word) {
  const HsaSymbols& hsa = device_->hsa();
  hsa_queue_t* queue = queue_.load();
  const uint64_t index = hsa.hsa_queue_add_write_index_screlease(queue, 1);
  while (index - hsa.hsa_queue_load_read_index_scacquire(queue) >= queue->size) {
    if (broken_.load()) return failure_.ok() ? internalError("hsa: the queue failed") : failure_;
    std::this_thread::yield();
  }
  auto* slot = static_cast<unsigned char*>(queue->base_address) + (index % queue->size) * 64;
  std::memcpy(slot + 4, static_cast<const unsigned char*>(packet) + 4, 60);
  // The header (and setup) word last, with release semantics: the packet processor may pick
  // the slot up the moment it becomes valid.
  __atomic_store_n(reinterpret_cast<uint32_t*>(slot), header_word, __ATOMIC_RELEASE);
  hsa.hsa_signal_store_screlease(queue->doorbell_signal, static_cast<hsa_signal_value_t>(index));
  return Status();
}

Status HsaStream::writeBarrier(hsa_signal_t dep0, hsa_signal_t dep1, hsa_signal_t completion) {
  hsa_barrier_and_packet_t packet{};
  packet.dep_signal[0] = dep0;
  packet.dep_signal[1] = dep1;
  packet.completion_signal = completion;
  return writePacket(&packet, (HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE) | kFences);
}

Status HsaStream::orderAfterCopy() {
  if (copy_done_.handle == 0) return Status();
  RAL_RETURN_IF_ERROR(writeBarrier(copy_done_, hsa_signal_t{0}, hsa_signal_t{0}));
  copy_done_ = hsa_signal_t{0};
  return Status();
}

StatusOr<hsa_signal_t> HsaStream::newOp() {
  retireLocked(Retire::kCompleted);
  RAL_RETURN_IF_ERROR(usable());
  return device_->signals().acquire();
}

void HsaStream::pushOp(Op op, bool is_copy) {
  op.seq = ++next_seq_;
  last_done_ = op.done;
  if (is_copy) copy_done_ = op.done;
  pending_.push_back(std::move(op));
}

void HsaStream::retireLocked(Retire mode) {
  const HsaSymbols& hsa = device_->hsa();
  auto complete = [&](const Op& op) {
    return hsa.hsa_signal_load_scacquire(op.done) == 0 &&
           (op.handler == nullptr || op.handler->handled.load());
  };
  while (!pending_.empty()) {
    Op& op = pending_.front();
    if (mode != Retire::kEverything) {
      if (!complete(op)) break;
      // The next operation may depend on this one's signal (a copy's dependency, a barrier
      // packet not yet processed): recycle it only once that one completed too, or when nothing
      // can be queued behind it any more.
      if (mode == Retire::kCompleted && (pending_.size() < 2 || !complete(pending_[1]))) break;
    }
    if (op.release) op.release();
    if (op.done.handle == last_done_.handle) last_done_ = hsa_signal_t{0};
    if (op.done.handle == copy_done_.handle) copy_done_ = hsa_signal_t{0};
    device_->signals().release(op.done);
    pending_.pop_front();
  }
}

Status HsaStream::dispatch(const KernelDispatch& d, std::function<void()> release) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto done = newOp();
  if (!done.ok()) {
    if (release) release();
    return done.status();
  }
  Status ordered = orderAfterCopy();
  hsa_kernel_dispatch_packet_t packet{};
  packet.workgroup_size_x = d.workgroup_size[0];
  packet.workgroup_size_y = d.workgroup_size[1];
  packet.workgroup_size_z = d.workgroup_size[2];
  packet.grid_size_x = d.grid_size[0];
  packet.grid_size_y = d.grid_size[1];
  packet.grid_size_z = d.grid_size[2];
  packet.private_segment_size = d.private_segment_size;
  packet.group_segment_size = d.group_segment_size;
  packet.kernel_object = d.kernel_object;
  packet.kernarg_address = d.kernarg;
  packet.completion_signal = *done;
  const uint32_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) | kFences;
  const uint32_t setup = uint32_t{d.dimensions} << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
  if (ordered.ok()) ordered = writePacket(&packet, header | (setup << 16));
  pushOp(Op{*done, std::move(release), nullptr, nullptr}, false);
  return ordered;
}

Status HsaStream::copy(void* dst, hsa_agent_t dst_agent, const void* src, hsa_agent_t src_agent,
                       size_t bytes, std::function<void()> release) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto done = newOp();
  if (!done.ok()) {
    if (release) release();
    return done.status();
  }
  const uint32_t deps = last_done_.handle != 0 ? 1 : 0;
  Status s = RAL_HSA_CALL(device_->lib(), hsa_amd_memory_async_copy, dst, dst_agent, src, src_agent,
                          bytes, deps, deps ? &last_done_ : nullptr, *done);
  if (!s.ok()) {
    device_->signals().release(*done);
    if (release) release();
    return s;
  }
  pushOp(Op{*done, std::move(release), nullptr, nullptr}, true);
  return Status();
}

Status HsaStream::wait(std::shared_ptr<WaitPoint> point) {
  std::lock_guard<std::mutex> lock(mutex_);
  RAL_ASSIGN_OR_RETURN(hsa_signal_t done, newOp());
  Status s = writeBarrier(point->signal(), copy_done_, done);
  copy_done_ = hsa_signal_t{0};
  pushOp(Op{done, nullptr, std::move(point), nullptr}, false);
  return s;
}

Status HsaStream::signal(std::shared_ptr<HsaSemaphore> semaphore, uint64_t value) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto acquired = newOp();
  if (!acquired.ok()) {
    // The stream failed (or cannot queue): this signal will never happen.
    semaphore->fail(acquired.status());
    return acquired.status();
  }
  const hsa_signal_t done = *acquired;
  auto handler = std::make_shared<Handler>();
  handler->stream = this;
  handler->semaphore = std::move(semaphore);
  handler->value = value;
  auto* holder = new std::shared_ptr<Handler>(handler);
  Status s = RAL_HSA_CALL(device_->lib(), hsa_amd_signal_async_handler, done,
                          HSA_SIGNAL_CONDITION_LT, 1, onSignalled, holder);
  if (!s.ok()) {
    delete holder;
    device_->signals().release(done);
    return s;
  }
  pushOp(Op{done, nullptr, nullptr, handler}, false);
  Status written = writeBarrier(copy_done_, hsa_signal_t{0}, done);
  copy_done_ = hsa_signal_t{0};
  if (!written.ok()) {
    handler->semaphore->fail(written);
    device_->hsa().hsa_signal_store_screlease(done, -1);
  }
  return written;
}

Status HsaStream::synchronize() {
  const HsaSymbols& hsa = device_->hsa();
  uint64_t target = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    target = next_seq_;
  }
  // The signal of operation `target` is read under the lock while the operation is pending;
  // the wait itself is bounded, so a signal recycled meanwhile (the operation retired by another
  // thread) costs at most one period before the check below sees it retired.
  while (true) {
    hsa_signal_t signal{0};
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!failure_.ok()) break;
      for (auto it = pending_.rbegin(); it != pending_.rend() && it->seq >= target; ++it)
        if (it->seq == target) signal = it->done;
    }
    if (signal.handle == 0) break;  // retired: complete
    if (hsa.hsa_signal_wait_scacquire(signal, HSA_SIGNAL_CONDITION_LT, 1, kWaitPeriodNs,
                                      HSA_WAIT_STATE_BLOCKED) < 1)
      break;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  handled_.wait(lock, [&] {
    for (const Op& op : pending_)
      if (op.handler != nullptr && !op.handler->handled.load()) return false;
    return true;
  });
  for (const Op& op : pending_)
    if (failure_.ok() && op.seq <= target && hsa.hsa_signal_load_scacquire(op.done) < 0)
      failure_ = internalError("hsa: an operation on the stream failed");
  if (failure_.ok()) {
    // Everything queued before `last` is done; what was queued since depends on live signals.
    retireLocked(target == next_seq_ ? Retire::kCompletedTail : Retire::kCompleted);
    return Status();
  }
  // Report the failure once and continue on a fresh queue.
  Status failure = std::move(failure_);
  failure_ = Status();
  if (hsa_queue_t* queue = queue_.exchange(nullptr)) (void)hsa.hsa_queue_destroy(queue);
  retireLocked(Retire::kEverything);
  Status fresh = createQueue();
  if (!fresh.ok()) failure_ = fresh;
  return failure;
}

}  // namespace ral::hsa
