// ral_conv_scaled (a convolution of an input scaled per image and channel) against float64
// arithmetic done here: EfficientNet's projection after its squeeze-and-excitation (a 1x1
// convolution of 40 channels to 12, one scale per image and channel in (0, 1)) on channels-last
// tensors of two images. The CPU is the only device with the kernel (expectations.cc);
// tests/unit/kernels_conv_scaled_test.cc covers its other forms.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "tensor.h"

namespace ral::kernel_cts {
namespace {

class ConvScaled : public KernelTest {};

TEST_P(ConvScaled, MatchesFloat64Arithmetic) {
  const int64_t n = 2, h = 5, w = 7, c = 40, f = 12;
  Tensor<float, 4> x(*this, {n, h, w, c}, Layout::kDense),
      scale(*this, {n, 1, 1, c}, Layout::kDense), wt(*this, {f, c, 1, 1}, Layout::kDense),
      y(*this, {n, h, w, f}, Layout::kDense);
  Tensor<float, 1> bias(*this, {f}, Layout::kDense);
  Tensor<int64_t, 1> config(*this, {12}, Layout::kDense);
  for (auto* t : {&x, &wt}) t->randomize(rng);
  bias.randomize(rng);
  scale.randomize(rng);
  forEachIndex<4>({n, 1, 1, c}, [&](const std::array<int64_t, 4>& i) {
    scale.at(i) = std::abs(scale.at(i));  // a sigmoid's range
  });
  // 2-D, groups 1, no activation, channels-last; strides and dilations 1, no padding.
  const int64_t cfg[12] = {2, 1, 0, 4, 1, 1, 1, 1, 0, 0, 0, 0};
  for (int64_t i = 0; i < 12; ++i) config.at({i}) = cfg[i];
  for (auto* t : {&x, &scale, &wt}) t->upload();
  bias.upload();
  config.upload();
  const Status s = call("ral_conv_scaled", x.device_view, scale.device_view, wt.device_view,
                        bias.device_view, y.device_view, config.device_view, 0.0f, 0.0f);
  if (onCpu() && s.code() == StatusCode::kNotFound)
    GTEST_SKIP() << "built without oneDNN (RAL_ENABLE_DNNL=OFF): no ral_conv_scaled";
  ASSERT_TRUE(s.ok()) << s;
  const std::vector<unsigned char> got_bytes = y.download();
  std::memcpy(y.host(), got_bytes.data(), got_bytes.size());

  double worst = 0;
  forEachIndex<4>({n, h, w, f}, [&](const std::array<int64_t, 4>& o) {
    double v = bias.at({o[3]});
    for (int64_t k = 0; k < c; ++k)
      v += double(x.at({o[0], o[1], o[2], k}) * scale.at({o[0], 0, 0, k})) * wt.at({o[3], k, 0, 0});
    worst = std::max(worst, std::abs(y.at(o) - v) / (1 + std::abs(v)));
  });
  EXPECT_LE(worst, 1e-5);
}

RAL_KERNEL_CTS_INSTANTIATE(ConvScaled);

}  // namespace
}  // namespace ral::kernel_cts
