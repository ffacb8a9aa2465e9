// ral_conv_block (a depthwise-separable block as one call) against float64 arithmetic done here:
// MobileNet-V2's downsampling block (expansion, 3x3 depthwise with stride 2, projection; clip to
// [0, 6] after the first two) on channels-last tensors with channel counts that are not whole
// vectors. The CPU is the only device with the kernel (expectations.cc);
// tests/unit/kernels_conv_block_test.cc covers its other forms.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "tensor.h"

namespace ral::kernel_cts {
namespace {

class ConvBlock : public KernelTest {};

TEST_P(ConvBlock, MatchesFloat64Arithmetic) {
  const int64_t n = 2, h = 9, w = 10, c = 5, e = 30, f = 7, k = 3, stride = 2, pad = 1;
  const int64_t p = (h + 2 * pad - k) / stride + 1, q = (w + 2 * pad - k) / stride + 1;
  Tensor<float, 4> x(*this, {n, h, w, c}, Layout::kDense), y(*this, {n, p, q, f}, Layout::kDense);
  Tensor<float, 4> w1(*this, {e, c, 1, 1}, Layout::kDense), w2(*this, {e, 1, k, k}, Layout::kDense),
      w3(*this, {f, e, 1, 1}, Layout::kDense);
  Tensor<float, 1> b1(*this, {e}, Layout::kDense), b2(*this, {e}, Layout::kDense),
      b3(*this, {f}, Layout::kDense), bounds(*this, {6}, Layout::kDense);
  Tensor<int64_t, 1> config(*this, {10}, Layout::kDense);
  for (auto* t : {&x, &w1, &w2, &w3}) t->randomize(rng);
  for (auto* t : {&b1, &b2, &b3}) t->randomize(rng);
  const float bound[6] = {0, 6, 0, 6, 0, 0};
  for (int64_t i = 0; i < 6; ++i) bounds.at({i}) = bound[i];
  const int64_t cfg[10] = {0, 2, 2, 0, stride, stride, pad, pad, pad, pad};
  for (int64_t i = 0; i < 10; ++i) config.at({i}) = cfg[i];
  for (auto* t : {&x, &w1, &w2, &w3}) t->upload();
  for (auto* t : {&b1, &b2, &b3, &bounds}) t->upload();
  config.upload();
  const Status s = call("ral_conv_block", x.device_view, w1.device_view, b1.device_view,
                        w2.device_view, b2.device_view, w3.device_view, b3.device_view,
                        y.device_view, config.device_view, bounds.device_view);
  if (onCpu() && s.code() == StatusCode::kNotFound)
    GTEST_SKIP() << "built without oneDNN (RAL_ENABLE_DNNL=OFF): no ral_conv_block";
  ASSERT_TRUE(s.ok()) << s;
  const std::vector<unsigned char> got_bytes = y.download();
  std::memcpy(y.host(), got_bytes.data(), got_bytes.size());

  auto clip = [](double v) { return std::min(std::max(v, 0.0), 6.0); };
  std::vector<double> expanded(n * h * w * e), depthwise(e);
  forEachIndex<4>({n, h, w, e}, [&](const std::array<int64_t, 4>& i) {
    double v = b1.at({i[3]});
    for (int64_t m = 0; m < c; ++m)
      v += double(x.at({i[0], i[1], i[2], m})) * w1.at({i[3], m, 0, 0});
    expanded[((i[0] * h + i[1]) * w + i[2]) * e + i[3]] = clip(v);
  });
  double worst = 0;
  forEachIndex<3>({n, p, q}, [&](const std::array<int64_t, 3>& o) {
    for (int64_t ch = 0; ch < e; ++ch) {
      double v = b2.at({ch});
      for (int64_t a = 0; a < k; ++a)
        for (int64_t b = 0; b < k; ++b) {
          const int64_t r = o[1] * stride - pad + a, col = o[2] * stride - pad + b;
          if (r < 0 || r >= h || col < 0 || col >= w) continue;
          v += expanded[((o[0] * h + r) * w + col) * e + ch] * w2.at({ch, 0, a, b});
        }
      depthwise[ch] = clip(v);
    }
    for (int64_t j = 0; j < f; ++j) {
      double v = b3.at({j});
      for (int64_t ch = 0; ch < e; ++ch) v += depthwise[ch] * w3.at({j, ch, 0, 0});
      worst = std::max(worst, std::abs(y.at({o[0], o[1], o[2], j}) - v) / (1 + std::abs(v)));
    }
  });
  EXPECT_LE(worst, 1e-5);
}

RAL_KERNEL_CTS_INSTANTIATE(ConvBlock);

}  // namespace
}  // namespace ral::kernel_cts
