// Which convolutions the tile kernels take, the packing of their filters, and the split of
// the work over the CPU driver's threads (conv_tiles_cpu.h has the contract).
#include "kernels/conv/conv_tiles_cpu.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/common/parallel.h"

namespace ral::kernels::cpu {
namespace {

bool hostHasAvx512() {
#if defined(RAL_HAVE_CONV_TILES_AVX512)
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
  // A filter [F, C, KH, KW] read as [F, k] with k = (kh * KW + kw) * C + c (KH = KW = 1 for a
  // pointwise one), by address, shape and strides.
  struct Key {
    const void* data;
    int64_t f, c, kh, kw, f_stride, c_stride, kh_stride, kw_stride;
    int64_t k() const { return c * kh * kw; }
    bool operator==(const Key& o) const {
      return data == o.data && f == o.f && c == o.c && kh == o.kh && kw == o.kw &&
             f_stride == o.f_stride && c_stride == o.c_stride && kh_stride == o.kh_stride &&
             kw_stride == o.kw_stride;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t h = reinterpret_cast<uintptr_t>(k.data);
      for (int64_t v : {k.f, k.c, k.kh, k.kw, k.f_stride, k.c_stride, k.kh_stride, k.kw_stride})
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
    auto packed = std::make_shared<std::vector<float>>(tiles::packedFloats(key.f, key.k()));
    pack(packed->data());
    return entries_.emplace(key, std::move(packed)).first->second;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<Key, Packed, KeyHash> entries_;
};

// The filter `key` describes into the panels' layout ([k][panel width] per panel), zeros
// past F.
void pack(const PackedFilters::Key& key, const tiles::Panels& panels, float* out) {
  const float* w = static_cast<const float*>(key.data);
  const int64_t k_count = key.k();
  for (int q = 0; q < panels.count; ++q) {
    const int64_t width = tiles::kVector * panels.vectors[q], f0 = panels.first[q];
    float* o = out + f0 * k_count;
    int64_t k = 0;
    for (int64_t kh = 0; kh < key.kh; ++kh)
      for (int64_t kw = 0; kw < key.kw; ++kw)
        for (int64_t c = 0; c < key.c; ++c, ++k) {
          const float* tap = w + kh * key.kh_stride + kw * key.kw_stride + c * key.c_stride;
          for (int64_t j = 0; j < width; ++j)
            o[k * width + j] = f0 + j < key.f ? tap[(f0 + j) * key.f_stride] : 0.0f;
        }
  }
}

// The packed filter of `key`: once per Context for constant weights, else packed into
// `scratch` for this call.
StatusOr<const float*> packedFilter(const KernelEnv& env, const ConvConfig& c,
                                    const PackedFilters::Key& key, const tiles::Panels& panels,
                                    PackedFilters::Packed* kept, Scratch* scratch) {
  if (c.constantFilter()) {
    RAL_ASSIGN_OR_RETURN(PackedFilters * cache,
                         env.context->getOrCreate<PackedFilters>(uint64_t{0}, [] {
                           return std::make_unique<PackedFilters>();
                         }));
    *kept = cache->findOrPack(key, [&](float* out) { pack(key, panels, out); });
    return (*kept)->data();
  }
  RAL_RETURN_IF_ERROR(
      scratch->allocate(env.driver, tiles::packedFloats(key.f, key.k()) * sizeof(float)));
  pack(key, panels, scratch->as<float>());
  return scratch->as<float>();
}

// The bias as dense floats (copied into `scratch` when strided); null without one.
StatusOr<const float*> denseBias(const KernelEnv& env, const MemRef<float, 1>& bias,
                                 Scratch* scratch) {
  if (bias.sizes[0] == 0) return static_cast<const float*>(nullptr);
  if (bias.sizes[0] == 1 || bias.strides[0] == 1) return static_cast<const float*>(bias.data());
  RAL_RETURN_IF_ERROR(scratch->allocate(env.driver, bias.sizes[0] * sizeof(float)));
  float* b = scratch->as<float>();
  for (int64_t i = 0; i < bias.sizes[0]; ++i) b[i] = bias.data()[i * bias.strides[0]];
  return static_cast<const float*>(b);
}

// The tiles' problem for everything a call shares.
tiles::Problem baseProblem(const ConvConfig& c, int64_t k, int64_t f, const float* packed,
                           const float* bias, const tiles::Panels& panels) {
  tiles::Problem p;
  p.in_channels = k;
  p.out_channels = f;
  p.packed = packed;
  p.bias = bias;
  p.panels = &panels;
  p.activation = static_cast<int>(c.activation);
  p.lo = c.alpha;
  p.hi = c.beta;
  p.residual = c.residual();
  return p;
}

// What both kernels need: the tiles on this host, one group, a forward convolution, an
// activation the tiles compute, y apart from the inputs.
bool tilesTake(const ConvConfig& c, bool alias) {
  return convTilesAvailable() && !alias && !c.transposed() && c.groups == 1 &&
         c.activation != ConvActivation::kGeluErf && c.activation != ConvActivation::kGeluTanh;
}

// Runs fn over [0, tasks) on the CPU driver's threads (kernels/common/parallel.h).
Status runParallel(const KernelEnv& env, uint64_t tasks, Status (*fn)(void*, uint64_t, uint64_t),
                   void* state) {
  return parallelFor(env.driver, static_cast<int64_t>(tasks), 1, [&](int64_t begin, int64_t end) {
    return fn(state, static_cast<uint64_t>(begin), static_cast<uint64_t>(end));
  });
}

// The work of one call: tasks are (outer index, pixel block, panel), the panel innermost, so
// that a thread's consecutive tasks reuse the same pixels.
struct Work {
  tiles::Problem problem;
  const float* x = nullptr;
  float* y = nullptr;
  PixelDims dims;
  int64_t blocks = 0;  // per outer index
  int panels = 0;
};

Status runTasks(void* state, uint64_t begin, uint64_t end) {
  const Work& work = *static_cast<const Work*>(state);
  const PixelDims& dims = work.dims;
  tiles::Problem p = work.problem;
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
    tiles::runAvx512(p, block, block + 1, panel, panel + 1);
  }
  return Status();
}

}  // namespace

bool convTilesAvailable() {
  static const bool available = [] {
    const char* v = std::getenv("RAL_CONV_ALGORITHM");
    return hostHasAvx512() && !(v != nullptr && std::string(v) == "onednn");
  }();
  return available;
}

bool tiles::planPanels(int64_t f, Panels* panels) {
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
  if (!tilesTake(c, alias)) return Status();
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
  tiles::Panels panels;
  if (!tiles::planPanels(out_channels, &panels)) return Status();

  const PackedFilters::Key key{w.data(), out_channels, in_channels, 1, 1, w.strides[0],
                               w.strides[1], 0, 0};
  PackedFilters::Packed kept;
  Scratch packed_scratch, bias_scratch;
  RAL_ASSIGN_OR_RETURN(const float* packed,
                       packedFilter(env, c, key, panels, &kept, &packed_scratch));
  RAL_ASSIGN_OR_RETURN(const float* dense_bias, denseBias(env, bias, &bias_scratch));

  Work work;
  work.problem = baseProblem(c, in_channels, out_channels, packed, dense_bias, panels);
  work.problem.pixels = dims.pixels;
  work.problem.x_row = dims.x_row;
  work.problem.y_row = dims.y_row;
  work.x = x.data();
  work.y = y.data();
  work.dims = dims;
  work.blocks = (dims.pixels + tiles::kBlock - 1) / tiles::kBlock;
  work.panels = panels.count;
  const uint64_t tasks = static_cast<uint64_t>(dims.outer_count) * work.blocks * work.panels;
  RAL_RETURN_IF_ERROR(runParallel(env, tasks, runTasks, &work));
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
