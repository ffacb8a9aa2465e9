// A compiled module's collectives through the standalone context: the tensor-parallel MLP
// (examples/tensor_parallel_mlp.mlir) on 2 ranks, each a thread with its own StandaloneContext
// and Gloo communicator, run directly and as asynchronous submissions queued back to back (their
// all-reduces must pair up in order across the ranks), against a float64 reference.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "contexts/standalone/gloo/tcp_store.h"
#include "ral/gloo_communicator.h"
#include "ral/standalone_context.h"
#include "ral/submission.h"

namespace ral::standalone {
namespace {

constexpr int kRanks = 2, kIn = 128, kHidden = 256, kOut = 10;

struct F32 {
  std::vector<float> data;
  std::vector<int64_t> shape;
  DLTensor dl{};
  F32(std::vector<int64_t> s, std::mt19937& rng, float scale) : shape(std::move(s)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::normal_distribution<float> dist(0, scale);
    for (int64_t i = 0; i < n; ++i) data.push_back(dist(rng));
    point();
  }
  F32(const F32& o) : data(o.data), shape(o.shape) { point(); }
  void point() {
    dl.data = data.data();
    dl.device = {kDLCPU, 0};
    dl.ndim = static_cast<int32_t>(shape.size());
    dl.dtype = {kDLFloat, 32, 1};
    dl.shape = shape.data();
  }
  // Columns [c0, c1) of a matrix, or elements [c0, c1) of a vector, as a dense tensor.
  F32 slice(int64_t c0, int64_t c1, bool rows) const {
    F32 s = *this;
    s.data.clear();
    if (shape.size() == 1) {
      s.data.assign(data.begin() + c0, data.begin() + c1);
      s.shape = {c1 - c0};
    } else if (rows) {
      s.data.assign(data.begin() + c0 * shape[1], data.begin() + c1 * shape[1]);
      s.shape = {c1 - c0, shape[1]};
    } else {
      for (int64_t r = 0; r < shape[0]; ++r)
        for (int64_t c = c0; c < c1; ++c) s.data.push_back(data[r * shape[1] + c]);
      s.shape = {shape[0], c1 - c0};
    }
    s.point();
    return s;
  }
};

TEST(CollectiveModuleTest, RunsAndSubmissionsPairUpAcrossRanks) {
  const std::string path = std::string(RAL_TEST_MODULE_DIR) + "/compiled_tensor_parallel_mlp.ralm";
  if (!std::ifstream(path).good()) GTEST_SKIP() << path << " not built (needs ral-compile)";
  std::mt19937 rng(5);
  const F32 w1({kIn, kHidden}, rng, 0.1f), b1({kHidden}, rng, 1), w2({kHidden, kOut}, rng, 0.1f),
      b2({kOut}, rng, 1);
  std::vector<F32> xs;
  for (int64_t batch : {3, 1, 0, 4, 2}) xs.emplace_back(std::vector<int64_t>{batch, kIn}, rng, 1);

  auto server = TcpStoreServer::start("127.0.0.1", 0);
  ASSERT_TRUE(server.ok()) << server.status();
  std::vector<std::vector<std::vector<float>>> got(kRanks);
  std::vector<std::string> errors(kRanks);
  auto rank = [&](int r) {
    auto fail = [&](const Status& s) { errors[r] = s.toString(); };
    GlooOptions go;
    go.rank = r;
    go.size = kRanks;
    go.store_port = (*server)->port();
    auto comm = createGlooCommunicator(go);
    if (!comm.ok()) return fail(comm.status());
    StandaloneContext::Options options;
    options.communicator = *comm;
    auto ctx = StandaloneContext::load(path, options);
    if (!ctx.ok()) return fail(ctx.status());
    const int64_t k = kHidden / kRanks;
    const F32 w1s = w1.slice(r * k, (r + 1) * k, false), b1s = b1.slice(r * k, (r + 1) * k, false),
              w2s = w2.slice(r * k, (r + 1) * k, true);
    // Every call runs directly, then again as submissions queued back to back.
    for (const F32& x : xs) {
      auto out = (*ctx)->run({&x.dl, &w1s.dl, &b1s.dl, &w2s.dl, &b2.dl});
      if (!out.ok()) return fail(out.status());
      const float* p = static_cast<const float*>((*out)[0]->dl_tensor.data);
      got[r].emplace_back(p, p + x.shape[0] * kOut);
    }
    std::vector<std::shared_ptr<Submission>> subs;
    for (const F32& x : xs) {
      auto sub = (*ctx)->submit({&x.dl, &w1s.dl, &b1s.dl, &w2s.dl, &b2.dl});
      if (!sub.ok()) return fail(sub.status());
      subs.push_back(*sub);
    }
    for (size_t i = 0; i < subs.size(); ++i) {
      auto out = subs[i]->output(0);
      if (!out.ok()) return fail(out.status());
      const float* p = static_cast<const float*>((*out)->dl_tensor.data);
      got[r].emplace_back(p, p + xs[i].shape[0] * kOut);
    }
  };
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) threads.emplace_back(rank, r);
  for (auto& t : threads) t.join();
  for (int r = 0; r < kRanks; ++r)
    ASSERT_TRUE(errors[r].empty()) << "rank " << r << ": " << errors[r];

  for (size_t call = 0; call < 2 * xs.size(); ++call) {
    const F32& x = xs[call % xs.size()];
    for (int64_t i = 0; i < x.shape[0]; ++i) {
      std::vector<double> h(kHidden);
      for (int j = 0; j < kHidden; ++j) {
        double s = b1.data[j];
        for (int c = 0; c < kIn; ++c) s += double(x.data[i * kIn + c]) * w1.data[c * kHidden + j];
        h[j] = std::max(0.0, s);
      }
      for (int o = 0; o < kOut; ++o) {
        double y = b2.data[o];
        for (int j = 0; j < kHidden; ++j) y += h[j] * w2.data[j * kOut + o];
        for (int r = 0; r < kRanks; ++r)
          ASSERT_NEAR(got[r][call][i * kOut + o], y, 1e-4 * std::max(1.0, std::abs(y)))
              << "call " << call << " rank " << r << " row " << i << " output " << o;
      }
    }
  }
}

}  // namespace
}  // namespace ral::standalone
