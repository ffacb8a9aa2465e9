// The host protocol in the core, driven by the smallest possible host: tensors are std::vectors
// of floats, memory comes from a counting allocator. What the standalone and torch contexts add
// on top is tested with them; here is what every host gets for free.
#include "ral/host_execution_context.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ral/context.h"
#include "ral/module.h"

namespace ral {
namespace {

// Counts live buffers; can be told to fail frees.
class CountingAllocator final : public BufferAllocator {
 public:
  StatusOr<void*> allocate(size_t bytes, size_t alignment) override {
    void* p = std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
    if (p == nullptr) return outOfMemory("counting allocator");
    ++live;
    return p;
  }
  Status deallocate(void* ptr) override {
    if (fail_frees) return internalError("the allocator refused to free ", ptr);
    std::free(ptr);
    --live;
    return Status();
  }
  int live = 0;
  bool fail_frees = false;
};

struct VectorOutput {
  std::vector<float> values;
  bool owned_buffer = false;
};

class VectorExecution;

class VectorContext : public Context {
 public:
  static const ContextType kType;
  explicit VectorContext(std::shared_ptr<Module> module)
      : Context(&kType), module_(std::move(module)) {}
  const Module& module() const { return *module_; }
  CountingAllocator memory;

 protected:
  std::unique_ptr<ExecutionContext> newExecutionContext() override;

 private:
  std::shared_ptr<Module> module_;
};

class VectorExecution : public HostExecutionContext {
 public:
  explicit VectorExecution(VectorContext* ctx)
      : HostExecutionContext(ctx, ctx->module(), &VectorContext::kType), memory_(ctx->memory) {
    setAllocator(&memory_);
  }
  ~VectorExecution() override { releaseExecutionMemory(); }

  Status bind(size_t index, std::vector<float>& data, std::vector<int64_t> shape) {
    HostTensor t;
    t.dtype = DType::kF32;
    t.rank = static_cast<int>(shape.size());
    t.shape = shape.data();
    t.base = data.data();
    return bindInput(index, t);
  }
  std::map<size_t, VectorOutput> outputs;

 protected:
  StatusOr<void*> copyInput(size_t, const HostTensor&, const int64_t*, int64_t) override {
    return unsupported("this host binds dense inputs only");
  }
  void dropInputCopy(size_t) override {}
  Status acceptOutput(size_t index, const OutputBuffer& out) override {
    int64_t n = 1;
    for (int d = 0; d < out.rank; ++d) n *= out.sizes[d];
    VectorOutput& o = outputs[index];
    const auto* first = static_cast<const float*>(out.data);
    o.values.assign(first, first + n);
    o.owned_buffer = out.allocation != nullptr;
    // The host owns a handed-over allocation: this one copies and frees it.
    if (out.allocation != nullptr) return out.allocator->deallocate(out.allocation);
    return Status();
  }

