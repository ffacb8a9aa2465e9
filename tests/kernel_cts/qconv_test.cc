// ral_qconv (the int8 convolution) against integer arithmetic done here: uint8 activations with
// a zero point, padding that counts as the zero point, a stride, per-channel scales, a bias, ReLU
// and a uint8 result with a zero point. The CPU is the only device with the kernel
// (expectations.cc); tests/unit/kernels_qconv_test.cc covers its other forms.
#include "kernels/conv/qconv.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "tensor.h"

namespace ral::kernel_cts {
namespace {

class QConv : public KernelTest {};

TEST_P(QConv, MatchesIntegerArithmetic) {
  const int64_t n = 2, c = 3, f = 5, h = 6, w = 7, k = 3, stride = 2, pad = 1;
  const int64_t oh = (h + 2 * pad - k) / stride + 1, ow = (w + 2 * pad - k) / stride + 1;
  const int32_t x_zp = 7, y_zp = 3;
  Tensor<int8_t, 4> x(*this, {n, c, h, w}, Layout::kDense);
  Tensor<int8_t, 4> wt(*this, {f, c, k, k}, Layout::kDense);
  Tensor<int8_t, 4> y(*this, {n, f, oh, ow}, Layout::kDense);
  Tensor<float, 1> bias(*this, {f}, Layout::kDense), scales(*this, {f}, Layout::kDense);
  Tensor<int64_t, 1> config(*this, {15}, Layout::kDense);
  std::uniform_int_distribution<int> byte(0, 255), weight(-127, 127);
  std::uniform_real_distribution<float> real(-300, 300), scale(0.001f, 0.01f);
  forEachIndex<4>({n, c, h, w}, [&](const auto& i) { x.at(i) = static_cast<int8_t>(byte(rng)); });
  forEachIndex<4>({f, c, k, k},
                  [&](const auto& i) { wt.at(i) = static_cast<int8_t>(weight(rng)); });
  for (int64_t i = 0; i < f; ++i) {
    bias.at({i}) = real(rng);
    scales.at({i}) = scale(rng);
  }
  const int64_t cfg[15] = {
      2,      1,   1,    0,    stride,
      stride, 1,   1,    pad,  pad,
      pad,    pad, x_zp, y_zp, kernels::kQConvXUnsigned | kernels::kQConvYUnsigned};
  for (int64_t i = 0; i < 15; ++i) config.at({i}) = cfg[i];
  for (auto* t : {&x, &wt}) t->upload();
  bias.upload();
  scales.upload();
  config.upload();
  const Status s = call("ral_qconv", x.device_view, wt.device_view, bias.device_view, y.device_view,
                        config.device_view, scales.device_view, 0.0f, 0.0f);
  if (onCpu() && s.code() == StatusCode::kNotFound)
    GTEST_SKIP() << "built without oneDNN (RAL_ENABLE_DNNL=OFF): no ral_qconv";
  ASSERT_TRUE(s.ok()) << s;
  const std::vector<unsigned char> got_bytes = y.download();
  std::memcpy(y.host(), got_bytes.data(), got_bytes.size());
  int64_t exact = 0, total = 0;
  forEachIndex<4>({n, f, oh, ow}, [&](const std::array<int64_t, 4>& o) {
    int64_t acc = 0;
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t a = 0; a < k; ++a)
        for (int64_t b = 0; b < k; ++b) {
          const int64_t r = o[2] * stride - pad + a, q = o[3] * stride - pad + b;
          if (r < 0 || r >= h || q < 0 || q >= w) continue;
          acc += (static_cast<uint8_t>(x.at({o[0], ci, r, q})) - x_zp) * wt.at({o[1], ci, a, b});
        }
    const float v = std::max(scales.at({o[1]}) * (static_cast<float>(acc) + bias.at({o[1]})), 0.0f);
    const double want =
        std::min(std::max(std::nearbyint(static_cast<double>(v + y_zp)), 0.0), 255.0);
    const double got = static_cast<uint8_t>(y.at(o));
    EXPECT_LE(std::abs(got - want), 1)
        << "y[" << o[0] << "," << o[1] << "," << o[2] << "," << o[3] << "]";
    exact += got == want;
    ++total;
  });
  EXPECT_GE(exact, total - total / 100) << exact << " of " << total << " exact";
}

RAL_KERNEL_CTS_INSTANTIATE(QConv);

}  // namespace
}  // namespace ral::kernel_cts
