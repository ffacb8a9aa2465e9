#include "ral/context.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "ral/api.h"

namespace ral {
namespace {

// ---- error flag and the first error -------------------------------------------------------

void failWith(ExecutionContext* ctx, int32_t code) {
  ctx->signalError(Status(static_cast<StatusCode>(code), "failure " + std::to_string(code)));
}
RAL_API("test_fail", "cpu", failWith);

int64_t twice(ExecutionContext*, int64_t x) { return 2 * x; }
RAL_API("test_twice", "cpu", twice);

TEST(ExecutionContextTest, ErrorFlagIsVisibleThroughTheAbiHeader) {
  Context context;
  auto exec = context.acquireExecution();
  void* ctx = exec->abi();
  const auto* header = static_cast<const ral_exec_header*>(ctx);
  EXPECT_EQ(header->error, 0u);
  EXPECT_EQ(header->abi_version, RAL_ABI_VERSION);
  // The header is what generated code reads at offset 0 of the pointer it was given.
  EXPECT_EQ(*static_cast<const uint32_t*>(ctx), 0u);

  int32_t code = static_cast<int32_t>(StatusCode::kInvalidArgument);
  void* args[] = {&ctx, &code};
  ral_api_call(ctx, "test_fail___cpu___pvoid_i32___void", args);
  EXPECT_NE(header->error, 0u);
  EXPECT_NE(*static_cast<const uint32_t*>(ctx), 0u);
  EXPECT_TRUE(exec->failed());
  EXPECT_EQ(exec->status().toString(), "INVALID_ARGUMENT: failure 2");

  // A second error does not replace the first.
  int32_t other = static_cast<int32_t>(StatusCode::kInternal);
  void* args2[] = {&ctx, &other};
  ral_api_call(ctx, "test_fail___cpu___pvoid_i32___void", args2);
  EXPECT_EQ(exec->status().toString(), "INVALID_ARGUMENT: failure 2");
}

TEST(ExecutionContextTest, UnknownNameFailsTheExecutionNotTheProcess) {
  Context context;
  {
    auto exec = context.acquireExecution();
    void* ctx = exec->abi();
    int64_t x = 1, y = 0;
    void* args[] = {&ctx, &x, &y};
    ral_api_call(ctx, "test_twice___cpu___pvoid_i64___i32", args);
    ASSERT_TRUE(exec->failed());
    EXPECT_EQ(exec->status().code(), StatusCode::kNotFound);
    EXPECT_NE(exec->status().message().find("test_twice___cpu___pvoid_i64___i64"),
              std::string_view::npos)
        << exec->status();
    ral_api_call(ctx, nullptr, args);  // a null name is an error too, not a crash
    ral_api_call(nullptr, "x", args);  // nothing to report to: ignored
  }
  // The next execution (a pooled, reset context) is correct.
  auto exec = context.acquireExecution();
  void* ctx = exec->abi();
  int64_t x = 21, y = 0;
  void* args[] = {&ctx, &x, &y};
  ral_api_call(ctx, "test_twice___cpu___pvoid_i64___i64", args);
  EXPECT_FALSE(exec->failed()) << exec->status();
  EXPECT_EQ(y, 42);
}

TEST(ExecutionContextTest, NamesAreCheckedByContentNotOnlyByPointer) {
  Context context;
  auto exec = context.acquireExecution();
  void* ctx = exec->abi();
  char name[64] = "test_twice___cpu___pvoid_i64___i64";
  int64_t x = 5, y = 0;
  void* args[] = {&ctx, &x, &y};
  ral_api_call(ctx, name, args);
  EXPECT_EQ(y, 10);
  // Same buffer, new text: must not reuse the cached function.
  std::strcpy(name, "test_fail___cpu___pvoid_i32___void");
  int32_t code = static_cast<int32_t>(StatusCode::kAborted);
  void* args2[] = {&ctx, &code};
  ral_api_call(ctx, name, args2);
  EXPECT_EQ(exec->status().code(), StatusCode::kAborted);
}

TEST(ExecutionContextTest, PoolReusesAndResets) {
  Context context;
  ExecutionContext* first = nullptr;
  {
    auto exec = context.acquireExecution();
    first = exec.get();
    exec->signalError(internalError("x"));
    static struct : Stream {
    } stream;
    exec->setStream(&stream);
  }
  auto again = context.acquireExecution();
  EXPECT_EQ(again.get(), first);
  EXPECT_FALSE(again->failed());
  EXPECT_TRUE(again->status().ok());
  EXPECT_EQ(again->stream(), nullptr);
  auto second = context.acquireExecution();
  EXPECT_NE(second.get(), first);
}

TEST(ExecutionContextTest, SignalFromManyThreadsKeepsExactlyOneError) {
  Context context;
  auto exec = context.acquireExecution();
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) exec->signalError(internalError("thread ", t));
    });
  for (auto& th : threads) th.join();
  EXPECT_TRUE(exec->failed());
  EXPECT_EQ(exec->status().message().substr(0, 7), "thread ");
}

