// ral_conv_block on the CPU (kernels/conv/conv_block.h has the contract).
//
// The fused kernel (AVX-512 hosts, conv_tiles_cpu.h): tasks are bands of output rows of one
// image. A band walks its rows; for each it makes sure the KH expanded input rows its window
// reads are in a ring of KH row buffers (an expanded row is the pointwise tiles run over one
// input row, written between zero columns that are the depthwise padding), runs the depthwise
// row kernel over them into one row buffer and the projection's tiles from that row into y. A
// stride-1 window reuses KH - 1 rows from the previous output row; neighbouring bands recompute
// the rows they share. The ring holds (KH + 1) * (W + pads) * E floats: 130 KiB for
// MobileNet-V2's widest block (112 columns, 96 channels), within L2.
//
// Everything else (GELU, filters too large for the tiles, strided channels, outputs overlapping
// a filter, empty inputs, no AVX-512) runs the stages as ral_conv calls (conv_cpu.h) through
// intermediates in scratch: never different. So do blocks whose whole expanded tensor fits in
// L2, where fusing saves no memory traffic (RAL_CONV_BLOCK overrides the choice).
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/common/devices.h"
#include "kernels/common/kernel_util.h"
#include "kernels/common/parallel.h"
#include "kernels/conv/conv_block.h"
#include "kernels/conv/conv_cpu.h"
#include "kernels/conv/conv_tiles_cpu.h"
#include "ral/driver_services.h"
#include "ral/registration.h"

