// Which convolutions the pointwise kernel takes, the packing of its filters, and the split of
// the work over the CPU driver's threads (conv_tiles_cpu.h has the contract).
#include "kernels/conv/conv_tiles_cpu.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "kernels/common/parallel.h"
#include "kernels/conv/pixel_dims.h"
#include "ral/driver_services.h"

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

// A filter to prepare: its address, kind, sizes and strides (a pointwise [F, C, 1...]: f, c and
// their strides, as the tiles' panels or as linear column blocks; a depthwise [E, 1, KH, KW]: e,
// kh, kw and theirs).
enum class FilterKind { kPointwisePanels, kDepthwiseTaps, kColumnBlocks };
struct Filter {
  const float* data;
  FilterKind kind;
  int64_t size[3], stride[3];
  bool operator==(const Filter& o) const {
    return data == o.data && kind == o.kind && std::equal(size, size + 3, o.size) &&
           std::equal(stride, stride + 3, o.stride);
  }
};
struct FilterHash {
  size_t operator()(const Filter& k) const {
    uint64_t h = reinterpret_cast<uintptr_t>(k.data) ^ static_cast<uint64_t>(k.kind);
    for (int i = 0; i < 3; ++i)
      for (int64_t v : {k.size[i], k.stride[i]})
        h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

int64_t preparedFloats(const Filter& w) {
  if (w.kind == FilterKind::kPointwisePanels) return tiles::packedFloats(w.size[0], w.size[1]);
  if (w.kind == FilterKind::kColumnBlocks) return w.size[0] * w.size[1];
  return w.size[1] * w.size[2] * tiles::vectorsOf(w.size[0]) * tiles::kVector;
}

void prepare(const Filter& w, float* out) {
  if (w.kind == FilterKind::kDepthwiseTaps) {
    const int64_t e = w.size[0], kw = w.size[2], taps = w.size[1] * kw;
    const int64_t row = tiles::vectorsOf(e) * tiles::kVector;
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t j = 0; j < row; ++j)
        out[t * row + j] =
            j < e ? w.data[j * w.stride[0] + (t / kw) * w.stride[1] + (t % kw) * w.stride[2]]
                  : 0.0f;
    return;
  }
  const int64_t f = w.size[0], c = w.size[1];
  if (w.kind == FilterKind::kColumnBlocks) {
    for (int64_t f0 = 0; f0 < f; f0 += kLinearBlockColumns) {
      const int64_t width = std::min(kLinearBlockColumns, f - f0);
      float* o = out + f0 * c;
      // A transpose in slabs of 64 input channels: the slab's output rows stay in the cache
      // while each filter row is read in order (BERT-base has 85M such weights).
      for (int64_t k0 = 0; k0 < c; k0 += 64)
        for (int64_t j = 0; j < width; ++j)
          for (int64_t k = k0; k < std::min(c, k0 + 64); ++k)
            o[k * width + j] = w.data[(f0 + j) * w.stride[0] + k * w.stride[1]];
    }
    return;
  }
  for (int64_t q = 0; q < tiles::panelCount(f); ++q) {
    const int64_t width = tiles::kVector * tiles::panelVectors(f, q), f0 = tiles::panelFirst(q);
    float* o = out + f0 * c;
    for (int64_t k = 0; k < c; ++k)
      for (int64_t j = 0; j < width; ++j)
        o[k * width + j] = f0 + j < f ? w.data[(f0 + j) * w.stride[0] + k * w.stride[1]] : 0.0f;
  }
}

// The prepared copies of constant filters, per Context. Bounded like the oneDNN entries: full,
// it is emptied; filters in use stay alive through their shared_ptr.
class PreparedFilters {
 public:
  static constexpr size_t kMaxEntries = 4096;

