// libral_fake_cudnn.so: a stand-in for cuDNN, so ral_conv's cuDNN path runs in CI without a GPU,
// on the simulated CUDA driver (RAL_CUDA_DRIVER_PATH = libral_sim_cuda.so, RAL_CUDNN_PATH = this
// library). It exports the cuDNN functions RAL loads, defined against cudnn.h's own declarations
// (so the compiler checks every signature), and
//  - checks their arguments the way cuDNN documents them: descriptors set and positive, the
//    output size rule, groups, filter formats, the workspace of the algorithm passed, and
//    refuses what RAL must never ask for (TF32 math, the legacy stream, z aliasing y with a
//    non-zero alpha2), failing with CUDNN_STATUS_BAD_PARAM or NOT_SUPPORTED;
//  - computes each operation in double on the host, queued on the handle's stream with the
//    simulated driver's cuLaunchHostFunc, reading the descriptors and scalars as they were at the
//    call, so results can be compared with the CPU kernel;
//  - records each call with the descriptors it was given (ral_fake_cudnn_log), can fail the next
//    call of a chosen function (ral_fake_cudnn_fail), and counts live handles and descriptors
//    (ral_fake_cudnn_live).
// Its heuristics rank an unsupported, a TF32 and an oversized algorithm before the two usable
// ones, so the log shows which one RAL picked. $RAL_FAKE_CUDNN_VERSION overrides the version.
// It also checks, at compile time, that kernels/conv/cudnn.h declares every function, type and
// value as cudnn.h does.
// Thread-safety: every entry point may be called from any thread; one mutex guards the log and
// the counters, and queued work reads only its own copies of the arguments.
#include <cuda.h>
#include <cudnn.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/conv/cudnn.h"

namespace abi {

namespace r = ::ral::kernels::cuda;

// One parameter or return type of RAL's declaration against cudnn.h's: the same type, an enum
// passed as an int of its size, or pointers to those, to opaque structs or to void.
template <class A, class B>
constexpr bool sameArg() {
  using RA = std::remove_cv_t<A>;
  using RB = std::remove_cv_t<B>;
  if constexpr (std::is_same_v<RA, RB>) {
    return true;
  } else if constexpr ((std::is_enum_v<RA> || std::is_integral_v<RA>)&&(std::is_enum_v<RB> ||
                                                                        std::is_integral_v<RB>)) {
    return sizeof(RA) == sizeof(RB) && std::is_enum_v<RA> != std::is_enum_v<RB>;
  } else if constexpr (std::is_pointer_v<RA> && std::is_pointer_v<RB>) {
    using PA = std::remove_cv_t<std::remove_pointer_t<RA>>;
    using PB = std::remove_cv_t<std::remove_pointer_t<RB>>;
    constexpr bool opaque_a = std::is_class_v<PA> || std::is_void_v<PA>;
    constexpr bool opaque_b = std::is_class_v<PB> || std::is_void_v<PB>;
    if constexpr (std::is_class_v<PA> || std::is_class_v<PB>) {
      return opaque_a && opaque_b;
    } else {
      return std::is_const_v<std::remove_pointer_t<RA>> ==
                 std::is_const_v<std::remove_pointer_t<RB>> &&
             sameArg<PA, PB>();
    }
  } else {
    return false;
  }
}

template <class A, class B>
struct SameFunction : std::false_type {};
template <class RA, class... PA, class RB, class... PB>
struct SameFunction<RA (*)(PA...), RB (*)(PB...)> {
  static constexpr bool check() {
    if constexpr (sizeof...(PA) != sizeof...(PB)) {
      return false;
    } else {
      return sameArg<RA, RB>() && (sameArg<PA, PB>() && ...);
    }
  }
  static constexpr bool value = check();
};

#define RAL_FAKE_CUDNN_CHECK_DECLARATION(name)                                           \
  static_assert(SameFunction<decltype(r::CudnnSymbols::name), decltype(&::name)>::value, \
                "kernels/conv/cudnn.h declares " #name " unlike cudnn.h");
RAL_CUDNN_REQUIRED_SYMBOLS(RAL_FAKE_CUDNN_CHECK_DECLARATION)
RAL_CUDNN_OPTIONAL_SYMBOLS(RAL_FAKE_CUDNN_CHECK_DECLARATION)
#undef RAL_FAKE_CUDNN_CHECK_DECLARATION

// Every member of CudnnSymbols is in one of the lists (and so loaded and checked above).
#define RAL_FAKE_CUDNN_COUNT(name) +1
static_assert(sizeof(r::CudnnSymbols) ==
                  sizeof(void*) * (0 RAL_CUDNN_REQUIRED_SYMBOLS(RAL_FAKE_CUDNN_COUNT)
                                       RAL_CUDNN_OPTIONAL_SYMBOLS(RAL_FAKE_CUDNN_COUNT)),
              "a CudnnSymbols member is missing from RAL_CUDNN_*_SYMBOLS");
#undef RAL_FAKE_CUDNN_COUNT

static_assert(r::cudnn::kSuccess == CUDNN_STATUS_SUCCESS);
static_assert(r::cudnn::kDataFloat == CUDNN_DATA_FLOAT);
static_assert(r::cudnn::kTensorNchw == CUDNN_TENSOR_NCHW);
static_assert(r::cudnn::kTensorNhwc == CUDNN_TENSOR_NHWC);
static_assert(r::cudnn::kCrossCorrelation == CUDNN_CROSS_CORRELATION);
static_assert(r::cudnn::kTensorOpMath == CUDNN_TENSOR_OP_MATH);
static_assert(r::cudnn::kTensorOpMathAllowConversion == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
static_assert(r::cudnn::kFmaMath == CUDNN_FMA_MATH);
static_assert(r::cudnn::kNotPropagateNan == CUDNN_NOT_PROPAGATE_NAN);
static_assert(r::cudnn::kActivationSigmoid == CUDNN_ACTIVATION_SIGMOID);
static_assert(r::cudnn::kActivationRelu == CUDNN_ACTIVATION_RELU);
static_assert(r::cudnn::kActivationClippedRelu == CUDNN_ACTIVATION_CLIPPED_RELU);
static_assert(r::cudnn::kActivationSwish == CUDNN_ACTIVATION_SWISH);
static_assert(r::cudnn::kOpTensorMin == CUDNN_OP_TENSOR_MIN);
static_assert(r::cudnn::kOpTensorMax == CUDNN_OP_TENSOR_MAX);
static_assert(r::cudnn::kFwdAlgoCount == CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
static_assert(r::cudnn::kBwdDataAlgoCount == CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT);
static_assert(sizeof(r::cudnn::AlgoPerf) == sizeof(cudnnConvolutionFwdAlgoPerf_t));
static_assert(sizeof(r::cudnn::AlgoPerf) == sizeof(cudnnConvolutionBwdDataAlgoPerf_t));
static_assert(offsetof(r::cudnn::AlgoPerf, status) ==
              offsetof(cudnnConvolutionFwdAlgoPerf_t, status));
static_assert(offsetof(r::cudnn::AlgoPerf, memory) ==
              offsetof(cudnnConvolutionFwdAlgoPerf_t, memory));
static_assert(offsetof(r::cudnn::AlgoPerf, math_type) ==
              offsetof(cudnnConvolutionFwdAlgoPerf_t, mathType));
static_assert(offsetof(r::cudnn::AlgoPerf, math_type) ==
              offsetof(cudnnConvolutionBwdDataAlgoPerf_t, mathType));

}  // namespace abi

struct cudnnContext {
  cudaStream_t stream = nullptr;
};
struct cudnnTensorStruct {
  bool set = false;
  int nb = 0;
  int dims[CUDNN_DIM_MAX] = {};
  int strides[CUDNN_DIM_MAX] = {};
};
struct cudnnFilterStruct {
  bool set = false;
  int nb = 0;
  int dims[CUDNN_DIM_MAX] = {};
  cudnnTensorFormat_t format = CUDNN_TENSOR_NCHW;
};
struct cudnnConvolutionStruct {
  bool set = false;
  int spatial = 0;
  int pad[CUDNN_DIM_MAX] = {}, stride[CUDNN_DIM_MAX] = {}, dil[CUDNN_DIM_MAX] = {};
  cudnnConvolutionMode_t mode = CUDNN_CONVOLUTION;
  int groups = 1;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};
struct cudnnActivationStruct {
  bool set = false;
  cudnnActivationMode_t mode = CUDNN_ACTIVATION_RELU;
  double coef = 0;
  double swish_beta = 1;
};
struct cudnnOpTensorStruct {
  bool set = false;
  cudnnOpTensorOp_t op = CUDNN_OP_TENSOR_ADD;
};

namespace {

using Tensor = cudnnTensorStruct;
using Filter = cudnnFilterStruct;
using Conv = cudnnConvolutionStruct;
using Act = cudnnActivationStruct;

std::mutex g_mutex;
std::string g_log;
std::string g_log_copy;  // what ral_fake_cudnn_log returned last
// As cuDNN 9 does for some strided layouts (a channel stride of 2, NHWC transposed
// convolutions): every algorithm NOT_SUPPORTED unless the data tensors are in NCHW order (unit
// innermost stride, each stride spanning the dims inside it; padding between rows allowed).
bool g_refuse_unpacked = false;

bool nchwOrder(const cudnnTensorStruct& t) {
  int64_t inner = 1;  // the span of the dims inside d
  for (int d = t.nb - 1; d >= 0; --d) {
    if (t.dims[d] == 1) continue;
    if (t.strides[d] < inner) return false;
    inner = static_cast<int64_t>(t.strides[d]) * t.dims[d];
  }
  return true;
}
bool refused(const cudnnTensorStruct& in, const cudnnTensorStruct& out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_refuse_unpacked && !(nchwOrder(in) && nchwOrder(out));
}
std::string g_fail_function;
cudnnStatus_t g_fail_status = CUDNN_STATUS_SUCCESS;
int g_live = 0;

void logLine(const std::string& line) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_log += line;
  g_log += '\n';
}

// The injected failure of `function`, once, or success.
cudnnStatus_t injected(const char* function) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_fail_function != function) return CUDNN_STATUS_SUCCESS;
  g_fail_function.clear();
  return g_fail_status;
}

cudnnStatus_t fail(cudnnStatus_t status, const std::string& why) {
  logLine("  error: " + why);
  return status;
}

void adjustLive(int delta) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_live += delta;
}