namespace ral::kernels {

namespace {
constexpr const char* kKernel = "ral_conv_block";
}  // namespace

StatusOr<ConvBlock> checkConvBlock(const MemRef<float, 4>& x, const MemRef<float, 4>& w1,
                                   const MemRef<float, 1>& b1, const MemRef<float, 4>& w2,
                                   const MemRef<float, 1>& b2, const MemRef<float, 4>& w3,
                                   const MemRef<float, 1>& b3, const MemRef<float, 4>& y,
                                   const MemRef<int64_t, 1>& config,
                                   const MemRef<float, 1>& bounds) {
  RAL_RETURN_IF_ERROR(checkMemRef(config, kKernel, "config"));
  RAL_RETURN_IF_ERROR(checkMemRef(bounds, kKernel, "bounds"));
  if (config.sizes[0] != kConvBlockConfigSize)
    return invalidArgument(kKernel, ": config has ", config.sizes[0], " values, expected ",
                           kConvBlockConfigSize);
  if (bounds.sizes[0] != 6)
    return invalidArgument(kKernel, ": bounds has ", bounds.sizes[0],
                           " values, expected 6 (each stage's clip bounds)");
  auto cfg = [&](int i) { return config.data()[i * config.strides[0]]; };
  auto bound = [&](int i) { return bounds.data()[i * bounds.strides[0]]; };
  const int64_t flags = cfg(0);
  if (flags & ~kConvBlockKnownFlags)
    return invalidArgument(kKernel, ": unknown flag bits ", flags & ~kConvBlockKnownFlags,
                           " in config[0] (bit0 residual, bits 1-3 constant w1, w2, w3)");
  for (const auto& [what, m] : {std::pair<const char*, const MemRef<float, 4>*>{"x", &x},
                                {"w1", &w1},
                                {"w2", &w2},
                                {"w3", &w3},
                                {"y", &y}}) {
    RAL_RETURN_IF_ERROR(checkMemRef(*m, kKernel, what));
    RAL_RETURN_IF_ERROR(conv_detail::checkElementCount(*m, what, kKernel));
  }
  RAL_RETURN_IF_ERROR(checkMemRef(b1, kKernel, "b1"));
  RAL_RETURN_IF_ERROR(checkMemRef(b2, kKernel, "b2"));
  RAL_RETURN_IF_ERROR(checkMemRef(b3, kKernel, "b3"));

  ConvBlock b;
  b.n = x.sizes[0];
  b.h = x.sizes[1];
  b.w = x.sizes[2];
  b.c = x.sizes[3];
  b.expand = w1.numel() > 0;
  b.project = w3.numel() > 0;
  if (!b.expand && !b.project)
    return invalidArgument(kKernel, ": w1 ", shapeString(w1), " and w3 ", shapeString(w3),
                           " are both empty: a block has an expansion, a projection or both");
  b.e = b.expand ? w1.sizes[0] : b.c;
  if (b.expand && (w1.sizes[1] != b.c || w1.sizes[2] != 1 || w1.sizes[3] != 1))
    return invalidArgument(kKernel, ": w1 is ", shapeString(w1), " but x ", shapeString(x),
                           " (channels-last) has ", b.c, " channels: expected [E x ", b.c,
                           " x 1 x 1]");
  if (w2.sizes[0] != b.e || w2.sizes[1] != 1)
    return invalidArgument(kKernel, ": w2 is ", shapeString(w2), ", expected [", b.e,
                           " x 1 x KH x KW] (depthwise over the ", b.e, " channels of ",
                           b.expand ? "the expansion" : "x", ")");
  b.kh = w2.sizes[2];
  b.kw = w2.sizes[3];
  if (b.kh < 1 || b.kw < 1 || b.kh > INT_MAX || b.kw > INT_MAX)
    return invalidArgument(kKernel, ": w2 ", shapeString(w2), " has an empty kernel");
  b.f = b.project ? w3.sizes[0] : b.e;
  if (b.project && (w3.sizes[1] != b.e || w3.sizes[2] != 1 || w3.sizes[3] != 1))
    return invalidArgument(kKernel, ": w3 is ", shapeString(w3), ", expected [F x ", b.e,
                           " x 1 x 1]");
  const int64_t stage_out[3] = {b.e, b.e, b.f};
  const MemRef<float, 1>* biases[3] = {&b1, &b2, &b3};
  const bool present[3] = {b.expand, true, b.project};
  for (int s = 0; s < 3; ++s) {
    const int64_t nb = biases[s]->sizes[0];
    if (nb != 0 && (!present[s] || nb != stage_out[s]))
      return invalidArgument(
          kKernel, ": b", s + 1, " is ", shapeString(*biases[s]),
          present[s] ? ", expected [0] (no bias) or [" : ", expected [0] (",
          present[s] ? std::to_string(stage_out[s]) + "]" : std::string("the stage is absent)"));
  }
  for (int s = 0; s < 3; ++s) {
    ConvConfig& c = b.stage[s];
    c.spatial = 2;
    c.groups = s == 1 ? b.e : 1;
    const int64_t act = cfg(1 + s);
    if (act < 0 || act >= kConvActivationCount)
      return invalidArgument(kKernel, ": unknown activation ", act, " of stage ", s + 1,
                             " (config[", 1 + s, "]; conv.h's codes)");
    c.activation = static_cast<ConvActivation>(act);
    c.alpha = bound(2 * s);
    c.beta = bound(2 * s + 1);
    if (c.activation == ConvActivation::kClip && (std::isnan(c.alpha) || std::isnan(c.beta)))
      return invalidArgument(kKernel, ": clip bounds [", c.alpha, ", ", c.beta, "] of stage ",
                             s + 1, " include NaN");
    const int64_t constant = s == 0   ? kConvBlockConstantW1
                             : s == 1 ? kConvBlockConstantW2
                                      : kConvBlockConstantW3;
    c.flags = (flags & constant) ? kConvConstantFilter : 0;
    for (int d = 0; d < 2; ++d) {
      c.strides[d] = c.dilations[d] = 1;
      c.pad_begin[d] = c.pad_end[d] = 0;
    }
  }
  // The residual goes with the last stage.
  b.stage[b.project ? 2 : 1].flags |= (flags & kConvBlockResidual) ? kConvResidual : 0;
  ConvConfig& dw = b.stage[1];
  const char* names[] = {"stride", "pad_begin", "pad_end"};
  int64_t* fields[] = {dw.strides, dw.pad_begin, dw.pad_end};
  for (int f = 0; f < 3; ++f)
    for (int d = 0; d < 2; ++d) {
      const int64_t v = cfg(4 + 2 * f + d), lo = f == 0 ? 1 : 0;
      if (v < lo || v > INT_MAX)
        return invalidArgument(kKernel, ": ", names[f], " ", v, " (config[", 4 + 2 * f + d,
                               "]) is out of range ", lo, "..", INT_MAX);
      fields[f][d] = v;
    }
  const int64_t in[2] = {b.h, b.w}, k[2] = {b.kh, b.kw};
  int64_t out[2];
  for (int d = 0; d < 2; ++d) {
    const int64_t padded = in[d] + dw.pad_begin[d] + dw.pad_end[d];
    // Short of the window by at most a stride: no output position (ONNX's floor, as ral_conv).
    if (padded < k[d] && k[d] - padded <= dw.strides[d]) {
      out[d] = 0;
      continue;
    }
    if (padded < k[d])
      return invalidArgument(kKernel, ": the depthwise kernel ", shapeString(w2),
                             " is larger than the padded input (", padded, " in spatial dim ", d,
                             " of x ", shapeString(x), ")");
    out[d] = (padded - k[d]) / dw.strides[d] + 1;
  }
  b.p = out[0];
  b.q = out[1];
  if (y.sizes[0] != b.n || y.sizes[1] != b.p || y.sizes[2] != b.q || y.sizes[3] != b.f)
    return invalidArgument(kKernel, ": y is ", shapeString(y), ", expected [", b.n, "x", b.p, "x",
                           b.q, "x", b.f, "] (channels-last) from x ", shapeString(x), ", w2 ",
                           shapeString(w2), " and ", convConfigString(dw));
  return b;
}

namespace cpu {
namespace {

// The stages one by one through ral_conv, the intermediates in scratch.
Status runStages(ExecutionContext* ctx, const KernelEnv& env, const ConvBlock& b,
                 const MemRef<float, 4>& x, const MemRef<float, 4>& w1, const MemRef<float, 1>& b1,
                 const MemRef<float, 4>& w2, const MemRef<float, 1>& b2, const MemRef<float, 4>& w3,
                 const MemRef<float, 1>& b3, const MemRef<float, 4>& y) {
  Scratch expanded, depthwise;
  MemRef<float, 4> dw_in = x, dw_out = y;
  if (b.expand) {
    RAL_RETURN_IF_ERROR(expanded.allocate(env.driver, b.n * b.h * b.w * b.e * sizeof(float)));
    dw_in = denseChannelsLast(expanded.as<float>(), b.n, b.h, b.w, b.e);
    RAL_RETURN_IF_ERROR(
        convCpu(ctx, b.stage[0], channelsFirstView(x), w1, b1, channelsFirstView(dw_in)));
  }
  if (b.project) {
    RAL_RETURN_IF_ERROR(depthwise.allocate(env.driver, b.n * b.p * b.q * b.e * sizeof(float)));
    dw_out = denseChannelsLast(depthwise.as<float>(), b.n, b.p, b.q, b.e);
  }
  RAL_RETURN_IF_ERROR(
      convCpu(ctx, b.stage[1], channelsFirstView(dw_in), w2, b2, channelsFirstView(dw_out)));
  if (b.project)
    RAL_RETURN_IF_ERROR(
        convCpu(ctx, b.stage[2], channelsFirstView(dw_out), w3, b3, channelsFirstView(y)));
  return Status();
}

// RAL_CONV_BLOCK: "fused" runs the fused kernel wherever it can, "stages" never; unset (auto),
// the fused kernel runs where the expanded activations would not stay in L2 anyway. Read on
// every call (tests switch it).
enum class Mode { kAuto, kFused, kStages };
Mode modeFromEnvironment() {
  const char* v = std::getenv("RAL_CONV_BLOCK");
  if (v == nullptr) return Mode::kAuto;
  return std::strcmp(v, "fused") == 0    ? Mode::kFused
         : std::strcmp(v, "stages") == 0 ? Mode::kStages
                                         : Mode::kAuto;
}

int64_t l2Bytes() {
  static const int64_t bytes = [] {
    const long v = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return v > 0 ? static_cast<int64_t>(v) : int64_t{1} << 20;
  }();
  return bytes;
}

bool fusible(const ConvBlock& b, const MemRef<float, 4>& x, const MemRef<float, 4>& w1,
             const MemRef<float, 1>& b1, const MemRef<float, 4>& w2, const MemRef<float, 1>& b2,
             const MemRef<float, 4>& w3, const MemRef<float, 1>& b3, const MemRef<float, 4>& y) {
  if (!convTilesAvailable() || x.numel() == 0 || y.numel() == 0) return false;
  const Mode mode = modeFromEnvironment();
  if (mode == Mode::kStages) return false;
  // An expanded tensor that fits in L2 costs no memory traffic between the calls, and the
  // separate calls split a small image over threads without the bands' repeated halo rows
  // (MobileNet-V2's 14x14 and 7x7 blocks at batch 1: 4-10% faster as three calls).
  if (mode == Mode::kAuto &&
      b.n * b.h * b.w * b.e * static_cast<int64_t>(sizeof(float)) <= l2Bytes())
    return false;
  for (const ConvConfig& c : b.stage)
    if (c.activation == ConvActivation::kGeluErf || c.activation == ConvActivation::kGeluTanh)
      return false;
  if (b.c * b.e > kMaxTileFilterFloats || b.e * b.f > kMaxTileFilterFloats ||
      b.kh > tiles::DepthwiseRow::kMaxRows)
    return false;
  if ((b.c > 1 && x.strides[3] != 1) || (b.f > 1 && y.strides[3] != 1) || !nonOverlapping(y))
    return false;
  // y over x is taken (runFused reads x before it writes over it, or copies it).
  return !overlaps(y, w1) && !overlaps(y, b1) && !overlaps(y, w2) && !overlaps(y, b2) &&
         !overlaps(y, w3) && !overlaps(y, b3);
}

// y is x itself, as a residual block's output is when the compiler reuses its dead input's
// buffer, and one band per image reads every input row before it writes the output row there:
// the window moves down one row at a time (stride 1) and reaches at most KH - 1 rows above.
bool inPlaceSafe(const ConvBlock& b, const MemRef<float, 4>& x, const MemRef<float, 4>& y,
                 int64_t bands) {
  if (bands != 1 || x.data() != y.data() || b.stage[1].strides[0] != 1 ||
      b.stage[1].strides[1] != 1 || b.stage[1].pad_begin[0] > b.kh - 1 ||
      b.stage[1].pad_begin[1] > b.kw - 1)
    return false;
  for (int d = 0; d < 4; ++d)
    if (x.sizes[d] != y.sizes[d] || (x.sizes[d] > 1 && x.strides[d] != y.strides[d])) return false;
  return true;
}

Status runFused(const KernelEnv& env, const ConvBlock& b, const MemRef<float, 4>& x_in,
                const MemRef<float, 4>& w1, const MemRef<float, 1>& b1, const MemRef<float, 4>& w2,
                const MemRef<float, 1>& b2, const MemRef<float, 4>& w3, const MemRef<float, 1>& b3,
                const MemRef<float, 4>& y) {
  const ConvConfig& dw = b.stage[1];
  const int64_t ep = tiles::vectorsOf(b.e) * tiles::kVector;  // an expanded pixel's floats
  const int64_t pl = dw.pad_begin[1];
  const int64_t row_floats = (b.w + pl + dw.pad_end[1]) * ep;

  PreparedFilter keep1, keep2, keep3;
  Scratch s1, s2, s3, sb1, sb3, sb2;
  const float* panels1 = nullptr;
  const float* panels3 = nullptr;
  const float* bias1 = nullptr;
  const float* bias3 = nullptr;
  if (b.expand) {
    RAL_ASSIGN_OR_RETURN(panels1,
                         pointwisePanels(env, w1.data(), b.e, b.c, w1.strides[0], w1.strides[1],
                                         b.stage[0].constantFilter(), &keep1, &s1));
    RAL_ASSIGN_OR_RETURN(bias1, denseBias(env, b1, &sb1));
  }
  if (b.project) {
    RAL_ASSIGN_OR_RETURN(panels3,
                         pointwisePanels(env, w3.data(), b.f, b.e, w3.strides[0], w3.strides[1],
                                         b.stage[2].constantFilter(), &keep3, &s3));
    RAL_ASSIGN_OR_RETURN(bias3, denseBias(env, b3, &sb3));
  }
  RAL_ASSIGN_OR_RETURN(const float* taps, depthwiseTaps(env, w2, dw.constantFilter(), &keep2, &s2));
  // The depthwise bias padded to whole vectors (zeros without one).
  RAL_RETURN_IF_ERROR(sb2.allocate(env.driver, ep * sizeof(float)));
  float* bias2 = sb2.as<float>();
  for (int64_t i = 0; i < ep; ++i)
    bias2[i] = b2.sizes[0] > 0 && i < b.e ? b2.data()[i * b2.strides[0]] : 0.0f;

  tiles::Problem expand;
  expand.pixels = b.w;
  expand.in_channels = b.c;
  expand.out_channels = b.e;
  expand.y_row = ep;
  expand.packed = panels1;
  expand.bias = bias1;
  expand.activation = static_cast<int>(b.stage[0].activation);
  expand.lo = b.stage[0].alpha;
  expand.hi = b.stage[0].beta;
  tiles::Problem project;
  project.pixels = b.q;
  project.in_channels = b.e;
  project.out_channels = b.f;
  project.x_row = ep;
  project.y_row = y.strides[2];
  project.packed = panels3;
  project.bias = bias3;
  project.activation = static_cast<int>(b.stage[2].activation);
  project.lo = b.stage[2].alpha;
  project.hi = b.stage[2].beta;
  project.residual = b.stage[2].residual();
  tiles::DepthwiseRow row;
  row.kh = static_cast<int>(b.kh);
  row.kw = static_cast<int>(b.kw);
  row.stride = dw.strides[1];
  row.in_pixel = ep;
  row.out_width = b.q;
  row.channels = b.e;
  row.tap_row = ep;
  row.taps = taps;
  row.bias = bias2;
  row.activation = static_cast<int>(dw.activation);
  row.lo = dw.alpha;
  row.hi = dw.beta;
  row.residual = !b.project && dw.residual();
  row.y_pixel = b.project ? ep : y.strides[2];

  // Bands: one per image when the images keep the threads busy, else each image split.
  auto* threads_service = env.driver->service<HostThreadsService>();
  const int64_t threads = threads_service ? threads_service->threadCount() : 1;
  int64_t bands = threads <= 1 ? 1 : (threads + b.n - 1) / b.n;
  if (threads > 1 && (b.n * bands) % threads != 0) bands *= 2;
  bands = std::max<int64_t>(1, std::min(bands, b.p));
  // Otherwise an x that y overlaps is read from a copy (C channels: a sixth of what fusing saves).
  MemRef<float, 4> x = x_in;
  Scratch x_copy;
  if (overlaps(y, x_in) && !inPlaceSafe(b, x_in, y, bands)) {
    RAL_RETURN_IF_ERROR(x_copy.allocate(env.driver, b.n * b.h * b.w * b.c * sizeof(float)));
    x = denseChannelsLast(x_copy.as<float>(), b.n, b.h, b.w, b.c);
    for (int64_t n = 0; n < b.n; ++n)
      for (int64_t i = 0; i < b.h; ++i)
        for (int64_t j = 0; j < b.w; ++j)
          std::memcpy(&x.data()[n * x.strides[0] + i * x.strides[1] + j * x.strides[2]],
                      &x_in.data()[n * x_in.strides[0] + i * x_in.strides[1] + j * x_in.strides[2]],
                      b.c * sizeof(float));
  }
  expand.x_row = x.strides[2];

  // Narrow layers (14 or 7 columns) would waste most of the tiles' 12-pixel blocks row by row:
  // where rows are contiguous in memory, the expansion runs over several input rows at once
  // (into a temporary, then copied between the ring's padding columns) and the projection over
  // several depthwise rows.
  constexpr int64_t kBatchPixels = 48;
  const int64_t ahead = b.expand && b.w < kBatchPixels && x.strides[1] == b.w * x.strides[2]
                            ? std::min(b.h, (kBatchPixels + b.w - 1) / b.w)
                            : 1;
  const int64_t batch = b.project && b.q < kBatchPixels && y.strides[1] == b.q * y.strides[2]
                            ? (kBatchPixels + b.q - 1) / b.q
                            : 1;
  // Rows read ahead must not evict the window's: KH + ahead - 1 slots.
  const int64_t slots = b.kh + ahead - 1;
  const int panels_e = static_cast<int>(tiles::panelCount(b.e));
  const int panels_f = static_cast<int>(tiles::panelCount(b.f));

  return parallelFor(env.driver, b.n * bands, 1, [&](int64_t begin, int64_t end) -> Status {
    // The ring's rows, a zero row (the padding above and below), the rows expanded ahead and
    // the depthwise rows waiting for the projection.
    Scratch scratch;
    const int64_t ring_floats = (slots + 1) * row_floats;
    const int64_t ahead_floats = ahead > 1 ? ahead * b.w * ep : 0;
    RAL_RETURN_IF_ERROR(scratch.allocate(
        env.driver,
        (ring_floats + ahead_floats + (b.project ? batch * b.q * ep : 0)) * sizeof(float)));
    float* ring = scratch.as<float>();
    std::memset(ring, 0, ring_floats * sizeof(float));
    const float* zero_row = ring + slots * row_floats;
    float* expanded = ring + ring_floats;
    float* dw_rows = expanded + ahead_floats;
    std::vector<int64_t> held(slots);
    tiles::Problem ex = expand, pr = project;
    tiles::DepthwiseRow d = row;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t n = task / bands, band = task % bands;
      const int64_t first = b.p * band / bands, last = b.p * (band + 1) / bands;
      // One past the last input row the band reads.
      const int64_t rows_end = std::min(b.h, (last - 1) * dw.strides[0] - dw.pad_begin[0] + b.kh);
      std::fill(held.begin(), held.end(), int64_t{-1});
      int64_t pending = 0;  // depthwise rows in dw_rows
      for (int64_t oh = first; oh < last; ++oh) {
        for (int64_t i = 0; i < b.kh; ++i) {
          const int64_t ih = oh * dw.strides[0] - dw.pad_begin[0] + i;
          if (ih < 0 || ih >= b.h) {
            d.rows[i] = zero_row;
            continue;
          }
          float* slot = ring + (ih % slots) * row_floats;
          d.rows[i] = slot;
          if (held[ih % slots] == ih) continue;
          const float* in = x.data() + n * x.strides[0] + ih * x.strides[1];
          const int64_t count = std::min(ahead, rows_end - ih);
          if (b.expand && count > 1) {
            ex.x = in;
            ex.pixels = count * b.w;
            ex.y = expanded;
            tiles::runAvx512(ex, 0, (ex.pixels + tiles::kBlock - 1) / tiles::kBlock, 0, panels_e);
            for (int64_t t = 0; t < count; ++t) {
              std::memcpy(ring + ((ih + t) % slots) * row_floats + pl * ep, expanded + t * b.w * ep,
                          b.w * ep * sizeof(float));
              held[(ih + t) % slots] = ih + t;
            }
            continue;
          }
          held[ih % slots] = ih;
          if (b.expand) {
            ex.x = in;
            ex.pixels = b.w;
            ex.y = slot + pl * ep;
            tiles::runAvx512(ex, 0, (b.w + tiles::kBlock - 1) / tiles::kBlock, 0, panels_e);
          } else if (ep == b.c && x.strides[2] == b.c) {
            // Whole vectors of contiguous pixels: the row is one copy (MobileNet-V2's first
            // block, 32 channels at 112x112: 404 -> 384 us against a copy per pixel).
            std::memcpy(slot + pl * ep, in, b.w * b.c * sizeof(float));
          } else {
            for (int64_t j = 0; j < b.w; ++j)
              std::memcpy(slot + (pl + j) * ep, in + j * x.strides[2], b.c * sizeof(float));
          }
        }
        float* out = y.data() + n * y.strides[0] + oh * y.strides[1];
        d.y = b.project ? dw_rows + pending * b.q * ep : out;
        tiles::depthwiseRowAvx512(d);
        if (b.project && (++pending == batch || oh == last - 1)) {
          pr.x = dw_rows;
          pr.y = out - (pending - 1) * y.strides[1];
          pr.pixels = pending * b.q;
          tiles::runAvx512(pr, 0, (pr.pixels + tiles::kBlock - 1) / tiles::kBlock, 0, panels_f);
          pending = 0;
        }
      }
    }
    return Status();
  });
}

Status runConvBlock(ExecutionContext* ctx, const ConvBlock& b, const MemRef<float, 4>& x,
                    const MemRef<float, 4>& w1, const MemRef<float, 1>& b1,
                    const MemRef<float, 4>& w2, const MemRef<float, 1>& b2,
                    const MemRef<float, 4>& w3, const MemRef<float, 1>& b3,
                    const MemRef<float, 4>& y) {
  if (y.numel() == 0) return Status();
  RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, DeviceKind::kCpu));
  if (fusible(b, x, w1, b1, w2, b2, w3, b3, y))
    return runFused(env, b, x, w1, b1, w2, b2, w3, b3, y);
  return runStages(ctx, env, b, x, w1, b1, w2, b2, w3, b3, y);
}

void convBlockKernel(ExecutionContext* ctx, MemRef<float, 4> x, MemRef<float, 4> w1,
                     MemRef<float, 1> b1, MemRef<float, 4> w2, MemRef<float, 1> b2,
                     MemRef<float, 4> w3, MemRef<float, 1> b3, MemRef<float, 4> y,
                     MemRef<int64_t, 1> config, MemRef<float, 1> bounds) {
  const auto b = checkConvBlock(x, w1, b1, w2, b2, w3, b3, y, config, bounds);
  RAL_SIGNAL_IF_ERROR(ctx, b.status());
  RAL_SIGNAL_IF_ERROR(ctx, runConvBlock(ctx, *b, x, w1, b1, w2, b2, w3, b3, y));
}

RAL_API("ral_conv_block", "cpu", convBlockKernel);

}  // namespace
}  // namespace cpu
}  // namespace ral::kernels

RAL_REGISTRATION_ANCHOR(kernels_conv_block_cpu);
