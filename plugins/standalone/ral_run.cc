// ral-run: runs a module file on the standalone context. A module compiled for a device
// (ral-compile --device=vulkan, or one calling a device's kernels) runs there: the context copies
// the inputs into the device's memory and waits for it before outputs are read. --device names
// the device expected; an unavailable one is one clear error, and one the module was not
// compiled for is refused (the code would still run where it was compiled for).
//
//   ral-run model.ralm --input=@x.npy --input=2x3xf32=1,2,3,4,5,6 [--output=@y.npy]
//           [--expected_output=@ref.npy] [--rtol=1e-5 --atol=1e-6] [--device=URI]
//           [--benchmark=N --threads=T] [--world-size=N]
//   ral-run --list-devices
//
// --world-size=N runs N ranks of a module that calls collectives, as N processes on this machine
// meeting on loopback (plugins/standalone/local_ranks.h); "{rank}" in file names becomes each
// rank's number (--input=@w1.{rank}.npy). Without it, a module's collectives use the rank the
// environment gives (RAL_RANK/RAL_WORLD_SIZE or torchrun's RANK/WORLD_SIZE;
// ral/gloo_communicator.h).
//
// --device takes a device URI (include/ral/device_uri.h): cpu, vulkan:1, cuda://GPU-<uuid>,
// hsa, vulkan://name=llvmpipe; one that matches no device is an error listing the devices.
//
// Exit codes (plugins/standalone/tool_main.h): 0 success; 1 the module failed to load or run, or
// memory ran out; 2 bad arguments or input files; 3 an output differs from its expected value;
// 4 an internal error. A device that does not exist or cannot start is exit code 2. Every error is
// one line on stderr.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "plugins/standalone/host_tensor.h"
#include "plugins/standalone/local_ranks.h"
#include "plugins/standalone/npy.h"
#include "plugins/standalone/tool_main.h"
#include "ral/context.h"
#include "ral/device_uri.h"
#include "ral/driver.h"
#include "ral/file_writer.h"
#include "ral/standalone_context.h"
#include "ral/trace.h"

namespace {

using ral::Status;

// --list-devices: per kind, its devices or the reason it has none.
void printDevices() {
  for (int k = 0; k < ral::kNumDeviceKinds; ++k) {
    const auto kind = static_cast<ral::DeviceKind>(k);
    auto devices = ral::enumerateDevices(kind);
    if (!devices.ok()) {
      std::printf("%s: none (%s)\n", std::string(ral::deviceKindName(kind)).c_str(),
                  std::string(devices.status().message()).c_str());
      continue;
    }
    if (devices->empty()) std::printf("%s: none\n", std::string(ral::deviceKindName(kind)).c_str());
    for (const ral::DeviceInfo& d : *devices) std::printf("%s\n", ral::describeDevice(d).c_str());
  }
}
using ral::StatusOr;
using ral::cli::HostTensor;
using ral::standalone::StandaloneContext;

using ral::cli::kExitMismatch;
using ral::cli::kExitUsage;
constexpr int kExitRunFailed = ral::cli::kExitFailed;

int fail(int code, const std::string& message) {
  return ral::cli::toolError("ral-run", code, message);
}

// One execution: binds `inputs`, runs, returns the outputs (copied when `keep` is set).
Status runOnce(StandaloneContext& context, std::vector<HostTensor>& inputs,
               std::vector<HostTensor>* keep) {
  ral::standalone::Execution exec = context.newExecution();
  for (size_t i = 0; i < inputs.size(); ++i)
    RAL_RETURN_IF_ERROR(exec.bindInput(i, inputs[i].ref()));
  RAL_RETURN_IF_ERROR(exec.run());
  for (size_t i = 0; i < context.module().outputs().size(); ++i) {
    RAL_ASSIGN_OR_RETURN(DLManagedTensor * t, exec.takeOutput(i));
    ral::standalone::DLTensorPtr owned(t);
    if (keep != nullptr) {
      RAL_ASSIGN_OR_RETURN(HostTensor h, ral::cli::fromDLTensor(t->dl_tensor));
      keep->push_back(std::move(h));
    }
  }
  return Status();
}

// Latencies of one benchmark thread: the exact count and minimum, and a uniform sample of at most
// `max_samples` values (reservoir sampling) for the percentiles, so memory stays bounded whatever
// --benchmark and --threads ask for.
class LatencySample {
 public:
  explicit LatencySample(size_t max_samples = 1) : max_samples_(max_samples) {}

