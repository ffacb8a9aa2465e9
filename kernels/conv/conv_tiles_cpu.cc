// Which convolutions the pointwise kernel takes, the packing of its filters, and the split of
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

// A pointwise filter [F, C, 1...] (any strides) packed into the panels' layout, zeros past F.
struct Filter {
  const float* data;
  int64_t f, c, f_stride, c_stride;
  bool operator==(const Filter& o) const {
    return data == o.data && f == o.f && c == o.c && f_stride == o.f_stride &&
           c_stride == o.c_stride;
  }
};
struct FilterHash {
  size_t operator()(const Filter& k) const {
    uint64_t h = reinterpret_cast<uintptr_t>(k.data);
    for (int64_t v : {k.f, k.c, k.f_stride, k.c_stride})
      h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

void pack(const Filter& w, float* out) {
  for (int64_t q = 0; q < tiles::panelCount(w.f); ++q) {
    const int64_t width = tiles::kVector * tiles::panelVectors(w.f, q), f0 = tiles::panelFirst(q);
    float* o = out + f0 * w.c;
    for (int64_t k = 0; k < w.c; ++k)
      for (int64_t j = 0; j < width; ++j)
        o[k * width + j] = f0 + j < w.f ? w.data[(f0 + j) * w.f_stride + k * w.c_stride] : 0.0f;
  }
}

// The packed filters of constant weights (conv.h's constant_filter flag), per Context, by the
// weights' address, shape and strides. Bounded like the oneDNN entries: full, it is emptied;
// filters in use stay alive through their shared_ptr.
class PackedFilters {
 public:
  static constexpr size_t kMaxEntries = 4096;
  using Packed = std::shared_ptr<const std::vector<float>>;

  Packed findOrPack(const Filter& w) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(w);
    if (it != entries_.end()) return it->second;
    if (entries_.size() >= kMaxEntries) entries_.clear();
    auto packed = std::make_shared<std::vector<float>>(tiles::packedFloats(w.f, w.c));
    pack(w, packed->data());
    return entries_.emplace(w, std::move(packed)).first->second;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<Filter, Packed, FilterHash> entries_;
};

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

}  // namespace

// The largest filter the tiles take: 1 MiB of floats.
constexpr int64_t kMaxTileFilterFloats = int64_t{1} << 18;

bool convTilesAvailable() {
  static const bool available = [] {
    const char* v = std::getenv("RAL_CONV_ALGORITHM");
    return hostHasAvx512() && !(v != nullptr && std::string(v) == "onednn");
  }();
  return available;
}

template <int R>
Status tryPointwiseConv(const KernelEnv& env, const ConvConfig& c, const MemRef<float, R>& x,
                        const MemRef<float, R>& w, const MemRef<float, 1>& bias,
                        const MemRef<float, R>& y, bool alias, bool* handled) {
  *handled = false;
  if (!convTilesAvailable() || alias || c.transposed() || c.groups != 1 ||
      c.activation == ConvActivation::kGeluErf || c.activation == ConvActivation::kGeluTanh ||
      x.numel() == 0 || y.numel() == 0)  // the last two: Impl::conv's own cases
    return Status();
  for (int d = 0; d < c.spatial; ++d)
    if (w.sizes[2 + d] != 1 || c.strides[d] != 1 || c.pad_begin[d] != 0 || c.pad_end[d] != 0)
      return Status();
  const int64_t in_channels = x.sizes[1], out_channels = y.sizes[1];
  // Channels contiguous in x and y, y's elements apart.
  if ((in_channels > 1 && x.strides[1] != 1) || (out_channels > 1 && y.strides[1] != 1) ||
      !nonOverlapping(y))
    return Status();
  // Every block of 12 pixels reads the whole packed filter: past the core's L2 (1 MiB or more on
  // every AVX-512 CPU) it streams from memory, and oneDNN, which blocks the filter, is faster
  // (the linear layers of a BERT encoder, 768 x 3072: 1.2x).
  if (in_channels * out_channels > kMaxTileFilterFloats) return Status();
  const PixelDims dims = pixelDims(x, y);

  // The filter, packed: once per Context for constant weights, else into scratch.
  const Filter filter{w.data(), out_channels, in_channels, w.strides[0], w.strides[1]};
  PackedFilters::Packed kept;
  Scratch packed_scratch, bias_scratch;
  const float* packed = nullptr;
  if (c.constantFilter()) {
    RAL_ASSIGN_OR_RETURN(PackedFilters * cache,
                         env.context->getOrCreate<PackedFilters>(uint64_t{0}, [] {
                           return std::make_unique<PackedFilters>();
                         }));
    kept = cache->findOrPack(filter);
    packed = kept->data();
  } else {
    RAL_RETURN_IF_ERROR(packed_scratch.allocate(
        env.driver, tiles::packedFloats(out_channels, in_channels) * sizeof(float)));
    pack(filter, packed_scratch.as<float>());
    packed = packed_scratch.as<float>();
  }
  RAL_ASSIGN_OR_RETURN(const float* dense_bias, denseBias(env, bias, &bias_scratch));

  tiles::Problem problem;
  problem.pixels = dims.pixels;
  problem.in_channels = in_channels;
  problem.out_channels = out_channels;
  problem.x_row = dims.x_row;
  problem.y_row = dims.y_row;
  problem.packed = packed;
  problem.bias = dense_bias;
  problem.activation = static_cast<int>(c.activation);
  problem.lo = c.alpha;
  problem.hi = c.beta;
  problem.residual = c.residual();
  // Tasks are (outer index, pixel block, panel), the panel innermost, so that a thread's
  // consecutive tasks reuse the same pixels.
  const int64_t panels = tiles::panelCount(out_channels);
  const int64_t blocks = (dims.pixels + tiles::kBlock - 1) / tiles::kBlock;
  RAL_RETURN_IF_ERROR(parallelFor(
      env.driver, dims.outer_count * blocks * panels, 1, [&](int64_t begin, int64_t end) {
        tiles::Problem p = problem;
        for (int64_t t = begin; t < end; ++t) {
          const int64_t panel = t % panels, block = (t / panels) % blocks;
          int64_t rest = t / panels / blocks, x_offset = 0, y_offset = 0;
          for (int i = dims.outer - 1; i >= 0; --i) {
            const int64_t idx = rest % dims.size[i];
            rest /= dims.size[i];
            x_offset += idx * dims.x_stride[i];
            y_offset += idx * dims.y_stride[i];
          }
          p.x = x.data() + x_offset;
          p.y = y.data() + y_offset;
          tiles::runAvx512(p, block, block + 1, static_cast<int>(panel),
                           static_cast<int>(panel) + 1);
        }
        return Status();
      }));
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
