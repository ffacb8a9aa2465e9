// 8 threads x 10,000 executions of one loaded module on one StandaloneContext, every result
// checked. Also built with -fsanitize=thread by scripts/test.sh.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "ral/standalone_context.h"
#include "tests/support/test_cpu_driver.h"

namespace ral::standalone {
namespace {

constexpr int kThreads = 8;
constexpr int kExecutions = 10000;

TEST(StandaloneConcurrencyTest, EightThreadsShareOneContext) {
  auto loaded = StandaloneContext::load(std::string(RAL_TEST_MODULE_DIR) + "/add_r1.ralm",
                                        testing::defaultTestOptions());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  std::shared_ptr<StandaloneContext> ctx = *loaded;
  std::atomic<int64_t> wrong{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      float a[3], b[3];
      const int64_t shape[] = {3};
      for (int i = 0; i < kExecutions; ++i) {
        for (int k = 0; k < 3; ++k) {
          a[k] = static_cast<float>(t * 100000 + i);
          b[k] = static_cast<float>(k);
        }
        // Alternate the two host APIs: raw pointers and DLPack.
        Execution exec = ctx->newExecution();
        Status s;
        if (i % 2 == 0) {
          s = exec.bindInput(0, TensorRef{a, DType::kF32, 1, shape, nullptr});
          if (s.ok()) s = exec.bindInput(1, TensorRef{b, DType::kF32, 1, shape, nullptr});
        } else {
          DLTensor da{}, db{};
          da.data = a;
          db.data = b;
          da.device = db.device = {kDLCPU, 0};
          da.dtype = db.dtype = {kDLFloat, 32, 1};
          da.ndim = db.ndim = 1;
          da.shape = db.shape = const_cast<int64_t*>(shape);
          s = exec.bindInput(0, da);
          if (s.ok()) s = exec.bindInput(1, db);
        }
        if (s.ok()) s = exec.run();
        if (!s.ok()) {
          ++failed;
          continue;
        }
        auto out = exec.takeOutput(0);
        if (!out.ok()) {
          ++failed;
          continue;
        }
        DLTensorPtr y(*out);
        const auto* v = static_cast<const float*>(y->dl_tensor.data);
        for (int k = 0; k < 3; ++k) wrong += v[k] != a[k] + b[k];
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(wrong, 0);
}

}  // namespace
}  // namespace ral::standalone