 private:
  CountingAllocator& memory_;
};

const ContextType VectorContext::kType = {"vector", &HostExecutionContext::kType};

std::unique_ptr<ExecutionContext> VectorContext::newExecutionContext() {
  return std::make_unique<VectorExecution>(this);
}

std::shared_ptr<VectorContext> load(const std::string& name) {
  auto module = Module::load(std::string(RAL_TEST_MODULE_DIR) + "/" + name + ".ralm");
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return nullptr;
  auto ctx = std::make_shared<VectorContext>(*module);
  Status linked = (*module)->link(*ctx);
  EXPECT_TRUE(linked.ok()) << linked;
  return linked.ok() ? ctx : nullptr;
}

TEST(HostExecutionContextTest, ANewHostGetsBindingsChecksAllocationsAndOutputs) {
  auto ctx = load("identity");  // 2x3xf32 -> 2x3xf32 in a ral_alloc buffer
  ASSERT_TRUE(ctx);
  ExecutionHandle handle = ctx->acquireExecution();
  auto* exec = static_cast<VectorExecution*>(handle.get());
  std::vector<float> x = {1, 2, 3, 4, 5, 6};

  // Signature checks come from the core, with the same messages as every host.
  Status wrong = exec->bind(0, x, {3, 2});
  EXPECT_EQ(wrong.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.message().find("input 0: dimension 0 must be 2 (2x3xf32), got 3 (3x2xf32)"),
            std::string::npos)
      << wrong;
  EXPECT_EQ(exec->bind(1, x, {2, 3}).code(), StatusCode::kOutOfRange);
  Status unbound = exec->execute();
  EXPECT_NE(unbound.message().find("input 0 (2x3xf32) is not bound"), std::string::npos) << unbound;

  ASSERT_TRUE(exec->bind(0, x, {2, 3}).ok());
  Status ran = exec->execute();
  ASSERT_TRUE(ran.ok()) << ran;
  EXPECT_EQ(exec->outputs[0].values, x);
  EXPECT_TRUE(exec->outputs[0].owned_buffer);  // the module's buffer was handed over
  EXPECT_EQ(ctx->memory.live, 0);
  EXPECT_EQ(exec->execute().code(), StatusCode::kFailedPrecondition);  // once per execution
  exec->releaseExecutionMemory();
  exec->outputs.clear();
  ASSERT_TRUE(exec->execute().ok());  // the bindings were kept
  EXPECT_EQ(exec->outputs[0].values, x);
}

TEST(HostExecutionContextTest, ModuleSideCallsAreCheckedAndLeaksAreFreed) {
  auto ctx = load("identity");
  ASSERT_TRUE(ctx);
  ExecutionHandle handle = ctx->acquireExecution();
  auto* exec = static_cast<VectorExecution*>(handle.get());
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  ASSERT_TRUE(exec->bind(0, x, {2, 3}).ok());

  // Reading an input with the wrong type, or one that does not exist.
  (void)exec->recvInput<double, 2>(0);
  EXPECT_NE(exec->status().message().find("reads input 0 as rank 2 f64"), std::string::npos);
  exec->releaseExecutionMemory();
  (void)exec->recvInput<float, 2>(5);
  EXPECT_EQ(exec->status().code(), StatusCode::kOutOfRange);
  exec->releaseExecutionMemory();

  // A buffer sent as an output belongs to the host; a later ral_dealloc of it is a no-op.
  auto* p = static_cast<float*>(exec->alloc(6 * sizeof(float)));
  ASSERT_NE(p, nullptr);
  for (int i = 0; i < 6; ++i) p[i] = static_cast<float>(i);
  int64_t sizes[2] = {2, 3}, strides[2] = {3, 1};
  exec->sendOutput<float, 2>(0, viewMemRef<float, 2>(p, 0, sizes, strides));
  exec->dealloc(p);
  EXPECT_FALSE(exec->failed()) << exec->status();
  exec->sendOutput<float, 2>(0, viewMemRef<float, 2>(p, 0, sizes, strides));
  EXPECT_NE(exec->status().message().find("output 0 was sent twice"), std::string::npos);
  exec->releaseExecutionMemory();

  // A pointer the execution did not allocate.
  exec->dealloc(x.data());
  EXPECT_NE(exec->status().message().find("was not allocated by ral_alloc"), std::string::npos);
  exec->releaseExecutionMemory();

  // Memory the module leaks is freed when the execution ends.
  ASSERT_NE(exec->alloc(100), nullptr);
  ASSERT_NE(exec->alloc(0), nullptr);
  EXPECT_EQ(ctx->memory.live, 2);
  exec->releaseExecutionMemory();
  EXPECT_EQ(ctx->memory.live, 0);
  exec->alloc(-1);
  EXPECT_NE(exec->status().message().find("ral_alloc: negative size -1"), std::string::npos);
}

TEST(HostExecutionContextTest, AFailedFreeFailsTheExecution) {
  auto ctx = load("identity");
  ASSERT_TRUE(ctx);
  ExecutionHandle handle = ctx->acquireExecution();
  auto* exec = static_cast<VectorExecution*>(handle.get());
  void* p = exec->alloc(64);
  ASSERT_NE(p, nullptr);
  ctx->memory.fail_frees = true;
  exec->dealloc(p);
  EXPECT_EQ(exec->status().code(), StatusCode::kInternal);
  EXPECT_NE(exec->status().message().find("ral_dealloc"), std::string::npos) << exec->status();
  ctx->memory.fail_frees = false;
  std::free(p);  // refused above, and forgotten by the execution
}

}  // namespace
}  // namespace ral
