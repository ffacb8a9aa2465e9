// ral_conv for device "cuda" (kernels/conv/conv.h has the contract) on cuDNN's convolution API
// (dlopen-ed, kernels/conv/cudnn.h), in f32 with FMA math only (no TF32), so results agree with
// the CPU's within float rounding.
//
// Mapping: x and y become Nd tensor descriptors over their own strides in channels-first order
// (channels-last operands have NHWC strides, which cuDNN recognises); a 1-D convolution is a 2-D
// one with a unit height. w becomes a filter descriptor in KCRS or KRSC order, or, with other
// strides, a packed copy made by cudnnTransformTensor. Forward convolutions run
// cudnnConvolutionForward, whose beta of 1 adds the residual y holds, or, for bias + relu without
// a residual, cudnnConvolutionBiasActivationForward (z is y with alpha2 0, as XLA passes it);
// transposed ones run cudnnConvolutionBackwardData. The bias (cudnnAddTensor) and the activation
// then apply to y in place: relu, sigmoid and silu through cudnnActivationForward, a clip to
// [0, b] as CLIPPED_RELU, any other clip as a max and a min (cudnnOpTensor) against a constant 1
// scaled by the bound, which is exact.
//
// cuDNN pads symmetrically. A forward pad pair for which a symmetric pad of pad_begin gives the
// same output size goes to cuDNN as is; otherwise x is copied into the interior of a zeroed
// scratch tensor that carries the difference. A transposed convolution whose pads and output
// padding cuDNN's output size rule cannot express is computed into scratch with smaller
// symmetric pads, and the window y needs is copied out (zeros where the output padding reaches
// beyond every tap). An output overlapping x, w or the bias is computed into scratch as well.
//
// When cuDNN answers a layout with no usable algorithm at all (cuDNN 9 does for a channel stride
// of 2, and for transposed convolutions over NHWC), the plan is rebuilt over packed
// channels-first copies of x, w and y, which it runs.
//
// UNSUPPORTED, naming the value: hardswish and gelu (cuDNN's legacy API has neither activation),
// silu with a cuDNN older than 8.2, an operand with a zero or negative stride (cuDNN's
// descriptors take positive strides), tensors beyond cuDNN's 32-bit sizes.
//
// State per Context (its resource cache): one cuDNN handle per stream, and one immutable Plan per
// shape, layout and configuration (descriptors, the algorithm cuDNN's heuristics rank first
// among the FMA ones, its workspace size), built one at a time and shared by calls on any thread.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "kernels/common/devices.h"
#include "kernels/conv/conv.h"
#include "kernels/conv/cudnn.h"
#include "kernels/cuda/cuda_env.h"
#include "ral/context.h"
#include "ral/registration.h"

