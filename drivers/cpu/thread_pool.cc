#include "drivers/cpu/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <string_view>

#if RAL_CPU_OPENMP
#include <omp.h>
#endif

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
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this, i] { workerLoop(i + 1); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

bool ThreadPool::unclaimed(const Job& job) {
  for (int s = 0; s < job.shares; ++s)
    if (job.share[s].next.load(std::memory_order_relaxed) < job.share[s].end) return true;
  return false;
}

void ThreadPool::work(Job& job, int slot) {
  // Which thread gets which share only matters for caches, never for results.
  const int first = slot % job.shares;
  for (int k = 0; k < job.shares; ++k) {
    Share& share = job.share[(first + k) % job.shares];
    while (true) {
      if (job.failed.load(std::memory_order_relaxed)) return;
      const uint64_t begin = share.next.fetch_add(job.chunk, std::memory_order_relaxed);
      if (begin >= share.end) break;
      if (!runChunk(job, begin, std::min(share.end, begin + job.chunk))) return;
    }
  }
}

bool ThreadPool::runChunk(Job& job, uint64_t begin, uint64_t end) {
  Status status;
  try {
    status = job.fn(job.state, begin, end);
  } catch (const std::exception& e) {
    status = internalError("exception in a CPU task: ", e.what());
  } catch (...) {
    status = internalError("unknown exception in a CPU task");
  }
  if (status.ok()) return true;
  std::lock_guard<std::mutex> lock(mutex_);
  if (job.error.ok()) job.error = std::move(status);
  job.failed.store(true, std::memory_order_relaxed);
  return false;
}

void ThreadPool::workerLoop(int slot) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    // Drop jobs whose chunks are all claimed; their callers finish them.
    while (!jobs_.empty() &&
           (!unclaimed(*jobs_.front()) || jobs_.front()->failed.load(std::memory_order_relaxed))) {
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
    work(*job, slot);
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
  // Shares of whole chunks, as even as they come.
  const uint64_t chunks = (count + chunk - 1) / chunk;
  job.shares = static_cast<int>(std::min(threads, chunks));
  if (job.shares <= kLocalShares) {
    job.share = job.local;
  } else {
    job.more = std::make_unique<Share[]>(job.shares);
    job.share = job.more.get();
  }
  const uint64_t shares = static_cast<uint64_t>(job.shares);
  auto boundary = [&](uint64_t s) {
    const uint64_t first_chunk = chunks / shares * s + std::min(s, chunks % shares);
    return first_chunk >= chunks ? count : first_chunk * chunk;  // no overflow past count
  };
  for (uint64_t s = 0; s < shares; ++s) {
    job.share[s].next.store(boundary(s), std::memory_order_relaxed);
    job.share[s].end = boundary(s + 1);
  }
  if (openmp_) {
    runOpenmp(job);
    return std::move(job.error);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(&job);
  }
  posted_.fetch_add(1, std::memory_order_release);
  if (chunks > 2) {
    work_cv_.notify_all();
  } else {
    work_cv_.notify_one();
  }
  work(job, 0);
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
  work(job, omp_get_thread_num());
#else
  work(job, 0);
#endif
}

}  // namespace ral::cpu