// ---- host overrides -----------------------------------------------------------------------

struct HostExec : ExecutionContext {
  static const ContextType kType;
  explicit HostExec(Context* c) : ExecutionContext(c, &kType) {}
  int64_t host_value = 1000;
};
const ContextType HostExec::kType = {"test_host", &ExecutionContext::kType};

struct HostContext : Context {
  HostContext() : Context(&HostExec::kType) {}
  std::unique_ptr<ExecutionContext> newExecutionContext() override {
    return std::make_unique<HostExec>(this);
  }
};

int64_t whoBase(ExecutionContext*) { return 1; }
int64_t whoHost(HostExec* ctx) { return ctx->host_value; }
RAL_API("test_who", "cpu", whoBase);
RAL_API("test_who", "cpu", whoHost);

TEST(ContextTest, HostContextOverridesAName) {
  const char* name = "test_who___cpu___pvoid___i64";
  for (int host = 0; host < 2; ++host) {
    std::unique_ptr<Context> context =
        host ? std::unique_ptr<Context>(new HostContext()) : std::make_unique<Context>();
    auto exec = context->acquireExecution();
    void* ctx = exec->abi();
    int64_t r = 0;
    void* args[] = {&ctx, &r};
    ral_api_call(ctx, name, args);
    EXPECT_EQ(r, host ? 1000 : 1);
    ral_import imports[] = {{name, nullptr}};
    ASSERT_TRUE(context->resolveImports(imports, 1).ok());
    r = 0;
    imports[0].fn(ctx, args);
    EXPECT_EQ(r, host ? 1000 : 1);
  }
}

// ---- drivers ------------------------------------------------------------------------------

class FakeDriver : public Driver {
 public:
  static constexpr DeviceKind kDeviceKind = DeviceKind::kHsa;
  static std::atomic<int> created;
  FakeDriver() { ++created; }
  DeviceKind kind() const override { return kDeviceKind; }
  std::string deviceName() const override { return "fake"; }
  StatusOr<void*> allocate(size_t, size_t, MemoryKind) override { return outOfMemory("fake"); }
  Status deallocate(void*) override { return Status(); }
  Status copy(void*, const void*, size_t, CopyKind, Stream*) override { return Status(); }
  Status fill(void*, size_t, const void*, size_t, Stream*) override { return Status(); }
  MemoryStats memoryStats() const override { return {}; }
  Status trim() override { return Status(); }
  StatusOr<Executable*> load(const ExecutableSpec&) override { return unsupported("fake"); }
  Status launch(Executable*, uint32_t, const LaunchConfig&, const KernelArgs&, Stream*) override {
    return unsupported("fake");
  }
  StatusOr<std::unique_ptr<Stream>> createStream() override { return unsupported("fake"); }
  Status synchronize(Stream*) override { return Status(); }
  StatusOr<std::shared_ptr<Semaphore>> createSemaphore(uint64_t) override {
    return unsupported("fake");
  }
  Status queueSignal(Stream*, Semaphore*, uint64_t) override { return unsupported("fake"); }
  Status queueWait(Stream*, Semaphore*, uint64_t) override { return unsupported("fake"); }
};
std::atomic<int> FakeDriver::created{0};