std::string list(const int* v, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}
std::string str(const Tensor& t) { return list(t.dims, t.nb) + "/" + list(t.strides, t.nb); }
std::string str(const Filter& f) {
  return (f.format == CUDNN_TENSOR_NHWC ? "NHWC" : "NCHW") + list(f.dims, f.nb);
}
std::string str(const Conv& c) {
  std::ostringstream os;
  os << "pad" << list(c.pad, c.spatial) << " stride" << list(c.stride, c.spatial) << " dil"
     << list(c.dil, c.spatial) << " groups " << c.groups << " mode " << c.mode << " math "
     << c.math;
  return os.str();
}
std::string str(const Act& a) {
  switch (a.mode) {
    case CUDNN_ACTIVATION_RELU:
      return "relu";
    case CUDNN_ACTIVATION_SIGMOID:
      return "sigmoid";
    case CUDNN_ACTIVATION_CLIPPED_RELU:
      return "clipped_relu " + std::to_string(a.coef);
    case CUDNN_ACTIVATION_SWISH:
      return "swish " + std::to_string(a.swish_beta);
    case CUDNN_ACTIVATION_IDENTITY:
      return "identity";
    default:
      return "mode " + std::to_string(a.mode);
  }
}
std::string num(const void* p) {
  std::ostringstream os;
  os << *static_cast<const float*>(p);
  return os.str();
}

bool sameDims(const Tensor& a, const Tensor& b) {
  return a.nb == b.nb && std::equal(a.dims, a.dims + a.nb, b.dims);
}
int64_t numel(const Tensor& t) {
  int64_t n = 1;
  for (int d = 0; d < t.nb; ++d) n *= t.dims[d];
  return n;
}
// Element offset of row-major index i of t.
int64_t offsetOf(const Tensor& t, int64_t i) {
  int64_t off = 0;
  for (int d = t.nb - 1; d >= 0; --d) {
    off += (i % t.dims[d]) * t.strides[d];
    i /= t.dims[d];
  }
  return off;
}
// A broadcast operand (dims 1 or equal to c's) at row-major index i of c.
int64_t broadcastOffset(const Tensor& b, const Tensor& c, int64_t i) {
  int64_t off = 0;
  for (int d = c.nb - 1; d >= 0; --d) {
    const int64_t idx = i % c.dims[d];
    i /= c.dims[d];
    if (b.dims[d] != 1) off += idx * b.strides[d];
  }
  return off;
}

