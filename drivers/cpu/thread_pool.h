// ThreadPool: runs a range of tasks on `threads` threads, the calling thread included, and
// returns when all are done. The range is cut into one contiguous share per thread; each thread
// takes chunks from its own share first, then from the others', so uneven tasks balance
// themselves while thread t keeps working on the t-th part of every range: one layer's output
// rows are read by the next layer on the core that wrote them, from its own L2 cache (a chunk
// counter shared by all threads handed out rows at random and half of each layer's input came
// from the other core's cache). Several callers (and tasks that call run() again) may use one pool
// at once: each run() makes progress on its own tasks, so nesting never deadlocks.
//
// Two ways to get the threads. Where RAL is built with OpenMP (GCC's libgomp, the runtime oneDNN
// and torch run on), run() opens an OpenMP parallel region of `threads` threads: the library
// kernels (oneDNN's convolutions and GEMMs) and the compiled loops then share one set of worker
// threads, instead of two sets that spin against each other between a GEMM and the loop after it
// (ViT-B/16 at 2 threads: 1.3x faster). A nested run() inside a region runs on its caller alone.
// Otherwise, or with RAL_CPU_OPENMP=0 in the environment, the pool owns `threads` - 1 std::threads.
// Thread-safe: run() may be called from any thread.
#ifndef RAL_DRIVERS_CPU_THREAD_POOL_H_
#define RAL_DRIVERS_CPU_THREAD_POOL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ral/status.h"

namespace ral::cpu {

class ThreadPool {
 public:
  // Runs tasks [begin, end). Returning a non-OK status stops handing out further chunks.
  using TaskFn = Status (*)(void* state, uint64_t begin, uint64_t end);

  // `threads` >= 1: threads - 1 workers plus the caller of run(). `openmp`: run on OpenMP's
  // threads where RAL is built with it (see above).
  explicit ThreadPool(int threads, bool openmp = openmpByDefault());
  // Built with OpenMP, and RAL_CPU_OPENMP is not 0.
  static bool openmpByDefault();
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threadCount() const { return threads_; }
  bool usesOpenmp() const { return openmp_; }

  // Runs fn over [0, count) in chunks of `chunk` tasks (0: chosen from the thread count). Returns
  // the first error a chunk returned (or an exception turned into INTERNAL).
  Status run(uint64_t count, uint64_t chunk, TaskFn fn, void* state);

 private:
  // One thread's part of a job's range: [next, end) still unclaimed. A cache line each, so that
  // claiming chunks of one's own share does not invalidate the other threads' counters.
  // Shares kept in the Job itself (on run()'s stack): no allocation per run up to this many
  // threads.
  static constexpr int kLocalShares = 8;
  struct alignas(64) Share {
    std::atomic<uint64_t> next{0};
    uint64_t end = 0;
  };
  struct Job {
    TaskFn fn;
    void* state;
    uint64_t count;
    uint64_t chunk;
    int shares = 1;
    Share* share = nullptr;  // `local`, or `more` past kLocalShares threads
    Share local[kLocalShares];
    std::unique_ptr<Share[]> more;
    std::atomic<bool> failed{false};
    int helpers = 0;  // workers inside work(); guarded by mutex_
    Status error;     // guarded by mutex_
  };
  void workerLoop(int slot);
  // Claims and runs chunks, from share `slot` first (the caller is 0, worker i is i + 1, an
  // OpenMP thread its thread number).
  void work(Job& job, int slot);
  // Runs one chunk; false once the job has failed.
  bool runChunk(Job& job, uint64_t begin, uint64_t end);
  // Whether some share of `job` still has unclaimed chunks.
  static bool unclaimed(const Job& job);
  // Runs `job` on an OpenMP parallel region of threads_ threads.
  void runOpenmp(Job& job);

  const int threads_;
  const bool openmp_;

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::deque<Job*> jobs_;  // jobs that may still have unclaimed chunks
  bool stop_ = false;
  // Jobs posted so far: an idle worker spins on it for kSpin before it sleeps on work_cv_.
  std::atomic<uint64_t> posted_{0};
  static constexpr std::chrono::microseconds kSpin{50};
};

}  // namespace ral::cpu

#endif  // RAL_DRIVERS_CPU_THREAD_POOL_H_