TEST(ContextTest, DriversAreCreatedLazilyOnce) {
  Context context;
  FakeDriver::created = 0;
  ASSERT_TRUE(context
                  .setDriverFactory(DeviceKind::kHsa,
                                    [](Context&) -> StatusOr<std::unique_ptr<Driver>> {
                                      return std::unique_ptr<Driver>(new FakeDriver());
                                    })
                  .ok());
  EXPECT_EQ(FakeDriver::created, 0);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      auto d = context.driver<FakeDriver>();
      if (d.ok() && (*d)->deviceName() == "fake") ++ok;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok, 8);
  EXPECT_EQ(FakeDriver::created, 1);
  // Too late to replace a driver in use.
  EXPECT_EQ(context.setDriverFactory(DeviceKind::kHsa, nullptr).code(),
            StatusCode::kFailedPrecondition);
}

TEST(ContextTest, AFactoryMayAskItsContextForAnotherDriver) {
  Context context;
  ASSERT_TRUE(context
                  .setDriverFactory(DeviceKind::kHsa,
                                    [](Context&) -> StatusOr<std::unique_ptr<Driver>> {
                                      return std::unique_ptr<Driver>(new FakeDriver());
                                    })
                  .ok());
  ASSERT_TRUE(context
                  .setDriverFactory(DeviceKind::kVulkan,
                                    [](Context& c) -> StatusOr<std::unique_ptr<Driver>> {
                                      // e.g. a device driver that stages through another one
                                      RAL_ASSIGN_OR_RETURN(Driver * other,
                                                           c.driver(DeviceKind::kHsa));
                                      if (other->deviceName() != "fake")
                                        return internalError("wrong driver");
                                      return unavailable("no vulkan device in this test");
                                    })
                  .ok());
  auto d = context.driver(DeviceKind::kVulkan);
  EXPECT_EQ(d.status().code(), StatusCode::kUnavailable) << d.status();
}

TEST(ContextTest, MissingOrFailingDriverIsAClearError) {
  Context context;
  ASSERT_TRUE(context
                  .setDriverFactory(DeviceKind::kCuda,
                                    [](Context&) -> StatusOr<std::unique_ptr<Driver>> {
                                      return unavailable("libcuda.so.1 not found");
                                    })
                  .ok());
  auto d = context.driver(DeviceKind::kCuda);
  EXPECT_EQ(d.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(d.status().message().find("cuda"), std::string_view::npos) << d.status();
  EXPECT_NE(d.status().message().find("libcuda.so.1"), std::string_view::npos);
  EXPECT_EQ(context.driver(DeviceKind::kCuda).status(), d.status());  // remembered
  // No factory at all for this kind in a core-only build, or a working one otherwise.
  auto v = context.driver(static_cast<DeviceKind>(17));
  EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument);
}

// ---- resource cache -----------------------------------------------------------------------

struct Handle {
  explicit Handle(int v) : value(v) {}
  int value;
};

TEST(ContextTest, ResourceCacheCreatesOncePerKeyAndType) {
  Context context;
  std::atomic<int> made{0};
  std::vector<std::thread> threads;
  std::vector<Handle*> got(8);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      auto h = context.getOrCreate<Handle>(uint64_t{7}, [&] {
        ++made;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        return std::make_unique<Handle>(7);
      });
      got[t] = h.ok() ? *h : nullptr;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(made, 1);
  for (Handle* h : got) EXPECT_EQ(h, got[0]);
  EXPECT_EQ(got[0]->value, 7);

  // Another key, and the same key for another type, are different resources.
  auto other = context.getOrCreate<Handle>(uint64_t{8}, [] { return std::make_unique<Handle>(8); });
  EXPECT_EQ((*other)->value, 8);
  auto str = context.getOrCreate<std::string>(uint64_t{7},
                                              [] { return std::make_unique<std::string>("s"); });
  EXPECT_EQ(**str, "s");
  static const char kKey = 0;
  auto byPtr = context.getOrCreate<Handle>(&kKey, [] { return std::make_unique<Handle>(9); });
  EXPECT_EQ((*byPtr)->value, 9);
}

TEST(ContextTest, FailedResourceCreationIsNotCached) {
  Context context;
  int calls = 0;
  auto fail = [&]() -> StatusOr<std::unique_ptr<Handle>> {
    ++calls;
    return unavailable("not yet");
  };
  EXPECT_EQ(context.getOrCreate<Handle>(uint64_t{1}, fail).status().code(),
            StatusCode::kUnavailable);
  auto ok = context.getOrCreate<Handle>(uint64_t{1}, [&]() -> StatusOr<std::unique_ptr<Handle>> {
    ++calls;
    return std::make_unique<Handle>(1);
  });
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace ral