// The simulated driver's cuLaunchHostFunc, from the library RAL loaded.
using LaunchHostFunc = CUresult (*)(CUstream, void (*)(void*), void*);
LaunchHostFunc launcher() {
  static const LaunchHostFunc fn = [] {
    const char* path = std::getenv("RAL_CUDA_DRIVER_PATH");
    void* lib = path != nullptr ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
    return lib != nullptr ? reinterpret_cast<LaunchHostFunc>(dlsym(lib, "cuLaunchHostFunc"))
                          : nullptr;
  }();
  return fn;
}

// Queues `work` on the handle's stream.
cudnnStatus_t enqueue(cudnnHandle_t h, std::function<void()> work) {
  if (h->stream == nullptr) return fail(CUDNN_STATUS_BAD_PARAM, "no stream set");
  LaunchHostFunc launch = launcher();
  if (launch == nullptr)
    return fail(CUDNN_STATUS_EXECUTION_FAILED, "no cuLaunchHostFunc in RAL_CUDA_DRIVER_PATH");
  auto* payload = new std::function<void()>(std::move(work));
  const CUresult r = launch(
      reinterpret_cast<CUstream>(h->stream),
      [](void* p) {
        auto* fn = static_cast<std::function<void()>*>(p);
        (*fn)();
        delete fn;
      },
      payload);
  if (r != CUDA_SUCCESS) {
    delete payload;
    return fail(CUDNN_STATUS_EXECUTION_FAILED, "cuLaunchHostFunc failed");
  }
  return CUDNN_STATUS_SUCCESS;
}

bool validTensor(const Tensor* t) {
  if (t == nullptr || !t->set) return false;
  for (int d = 0; d < t->nb; ++d)
    if (t->dims[d] <= 0 || t->strides[d] <= 0) return false;
  return true;
}

// The forward output dims of x with w and conv, or an error.
cudnnStatus_t forwardDims(const Conv* c, const Tensor* x, const Filter* w, int* out) {
  if (c == nullptr || !c->set || !validTensor(x) || w == nullptr || !w->set)
    return fail(CUDNN_STATUS_BAD_PARAM, "descriptor not set");
  if (x->nb != w->nb || x->nb != c->spatial + 2)
    return fail(CUDNN_STATUS_BAD_PARAM, "ranks differ: x " + str(*x) + " w " + str(*w));
  if (w->dims[0] % c->groups != 0 || x->dims[1] != w->dims[1] * c->groups)
    return fail(CUDNN_STATUS_BAD_PARAM, "channels: x " + str(*x) + " w " + str(*w) + " groups " +
                                            std::to_string(c->groups));
  out[0] = x->dims[0];
  out[1] = w->dims[0];
  for (int i = 0; i < c->spatial; ++i) {
    const int extent = c->dil[i] * (w->dims[2 + i] - 1) + 1;
    const int span = x->dims[2 + i] + 2 * c->pad[i] - extent;
    if (span < 0) return fail(CUDNN_STATUS_BAD_PARAM, "the filter is larger than the padded x");
    out[2 + i] = span / c->stride[i] + 1;
  }
  return CUDNN_STATUS_SUCCESS;
}

// Offset of filter element (k, c, r...) in its packed format.
int64_t filterOffset(const Filter& w, int k, int c, const int* r) {
  const int sp = w.nb - 2;
  int64_t off = k;
  if (w.format == CUDNN_TENSOR_NHWC) {
    for (int i = 0; i < sp; ++i) off = off * w.dims[2 + i] + r[i];
    return off * w.dims[1] + c;
  }
  off = off * w.dims[1] + c;
  for (int i = 0; i < sp; ++i) off = off * w.dims[2 + i] + r[i];
  return off;
}

// Walks every filter tap of w's spatial dims.
template <typename Fn>
void forEachTap(const Filter& w, Fn fn) {
  const int sp = w.nb - 2;
  int r[CUDNN_DIM_MAX] = {};
  int64_t taps = 1;
  for (int i = 0; i < sp; ++i) taps *= w.dims[2 + i];
  for (int64_t t = 0; t < taps; ++t) {
    int64_t rest = t;
    for (int i = sp - 1; i >= 0; --i)
      r[i] = static_cast<int>(rest % w.dims[2 + i]), rest /= w.dims[2 + i];
    fn(r);
  }
}

// The forward convolution, row-major over y's dims.
std::vector<double> convolve(const float* x, const Tensor& xd, const float* w, const Filter& wd,
                             const Conv& c, const Tensor& yd) {
  const int sp = c.spatial;
  const int cg = wd.dims[1], kg = wd.dims[0] / c.groups;
  std::vector<double> out(static_cast<size_t>(numel(yd)), 0.0);
  for (int64_t i = 0; i < numel(yd); ++i) {
    int idx[CUDNN_DIM_MAX] = {};
    int64_t rest = i;
    for (int d = yd.nb - 1; d >= 0; --d)
      idx[d] = static_cast<int>(rest % yd.dims[d]), rest /= yd.dims[d];
    const int n = idx[0], k = idx[1], g = k / kg;
    double acc = 0;
    for (int ci = 0; ci < cg; ++ci) {
      forEachTap(wd, [&](const int* r) {
        int64_t xoff = n * int64_t{xd.strides[0]} + (g * cg + ci) * int64_t{xd.strides[1]};
        int rr[CUDNN_DIM_MAX];
        for (int s = 0; s < sp; ++s) {
          const int at = idx[2 + s] * c.stride[s] - c.pad[s] + r[s] * c.dil[s];
          if (at < 0 || at >= xd.dims[2 + s]) return;
          xoff += int64_t{at} * xd.strides[2 + s];
          // CUDNN_CONVOLUTION flips the filter; cross-correlation does not.
          rr[s] = c.mode == CUDNN_CONVOLUTION ? wd.dims[2 + s] - 1 - r[s] : r[s];
        }
        acc += double{x[xoff]} * w[filterOffset(wd, k, ci, rr)];
      });
    }
    out[static_cast<size_t>(i)] = acc;
  }
  return out;
}

