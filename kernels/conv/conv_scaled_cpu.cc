// ral_conv_scaled on the CPU (conv_scaled.h): RAL's pointwise tiles scale each block of pixels
// as they read it; every other convolution runs on a scaled copy of x through ral_conv's CPU
// implementation.
#include <cstdint>

#include "kernels/common/devices.h"
#include "kernels/common/kernel_util.h"
#include "kernels/common/parallel.h"
#include "kernels/conv/conv_cpu.h"
#include "kernels/conv/conv_scaled.h"
#include "kernels/conv/conv_tiles_cpu.h"
#include "ral/registration.h"

namespace ral::kernels {

constexpr char kScaledKernel[] = "ral_conv_scaled";

StatusOr<MemRef<float, 4>> checkConvScale(const ConvConfig& c, const MemRef<float, 4>& xc,
                                          const MemRef<float, 4>& scale) {
  const MemRef<float, 4> sc = c.channelsLast() ? channelsFirstView(scale) : scale;
  if (sc.sizes[0] != xc.sizes[0] || sc.sizes[1] != xc.sizes[1] || sc.sizes[2] != 1 ||
      sc.sizes[3] != 1)
    return invalidArgument(
        kScaledKernel, ": scale is ", shapeString(scale), " but x ", shapeString(xc),
        " (channels-first) needs one value per image and "
        "channel: ",
        c.channelsLast() ? "[N, 1, 1, C]" : "[N, C, 1, 1]", " = [", xc.sizes[0], ", ",
        c.channelsLast() ? "1, 1, " : "", xc.sizes[1], c.channelsLast() ? "" : ", 1, 1", "]");
  return sc;
}

namespace cpu {
namespace {

// x * scale as a dense channels-last copy in `scratch`, returned as a channels-first view.
StatusOr<MemRef<float, 4>> scaledCopy(const KernelEnv& env, const MemRef<float, 4>& x,
                                      const MemRef<float, 4>& s, Scratch* scratch) {
  const int64_t n = x.sizes[0], c = x.sizes[1], h = x.sizes[2], w = x.sizes[3];
  RAL_RETURN_IF_ERROR(scratch->allocate(env.driver, x.numel() * sizeof(float)));
  const MemRef<float, 4> copy =
      channelsFirstView(denseChannelsLast(scratch->as<float>(), n, h, w, c));
  RAL_RETURN_IF_ERROR(parallelFor(env.driver, n * h, 1, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t i = row / h, r = row % h;
      const float* scale = s.data() + i * s.strides[0];
      for (int64_t j = 0; j < w; ++j) {
        const float* from = x.data() + i * x.strides[0] + r * x.strides[2] + j * x.strides[3];
        float* to = copy.data() + i * copy.strides[0] + r * copy.strides[2] + j * copy.strides[3];
        for (int64_t k = 0; k < c; ++k) to[k] = from[k * x.strides[1]] * scale[k * s.strides[1]];
      }
    }
    return Status();
  }));
  return copy;
}

Status convScaled(ExecutionContext* ctx, const ConvConfig& c, const MemRef<float, 4>& x,
                  const MemRef<float, 4>& scale, const MemRef<float, 4>& w,
                  const MemRef<float, 1>& bias, const MemRef<float, 4>& y) {
  if (y.numel() == 0) return Status();
  RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, DeviceKind::kCpu));
  if (x.numel() > 0) {
    const bool alias = overlaps(y, x) || overlaps(y, scale) || overlaps(y, w) || overlaps(y, bias);
    bool handled = false;
    RAL_RETURN_IF_ERROR(tryPointwiseConv(env, c, x, w, bias, y, alias, &handled, &scale));
    if (handled) return Status();
  }
  Scratch scaled;
  MemRef<float, 4> xs = x;
  if (x.numel() > 0) {
    RAL_ASSIGN_OR_RETURN(xs, scaledCopy(env, x, scale, &scaled));
  }
  return convCpu(ctx, c, xs, w, bias, y);
}

void convScaledKernel(ExecutionContext* ctx, MemRef<float, 4> x, MemRef<float, 4> scale,
                      MemRef<float, 4> w, MemRef<float, 1> bias, MemRef<float, 4> y,
                      MemRef<int64_t, 1> config, float alpha, float beta) {
  MemRef<float, 4> xc, yc;
  const auto c = checkConv(x, w, bias, y, config, alpha, beta, &xc, &yc);
  RAL_SIGNAL_IF_ERROR(ctx, c.status());
  const auto sc = checkConvScale(*c, xc, scale);
  RAL_SIGNAL_IF_ERROR(ctx, sc.status());
  RAL_SIGNAL_IF_ERROR(ctx, convScaled(ctx, *c, xc, *sc, w, bias, yc));
}

RAL_API("ral_conv_scaled", "cpu", convScaledKernel);

}  // namespace
}  // namespace cpu
}  // namespace ral::kernels

RAL_REGISTRATION_ANCHOR(kernels_conv_scaled_cpu);