  PreparedFilter findOrPrepare(const Filter& w) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(w);
    if (it != entries_.end()) return it->second;
    if (entries_.size() >= kMaxEntries) entries_.clear();
    constexpr std::align_val_t kAlign{64};
    std::shared_ptr<float> prepared(
        static_cast<float*>(::operator new(preparedFloats(w) * sizeof(float), kAlign)),
        [](float* p) { ::operator delete(p, kAlign); });
    prepare(w, prepared.get());
    return entries_.emplace(w, std::move(prepared)).first->second;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<Filter, PreparedFilter, FilterHash> entries_;
};

StatusOr<const float*> preparedFilter(const KernelEnv& env, const Filter& w, bool constant,
                                      PreparedFilter* keep, Scratch* scratch) {
  if (constant) {
    RAL_ASSIGN_OR_RETURN(PreparedFilters * cache,
                         env.context->getOrCreate<PreparedFilters>(
                             uint64_t{0}, [] { return std::make_unique<PreparedFilters>(); }));
    *keep = cache->findOrPrepare(w);
    return keep->get();
  }
  RAL_RETURN_IF_ERROR(scratch->allocate(env.driver, preparedFloats(w) * sizeof(float)));
  prepare(w, scratch->as<float>());
  return static_cast<const float*>(scratch->as<float>());
}

}  // namespace

StatusOr<const float*> pointwisePanels(const KernelEnv& env, const float* w, int64_t f, int64_t c,
                                       int64_t f_stride, int64_t c_stride, bool constant,
                                       PreparedFilter* keep, Scratch* scratch) {
  const Filter filter{w, FilterKind::kPointwisePanels, {f, c, 0}, {f_stride, c_stride, 0}};
  return preparedFilter(env, filter, constant, keep, scratch);
}

StatusOr<const float*> linearColumnBlocks(const KernelEnv& env, const float* w, int64_t f,
                                          int64_t c, int64_t f_stride, int64_t c_stride,
                                          PreparedFilter* keep) {
  const Filter filter{w, FilterKind::kColumnBlocks, {f, c, 0}, {f_stride, c_stride, 0}};
  return preparedFilter(env, filter, /*constant=*/true, keep, nullptr);
}

StatusOr<const float*> depthwiseTaps(const KernelEnv& env, const MemRef<float, 4>& w, bool constant,
                                     PreparedFilter* keep, Scratch* scratch) {
  const Filter filter{w.data(),
                      FilterKind::kDepthwiseTaps,
                      {w.sizes[0], w.sizes[2], w.sizes[3]},
                      {w.strides[0], w.strides[2], w.strides[3]}};
  return preparedFilter(env, filter, constant, keep, scratch);
}

StatusOr<const float*> denseBias(const KernelEnv& env, const MemRef<float, 1>& bias,
                                 Scratch* scratch) {
  if (bias.sizes[0] == 0) return static_cast<const float*>(nullptr);
  if (bias.sizes[0] == 1 || bias.strides[0] == 1) return static_cast<const float*>(bias.data());
  RAL_RETURN_IF_ERROR(scratch->allocate(env.driver, bias.sizes[0] * sizeof(float)));
  float* b = scratch->as<float>();
  for (int64_t i = 0; i < bias.sizes[0]; ++i) b[i] = bias.data()[i * bias.strides[0]];
  return static_cast<const float*>(b);
}

bool convTilesAvailable() {
  static const bool available = [] {
    const char* v = std::getenv("RAL_CONV_ALGORITHM");
    return hostHasAvx512() && !(v != nullptr && std::string(v) == "onednn");
  }();
  return available;
}