// The transposed convolution (data gradient), row-major over dx's dims.
std::vector<double> convolveTransposed(const float* dy, const Tensor& dyd, const float* w,
                                       const Filter& wd, const Conv& c, const Tensor& dxd) {
  const int sp = c.spatial;
  const int cg = wd.dims[1], kg = wd.dims[0] / c.groups;
  std::vector<double> out(static_cast<size_t>(numel(dxd)), 0.0);
  int64_t dense[CUDNN_DIM_MAX];
  dense[dxd.nb - 1] = 1;
  for (int d = dxd.nb - 2; d >= 0; --d) dense[d] = dense[d + 1] * dxd.dims[d + 1];
  for (int64_t i = 0; i < numel(dyd); ++i) {
    int idx[CUDNN_DIM_MAX] = {};
    int64_t rest = i;
    for (int d = dyd.nb - 1; d >= 0; --d)
      idx[d] = static_cast<int>(rest % dyd.dims[d]), rest /= dyd.dims[d];
    const int n = idx[0], k = idx[1], g = k / kg;
    const double v = dy[offsetOf(dyd, i)];
    for (int ci = 0; ci < cg; ++ci) {
      forEachTap(wd, [&](const int* r) {
        int64_t off = n * dense[0] + (g * cg + ci) * dense[1];
        int rr[CUDNN_DIM_MAX];
        for (int s = 0; s < sp; ++s) {
          const int at = idx[2 + s] * c.stride[s] - c.pad[s] + r[s] * c.dil[s];
          if (at < 0 || at >= dxd.dims[2 + s]) return;
          off += at * dense[2 + s];
          rr[s] = c.mode == CUDNN_CONVOLUTION ? wd.dims[2 + s] - 1 - r[s] : r[s];
        }
        out[static_cast<size_t>(off)] += v * w[filterOffset(wd, k, ci, rr)];
      });
    }
  }
  return out;
}

double activate(const Act& a, double v) {
  switch (a.mode) {
    case CUDNN_ACTIVATION_RELU:
      return v > 0 ? v : 0;
    case CUDNN_ACTIVATION_SIGMOID:
      return 1 / (1 + std::exp(-v));
    case CUDNN_ACTIVATION_CLIPPED_RELU:
      return std::min(std::max(v, 0.0), a.coef);
    case CUDNN_ACTIVATION_SWISH:
      return v / (1 + std::exp(-a.swish_beta * v));
    case CUDNN_ACTIVATION_IDENTITY:
      return v;
    default:
      return std::nan("");
  }
}

// y = alpha * result + beta * y (y unread when beta is 0), result row-major over yd.
void blend(const std::vector<double>& result, float alpha, float beta, const Tensor& yd, float* y) {
  for (int64_t i = 0; i < numel(yd); ++i) {
    float& out = y[offsetOf(yd, i)];
    const double prior = beta != 0 ? beta * double{out} : 0.0;
    out = static_cast<float>(alpha * result[static_cast<size_t>(i)] + prior);
  }
}

// The fake heuristics: unusable candidates first, then GEMM (2) with a workspace, then implicit
// GEMM (0) without one.
const cudnnConvolutionFwdAlgoPerf_t kForwardPerf[] = {
    {CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED,
     CUDNN_STATUS_NOT_SUPPORTED,
     -1,
     0,
     CUDNN_DETERMINISTIC,
     CUDNN_FMA_MATH,
     {}},
    {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
     CUDNN_STATUS_SUCCESS,
     0.1f,
     0,
     CUDNN_DETERMINISTIC,
     CUDNN_TENSOR_OP_MATH,
     {}},
    {CUDNN_CONVOLUTION_FWD_ALGO_FFT,
     CUDNN_STATUS_SUCCESS,
     0.2f,
     size_t{1} << 40,
     CUDNN_DETERMINISTIC,
     CUDNN_FMA_MATH,
     {}},
    {CUDNN_CONVOLUTION_FWD_ALGO_GEMM,
     CUDNN_STATUS_SUCCESS,
     0.3f,
     4096,
     CUDNN_DETERMINISTIC,
     CUDNN_FMA_MATH,
     {}},
    {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
     CUDNN_STATUS_SUCCESS,
     0.4f,
     0,
     CUDNN_DETERMINISTIC,
     CUDNN_FMA_MATH,
     {}},
};
const cudnnConvolutionBwdDataAlgoPerf_t kBackwardDataPerf[] = {
    {CUDNN_CONVOLUTION_BWD_DATA_ALGO_0,
     CUDNN_STATUS_NOT_SUPPORTED,
     -1,
     0,
     CUDNN_DETERMINISTIC,
     CUDNN_FMA_MATH,
     {}},
    {CUDNN_CONVOLUTION_BWD_DATA_ALGO_1,
     CUDNN_STATUS_SUCCESS,
     0.1f,
     2048,
     CUDNN_DETERMINISTIC,
     CUDNN_FMA_MATH,
     {}},
};
size_t forwardWorkspace(int algo) { return algo == CUDNN_CONVOLUTION_FWD_ALGO_GEMM ? 4096 : 0; }
size_t backwardDataWorkspace(int algo) {
  return algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_1 ? 2048 : 0;
}

cudnnStatus_t checkWorkspace(void* ws, size_t bytes, size_t needed) {
  if (bytes < needed || (needed > 0 && ws == nullptr))
    return fail(CUDNN_STATUS_BAD_PARAM, "workspace of " + std::to_string(bytes) +
                                            " bytes, the algorithm needs " +
                                            std::to_string(needed));
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t checkMath(const Conv* c) {
  if (c->math != CUDNN_FMA_MATH)
    return fail(CUDNN_STATUS_BAD_PARAM,
                "math type " + std::to_string(c->math) + ": RAL's f32 must not use TF32");
  return CUDNN_STATUS_SUCCESS;
}

#define RAL_FAKE_INJECT(name)                                           \
  if (cudnnStatus_t ral_injected_ = injected(name); ral_injected_ != 0) \
  return fail(ral_injected_, std::string("injected failure of ") + name)

}  // namespace