namespace ral::kernels::cuda {
namespace {

constexpr const char* kKernel = "ral_conv";
// Algorithms that need more workspace are passed over (the FFT ones can ask for gigabytes).
constexpr size_t kMaxWorkspaceBytes = size_t{256} << 20;
// Each part of the scratch allocation starts at this alignment.
constexpr size_t kScratchAlign = 256;
constexpr int kMaxRank = 5;

// A tensor as a cuDNN Nd descriptor takes it: 4 or 5 dims in channels-first order, element
// strides.
struct Dims {
  int rank = 0;
  int64_t sizes[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
  int64_t numel() const {
    int64_t n = 1;
    for (int d = 0; d < rank; ++d) n *= sizes[d];
    return n;
  }
};

// Dims from innermost to outermost of a packed channels-first ([N, C, D...]) or channels-last
// ([N, D..., C]) layout; for filters, KCRS and KRSC.
void memoryOrder(int rank, bool channels_last, int* order) {
  int k = 0;
  if (channels_last) order[k++] = 1;
  for (int d = rank - 1; d >= 2; --d) order[k++] = d;
  if (!channels_last) order[k++] = 1;
  order[k] = 0;
}

bool packedIn(const Dims& t, bool channels_last) {
  int order[kMaxRank];
  memoryOrder(t.rank, channels_last, order);
  int64_t running = 1;
  for (int i = 0; i < t.rank; ++i) {
    const int d = order[i];
    if (t.sizes[d] != 1 && t.strides[d] != running) return false;
    running *= t.sizes[d];
  }
  return true;
}

// a * b for a, b >= 0, or INT64_MAX when that overflows (strides come from callers; anything past
// 2^31 is refused later as beyond cuDNN's sizes).
int64_t saturatingMul(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}
int64_t magnitude(int64_t v) { return v == INT64_MIN ? INT64_MAX : std::abs(v); }

// The packed strides of t's sizes in one of the two orders (saturating: a padded or scratch
// tensor too large for cuDNN is refused by checkDescribable).
Dims packed(Dims t, bool channels_last) {
  int order[kMaxRank];
  memoryOrder(t.rank, channels_last, order);
  int64_t running = 1;
  for (int i = 0; i < t.rank; ++i) {
    t.strides[order[i]] = running;
    running = saturatingMul(running, t.sizes[order[i]]);
  }
  return t;
}

// The strides of size-1 dims are never used: they are chosen so that a packed layout reads as
// packed to cuDNN (which picks its kernels by layout) and every stride is positive.
Dims normalized(const Dims& t) {
  if (t.numel() == 0) return t;
  if (packedIn(t, false)) return packed(t, false);
  if (packedIn(t, true)) return packed(t, true);
  Dims n = t;
  int64_t span = 1;
  for (int d = 0; d < t.rank; ++d)
    if (t.sizes[d] > 1) span = std::max(span, saturatingMul(magnitude(t.strides[d]), t.sizes[d]));
  for (int d = 0; d < t.rank; ++d)
    if (t.sizes[d] == 1) n.strides[d] = span;
  return n;
}

// x, y and w as cuDNN tensors: [N, C, W] becomes [N, C, 1, W].
template <int R>
Dims dimsOf(const MemRef<float, R>& m) {
  Dims t;
  t.rank = R == 3 ? 4 : R;
  const int unit = R == 3 ? 2 : -1;
  for (int d = 0, s = 0; d < t.rank; ++d) {
    if (d == unit) {
      t.sizes[d] = 1;
      t.strides[d] = 1;
      continue;
    }
    t.sizes[d] = m.sizes[s];
    t.strides[d] = m.strides[s];
    ++s;
  }
  return normalized(t);
}

std::string listString(const int64_t* v, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// What cuDNN's descriptors can express: positive strides and, per tensor, at most 2^31 - 1
// elements between the first and the last.
Status checkDescribable(const Dims& t, const char* what, const std::string& shape) {
  int64_t last = 0;
  for (int d = 0; d < t.rank; ++d) {
    if (t.strides[d] <= 0)
      return unsupported(what, " ", shape, " has strides ", listString(t.strides, t.rank),
                         " (as cuDNN sees it); cuDNN on cuda takes positive strides only (no "
                         "broadcast or reversed operands)");
    if (t.sizes[d] <= INT_MAX && t.strides[d] <= INT_MAX) last += (t.sizes[d] - 1) * t.strides[d];
    if (t.sizes[d] > INT_MAX || t.strides[d] > INT_MAX || last >= INT_MAX)
      return unsupported(what, " ", shape,
                         " spans more than 2^31 - 1 elements, "
                         "beyond cuDNN's 32-bit tensor sizes");
  }
  return Status();
}

// Owners of cuDNN descriptors (destroyed with the Plan holding them).
struct DescDeleter {
  const CudnnSymbols* s = nullptr;
  void operator()(cudnn::TensorStruct* d) const { s->cudnnDestroyTensorDescriptor(d); }
  void operator()(cudnn::FilterStruct* d) const { s->cudnnDestroyFilterDescriptor(d); }
  void operator()(cudnn::ConvolutionStruct* d) const { s->cudnnDestroyConvolutionDescriptor(d); }
  void operator()(cudnn::ActivationStruct* d) const { s->cudnnDestroyActivationDescriptor(d); }
  void operator()(cudnn::OpTensorStruct* d) const { s->cudnnDestroyOpTensorDescriptor(d); }
};
template <typename S>
using Desc = std::unique_ptr<S, DescDeleter>;

enum class ActKind { kNone, kCudnn, kClip };

// Everything one shape, layout and configuration needs; immutable once built.
struct Plan {
  bool transposed = false;
  bool residual = false;
  bool empty_input = false;           // x has no element: y = act(bias [+ y])
  bool fused = false;                 // cudnnConvolutionBiasActivationForward
  Desc<cudnn::TensorStruct> y, bias;  // bias null without one
  // The convolution's input: x, or x copied into the interior of a zeroed padded tensor.
  Desc<cudnn::TensorStruct> x, x_padded, x_interior;
  int64_t x_interior_offset = 0;  // elements
  // The filter: over w, or over a packed copy of it.
  Desc<cudnn::FilterStruct> filter;
  Desc<cudnn::TensorStruct> w_source, w_packed;
  Desc<cudnn::ConvolutionStruct> conv;
  // The convolution's output: y, or the computed part of a scratch tensor z (zeroed first when
  // z_fill) whose window at z_window_offset is y.
  Desc<cudnn::TensorStruct> out, z_full, z_window;
  int64_t z_window_offset = 0;  // elements
  bool z_fill = false;
  ActKind act_kind = ActKind::kNone;
  Desc<cudnn::ActivationStruct> act;
  Desc<cudnn::OpTensorStruct> op_max, op_min;  // null when that bound is infinite
  Desc<cudnn::TensorStruct> one;               // the [1, 1, ...] constant of the clip
  float clip_lo = 0, clip_hi = 0;
  int algo = 0;
  size_t workspace = 0;
  // The one scratch allocation: byte offsets of its parts, and its size.
  size_t ws_at = 0, x_at = 0, w_at = 0, z_at = 0, one_at = 0, scratch_bytes = 0;
};

// Creates descriptors and reports cuDNN's errors with the call's name.
class Builder {
 public:
  explicit Builder(const CudnnLibrary& lib) : lib_(lib), s_(lib.symbols()) {}

  StatusOr<Desc<cudnn::TensorStruct>> tensor(const Dims& t) {
    cudnn::TensorDesc d = nullptr;
    RAL_RETURN_IF_ERROR(
        lib_.check(s_.cudnnCreateTensorDescriptor(&d), "cudnnCreateTensorDescriptor"));
    Desc<cudnn::TensorStruct> owned(d, DescDeleter{&s_});
    int sizes[kMaxRank], strides[kMaxRank];
    for (int i = 0; i < t.rank; ++i) {
      sizes[i] = static_cast<int>(t.sizes[i]);
      strides[i] = static_cast<int>(t.strides[i]);
    }
    RAL_RETURN_IF_ERROR(
        lib_.check(s_.cudnnSetTensorNdDescriptor(d, cudnn::kDataFloat, t.rank, sizes, strides),
                   "cudnnSetTensorNdDescriptor"));
    return owned;
  }
  StatusOr<Desc<cudnn::FilterStruct>> filter(const Dims& t, int format) {
    cudnn::FilterDesc d = nullptr;
    RAL_RETURN_IF_ERROR(
        lib_.check(s_.cudnnCreateFilterDescriptor(&d), "cudnnCreateFilterDescriptor"));
    Desc<cudnn::FilterStruct> owned(d, DescDeleter{&s_});
    int sizes[kMaxRank];
    for (int i = 0; i < t.rank; ++i) sizes[i] = static_cast<int>(t.sizes[i]);
    RAL_RETURN_IF_ERROR(
        lib_.check(s_.cudnnSetFilterNdDescriptor(d, cudnn::kDataFloat, format, t.rank, sizes),
                   "cudnnSetFilterNdDescriptor"));
    return owned;
  }
  StatusOr<Desc<cudnn::ConvolutionStruct>> convolution(int spatial, const int* pad,
                                                       const int* stride, const int* dil,
                                                       int groups) {
    cudnn::ConvDesc d = nullptr;
    RAL_RETURN_IF_ERROR(
        lib_.check(s_.cudnnCreateConvolutionDescriptor(&d), "cudnnCreateConvolutionDescriptor"));
    Desc<cudnn::ConvolutionStruct> owned(d, DescDeleter{&s_});
    RAL_RETURN_IF_ERROR(
        lib_.check(s_.cudnnSetConvolutionNdDescriptor(d, spatial, pad, stride, dil,
                                                      cudnn::kCrossCorrelation, cudnn::kDataFloat),
                   "cudnnSetConvolutionNdDescriptor"));
    RAL_RETURN_IF_ERROR(
        lib_.check(s_.cudnnSetConvolutionGroupCount(d, groups), "cudnnSetConvolutionGroupCount"));
    // f32 stays f32: FMA math excludes the TF32 tensor-core kernels.
    RAL_RETURN_IF_ERROR(lib_.check(s_.cudnnSetConvolutionMathType(d, cudnn::kFmaMath),
                                   "cudnnSetConvolutionMathType"));
    return owned;
  }
  StatusOr<Desc<cudnn::ActivationStruct>> activation(int mode, double coef) {
    cudnn::ActivationDesc d = nullptr;
    RAL_RETURN_IF_ERROR(
        lib_.check(s_.cudnnCreateActivationDescriptor(&d), "cudnnCreateActivationDescriptor"));
    Desc<cudnn::ActivationStruct> owned(d, DescDeleter{&s_});
    RAL_RETURN_IF_ERROR(
        lib_.check(s_.cudnnSetActivationDescriptor(d, mode, cudnn::kNotPropagateNan, coef),
                   "cudnnSetActivationDescriptor"));
    if (mode == cudnn::kActivationSwish)
      RAL_RETURN_IF_ERROR(lib_.check(s_.cudnnSetActivationDescriptorSwishBeta(d, 1.0),
                                     "cudnnSetActivationDescriptorSwishBeta"));
    return owned;
  }
  StatusOr<Desc<cudnn::OpTensorStruct>> opTensor(int op) {
    cudnn::OpTensorDesc d = nullptr;
    RAL_RETURN_IF_ERROR(
        lib_.check(s_.cudnnCreateOpTensorDescriptor(&d), "cudnnCreateOpTensorDescriptor"));
    Desc<cudnn::OpTensorStruct> owned(d, DescDeleter{&s_});
    RAL_RETURN_IF_ERROR(
        lib_.check(s_.cudnnSetOpTensorDescriptor(d, op, cudnn::kDataFloat, cudnn::kNotPropagateNan),
                   "cudnnSetOpTensorDescriptor"));
    return owned;
  }

 private:
  const CudnnLibrary& lib_;
  const CudnnSymbols& s_;
};

// The operands of one call, as cuDNN tensors, and whether y overlaps an input.
struct Operands {
  int spatial = 0;  // of the convolution as ral_conv sees it (1, 2 or 3)
  Dims x, y, w, bias;
  bool has_bias = false;
  bool overlap = false;
};

// The shape, layout and configuration a Plan depends on, as bytes.
std::string planKey(const Operands& o, const ConvConfig& c) {
  std::string key;
  auto add = [&](int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  auto addDims = [&](const Dims& t) {
    add(t.rank);
    for (int d = 0; d < t.rank; ++d) add(t.sizes[d]), add(t.strides[d]);
  };
  add(o.spatial);
  addDims(o.x);
  addDims(o.y);
  addDims(o.w);
  addDims(o.bias);
  add(o.has_bias);
  add(o.overlap);
  add(c.groups);
  add(static_cast<int64_t>(c.activation));
  add(c.flags & ~kConvConstantFilter);  // a constant filter changes nothing here
  for (int i = 0; i < c.spatial; ++i)
    add(c.strides[i]), add(c.dilations[i]), add(c.pad_begin[i]), add(c.pad_end[i]);
  if (c.activation == ConvActivation::kClip) {
    uint32_t lo = 0, hi = 0;
    std::memcpy(&lo, &c.alpha, sizeof lo);
    std::memcpy(&hi, &c.beta, sizeof hi);
    add(lo), add(hi);
  }
  return key;
}

size_t roundUp(size_t v, size_t a) { return (v + a - 1) / a * a; }

// The algorithm for p (heuristics ranked first among those with FMA math and a workspace within
// kMaxWorkspaceBytes) and its workspace size. *none_usable: cuDNN answered, with no candidate
// that qualifies (as opposed to a call that failed).
Status chooseAlgorithm(const CudnnLibrary& lib, cudnn::Handle h, Plan& p,
                       bool* none_usable = nullptr) {
  const CudnnSymbols& s = lib.symbols();
  cudnn::AlgoPerf perf[cudnn::kFwdAlgoCount] = {};
  int count = 0;
  cudnn::TensorDesc in = p.x_padded ? p.x_padded.get() : p.x.get();
  if (p.transposed) {
    RAL_RETURN_IF_ERROR(lib.check(s.cudnnGetConvolutionBackwardDataAlgorithm_v7(
                                      h, p.filter.get(), in, p.conv.get(), p.out.get(),
                                      cudnn::kBwdDataAlgoCount, &count, perf),
                                  "cudnnGetConvolutionBackwardDataAlgorithm_v7"));
  } else {
    RAL_RETURN_IF_ERROR(lib.check(
        s.cudnnGetConvolutionForwardAlgorithm_v7(h, in, p.filter.get(), p.conv.get(), p.out.get(),
                                                 cudnn::kFwdAlgoCount, &count, perf),
        "cudnnGetConvolutionForwardAlgorithm_v7"));
  }
  count = std::clamp(count, 0, cudnn::kFwdAlgoCount);
  std::string candidates;
  for (int i = 0; i < count; ++i) {
    const cudnn::AlgoPerf& a = perf[i];
    candidates += internal::strCat(i ? "; " : "", "algo ", a.algo, " status ", a.status, " math ",
                                   a.math_type, " workspace ", a.memory);
    if (a.status != cudnn::kSuccess || a.math_type == cudnn::kTensorOpMath ||
        a.math_type == cudnn::kTensorOpMathAllowConversion || a.memory > kMaxWorkspaceBytes)
      continue;
    p.algo = a.algo;
    if (p.transposed)
      return lib.check(
          s.cudnnGetConvolutionBackwardDataWorkspaceSize(h, p.filter.get(), in, p.conv.get(),
                                                         p.out.get(), p.algo, &p.workspace),
          "cudnnGetConvolutionBackwardDataWorkspaceSize");
    return lib.check(s.cudnnGetConvolutionForwardWorkspaceSize(h, in, p.filter.get(), p.conv.get(),
                                                               p.out.get(), p.algo, &p.workspace),
                     "cudnnGetConvolutionForwardWorkspaceSize");
  }
  if (none_usable != nullptr) *none_usable = true;
  return unsupported(
      "cuDNN ", lib.versionString(), " offers no f32 algorithm (FMA math, workspace up to ",
      kMaxWorkspaceBytes >> 20,
      " MiB) for this configuration; its candidates: ", candidates.empty() ? "none" : candidates);
}

// Everything but the algorithm: descriptors, checked against cuDNN's own output size rule.
// With `packed_copies`, x, w and y all go through packed channels-first scratch copies: cuDNN 9
// offers no algorithm at all for some strided or channels-last operands (a channel stride of 2,
// NHWC transposed convolutions), and the copies make them ones it runs.
StatusOr<std::unique_ptr<Plan>> buildPlan(const CudnnLibrary& lib, const ConvConfig& c,
                                          const Operands& o, bool packed_copies) {
  Builder b(lib);
  auto p = std::make_unique<Plan>();
  p->transposed = c.transposed();
  p->residual = c.residual();
  p->empty_input = o.x.numel() == 0;
  // The order of the scratch tensors: the operands' own, or channels-first for packed copies.
  const bool cl = c.channelsLast() && !packed_copies;
  const int rank = o.y.rank, sp = rank - 2;
  RAL_ASSIGN_OR_RETURN(p->y, b.tensor(o.y));
  if (o.has_bias) {
    RAL_ASSIGN_OR_RETURN(p->bias, b.tensor(o.bias));
  }

  // The activation.
  const ConvActivation act = c.activation;
  if (act == ConvActivation::kRelu || act == ConvActivation::kSigmoid ||
      act == ConvActivation::kSilu ||
      (act == ConvActivation::kClip && c.alpha == 0 && c.beta > 0 && std::isfinite(c.beta))) {
    const int mode = act == ConvActivation::kRelu      ? cudnn::kActivationRelu
                     : act == ConvActivation::kSigmoid ? cudnn::kActivationSigmoid
                     : act == ConvActivation::kSilu    ? cudnn::kActivationSwish
                                                       : cudnn::kActivationClippedRelu;
    p->act_kind = ActKind::kCudnn;
    RAL_ASSIGN_OR_RETURN(p->act, b.activation(mode, act == ConvActivation::kClip ? c.beta : 0.0));
  } else if (act == ConvActivation::kClip) {
    p->clip_lo = c.alpha;
    p->clip_hi = c.beta;
    if (!(std::isinf(c.alpha) && c.alpha < 0)) {
      RAL_ASSIGN_OR_RETURN(p->op_max, b.opTensor(cudnn::kOpTensorMax));
    }
    if (!(std::isinf(c.beta) && c.beta > 0)) {
      RAL_ASSIGN_OR_RETURN(p->op_min, b.opTensor(cudnn::kOpTensorMin));
    }
    if (p->op_max || p->op_min) {
      p->act_kind = ActKind::kClip;
      Dims one;
      one.rank = rank;
      for (int d = 0; d < rank; ++d) one.sizes[d] = one.strides[d] = 1;
      RAL_ASSIGN_OR_RETURN(p->one, b.tensor(one));
    }
  } else if (act != ConvActivation::kNone) {
    return internalError("activation ", static_cast<int>(act),
                         " reached the cuDNN plan");  // refused before
  }

  size_t scratch = 0;
  auto part = [&](size_t bytes) {
    const size_t at = scratch;
    scratch += roundUp(bytes, kScratchAlign);
    return at;
  };
  if (p->act_kind == ActKind::kClip) p->one_at = part(sizeof(float));
  if (p->empty_input) {
    p->scratch_bytes = scratch;
    return p;
  }

  // The convolution's pads, and what cuDNN's symmetric pads cannot express.
  int pad[3] = {}, stride[3] = {}, dil[3] = {};
  int64_t x_lo[3] = {}, x_hi[3] = {};  // forward: explicit padding of x
  int64_t z_size[3] = {}, z_out[3] = {}, z_off[3] = {};
  bool pad_x = false, use_z = o.overlap;
  for (int i = 0; i < sp; ++i) {
    const int ci = i - (sp - o.spatial);  // -1: the unit height of a 1-D convolution
    const int64_t s = ci < 0 ? 1 : c.strides[ci], dl = ci < 0 ? 1 : c.dilations[ci];
    const int64_t pb = ci < 0 ? 0 : c.pad_begin[ci], pe = ci < 0 ? 0 : c.pad_end[ci];
    const int64_t in = o.x.sizes[2 + i], k = o.w.sizes[2 + i], out = o.y.sizes[2 + i];
    const int64_t extent = dl * (k - 1) + 1;
    int64_t p_sym = pb;
    z_size[i] = z_out[i] = out;
    if (!p->transposed) {
      // cuDNN pads pb on both sides: right when that yields the same output size (the extra
      // or missing zeros at the end are never read).
      const int64_t sym = in + 2 * pb - extent;
      if (sym < 0 || sym / s != (in + pb + pe - extent) / s) {
        p_sym = std::min(pb, pe);
        x_lo[i] = pb - p_sym;
        x_hi[i] = pe - p_sym;
        pad_x = true;
      }
    } else {
      // cuDNN's transposed output is (in-1)*s - 2p + extent + r with 0 <= r < s, cropped by p at
      // the start.
      const int64_t output_padding = out - ((in - 1) * s - pb - pe + extent);
      const int64_t r = pb - pe + output_padding;
      if (r < 0 || r >= s) {
        use_z = true;
        p_sym = std::max<int64_t>(0, std::min(pb, pe - output_padding));
        z_out[i] = (in - 1) * s - 2 * p_sym + extent;
        z_off[i] = pb - p_sym;
        z_size[i] = std::max(z_out[i], z_off[i] + out);
        if (z_off[i] + out > z_out[i]) p->z_fill = true;
      }
    }
    if (p_sym > INT_MAX) return unsupported("pad ", p_sym, " exceeds cuDNN's 32-bit parameters");
    pad[i] = static_cast<int>(p_sym);
    stride[i] = static_cast<int>(s);
    dil[i] = static_cast<int>(dl);
  }
  RAL_ASSIGN_OR_RETURN(p->conv, b.convolution(sp, pad, stride, dil, static_cast<int>(c.groups)));
  if (packed_copies) pad_x = use_z = true;  // x_lo, x_hi, z_off: as computed (often zero)

  RAL_ASSIGN_OR_RETURN(p->x, b.tensor(o.x));
  if (pad_x) {
    Dims padded = o.x;
    for (int i = 0; i < sp; ++i) padded.sizes[2 + i] += x_lo[i] + x_hi[i];
    padded = packed(padded, cl);
    RAL_RETURN_IF_ERROR(checkDescribable(padded, "padded x", listString(padded.sizes, rank)));
    Dims interior = padded;
    for (int d = 0; d < rank; ++d) interior.sizes[d] = o.x.sizes[d];
    for (int i = 0; i < sp; ++i) p->x_interior_offset += x_lo[i] * padded.strides[2 + i];
    RAL_ASSIGN_OR_RETURN(p->x_padded, b.tensor(padded));
    RAL_ASSIGN_OR_RETURN(p->x_interior, b.tensor(interior));
    p->x_at = part(sizeof(float) * static_cast<size_t>(padded.numel()));
  }

  // The filter: KCRS or KRSC as w is stored, else a packed KCRS copy.
  Dims filter = o.w;
  int format = cudnn::kTensorNchw;
  if (packedIn(o.w, true) && !packedIn(o.w, false) && !packed_copies) {
    format = cudnn::kTensorNhwc;
  } else if (!packedIn(o.w, false)) {
    filter = packed(o.w, false);
    RAL_ASSIGN_OR_RETURN(p->w_source, b.tensor(o.w));
    RAL_ASSIGN_OR_RETURN(p->w_packed, b.tensor(filter));
    p->w_at = part(sizeof(float) * static_cast<size_t>(filter.numel()));
  }
  RAL_ASSIGN_OR_RETURN(p->filter, b.filter(filter, format));

  if (use_z) {
    Dims full = o.y, computed = o.y;
    for (int i = 0; i < sp; ++i) full.sizes[2 + i] = z_size[i];
    full = packed(full, cl);
    RAL_RETURN_IF_ERROR(checkDescribable(full, "scratch output", listString(full.sizes, rank)));
    Dims window = full;
    for (int d = 0; d < rank; ++d) computed.strides[d] = window.strides[d] = full.strides[d];
    for (int i = 0; i < sp; ++i) computed.sizes[2 + i] = z_out[i];
    for (int d = 0; d < rank; ++d) window.sizes[d] = o.y.sizes[d];
    for (int i = 0; i < sp; ++i) p->z_window_offset += z_off[i] * full.strides[2 + i];
    RAL_ASSIGN_OR_RETURN(p->z_full, b.tensor(full));
    RAL_ASSIGN_OR_RETURN(p->z_window, b.tensor(window));
    RAL_ASSIGN_OR_RETURN(p->out, b.tensor(computed));
    p->z_at = part(sizeof(float) * static_cast<size_t>(full.numel()));
  } else {
    RAL_ASSIGN_OR_RETURN(p->out, b.tensor(o.y));
  }

  // cuDNN's own output size rule must give exactly the tensor it is handed (forward: the output;
  // transposed: x, the forward output of y's shape), so a shape this file got wrong is an error,
  // never a wrong result.
  const Dims& expected = p->transposed ? o.x : o.y;
  int got[kMaxRank] = {};
  cudnn::TensorDesc forward_in = p->transposed ? p->out.get()
                                 : pad_x       ? p->x_padded.get()
                                               : p->x.get();
  RAL_RETURN_IF_ERROR(lib.check(lib.symbols().cudnnGetConvolutionNdForwardOutputDim(
                                    p->conv.get(), forward_in, p->filter.get(), rank, got),
                                "cudnnGetConvolutionNdForwardOutputDim"));
  int64_t got64[kMaxRank] = {};
  for (int d = 0; d < rank; ++d) got64[d] = got[d];
  if (!std::equal(got64, got64 + rank, expected.sizes))
    return internalError("cuDNN computes the shape ", listString(got64, rank), " where ",
                         listString(expected.sizes, rank), " is needed");

  // Bias and relu fused into the convolution: no residual (z is y, unread with alpha2 0), no
  // scratch output, a packed bias.
  p->fused = !p->transposed && c.activation == ConvActivation::kRelu && o.has_bias &&
             !p->residual && !use_z && (o.bias.sizes[1] == 1 || o.bias.strides[1] == 1);
  p->ws_at = scratch;  // the workspace goes last, its size known once the algorithm is
  p->scratch_bytes = scratch;
  return p;
}

// Queues plan p on the handle's stream: the data pointers, and the scratch allocation's base.
Status runPlan(const CudnnLibrary& lib, cudnn::Handle h, const Plan& p, const float* x,
               const float* w, const float* bias, float* y, char* scratch) {
  const CudnnSymbols& s = lib.symbols();
  const float one = 1, zero = 0, residual = p.residual ? 1.0f : 0.0f;
  if (p.empty_input) {
    if (!p.residual)
      RAL_RETURN_IF_ERROR(lib.check(s.cudnnSetTensor(h, p.y.get(), y, &zero), "cudnnSetTensor"));
  } else {
    const float* in = x;
    if (p.x_padded) {
      float* padded = reinterpret_cast<float*>(scratch + p.x_at);
      RAL_RETURN_IF_ERROR(
          lib.check(s.cudnnSetTensor(h, p.x_padded.get(), padded, &zero), "cudnnSetTensor"));
      RAL_RETURN_IF_ERROR(
          lib.check(s.cudnnTransformTensor(h, &one, p.x.get(), x, &zero, p.x_interior.get(),
                                           padded + p.x_interior_offset),
                    "cudnnTransformTensor"));
      in = padded;
    }
    const float* filter = w;
    if (p.w_packed) {
      float* copy = reinterpret_cast<float*>(scratch + p.w_at);
      RAL_RETURN_IF_ERROR(lib.check(
          s.cudnnTransformTensor(h, &one, p.w_source.get(), w, &zero, p.w_packed.get(), copy),
          "cudnnTransformTensor"));
      filter = copy;
    }
    float* z = p.z_full ? reinterpret_cast<float*>(scratch + p.z_at) : nullptr;
    float* out = z != nullptr ? z : y;
    if (p.z_fill)
      RAL_RETURN_IF_ERROR(
          lib.check(s.cudnnSetTensor(h, p.z_full.get(), z, &zero), "cudnnSetTensor"));
    // Into y directly, the residual it holds is added by beta.
    const float* beta = z != nullptr ? &zero : &residual;
    void* workspace = p.workspace > 0 ? scratch + p.ws_at : nullptr;
    cudnn::TensorDesc in_desc = p.x_padded ? p.x_padded.get() : p.x.get();
    if (p.transposed) {
      RAL_RETURN_IF_ERROR(lib.check(
          s.cudnnConvolutionBackwardData(h, &one, p.filter.get(), filter, in_desc, in, p.conv.get(),
                                         p.algo, workspace, p.workspace, beta, p.out.get(), out),
          "cudnnConvolutionBackwardData"));
    } else {
      if (p.fused) {
        const cudnn::Status fused = s.cudnnConvolutionBiasActivationForward(
            h, &one, in_desc, in, p.filter.get(), filter, p.conv.get(), p.algo, workspace,
            p.workspace, &zero, p.y.get(), y, p.bias.get(), bias, p.act.get(), p.y.get(), y);
        // cuDNN fuses fewer configurations (algorithms, ranks) than it convolves: the unfused
        // steps below give the same result.
        if (fused == cudnn::kSuccess) return Status();
        if (!lib.notSupported(fused))
          return lib.check(fused, "cudnnConvolutionBiasActivationForward");
      }
      RAL_RETURN_IF_ERROR(lib.check(
          s.cudnnConvolutionForward(h, &one, in_desc, in, p.filter.get(), filter, p.conv.get(),
                                    p.algo, workspace, p.workspace, beta, p.out.get(), out),
          "cudnnConvolutionForward"));
    }
    if (z != nullptr)
      RAL_RETURN_IF_ERROR(
          lib.check(s.cudnnTransformTensor(h, &one, p.z_window.get(), z + p.z_window_offset,
                                           &residual, p.y.get(), y),
                    "cudnnTransformTensor"));
  }
  if (p.bias)
    RAL_RETURN_IF_ERROR(lib.check(s.cudnnAddTensor(h, &one, p.bias.get(), bias, &one, p.y.get(), y),
                                  "cudnnAddTensor"));
  if (p.act_kind == ActKind::kCudnn)
    return lib.check(
        s.cudnnActivationForward(h, p.act.get(), &one, p.y.get(), y, &zero, p.y.get(), y),
        "cudnnActivationForward");
  if (p.act_kind == ActKind::kClip) {
    // max(v, lo * 1) and min(v, hi * 1): the bound scales a constant 1, exactly.
    float* unit = reinterpret_cast<float*>(scratch + p.one_at);
    RAL_RETURN_IF_ERROR(lib.check(s.cudnnSetTensor(h, p.one.get(), unit, &one), "cudnnSetTensor"));
    if (p.op_max)
      RAL_RETURN_IF_ERROR(
          lib.check(s.cudnnOpTensor(h, p.op_max.get(), &one, p.y.get(), y, &p.clip_lo, p.one.get(),
                                    unit, &zero, p.y.get(), y),
                    "cudnnOpTensor"));
    if (p.op_min)
      RAL_RETURN_IF_ERROR(
          lib.check(s.cudnnOpTensor(h, p.op_min.get(), &one, p.y.get(), y, &p.clip_hi, p.one.get(),
                                    unit, &zero, p.y.get(), y),
                    "cudnnOpTensor"));
  }
  return Status();
}

struct CudnnHandles {
  std::unique_ptr<CudnnHandle> handle;
};

StatusOr<CudnnHandle*> cudnnHandle(ExecutionContext* ctx, const CudaEnv& env) {
  // One handle per Context and stream: a handle is bound to one stream at a time.
  RAL_ASSIGN_OR_RETURN(CudnnHandles * h,
                       ctx->context()->getOrCreate<CudnnHandles>(
                           env.stream, [&]() -> StatusOr<std::unique_ptr<CudnnHandles>> {
                             RAL_ASSIGN_OR_RETURN(auto handle, CudnnHandle::create(*env.queue));
                             return std::make_unique<CudnnHandles>(CudnnHandles{std::move(handle)});
                           }));
  return h->handle.get();
}

// The Plans of one Context.
struct ConvCache {
  std::mutex mutex;  // guards plans
  std::unordered_map<std::string, std::shared_ptr<const Plan>> plans;
  std::mutex build;  // held while a plan is built, so each is built once
};

StatusOr<std::shared_ptr<const Plan>> planFor(ExecutionContext* ctx, const CudaEnv& env,
                                              const CudnnLibrary& lib, const ConvConfig& c,
                                              const Operands& o) {
  static const char kCacheKey = 0;
  RAL_ASSIGN_OR_RETURN(ConvCache * cache, ctx->context()->getOrCreate<ConvCache>(&kCacheKey, [] {
    return std::make_unique<ConvCache>();
  }));
  const std::string key = planKey(o, c);
  auto find = [&]() -> std::shared_ptr<const Plan> {
    std::lock_guard<std::mutex> lock(cache->mutex);
    auto it = cache->plans.find(key);
    return it == cache->plans.end() ? nullptr : it->second;
  };
  if (auto plan = find()) return plan;
  std::lock_guard<std::mutex> building(cache->build);
  if (auto plan = find()) return plan;
  // Descriptors first (host-side, no device needed), then the algorithm (needs a handle).
  RAL_ASSIGN_OR_RETURN(std::unique_ptr<Plan> plan, buildPlan(lib, c, o, false));
  RAL_ASSIGN_OR_RETURN(CudnnHandle * handle, cudnnHandle(ctx, env));
  if (!plan->empty_input) {
    RAL_RETURN_IF_ERROR(env.queue->makeCurrent());
    bool none_usable = false;
    Status chosen = chooseAlgorithm(lib, handle->raw(), *plan, &none_usable);
    if (none_usable) {
      // No algorithm over the operands as they are stored: the same convolution over packed
      // channels-first copies (more memory traffic, the same result).
      RAL_ASSIGN_OR_RETURN(std::unique_ptr<Plan> copies, buildPlan(lib, c, o, true));
      Status again = chooseAlgorithm(lib, handle->raw(), *copies);
      if (!again.ok())
        return unsupported(chosen.message(), "; over packed channels-first copies: ",
                           again.message());
      plan = std::move(copies);
      chosen = Status();
    }
    RAL_RETURN_IF_ERROR(chosen);
    plan->scratch_bytes = plan->ws_at + plan->workspace;
  }
  std::shared_ptr<const Plan> shared = std::move(plan);
  std::lock_guard<std::mutex> lock(cache->mutex);
  cache->plans.emplace(key, shared);
  return shared;
}

struct Impl {
  template <int R>
  static Status conv(ExecutionContext* ctx, const ConvConfig& c, const MemRef<float, R>& xc,
                     const MemRef<float, R>& w, const MemRef<float, 1>& bias,
                     const MemRef<float, R>& yc) {
    if (yc.numel() == 0) return Status();  // an empty batch or output: nothing to compute
    switch (c.activation) {
      case ConvActivation::kHardSwish:
      case ConvActivation::kGeluErf:
      case ConvActivation::kGeluTanh:
        return unsupported(kKernel, ": activation ", static_cast<int>(c.activation),
                           c.activation == ConvActivation::kHardSwish ? " (hardswish)" : " (gelu)",
                           " is not supported on cuda (cuDNN's convolution API has no such "
                           "activation); supported: none, relu, clip, sigmoid, silu");
      default:
        break;
    }
    Operands o;
    o.spatial = R - 2;
    o.x = dimsOf(xc);
    o.y = dimsOf(yc);
    o.w = dimsOf(w);
    o.has_bias = bias.sizes[0] > 0;
    o.bias.rank = o.y.rank;
    for (int d = 0; d < o.bias.rank; ++d) o.bias.sizes[d] = o.bias.strides[d] = 1;
    if (o.has_bias) {
      const int64_t f = bias.sizes[0];
      o.bias.sizes[1] = f;
      o.bias.strides[1] = f == 1 ? 1 : bias.strides[0];
      o.bias.strides[0] = saturatingMul(f, std::max<int64_t>(o.bias.strides[1], 1));
    }
    const bool cl = c.channelsLast();
    Status layout = checkDescribable(o.y, "y", conv_detail::cfShape(yc, cl));
    if (layout.ok() && o.has_bias) layout = checkDescribable(o.bias, "bias", shapeString(bias));
    if (layout.ok() && xc.numel() > 0) {
      layout = checkDescribable(o.x, "x", conv_detail::cfShape(xc, cl));
      if (layout.ok()) layout = checkDescribable(o.w, "w", shapeString(w));
    }
    if (!layout.ok()) return layout.withContext(kKernel);
    o.overlap = overlaps(yc, xc) || overlaps(yc, w) || (o.has_bias && overlaps(yc, bias));

    auto loaded = CudnnLibrary::get();
    if (!loaded.ok()) return loaded.status().withContext(kKernel);
    const CudnnLibrary& lib = **loaded;
    if (c.activation == ConvActivation::kSilu &&
        lib.symbols().cudnnSetActivationDescriptorSwishBeta == nullptr)
      return unsupported(kKernel,
                         ": activation 4 (silu) needs cuDNN 8.2 or newer "
                         "(cudnnSetActivationDescriptorSwishBeta); '",
                         lib.path(), "' is ", lib.versionString());
    RAL_ASSIGN_OR_RETURN(KernelEnv kenv, kernelEnv(ctx, DeviceKind::kCuda));
    RAL_RETURN_IF_ERROR(checkDeviceAccess(*kenv.driver, xc, kKernel, "x"));
    RAL_RETURN_IF_ERROR(checkDeviceAccess(*kenv.driver, w, kKernel, "w"));
    RAL_RETURN_IF_ERROR(checkDeviceAccess(*kenv.driver, bias, kKernel, "bias"));
    RAL_RETURN_IF_ERROR(checkDeviceAccess(*kenv.driver, yc, kKernel, "y"));
    RAL_ASSIGN_OR_RETURN(CudaQueueService * queue,
                         requireService<CudaQueueService>(kenv.driver, "a CUDA queue"));
    const CudaEnv env{kenv.driver, queue, kenv.stream};
    // Library and queue errors name the configuration.
    auto annotate = [&](const Status& s) {
      return s.withContext(internal::strCat(kKernel, " (", convConfigString(c), ")"));
    };
    auto plan_or = planFor(ctx, env, lib, c, o);
    if (!plan_or.ok()) return annotate(plan_or.status());
    std::shared_ptr<const Plan> plan = *std::move(plan_or);
    auto handle = cudnnHandle(ctx, env);
    if (!handle.ok()) return annotate(handle.status());
    DeviceScratch scratch(env.driver, env.stream);
    if (plan->scratch_bytes > 0) {
      const Status allocated = scratch.allocate(plan->scratch_bytes);
      if (!allocated.ok()) return annotate(allocated);
    }
    char* base = scratch.get();
    const float* x = xc.data();
    const float* wp = w.data();
    const float* b = bias.data();
    float* y = yc.data();
    const Status queued = (*handle)->enqueue(
        kenv.stream, [plan, x, wp, b, y, base](const CudnnLibrary& l, cudnn::Handle h) {
          return runPlan(l, h, *plan, x, wp, b, y, base);
        });
    return queued.ok() ? queued : annotate(queued);
  }
};

constexpr char kDevice[] = "cuda";
RAL_KERNEL_CONV_RANKS(RAL_REGISTER_CONV)

}  // namespace
}  // namespace ral::kernels::cuda

RAL_REGISTRATION_ANCHOR(kernels_conv_cuda);