  void add(double us) {
    ++count_;
    min_ = std::min(min_, us);
    if (samples_.size() < max_samples_) {
      samples_.push_back(us);
      return;
    }
    // xorshift64: cheap and good enough to pick which sample to replace.
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    const uint64_t j = state_ % count_;
    if (j < max_samples_) samples_[j] = us;
  }
  uint64_t count() const { return count_; }
  double min() const { return min_; }
  const std::vector<double>& samples() const { return samples_; }

 private:
  size_t max_samples_;
  uint64_t count_ = 0;
  double min_ = 1e300;
  uint64_t state_ = 0x9E3779B97F4A7C15ull;
  std::vector<double> samples_;
};

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t i = std::min(sorted.size() - 1, static_cast<size_t>(p / 100.0 * sorted.size()));
  return sorted[i];
}

int benchmark(StandaloneContext& context, std::vector<HostTensor>& inputs, int iterations,
              int threads) {
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < std::min(iterations, 10); ++i) {
    Status s = runOnce(context, inputs, nullptr);
    if (!s.ok()) return fail(kExitRunFailed, s.toString());
  }
  std::vector<LatencySample> latencies(threads);
  std::vector<Status> errors(threads);
  std::atomic<int> ready{0};
  std::atomic<bool> go{false}, abandon{false};
  std::vector<std::thread> pool;
  Clock::time_point start;
  auto work = [&](int t) {
    latencies[t] = LatencySample(std::max<size_t>(1024, (size_t{1} << 20) / threads));
    ++ready;
    while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
    if (abandon.load()) return;
    for (int i = 0; i < iterations; ++i) {
      const auto t0 = Clock::now();
      Status s = runOnce(context, inputs, nullptr);
      const auto t1 = Clock::now();
      if (!s.ok()) {
        errors[t] = s;
        return;
      }
      latencies[t].add(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
  };
  if (threads == 1) {
    // One benchmark thread is this one: the warm-up ran here, and another thread would start a
    // second OpenMP team beside the warm-up's, whose workers then compete with it for the cores.
    go.store(true);
    start = Clock::now();
    work(0);
  } else {
    for (int t = 0; t < threads; ++t) {
      try {
        pool.emplace_back(work, t);
      } catch (const std::system_error& e) {
        // The system refused a thread (a process or memory limit): stop the started ones cleanly.
        abandon.store(true);
        go.store(true, std::memory_order_release);
        for (auto& th : pool) th.join();
        return fail(kExitRunFailed, "cannot start benchmark thread " + std::to_string(t + 1) +
                                        " of " + std::to_string(threads) + ": " + e.what() +
                                        " (use fewer --threads)");
      }
    }
    while (ready.load() < threads) std::this_thread::yield();
    start = Clock::now();
    go.store(true, std::memory_order_release);
  }
  for (auto& th : pool) th.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (const Status& s : errors)
    if (!s.ok()) return fail(kExitRunFailed, s.toString());
  std::vector<double> all;
  uint64_t count = 0;
  double min = 1e300;
  for (const LatencySample& l : latencies) {
    all.insert(all.end(), l.samples().begin(), l.samples().end());
    count += l.count();
    min = std::min(min, l.min());
  }
  std::sort(all.begin(), all.end());
  std::printf("benchmark: %d thread(s) x %d execution(s) on one context\n", threads, iterations);
  std::printf("latency (us): min %.2f  p50 %.2f  p90 %.2f  p99 %.2f\n", min, percentile(all, 50),
              percentile(all, 90), percentile(all, 99));
  std::printf("throughput: %.0f executions/s\n", static_cast<double>(count) / seconds);
  return 0;
}

int runMain(int argc, char** argv) {
  CLI::App app{"Runs a RAL module file (.ralm) on the standalone CPU context", "ral-run"};
  std::string path, device = "cpu";
  std::vector<std::string> inputs, outputs, expected;
  ral::cli::Tolerance tol;
  int iterations = 0, threads = 1;
  bool strict_zero_copy = false;
  app.add_option("module", path, "module file (required unless --list-devices)");
  app.add_option("--input", inputs, "input i: @file.npy or TYPE=VALUES (e.g. 2x3xf32=1,2,3,4,5,6)")
      ->allow_extra_args(false);
  app.add_option("--output", outputs, "write output i to @file.npy (else it is printed)")
      ->allow_extra_args(false);
  app.add_option("--expected_output", expected, "compare output i with @file.npy or TYPE=VALUES")
      ->allow_extra_args(false);
  app.add_option("--rtol", tol.rtol, "relative tolerance for floating-point outputs");
  app.add_option("--atol", tol.atol, "absolute tolerance for floating-point outputs");
  CLI::Option* device_option = app.add_option(
      "--device", device,
      "device the module must run on, as a device URI: cpu, cuda, cuda:1, vulkan://name=llvmpipe, "
      "hsa://GPU-<uuid> (default: the kind it was compiled for, that kind's default device)");
  bool list_devices = false;
  app.add_flag("--list-devices", list_devices,
               "list the devices of every driver built in (or why there are none), then exit");
  app.add_option("--benchmark", iterations, "then run N timed executions per thread");
  app.add_option("--threads", threads, "benchmark threads sharing the one context");
  std::string trace_path;
  app.add_option("--trace", trace_path,
                 "write a Chrome/Perfetto trace of the executions (each RAL call a span) to this "
                 "JSON file");
  int world_size = -1;  // not given
  app.add_option("--world-size", world_size,
                 "run N ranks of the module as N local processes meeting on 127.0.0.1; {rank} in "
                 "file names becomes each rank's number");
  app.add_flag("--strict-zero-copy", strict_zero_copy,
               "refuse inputs whose layout the module was not compiled for, instead of copying "
               "them (e.g. a Fortran-order .npy for a row-major input)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(kExitUsage, std::string(e.what()) + " (see --help)");
  }
  if (iterations < 0) return fail(kExitUsage, "--benchmark must be >= 0");
  if (threads < 1 || threads > 1024) return fail(kExitUsage, "--threads must be in 1..1024");
  if (list_devices) {
    printDevices();
    return ral::cli::kExitOk;
  }
  if (path.empty()) return fail(kExitUsage, "no module file given (see --help)");
  if (world_size == 0 || world_size < -1 || world_size > 256)
    return fail(kExitUsage, "--world-size must be in 1..256");
  if (world_size >= 1) {
    // Before anything starts a thread: each rank is a fork of this process.
    int rank = 0;
    if (world_size == 1) {
      setenv("RAL_WORLD_SIZE", "1", 1);
      setenv("RAL_RANK", "0", 1);
    } else {
      const ral::cli::RankLaunch launch = ral::cli::forkRanks(world_size, /*grace_seconds=*/10);
      if (launch.is_parent) return launch.exit_code;
      rank = launch.rank;
    }
    for (auto* list : {&inputs, &outputs, &expected})
      for (std::string& s : *list) s = ral::cli::substituteRank(s, rank);
    trace_path = ral::cli::substituteRank(trace_path, rank);
  }
  // Recording starts before the module loads (its imports then record their calls) and the file
  // is written on every way out.
  struct TraceWriter {
    bool on = false;
    ~TraceWriter() {
      if (!on) return;
      const Status s = ral::trace::stop();
      if (!s.ok()) std::fprintf(stderr, "ral-run: --trace: %s\n", s.toString().c_str());
    }
  } trace_writer;
  if (!trace_path.empty()) {
    Status writable = ral::checkOutputFile(trace_path);
    if (!writable.ok()) return fail(kExitUsage, "--trace " + writable.toString());
    Status started = ral::trace::start(trace_path);
    if (!started.ok()) return fail(kExitUsage, "--trace: " + started.toString());
    trace_writer.on = true;
  }
  const bool device_given = device_option->count() > 0;
  auto uri = ral::parseDeviceUri(device);
  if (!uri.ok()) return fail(kExitUsage, std::string(uri.status().message()));
  StandaloneContext::Options options;
  options.strict_zero_copy = strict_zero_copy;
  if (uri->kind != ral::DeviceKind::kCpu || uri->selector != ral::DeviceUri::Selector::kDefault) {
    // Before loading: a device that does not exist or cannot start is one clear line (with the
    // devices there are), whatever the module.
    ral::Context probe;
    Status selected = probe.selectDevice(device);
    if (!selected.ok()) return fail(kExitUsage, selected.toString());
    auto available = probe.driver(uri->kind);
    if (!available.ok())
      return fail(kExitUsage,
                  "device '" + device + "' is not available: " + available.status().toString());
  }

  auto module_file = ral::Module::load(path);
  if (!module_file.ok()) return fail(kExitRunFailed, module_file.status().toString());
  auto runs_on = ral::moduleDevice(**module_file);
  if (!runs_on.ok()) return fail(kExitRunFailed, runs_on.status().toString());
  if (device_given && *runs_on != uri->kind)
    return fail(kExitUsage,
                "module '" + (*module_file)->name() + "' runs on " +
                    std::string(ral::deviceKindName(*runs_on)) + ", not " + device +
                    " (ral-compile --device=" + std::string(ral::deviceKindName(uri->kind)) +
                    " builds it for " + std::string(ral::deviceKindName(uri->kind)) + ")");
  if (device_given) options.device = device;
  auto context = StandaloneContext::create(std::move(*module_file), std::move(options));
  if (!context.ok()) return fail(kExitRunFailed, context.status().toString());
  const ral::Module& module = (*context)->module();
  if (inputs.size() != module.inputs().size())
    return fail(kExitUsage, "module '" + module.name() + "' takes " +
                                std::to_string(module.inputs().size()) + " input(s), " +
                                std::to_string(inputs.size()) + " given with --input");
  if (outputs.size() > module.outputs().size() || expected.size() > module.outputs().size())
    return fail(kExitUsage, "module '" + module.name() + "' has " +
                                std::to_string(module.outputs().size()) +
                                " output(s); too many --output or --expected_output");
  for (const auto& o : outputs) {
    if (o.size() < 2 || o[0] != '@')
      return fail(kExitUsage, "bad --output '" + o + "': expected @file.npy");
    // Before running: a device, FIFO or another user's file is refused (ral/file_writer.h).
    Status writable = ral::checkOutputFile(o.substr(1));
    if (!writable.ok()) return fail(kExitUsage, "--output " + writable.toString());
  }

  std::vector<HostTensor> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto t = ral::cli::tensorFromArgument(inputs[i]);
    if (!t.ok())
      return fail(kExitUsage,
                  "input " + std::to_string(i) + ": " + std::string(t.status().message()));
    values.push_back(std::move(*t));
  }
  std::vector<HostTensor> refs;
  for (size_t i = 0; i < expected.size(); ++i) {
    auto t = ral::cli::tensorFromArgument(expected[i]);
    if (!t.ok())
      return fail(kExitUsage, "expected output " + std::to_string(i) + ": " +
                                  std::string(t.status().message()));
    refs.push_back(std::move(*t));
  }

  std::vector<HostTensor> results;
  Status ran = runOnce(**context, values, &results);
  if (!ran.ok()) return fail(kExitRunFailed, ran.toString());
  for (size_t i = 0; i < results.size(); ++i) {
    if (i < outputs.size()) {
      Status w = ral::cli::writeNpy(outputs[i].substr(1), results[i]);
      if (!w.ok()) return fail(kExitRunFailed, "output " + std::to_string(i) + ": " + w.toString());
      std::printf("output %zu: %s -> %s\n", i, results[i].typeString().c_str(),
                  outputs[i].c_str() + 1);
    } else {
      std::printf("output %zu: %s\n", i, ral::cli::formatTensor(results[i]).c_str());
    }
  }
  for (size_t i = 0; i < refs.size(); ++i) {
    Status cmp = ral::cli::compareTensors(results[i], refs[i], tol);
    if (!cmp.ok())
      return fail(kExitMismatch,
                  "output " + std::to_string(i) +
                      " differs from the expected output: " + std::string(cmp.message()));
  }
  if (!refs.empty()) std::printf("expected outputs: %zu matched\n", refs.size());
  if (iterations > 0) return benchmark(**context, values, iterations, threads);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return ral::cli::runTool("ral-run", [&] { return runMain(argc, argv); });
}