extern "C" {

// The calls since the last clear, one line each; valid until the next call.
const char* ral_fake_cudnn_log() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_log_copy = g_log;
  return g_log_copy.c_str();
}
void ral_fake_cudnn_clear() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_log.clear();
}
// The next call of `function` returns `status`.
void ral_fake_cudnn_fail(const char* function, int status) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_fail_function = function;
  g_fail_status = static_cast<cudnnStatus_t>(status);
}
// Nonzero: the algorithm queries offer nothing usable unless x and y (dy and dx) are in NCHW
// order.
void ral_fake_cudnn_refuse_unpacked(int on) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_refuse_unpacked = on != 0;
}
// Handles and descriptors created and not destroyed.
int ral_fake_cudnn_live() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_live;
}

size_t cudnnGetVersion() {
  const char* v = std::getenv("RAL_FAKE_CUDNN_VERSION");
  return v != nullptr ? std::strtoull(v, nullptr, 10) : CUDNN_VERSION;
}

const char* cudnnGetErrorString(cudnnStatus_t status) {
  switch (status) {
    case CUDNN_STATUS_SUCCESS:
      return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_BAD_PARAM:
      return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_NOT_SUPPORTED:
      return "CUDNN_STATUS_NOT_SUPPORTED";
    case CUDNN_STATUS_EXECUTION_FAILED:
      return "CUDNN_STATUS_EXECUTION_FAILED";
    case CUDNN_STATUS_NOT_INITIALIZED:
      return "CUDNN_STATUS_NOT_INITIALIZED";
    default:
      return "CUDNN_STATUS_(fake) other";
  }
}

cudnnStatus_t cudnnCreate(cudnnHandle_t* handle) {
  logLine("cudnnCreate");
  RAL_FAKE_INJECT("cudnnCreate");
  *handle = new cudnnContext();
  adjustLive(1);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
  logLine("cudnnDestroy");
  delete handle;
  adjustLive(-1);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream) {
  RAL_FAKE_INJECT("cudnnSetStream");
  handle->stream = stream;
  return CUDNN_STATUS_SUCCESS;
}

#define RAL_FAKE_DESCRIPTOR(Kind, Struct)                   \
  cudnnStatus_t cudnnCreate##Kind##Descriptor(Struct** d) { \
    logLine("cudnnCreate" #Kind "Descriptor");              \
    RAL_FAKE_INJECT("cudnnCreate" #Kind "Descriptor");      \
    *d = new Struct();                                      \
    adjustLive(1);                                          \
    return CUDNN_STATUS_SUCCESS;                            \
  }                                                         \
  cudnnStatus_t cudnnDestroy##Kind##Descriptor(Struct* d) { \
    delete d;                                               \
    adjustLive(-1);                                         \
    return CUDNN_STATUS_SUCCESS;                            \
  }
RAL_FAKE_DESCRIPTOR(Tensor, cudnnTensorStruct)
RAL_FAKE_DESCRIPTOR(Filter, cudnnFilterStruct)
RAL_FAKE_DESCRIPTOR(Convolution, cudnnConvolutionStruct)
RAL_FAKE_DESCRIPTOR(Activation, cudnnActivationStruct)
RAL_FAKE_DESCRIPTOR(OpTensor, cudnnOpTensorStruct)
#undef RAL_FAKE_DESCRIPTOR

cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t d, cudnnDataType_t type, int nb,
                                         const int dims[], const int strides[]) {
  RAL_FAKE_INJECT("cudnnSetTensorNdDescriptor");
  if (type != CUDNN_DATA_FLOAT || nb < 3 || nb > CUDNN_DIM_MAX)
    return fail(CUDNN_STATUS_BAD_PARAM, "tensor type or rank");
  d->nb = nb;
  for (int i = 0; i < nb; ++i) {
    if (dims[i] <= 0 || strides[i] <= 0)
      return fail(CUDNN_STATUS_BAD_PARAM, "tensor " + list(dims, nb) + "/" + list(strides, nb));
    d->dims[i] = dims[i];
    d->strides[i] = strides[i];
  }
  d->set = true;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t type,
                                         cudnnTensorFormat_t format, int nb, const int dims[]) {
  RAL_FAKE_INJECT("cudnnSetFilterNdDescriptor");
  if (type != CUDNN_DATA_FLOAT || nb < 3 || nb > CUDNN_DIM_MAX ||
      (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC))
    return fail(CUDNN_STATUS_BAD_PARAM, "filter type, format or rank");
  d->nb = nb;
  d->format = format;
  for (int i = 0; i < nb; ++i) {
    if (dims[i] <= 0) return fail(CUDNN_STATUS_BAD_PARAM, "filter " + list(dims, nb));
    d->dims[i] = dims[i];
  }
  d->set = true;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t d, int n,
                                              const int pad[], const int stride[], const int dil[],
                                              cudnnConvolutionMode_t mode, cudnnDataType_t type) {
  RAL_FAKE_INJECT("cudnnSetConvolutionNdDescriptor");
  if (type != CUDNN_DATA_FLOAT || n < 1 || n > CUDNN_DIM_MAX - 2)
    return fail(CUDNN_STATUS_BAD_PARAM, "convolution type or rank");
  d->spatial = n;
  d->mode = mode;
  for (int i = 0; i < n; ++i) {
    if (pad[i] < 0 || stride[i] < 1 || dil[i] < 1)
      return fail(CUDNN_STATUS_BAD_PARAM, "convolution parameters");
    d->pad[i] = pad[i];
    d->stride[i] = stride[i];
    d->dil[i] = dil[i];
  }
  d->set = true;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int groups) {
  if (groups < 1) return fail(CUDNN_STATUS_BAD_PARAM, "group count");
  d->groups = groups;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t math) {
  d->math = math;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionNdForwardOutputDim(const cudnnConvolutionDescriptor_t c,
                                                    const cudnnTensorDescriptor_t x,
                                                    const cudnnFilterDescriptor_t w, int nb,
                                                    int out[]) {
  if (nb != x->nb) return fail(CUDNN_STATUS_BAD_PARAM, "output rank");
  return forwardDims(c, x, w, out);
}

cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t d,
                                           cudnnActivationMode_t mode, cudnnNanPropagation_t nan,
                                           double coef) {
  (void)nan;
  d->mode = mode;
  d->coef = coef;
  d->set = true;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetActivationDescriptorSwishBeta(cudnnActivationDescriptor_t d, double beta) {
  d->swish_beta = beta;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetOpTensorDescriptor(cudnnOpTensorDescriptor_t d, cudnnOpTensorOp_t op,
                                         cudnnDataType_t type, cudnnNanPropagation_t nan) {
  (void)nan;
  if (type != CUDNN_DATA_FLOAT) return fail(CUDNN_STATUS_BAD_PARAM, "op tensor type");
  d->op = op;
  d->set = true;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t, const cudnnTensorDescriptor_t x,
                                                     const cudnnFilterDescriptor_t w,
                                                     const cudnnConvolutionDescriptor_t c,
                                                     const cudnnTensorDescriptor_t y, int requested,
                                                     int* returned,
                                                     cudnnConvolutionFwdAlgoPerf_t* perf) {
  logLine("cudnnGetConvolutionForwardAlgorithm_v7 x=" + str(*x) + " w=" + str(*w) +
          " conv=" + str(*c) + " y=" + str(*y));
  RAL_FAKE_INJECT("cudnnGetConvolutionForwardAlgorithm_v7");
  const int n = std::min<int>(requested, sizeof kForwardPerf / sizeof kForwardPerf[0]);
  std::copy(kForwardPerf, kForwardPerf + n, perf);
  if (refused(*x, *y))
    for (int i = 0; i < n; ++i) perf[i].status = CUDNN_STATUS_NOT_SUPPORTED;
  *returned = n;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t, const cudnnTensorDescriptor_t,
                                                      const cudnnFilterDescriptor_t,
                                                      const cudnnConvolutionDescriptor_t,
                                                      const cudnnTensorDescriptor_t,
                                                      cudnnConvolutionFwdAlgo_t algo,
                                                      size_t* bytes) {
  *bytes = forwardWorkspace(algo);
  logLine("cudnnGetConvolutionForwardWorkspaceSize algo=" + std::to_string(algo) + " -> " +
          std::to_string(*bytes));
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t, const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t dx, const int requested,
    int* returned, cudnnConvolutionBwdDataAlgoPerf_t* perf) {
  logLine("cudnnGetConvolutionBackwardDataAlgorithm_v7 w=" + str(*w) + " dy=" + str(*dy) +
          " conv=" + str(*c) + " dx=" + str(*dx));
  const int n = std::min<int>(requested, sizeof kBackwardDataPerf / sizeof kBackwardDataPerf[0]);
  std::copy(kBackwardDataPerf, kBackwardDataPerf + n, perf);
  if (refused(*dy, *dx))
    for (int i = 0; i < n; ++i) perf[i].status = CUDNN_STATUS_NOT_SUPPORTED;
  *returned = n;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(
    cudnnHandle_t, const cudnnFilterDescriptor_t, const cudnnTensorDescriptor_t,
    const cudnnConvolutionDescriptor_t, const cudnnTensorDescriptor_t,
    cudnnConvolutionBwdDataAlgo_t algo, size_t* bytes) {
  *bytes = backwardDataWorkspace(algo);
  logLine("cudnnGetConvolutionBackwardDataWorkspaceSize algo=" + std::to_string(algo) + " -> " +
          std::to_string(*bytes));
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void* alpha,
                                      const cudnnTensorDescriptor_t xd, const void* x,
                                      const cudnnFilterDescriptor_t wd, const void* w,
                                      const cudnnConvolutionDescriptor_t cd,
                                      cudnnConvolutionFwdAlgo_t algo, void* ws, size_t ws_bytes,
                                      const void* beta, const cudnnTensorDescriptor_t yd, void* y) {
  logLine("cudnnConvolutionForward algo=" + std::to_string(algo) +
          " ws=" + std::to_string(ws_bytes) + " alpha=" + num(alpha) + " beta=" + num(beta) +
          " x=" + str(*xd) + " w=" + str(*wd) + " conv=" + str(*cd) + " y=" + str(*yd));
  RAL_FAKE_INJECT("cudnnConvolutionForward");
  int dims[CUDNN_DIM_MAX];
  if (cudnnStatus_t s = forwardDims(cd, xd, wd, dims); s != CUDNN_STATUS_SUCCESS) return s;
  if (!validTensor(yd) || !std::equal(dims, dims + yd->nb, yd->dims))
    return fail(CUDNN_STATUS_BAD_PARAM,
                "y " + str(*yd) + " is not the output " + list(dims, xd->nb));
  if (cudnnStatus_t s = checkMath(cd); s != CUDNN_STATUS_SUCCESS) return s;
  if (cudnnStatus_t s = checkWorkspace(ws, ws_bytes, forwardWorkspace(algo));
      s != CUDNN_STATUS_SUCCESS)
    return s;
  if (x == nullptr || w == nullptr || y == nullptr)
    return fail(CUDNN_STATUS_BAD_PARAM, "null data");
  const float a = *static_cast<const float*>(alpha), b = *static_cast<const float*>(beta);
  return enqueue(h, [a, b, xs = *xd, ws_ = *wd, cs = *cd, ys = *yd, x, w, y, ws, ws_bytes] {
    const auto r =
        convolve(static_cast<const float*>(x), xs, static_cast<const float*>(w), ws_, cs, ys);
    // The workspace is scratch: overwrite it, so a caller relying on it shows.
    if (ws != nullptr) std::memset(ws, 0xff, ws_bytes);
    blend(r, a, b, ys, static_cast<float*>(y));
  });
}

cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t h, const void* alpha1, const cudnnTensorDescriptor_t xd, const void* x,
    const cudnnFilterDescriptor_t wd, const void* w, const cudnnConvolutionDescriptor_t cd,
    cudnnConvolutionFwdAlgo_t algo, void* ws, size_t ws_bytes, const void* alpha2,
    const cudnnTensorDescriptor_t zd, const void* z, const cudnnTensorDescriptor_t bd,
    const void* bias, const cudnnActivationDescriptor_t ad, const cudnnTensorDescriptor_t yd,
    void* y) {
  logLine("cudnnConvolutionBiasActivationForward algo=" + std::to_string(algo) +
          " ws=" + std::to_string(ws_bytes) + " alpha1=" + num(alpha1) + " alpha2=" + num(alpha2) +
          (z == y ? " z=y" : " z=other") + " x=" + str(*xd) + " w=" + str(*wd) +
          " conv=" + str(*cd) + " bias=" + str(*bd) + " act=" + str(*ad) + " y=" + str(*yd));
  RAL_FAKE_INJECT("cudnnConvolutionBiasActivationForward");
  int dims[CUDNN_DIM_MAX];
  if (cudnnStatus_t s = forwardDims(cd, xd, wd, dims); s != CUDNN_STATUS_SUCCESS) return s;
  if (!validTensor(yd) || !std::equal(dims, dims + yd->nb, yd->dims) || !validTensor(zd) ||
      !sameDims(*zd, *yd))
    return fail(CUDNN_STATUS_BAD_PARAM, "y or z is not the output " + list(dims, xd->nb));
  if (!validTensor(bd) || bd->nb != yd->nb || bd->dims[1] != yd->dims[1] ||
      numel(*bd) != yd->dims[1])
    return fail(CUDNN_STATUS_BAD_PARAM, "bias " + str(*bd) + " is not [1, K, 1, ...]");
  if (!(ad->mode == CUDNN_ACTIVATION_RELU ||
        (ad->mode == CUDNN_ACTIVATION_IDENTITY &&
         algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)))
    return fail(CUDNN_STATUS_NOT_SUPPORTED,
                "activation " + str(*ad) + " with algo " + std::to_string(algo));
  const float a1 = *static_cast<const float*>(alpha1), a2 = *static_cast<const float*>(alpha2);
  if (z == y && a2 != 0)
    return fail(CUDNN_STATUS_NOT_SUPPORTED, "z aliasing y with alpha2 != 0 (not relied on)");
  if (cudnnStatus_t s = checkMath(cd); s != CUDNN_STATUS_SUCCESS) return s;
  if (cudnnStatus_t s = checkWorkspace(ws, ws_bytes, forwardWorkspace(algo));
      s != CUDNN_STATUS_SUCCESS)
    return s;
  return enqueue(h, [a1, a2, xs = *xd, ws_ = *wd, cs = *cd, zs = *zd, bs = *bd, as = *ad, ys = *yd,
                     x, w, z, bias, y] {
    const auto r =
        convolve(static_cast<const float*>(x), xs, static_cast<const float*>(w), ws_, cs, ys);
    const auto* zp = static_cast<const float*>(z);
    const auto* bp = static_cast<const float*>(bias);
    auto* yp = static_cast<float*>(y);
    for (int64_t i = 0; i < numel(ys); ++i) {
      double v = a1 * r[static_cast<size_t>(i)] + bp[broadcastOffset(bs, ys, i)];
      if (a2 != 0) v += a2 * double{zp[offsetOf(zs, i)]};
      yp[offsetOf(ys, i)] = static_cast<float>(activate(as, v));
    }
  });
}

cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t h, const void* alpha,
                                           const cudnnFilterDescriptor_t wd, const void* w,
                                           const cudnnTensorDescriptor_t dyd, const void* dy,
                                           const cudnnConvolutionDescriptor_t cd,
                                           cudnnConvolutionBwdDataAlgo_t algo, void* ws,
                                           size_t ws_bytes, const void* beta,
                                           const cudnnTensorDescriptor_t dxd, void* dx) {
  logLine("cudnnConvolutionBackwardData algo=" + std::to_string(algo) +
          " ws=" + std::to_string(ws_bytes) + " alpha=" + num(alpha) + " beta=" + num(beta) +
          " w=" + str(*wd) + " dy=" + str(*dyd) + " conv=" + str(*cd) + " dx=" + str(*dxd));
  RAL_FAKE_INJECT("cudnnConvolutionBackwardData");
  int dims[CUDNN_DIM_MAX];
  if (cudnnStatus_t s = forwardDims(cd, dxd, wd, dims); s != CUDNN_STATUS_SUCCESS) return s;
  if (!validTensor(dyd) || !std::equal(dims, dims + dyd->nb, dyd->dims))
    return fail(CUDNN_STATUS_BAD_PARAM,
                "dy " + str(*dyd) + " is not the forward output " + list(dims, dxd->nb) + " of dx");
  if (cudnnStatus_t s = checkMath(cd); s != CUDNN_STATUS_SUCCESS) return s;
  if (cudnnStatus_t s = checkWorkspace(ws, ws_bytes, backwardDataWorkspace(algo));
      s != CUDNN_STATUS_SUCCESS)
    return s;
  const float a = *static_cast<const float*>(alpha), b = *static_cast<const float*>(beta);
  return enqueue(h, [a, b, ws_ = *wd, dys = *dyd, cs = *cd, dxs = *dxd, w, dy, dx] {
    const auto r = convolveTransposed(static_cast<const float*>(dy), dys,
                                      static_cast<const float*>(w), ws_, cs, dxs);
    blend(r, a, b, dxs, static_cast<float*>(dx));
  });
}

cudnnStatus_t cudnnAddTensor(cudnnHandle_t h, const void* alpha, const cudnnTensorDescriptor_t ad,
                             const void* a, const void* beta, const cudnnTensorDescriptor_t cd,
                             void* c) {
  logLine("cudnnAddTensor alpha=" + num(alpha) + " beta=" + num(beta) + " a=" + str(*ad) +
          " c=" + str(*cd));
  RAL_FAKE_INJECT("cudnnAddTensor");
  if (!validTensor(ad) || !validTensor(cd) || ad->nb != cd->nb || cd->nb > 5)
    return fail(CUDNN_STATUS_BAD_PARAM, "add tensor ranks");
  for (int d = 0; d < cd->nb; ++d)
    if (ad->dims[d] != 1 && ad->dims[d] != cd->dims[d])
      return fail(CUDNN_STATUS_BAD_PARAM, "A " + str(*ad) + " does not broadcast to C " + str(*cd));
  const float al = *static_cast<const float*>(alpha), be = *static_cast<const float*>(beta);
  return enqueue(h, [al, be, as = *ad, cs = *cd, a, c] {
    auto* cp = static_cast<float*>(c);
    for (int64_t i = 0; i < numel(cs); ++i) {
      float& out = cp[offsetOf(cs, i)];
      out =
          static_cast<float>(al * double{static_cast<const float*>(a)[broadcastOffset(as, cs, i)]} +
                             (be != 0 ? be * double{out} : 0.0));
    }
  });
}

cudnnStatus_t cudnnActivationForward(cudnnHandle_t h, cudnnActivationDescriptor_t ad,
                                     const void* alpha, const cudnnTensorDescriptor_t xd,
                                     const void* x, const void* beta,
                                     const cudnnTensorDescriptor_t yd, void* y) {
  logLine("cudnnActivationForward act=" + str(*ad) + " alpha=" + num(alpha) + " beta=" + num(beta) +
          (x == y ? " in_place" : "") + " y=" + str(*yd));
  RAL_FAKE_INJECT("cudnnActivationForward");
  if (!validTensor(xd) || !validTensor(yd) || !sameDims(*xd, *yd))
    return fail(CUDNN_STATUS_BAD_PARAM, "activation tensors");
  if (ad->mode == CUDNN_ACTIVATION_IDENTITY)
    return fail(CUDNN_STATUS_BAD_PARAM, "identity is for the fused convolution only");
  const float al = *static_cast<const float*>(alpha), be = *static_cast<const float*>(beta);
  return enqueue(h, [al, be, as = *ad, xs = *xd, ys = *yd, x, y] {
    std::vector<double> r(static_cast<size_t>(numel(ys)));
    for (int64_t i = 0; i < numel(ys); ++i)
      r[static_cast<size_t>(i)] = activate(as, static_cast<const float*>(x)[offsetOf(xs, i)]);
    blend(r, al, be, ys, static_cast<float*>(y));
  });
}

cudnnStatus_t cudnnOpTensor(cudnnHandle_t h, const cudnnOpTensorDescriptor_t od, const void* alpha1,
                            const cudnnTensorDescriptor_t ad, const void* a, const void* alpha2,
                            const cudnnTensorDescriptor_t bd, const void* b, const void* beta,
                            const cudnnTensorDescriptor_t cd, void* c) {
  const char* op = od->op == CUDNN_OP_TENSOR_MAX   ? "max"
                   : od->op == CUDNN_OP_TENSOR_MIN ? "min"
                   : od->op == CUDNN_OP_TENSOR_ADD ? "add"
                                                   : "other";
  logLine(std::string("cudnnOpTensor op=") + op + " alpha1=" + num(alpha1) +
          " alpha2=" + num(alpha2) + " beta=" + num(beta) + " a=" + str(*ad) + " b=" + str(*bd) +
          (a == c ? " in_place" : ""));
  RAL_FAKE_INJECT("cudnnOpTensor");
  if (!validTensor(ad) || !validTensor(bd) || !validTensor(cd) || !sameDims(*ad, *cd) ||
      bd->nb != cd->nb || cd->nb > 5)
    return fail(CUDNN_STATUS_BAD_PARAM, "op tensor shapes");
  for (int d = 0; d < cd->nb; ++d)
    if (bd->dims[d] != 1 && bd->dims[d] != cd->dims[d])
      return fail(CUDNN_STATUS_BAD_PARAM, "B does not broadcast");
  const float a1 = *static_cast<const float*>(alpha1), a2 = *static_cast<const float*>(alpha2),
              be = *static_cast<const float*>(beta);
  const cudnnOpTensorOp_t kind = od->op;
  return enqueue(h, [a1, a2, be, kind, as = *ad, bs = *bd, cs = *cd, a, b, c] {
    std::vector<double> r(static_cast<size_t>(numel(cs)));
    for (int64_t i = 0; i < numel(cs); ++i) {
      const double va = a1 * double{static_cast<const float*>(a)[offsetOf(as, i)]};
      const double vb = a2 * double{static_cast<const float*>(b)[broadcastOffset(bs, cs, i)]};
      r[static_cast<size_t>(i)] = kind == CUDNN_OP_TENSOR_MAX   ? std::fmax(va, vb)
                                  : kind == CUDNN_OP_TENSOR_MIN ? std::fmin(va, vb)
                                  : kind == CUDNN_OP_TENSOR_ADD ? va + vb
                                                                : std::nan("");
    }
    blend(r, 1, be, cs, static_cast<float*>(c));
  });
}

cudnnStatus_t cudnnSetTensor(cudnnHandle_t h, const cudnnTensorDescriptor_t yd, void* y,
                             const void* value) {
  logLine("cudnnSetTensor value=" + num(value) + " y=" + str(*yd));
  RAL_FAKE_INJECT("cudnnSetTensor");
  if (!validTensor(yd) || y == nullptr) return fail(CUDNN_STATUS_BAD_PARAM, "set tensor");
  const float v = *static_cast<const float*>(value);
  return enqueue(h, [v, ys = *yd, y] {
    for (int64_t i = 0; i < numel(ys); ++i) static_cast<float*>(y)[offsetOf(ys, i)] = v;
  });
}

cudnnStatus_t cudnnTransformTensor(cudnnHandle_t h, const void* alpha,
                                   const cudnnTensorDescriptor_t xd, const void* x,
                                   const void* beta, const cudnnTensorDescriptor_t yd, void* y) {
  logLine("cudnnTransformTensor alpha=" + num(alpha) + " beta=" + num(beta) + " x=" + str(*xd) +
          " y=" + str(*yd));
  RAL_FAKE_INJECT("cudnnTransformTensor");
  if (!validTensor(xd) || !validTensor(yd) || !sameDims(*xd, *yd))
    return fail(CUDNN_STATUS_BAD_PARAM, "transform shapes");
  const float al = *static_cast<const float*>(alpha), be = *static_cast<const float*>(beta);
  return enqueue(h, [al, be, xs = *xd, ys = *yd, x, y] {
    std::vector<double> r(static_cast<size_t>(numel(ys)));
    for (int64_t i = 0; i < numel(ys); ++i)
      r[static_cast<size_t>(i)] = static_cast<const float*>(x)[offsetOf(xs, i)];
    blend(r, al, be, ys, static_cast<float*>(y));
  });
}

}  // extern "C"
