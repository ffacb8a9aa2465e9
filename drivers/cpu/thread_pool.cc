#include "drivers/cpu/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <string_view>

namespace ral::cpu {

bool ThreadPool::openmpByDefault() {
#if RAL_CPU_OPENMP
  const char* env = std::getenv("RAL_CPU_OPENMP");
  return env == nullptr || std::string_view(env) != "0";
#else
  return false;
#endif
}

ThreadPool::ThreadPool(int threads, bool openmp)
    : threads_(std::max(threads, 1)), openmp_(RAL_CPU_OPENMP && openmp) {
  const int workers = openmp_ ? 0 : threads_ - 1;
  workers_.reserve(workers);
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::work(Job& job) {
  while (!job.failed.load(std::memory_order_relaxed)) {
    const uint64_t begin = job.next.fetch_add(job.chunk, std::memory_order_relaxed);
    if (begin >= job.count) return;
    const uint64_t end = std::min(job.count, begin + job.chunk);
    Status status;
    try {
      status = job.fn(job.state, begin, end);
    } catch (const std::exception& e) {
      status = internalError("exception in a CPU task: ", e.what());
    } catch (...) {
      status = internalError("unknown exception in a CPU task");
    }
    if (!status.ok()) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (job.error.ok()) job.error = std::move(status);
      job.failed.store(true, std::memory_order_relaxed);
    }
  }
}

void ThreadPool::workerLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    // Drop jobs whose chunks are all claimed; their callers finish them.
    while (!jobs_.empty() &&
           (jobs_.front()->next.load(std::memory_order_relaxed) >= jobs_.front()->count ||
            jobs_.front()->failed.load(std::memory_order_relaxed))) {
      jobs_.pop_front();
    }
    if (stop_) return;
    if (jobs_.empty()) {
      // Spin briefly before sleeping: kernels come in quick succession (one per loop nest, one
      // execution after another), and a condition-variable wake-up takes tens of microseconds,
      // as long as a whole small kernel.
      const uint64_t seen = posted_.load(std::memory_order_relaxed);
      lock.unlock();
      const auto until = std::chrono::steady_clock::now() + kSpin;
      while (posted_.load(std::memory_order_acquire) == seen &&
             std::chrono::steady_clock::now() < until) {
        std::this_thread::yield();
      }
      lock.lock();
      if (jobs_.empty() && !stop_) work_cv_.wait(lock);
      continue;
    }
    Job* job = jobs_.front();
    ++job->helpers;
    lock.unlock();
    work(*job);
    lock.lock();
    if (--job->helpers == 0) done_cv_.notify_all();
  }
}

Status ThreadPool::run(uint64_t count, uint64_t chunk, TaskFn fn, void* state) {
  if (count == 0) return Status();
  const uint64_t threads = static_cast<uint64_t>(threadCount());
  // Small chunks: the workers join a little later than the caller starts, and with a few big
  // chunks the caller would be left running the tail alone (layernorm+GELU's 43 workgroups on 2
  // threads: 142 -> 122 us per execution at the median).
  if (chunk == 0) chunk = std::max<uint64_t>(1, count / (threads * 16));
  if (threads == 1 || count <= chunk) {
    // Not worth waking anyone.
    try {
      for (uint64_t b = 0; b < count; b += chunk)
        RAL_RETURN_IF_ERROR(fn(state, b, std::min(count, b + chunk)));
    } catch (const std::exception& e) {
      return internalError("exception in a CPU task: ", e.what());
    } catch (...) {
      return internalError("unknown exception in a CPU task");
    }
    return Status();
  }
  Job job;
  job.fn = fn;
  job.state = state;
  job.count = count;
  job.chunk = chunk;
  if (openmp_) {
    runOpenmp(job);
    return std::move(job.error);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(&job);
  }
  posted_.fetch_add(1, std::memory_order_release);
  const uint64_t chunks = (count + chunk - 1) / chunk;
  if (chunks > 2) {
    work_cv_.notify_all();
  } else {
    work_cv_.notify_one();
  }
  work(job);
  std::unique_lock<std::mutex> lock(mutex_);
  // Every chunk is claimed: make sure no worker picks the job up again, then wait for the
  // workers still inside it.
  jobs_.erase(std::remove(jobs_.begin(), jobs_.end(), &job), jobs_.end());
  done_cv_.wait(lock, [&] { return job.helpers == 0; });
  return std::move(job.error);
}

void ThreadPool::runOpenmp(Job& job) {
#if RAL_CPU_OPENMP
  // work() catches every exception, so none leaves the region.
#pragma omp parallel num_threads(threads_)
  work(job);
#else
  work(job);
#endif
}

}  // namespace ral::cpu