// The scaled form of the tiles: a task is one block of up to 12 pixels of one image; it copies
// their rows of x, each channel multiplied by that image's scale, into a scratch block (in L1,
// instead of a scaled copy of x going to memory and back) and runs every panel over it. With a
// wide filter (few pixels, kMaxWideFilterRows) the whole scaled x goes to scratch first (it fits
// in L2), and each panel then runs over every block, read from memory once.
template <int R>
Status runScaledBlocks(const KernelEnv& env, const MemRef<float, R>& x, const MemRef<float, R>& y,
                       const MemRef<float, R>& scale, const tiles::Problem& problem, bool wide) {
  MemRef<float, R> x_image = x, y_image = y;
  x_image.sizes[0] = y_image.sizes[0] = 1;
  const PixelDims dims = pixelDims(x_image, y_image);
  const int64_t images = x.sizes[0], channels = problem.in_channels;
  const int64_t blocks = (dims.pixels + tiles::kBlock - 1) / tiles::kBlock;
  const int panels = static_cast<int>(tiles::panelCount(problem.out_channels));
  // The scales as dense rows, one per image.
  Scratch dense_scale;
  const float* scales = scale.data();
  if (channels > 1 && scale.strides[1] != 1) {
    RAL_RETURN_IF_ERROR(dense_scale.allocate(env.driver, images * channels * sizeof(float)));
    float* d = dense_scale.as<float>();
    for (int64_t n = 0; n < images; ++n)
      for (int64_t k = 0; k < channels; ++k)
        d[n * channels + k] = scale.data()[n * scale.strides[0] + k * scale.strides[1]];
    scales = d;
  }
  const int64_t scale_image = scales == scale.data() ? scale.strides[0] : channels;
  if (wide) {
    const int64_t units = images * dims.outer_count, unit_floats = dims.pixels * channels;
    Scratch scaled;
    RAL_RETURN_IF_ERROR(scaled.allocate(env.driver, units * unit_floats * sizeof(float)));
    float* xs = scaled.as<float>();
    RAL_RETURN_IF_ERROR(parallelFor(env.driver, units, 1, [&](int64_t begin, int64_t end) {
      for (int64_t u = begin; u < end; ++u) {
        int64_t x_offset = 0, y_offset = 0;
        const int64_t n = dims.offsets(u, &x_offset, &y_offset);
        tiles::scaleRowsAvx512(x.data() + n * x.strides[0] + x_offset, dims.x_row,
                               scales + n * scale_image, dims.pixels, channels,
                               xs + u * unit_floats);
      }
      return Status();
    }));
    return parallelFor(env.driver, units * panels * blocks, 1, [&](int64_t begin, int64_t end) {
      tiles::Problem p = problem;
      p.pixels = dims.pixels;
      p.x_row = channels;
      p.y_row = dims.y_row;
      for (int64_t t = begin; t < end; ++t) {
        const int64_t block = t % blocks, u = t / blocks / panels;
        const int panel = static_cast<int>((t / blocks) % panels);
        int64_t x_offset = 0, y_offset = 0;
        const int64_t n = dims.offsets(u, &x_offset, &y_offset);
        p.x = xs + u * unit_floats;
        p.y = y.data() + n * y.strides[0] + y_offset;
        tiles::runAvx512(p, block, block + 1, panel, panel + 1);
      }
      return Status();
    });
  }
  // Few blocks (a 7x7 or 14x14 map at batch 1) split unevenly over the threads, 5 blocks on 2
  // threads 3 against 2: then a task is one panel of a block, and each task scales its block's
  // rows again unless the task before it in the same chunk had the same block (a few percent of
  // the panel's multiply-adds).
  auto* threads_service = env.driver->service<HostThreadsService>();
  const int64_t threads = threads_service ? threads_service->threadCount() : 1;
  const int64_t row_tasks = images * dims.outer_count * blocks;
  const int64_t groups = threads > 1 && row_tasks < 8 * threads ? panels : 1;
  return parallelFor(env.driver, row_tasks * groups, 1, [&](int64_t begin, int64_t end) {
    Scratch rows;
    RAL_RETURN_IF_ERROR(rows.allocate(
        env.driver,
        static_cast<size_t>(tiles::kBlock * std::max<int64_t>(channels, 1)) * sizeof(float)));
    tiles::Problem p = problem;
    p.x = rows.as<float>();
    p.x_row = channels;
    p.y_row = dims.y_row;
    int64_t scaled = -1;  // the row task whose rows are in `rows`
    for (int64_t t = begin; t < end; ++t) {
      const int64_t row_task = t / groups, block = row_task % blocks;
      int64_t x_offset = 0, y_offset = 0;
      const int64_t n = dims.offsets(row_task / blocks, &x_offset, &y_offset);  // the image
      const int64_t m0 = block * tiles::kBlock;
      p.pixels = std::min<int64_t>(tiles::kBlock, dims.pixels - m0);
      if (row_task != scaled) {
        tiles::scaleRowsAvx512(x.data() + n * x.strides[0] + x_offset + m0 * dims.x_row, dims.x_row,
                               scales + n * scale_image, p.pixels, channels, rows.as<float>());
        scaled = row_task;
      }
      p.y = y.data() + n * y.strides[0] + y_offset + m0 * dims.y_row;
      const int first = groups == 1 ? 0 : static_cast<int>(t % groups);
      tiles::runAvx512(p, 0, 1, first, groups == 1 ? panels : first + 1);
    }
    return Status();
  });
}

