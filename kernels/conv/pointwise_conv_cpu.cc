// Which pointwise convolutions the kernel takes, the packing of their filters, and the split of
// the work over the CPU driver's threads (pointwise_conv_cpu.h has the contract).
#include "kernels/conv/pointwise_conv_cpu.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ral/driver_services.h"

namespace ral::kernels::cpu {
namespace {

bool hostHasAvx512() {
#if defined(RAL_HAVE_POINTWISE_AVX512)
  __builtin_cpu_init();
  // __builtin_cpu_supports checks that the OS saves the registers (XGETBV) too.
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

// The pixels of x and y: the batch and spatial dims of the channels-first views, outermost
// first, size-1 dims left out. The innermost ones that are evenly strided in both x and y
// collapse into the rows of one GEMM (`pixels` rows, strides x_row / y_row); the others stay
// outer dims, each task finding its rows' start from their strides.
struct PixelDims {
  static constexpr int kMax = 4;  // batch + 3 spatial dims
  int outer = 0;                  // outer dims: size, x_stride, y_stride below
  int64_t size[kMax] = {}, x_stride[kMax] = {}, y_stride[kMax] = {};
  int64_t outer_count = 1;
  int64_t pixels = 1, x_row = 0, y_row = 0;
};

template <int R>
PixelDims pixelDims(const MemRef<float, R>& x, const MemRef<float, R>& y) {
  PixelDims p;
  int64_t size[PixelDims::kMax], xs[PixelDims::kMax], ys[PixelDims::kMax];
  int n = 0;
  for (int d = 0; d < R; ++d) {
    if (d == 1 || x.sizes[d] == 1) continue;
    size[n] = x.sizes[d];
    xs[n] = x.strides[d];
    ys[n++] = y.strides[d];
  }
  int first = n;  // the first collapsed dim
  int64_t x_next = 0, y_next = 0;
  for (int i = n - 1; i >= 0; --i) {
    if (i == n - 1) {
      p.x_row = xs[i];
      p.y_row = ys[i];
    } else if (xs[i] != x_next || ys[i] != y_next) {
      break;
    }
    p.pixels *= size[i];
    x_next = xs[i] * size[i];
    y_next = ys[i] * size[i];
    first = i;
  }
  for (int i = 0; i < first; ++i) {
    p.size[p.outer] = size[i];
    p.x_stride[p.outer] = xs[i];
    p.y_stride[p.outer++] = ys[i];
    p.outer_count *= size[i];
  }
  return p;
}

// No two elements of y share memory: its strides, ordered, each step past the span of the
// dims inside it (size-1 dims aside).
template <int R>
bool nonOverlapping(const MemRef<float, R>& y) {
  int64_t stride[R], size[R];
  int n = 0;
  for (int d = 0; d < R; ++d) {
    if (y.sizes[d] == 1) continue;
    if (y.strides[d] <= 0) return false;
    int i = n++;
    for (; i > 0 && stride[i - 1] > y.strides[d]; --i) {
      stride[i] = stride[i - 1];
      size[i] = size[i - 1];
    }
    stride[i] = y.strides[d];
    size[i] = y.sizes[d];
  }
  for (int i = 1; i < n; ++i)
    if (stride[i] < stride[i - 1] * size[i - 1]) return false;
  return true;
}

// The packed filters of constant weights (conv.h's constant_filter flag), per Context, by the
// weights' address, shape and strides. Bounded like the oneDNN entries: full, it is emptied;
// filters in use stay alive through their shared_ptr.
class PackedFilters {
 public:
  static constexpr size_t kMaxEntries = 4096;
  struct Key {
    const void* data;
    int64_t f, c, f_stride, c_stride;
    bool operator==(const Key& o) const {
      return data == o.data && f == o.f && c == o.c && f_stride == o.f_stride &&
             c_stride == o.c_stride;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t h = reinterpret_cast<uintptr_t>(k.data);
      for (int64_t v : {k.f, k.c, k.f_stride, k.c_stride})
        h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
      return static_cast<size_t>(h);
    }
  };
  using Packed = std::shared_ptr<const std::vector<float>>;

  template <typename Pack>
  Packed findOrPack(const Key& key, Pack pack) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it != entries_.end()) return it->second;
    if (entries_.size() >= kMaxEntries) entries_.clear();
    auto packed = std::make_shared<std::vector<float>>(pointwise::packedFloats(key.f, key.c));
    pack(packed->data());
    return entries_.emplace(key, std::move(packed)).first->second;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<Key, Packed, KeyHash> entries_;
};

// w [F, C, 1...] (any strides) into the panels' layout, zeros past F.
void pack(const float* w, int64_t f_stride, int64_t c_stride, int64_t f, int64_t c,
          const pointwise::Panels& panels, float* out) {
  for (int q = 0; q < panels.count; ++q) {
    const int64_t width = pointwise::kVector * panels.vectors[q], f0 = panels.first[q];
    float* o = out + f0 * c;
    for (int64_t k = 0; k < c; ++k)
      for (int64_t j = 0; j < width; ++j)
        o[k * width + j] = f0 + j < f ? w[(f0 + j) * f_stride + k * c_stride] : 0.0f;
  }
}

// The work of one call: tasks are (outer index, pixel block, panel), the panel innermost, so
// that a thread's consecutive tasks reuse the same pixels.
struct Work {
  pointwise::Problem problem;
  const float* x = nullptr;
  float* y = nullptr;
  PixelDims dims;
  int64_t blocks = 0;  // per outer index
  int panels = 0;
};

Status runTasks(void* state, uint64_t begin, uint64_t end) {
  const Work& work = *static_cast<const Work*>(state);
  const PixelDims& dims = work.dims;
  pointwise::Problem p = work.problem;
  for (uint64_t t = begin; t < end; ++t) {
    const int panel = static_cast<int>(t % work.panels);
    int64_t rest = static_cast<int64_t>(t / work.panels);
    const int64_t block = rest % work.blocks;
    rest /= work.blocks;
    int64_t x_offset = 0, y_offset = 0;
    for (int i = dims.outer - 1; i >= 0; --i) {
      const int64_t idx = rest % dims.size[i];
      rest /= dims.size[i];
      x_offset += idx * dims.x_stride[i];
      y_offset += idx * dims.y_stride[i];
    }
    p.x = work.x + x_offset;
    p.y = work.y + y_offset;
    pointwise::runAvx512(p, block, block + 1, panel, panel + 1);
  }
  return Status();
}

}  // namespace

bool pointwiseConvAvailable() {
  static const bool available = [] {
    const char* v = std::getenv("RAL_CONV_ALGORITHM");
    return hostHasAvx512() && !(v != nullptr && std::string(v) == "onednn");
  }();
  return available;
}

bool pointwise::planPanels(int64_t f, Panels* panels) {
  int64_t vectors = (f + kVector - 1) / kVector, first = 0;
  panels->count = 0;
  while (vectors > 0) {
    if (panels->count == Panels::kMax) return false;
    const int nv = vectors <= kMaxPanelVectors ? static_cast<int>(vectors) : 4;
    panels->vectors[panels->count] = nv;
    panels->first[panels->count++] = first;
    first += kVector * nv;
    vectors -= nv;
  }
  return true;
}

template <int R>
Status tryPointwiseConv(const KernelEnv& env, const ConvConfig& c, const MemRef<float, R>& x,
                        const MemRef<float, R>& w, const MemRef<float, 1>& bias,
                        const MemRef<float, R>& y, bool alias, bool* handled) {
  *handled = false;
  if (!pointwiseConvAvailable() || alias || c.transposed() || c.groups != 1 ||
      c.activation == ConvActivation::kGeluErf || c.activation == ConvActivation::kGeluTanh)
    return Status();
  for (int d = 0; d < c.spatial; ++d)
    if (w.sizes[2 + d] != 1 || c.strides[d] != 1 || c.pad_begin[d] != 0 || c.pad_end[d] != 0)
      return Status();
  const int64_t in_channels = x.sizes[1], out_channels = y.sizes[1];
  if (x.numel() == 0 || y.numel() == 0) return Status();  // Impl::conv's cases
  // Channels contiguous in x and y, y's elements apart.
  if ((in_channels > 1 && x.strides[1] != 1) || (out_channels > 1 && y.strides[1] != 1) ||
      !nonOverlapping(y))
    return Status();
  const PixelDims dims = pixelDims(x, y);
  pointwise::Panels panels;
  if (!pointwise::planPanels(out_channels, &panels)) return Status();

  // The filter, packed: once per Context for constant weights, else into scratch.
  const int64_t f_stride = w.strides[0], c_stride = w.strides[1];
  PackedFilters::Packed kept;
  Scratch packed_scratch, bias_scratch;
  const float* packed = nullptr;
  if (c.constantFilter()) {
    RAL_ASSIGN_OR_RETURN(PackedFilters * cache,
                         env.context->getOrCreate<PackedFilters>(uint64_t{0}, [] {
                           return std::make_unique<PackedFilters>();
                         }));
    kept = cache->findOrPack({w.data(), out_channels, in_channels, f_stride, c_stride},
                             [&](float* out) {
                               pack(w.data(), f_stride, c_stride, out_channels, in_channels,
                                    panels, out);
                             });
    packed = kept->data();
  } else {
    RAL_RETURN_IF_ERROR(packed_scratch.allocate(
        env.driver, pointwise::packedFloats(out_channels, in_channels) * sizeof(float)));
    pack(w.data(), f_stride, c_stride, out_channels, in_channels, panels,
         packed_scratch.as<float>());
    packed = packed_scratch.as<float>();
  }
  const float* dense_bias = nullptr;
  if (bias.sizes[0] > 0) {
    dense_bias = bias.data();
    if (bias.sizes[0] > 1 && bias.strides[0] != 1) {
      RAL_RETURN_IF_ERROR(bias_scratch.allocate(env.driver, out_channels * sizeof(float)));
      float* b = bias_scratch.as<float>();
      for (int64_t i = 0; i < out_channels; ++i) b[i] = bias.data()[i * bias.strides[0]];
      dense_bias = b;
    }
  }

  Work work;
  pointwise::Problem& p = work.problem;
  p.pixels = dims.pixels;
  p.in_channels = in_channels;
  p.out_channels = out_channels;
  p.x_row = dims.x_row;
  p.y_row = dims.y_row;
  p.packed = packed;
  p.bias = dense_bias;
  p.panels = &panels;
  p.activation = static_cast<int>(c.activation);
  p.lo = c.alpha;
  p.hi = c.beta;
  p.residual = c.residual();
  work.x = x.data();
  work.y = y.data();
  work.dims = dims;
  work.blocks = (dims.pixels + pointwise::kBlock - 1) / pointwise::kBlock;
  work.panels = panels.count;
  const uint64_t tasks = static_cast<uint64_t>(dims.outer_count) * work.blocks * work.panels;
  auto* threads = env.driver->service<HostThreadsService>();
  if (threads != nullptr && threads->threadCount() > 1 && tasks > 1) {
    RAL_RETURN_IF_ERROR(threads->parallelFor(tasks, 0, runTasks, &work));
  } else {
    RAL_RETURN_IF_ERROR(runTasks(&work, 0, tasks));
  }
  *handled = true;
  return Status();
}

#define RAL_INSTANTIATE_POINTWISE(R)                                                            \
  template Status tryPointwiseConv<R>(const KernelEnv&, const ConvConfig&, const MemRef<float, R>&, \
                                      const MemRef<float, R>&, const MemRef<float, 1>&,         \
                                      const MemRef<float, R>&, bool, bool*);
RAL_KERNEL_CONV_RANKS(RAL_INSTANTIATE_POINTWISE)
#undef RAL_INSTANTIATE_POINTWISE

}  // namespace ral::kernels::cpu