template <int R>
Status tryPointwiseConv(const KernelEnv& env, const ConvConfig& c, const MemRef<float, R>& x,
                        const MemRef<float, R>& w, const MemRef<float, 1>& bias,
                        const MemRef<float, R>& y, bool alias, bool* handled,
                        const MemRef<float, R>* scale) {
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
  // (the linear layers of a BERT encoder, 768 x 3072: 1.2x). Except with few pixels (2 to
  // kMaxWideFilterRows): then the panels go outermost, each read from memory once for all the
  // pixels. One pixel stays with conv_linear_cpu.h's row kernel.
  const bool wide = in_channels * out_channels > kMaxTileFilterFloats;
  const int64_t rows = x.numel() / std::max<int64_t>(in_channels, 1);
  if (wide && (rows < 2 || rows > kMaxWideFilterRows)) return Status();

  PreparedFilter kept;
  Scratch packed_scratch, bias_scratch;
  RAL_ASSIGN_OR_RETURN(const float* packed,
                       pointwisePanels(env, w.data(), out_channels, in_channels, w.strides[0],
                                       w.strides[1], c.constantFilter(), &kept, &packed_scratch));
  RAL_ASSIGN_OR_RETURN(const float* dense_bias, denseBias(env, bias, &bias_scratch));

  tiles::Problem problem;
  problem.in_channels = in_channels;
  problem.out_channels = out_channels;
  problem.packed = packed;
  problem.bias = dense_bias;
  problem.activation = static_cast<int>(c.activation);
  problem.lo = c.alpha;
  problem.hi = c.beta;
  problem.residual = c.residual();
  if (scale != nullptr) {
    RAL_RETURN_IF_ERROR(runScaledBlocks(env, x, y, *scale, problem, wide));
    *handled = true;
    return Status();
  }
  const PixelDims dims = pixelDims(x, y);
  problem.pixels = dims.pixels;
  problem.x_row = dims.x_row;
  problem.y_row = dims.y_row;
  // Tasks are (outer index, pixel block, panel), the panel innermost, so that a thread's
  // consecutive tasks reuse the same pixels; with a wide filter (outer index, panel, pixel
  // block), so that each panel is read from memory once.
  const int64_t panels = tiles::panelCount(out_channels);
  const int64_t blocks = (dims.pixels + tiles::kBlock - 1) / tiles::kBlock;
  RAL_RETURN_IF_ERROR(parallelFor(
      env.driver, dims.outer_count * blocks * panels, 1, [&](int64_t begin, int64_t end) {
        tiles::Problem p = problem;
        for (int64_t t = begin; t < end; ++t) {
          const int64_t panel = wide ? (t / blocks) % panels : t % panels;
          const int64_t block = wide ? t % blocks : (t / panels) % blocks;
          int64_t x_offset = 0, y_offset = 0;
          dims.offsets(t / panels / blocks, &x_offset, &y_offset);
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

#define RAL_INSTANTIATE_POINTWISE(R)                                                         \
  template Status tryPointwiseConv<R>(                                                       \
      const KernelEnv&, const ConvConfig&, const MemRef<float, R>&, const MemRef<float, R>&, \
      const MemRef<float, 1>&, const MemRef<float, R>&, bool, bool*, const MemRef<float, R>*);
RAL_KERNEL_CONV_RANKS(RAL_INSTANTIATE_POINTWISE)
#undef RAL_INSTANTIATE_POINTWISE

}  // namespace ral::kernels::cpu
