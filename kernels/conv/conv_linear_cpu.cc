// Linear layers of ral_conv on the CPU as oneDNN sgemm over packed column blocks
// (conv_linear_cpu.h has the contract).
#include "kernels/conv/conv_linear_cpu.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <unordered_map>

#include "kernels/common/kernel_util.h"
#include "kernels/common/omp_threads.h"
#include "kernels/common/parallel.h"
#include "kernels/conv/conv_dnnl.h"
#include "kernels/conv/conv_tiles_cpu.h"
#include "kernels/conv/pixel_dims.h"
#include "oneapi/dnnl/dnnl.h"

namespace ral::kernels::cpu {
namespace {

constexpr const char* kKernel = "ral_conv";

// oneDNN eltwise primitives over dense [rows, cols] blocks, per Context, by shape and
// activation. Bounded like the convolution entries: full, it is emptied (primitives in use stay
// alive through their shared_ptr).
class LinearEltwise {
 public:
  static constexpr size_t kMaxEntries = 512;

  LinearEltwise() : engine_(dnnl::engine::kind::cpu, 0) {}
  const dnnl::engine& engine() const { return engine_; }

  // Throws dnnl::error when oneDNN refuses the primitive.
  std::shared_ptr<dnnl::eltwise_forward> find(int64_t rows, int64_t cols,
                                              const conv_dnnl::Eltwise& e) {
    const Key key{rows, cols, static_cast<int>(e.alg), e.alpha, e.beta};
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it != entries_.end()) return it->second;
    if (entries_.size() >= kMaxEntries) entries_.clear();
    const dnnl::memory::desc md({rows, cols}, dnnl::memory::data_type::f32,
                                dnnl::memory::format_tag::ab);
    const dnnl::eltwise_forward::primitive_desc pd(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, e.alg, md, e.alpha, e.beta),
        engine_);
    auto primitive = std::make_shared<dnnl::eltwise_forward>(pd);
    entries_.emplace(key, primitive);
    return primitive;
  }

 private:
  struct Key {
    int64_t rows, cols;
    int alg;
    float alpha, beta;
    bool operator==(const Key& o) const {
      return rows == o.rows && cols == o.cols && alg == o.alg &&
             std::memcmp(&alpha, &o.alpha, sizeof(float)) == 0 &&
             std::memcmp(&beta, &o.beta, sizeof(float)) == 0;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint32_t a = 0, b = 0;
      std::memcpy(&a, &k.alpha, sizeof(a));
      std::memcpy(&b, &k.beta, sizeof(b));
      uint64_t h = 1469598103934665603ull;
      for (uint64_t v : {static_cast<uint64_t>(k.rows), static_cast<uint64_t>(k.cols),
                         static_cast<uint64_t>(k.alg), uint64_t{a}, uint64_t{b}})
        h = (h ^ v) * 1099511628211ull;
      return static_cast<size_t>(h);
    }
  };
  dnnl::engine engine_;
  std::mutex mutex_;
  std::unordered_map<Key, std::shared_ptr<dnnl::eltwise_forward>, KeyHash> entries_;
};

// The GEMM of one call: rows of x times the column blocks, the epilogue around each block.
struct LinearCall {
  const ConvConfig* c;
  int64_t in, out;         // k, n
  int64_t x_row, y_row;    // leading dimensions (BLAS-valid)
  const float* blocks;     // linearColumnBlocks
  const float* bias;       // dense, or null
  LinearEltwise* eltwise;  // with an activation
};

// Rows [0, rows) of x and y (already offset to the task's first row) times column block f0.
// One row takes rowTimesMatrixAvx512 (a CNN's classifier at batch 1: sgemm would pack 1.28 M
// weights on every call to use them once, 2x slower), more rows oneDNN's sgemm.
Status runTile(const KernelEnv& env, const LinearCall& l, const float* x, float* y, int64_t rows,
               int64_t f0) {
  const ConvConfig& c = *l.c;
  const bool act = c.activation != ConvActivation::kNone;
  const int64_t width = std::min(kLinearBlockColumns, l.out - f0);
  const float* b = l.blocks + f0 * l.in;
  float* y_block = y + f0;
  // Without an activation the product accumulates into y itself; with one, into a dense block
  // that oneDNN's eltwise then runs over before it is copied into y.
  Scratch scratch;
  if (act) RAL_RETURN_IF_ERROR(scratch.allocate(env.driver, rows * width * sizeof(float)));
  float* target = act ? scratch.as<float>() : y_block;
  const int64_t target_row = act ? width : l.y_row;
  const bool residual = c.residual();
  const float* bias = l.bias ? l.bias + f0 : nullptr;
  if (residual || bias)
    tiles::sumRowsAvx512(target, target_row, residual ? y_block : nullptr, l.y_row, bias, rows,
                         width);
  if (rows == 1) {
    tiles::rowTimesMatrixAvx512(x, b, width, l.in, target, width, residual || bias);
  } else {
    const dnnl_status_t status = dnnl_sgemm('N', 'N', rows, width, l.in, 1.0f, x, l.x_row, b, width,
                                            residual || bias ? 1.0f : 0.0f, target, target_row);
    if (status != dnnl_success)
      return internalError(kKernel, ": oneDNN sgemm failed (status ", static_cast<int>(status),
                           ") for m=", rows, " n=", width, " k=", l.in);
  }
  if (!act) return Status();
  try {  // tasks run on the pool's threads: nothing may escape
    std::shared_ptr<dnnl::eltwise_forward> p =
        l.eltwise->find(rows, width, conv_dnnl::eltwiseOf(c));
    dnnl::stream stream(l.eltwise->engine());
    const dnnl::memory block(dnnl::memory::desc({rows, width}, dnnl::memory::data_type::f32,
                                                dnnl::memory::format_tag::ab),
                             l.eltwise->engine(), target);
    p->execute(stream, {{DNNL_ARG_SRC, block}, {DNNL_ARG_DST, block}});
    stream.wait();
  } catch (const dnnl::error& e) {
    return conv_dnnl::dnnlStatus(e, kKernel, "a linear layer's activation");
  } catch (const std::exception& e) {
    return internalError(kKernel, ": a linear layer's activation: ", e.what());
  }
  for (int64_t m = 0; m < rows; ++m)
    std::memcpy(y_block + m * l.y_row, target + m * width, width * sizeof(float));
  return Status();
}

}  // namespace

template <int R>
Status tryLinearConv(const KernelEnv& env, const ConvConfig& c, const MemRef<float, R>& x,
                     const MemRef<float, R>& w, const MemRef<float, 1>& bias,
                     const MemRef<float, R>& y, bool alias, int threads, bool* handled) {
  *handled = false;
  if (!convTilesAvailable() || alias || !c.constantFilter() || c.transposed() || c.groups != 1 ||
      x.numel() == 0 || y.numel() == 0)
    return Status();
  for (int d = 0; d < c.spatial; ++d)
    if (w.sizes[2 + d] != 1 || c.strides[d] != 1 || c.pad_begin[d] != 0 || c.pad_end[d] != 0)
      return Status();
  const int64_t in = x.sizes[1], out = y.sizes[1];
  // Smaller filters are the tiles' (they stay in L2, where the tiles win).
  if (in * out <= kMaxTileFilterFloats || in > INT_MAX || out > INT_MAX) return Status();
  if ((in > 1 && x.strides[1] != 1) || (out > 1 && y.strides[1] != 1) || !nonOverlapping(y))
    return Status();
  const PixelDims dims = pixelDims(x, y);
  // BLAS leading dimensions: rows at least a row apart (no broadcast or reversed x), in int.
  const bool one_row = dims.pixels == 1;
  const int64_t x_row = one_row ? in : dims.x_row, y_row = one_row ? out : dims.y_row;
  if (dims.pixels > INT_MAX || x_row < in || y_row < out || x_row > INT_MAX || y_row > INT_MAX)
    return Status();

  try {
    PreparedFilter kept;
    RAL_ASSIGN_OR_RETURN(
        const float* blocks,
        linearColumnBlocks(env, w.data(), out, in, w.strides[0], w.strides[1], &kept));
    Scratch bias_scratch;
    RAL_ASSIGN_OR_RETURN(const float* dense_bias, denseBias(env, bias, &bias_scratch));
    LinearEltwise* eltwise = nullptr;
    if (c.activation != ConvActivation::kNone) {
      RAL_ASSIGN_OR_RETURN(eltwise, env.context->getOrCreate<LinearEltwise>(uint64_t{0}, [] {
        return std::make_unique<LinearEltwise>();
      }));
    }
    const LinearCall l{&c, in, out, x_row, y_row, blocks, dense_bias, eltwise};
    // Tasks are (outer index, row chunk, column block), the block innermost; each runs every
    // step of its tile on one thread (the product, the epilogue and the copy alike). Rows are
    // split only as far as needed for two tasks per thread, in chunks of at least 12 rows
    // (EfficientNet-B0's last projection: 49 rows, one block).
    const int64_t column_blocks = (out + kLinearBlockColumns - 1) / kLinearBlockColumns;
    const int64_t want = 2 * static_cast<int64_t>(threads);
    int64_t chunks = std::min<int64_t>(
        (want + column_blocks * dims.outer_count - 1) / (column_blocks * dims.outer_count),
        std::max<int64_t>(1, dims.pixels / 12));
    chunks = std::max<int64_t>(1, chunks);
    const int64_t chunk_rows = (dims.pixels + chunks - 1) / chunks;
    RAL_RETURN_IF_ERROR(parallelFor(
        env.driver, dims.outer_count * chunks * column_blocks, 1,
        [&](int64_t begin, int64_t end) -> Status {
          OmpThreads one(1);
          for (int64_t t = begin; t < end; ++t) {
            const int64_t block = t % column_blocks, chunk = (t / column_blocks) % chunks;
            int64_t x_offset = 0, y_offset = 0;
            dims.offsets(t / column_blocks / chunks, &x_offset, &y_offset);
            const int64_t m0 = chunk * chunk_rows;
            const int64_t rows = std::min(chunk_rows, dims.pixels - m0);
            if (rows <= 0) continue;
            RAL_RETURN_IF_ERROR(runTile(env, l, x.data() + x_offset + m0 * x_row,
                                        y.data() + y_offset + m0 * y_row, rows,
                                        block * kLinearBlockColumns));
          }
          return Status();
        }));
  } catch (const std::bad_alloc&) {
    return outOfMemory(kKernel, ": no memory for a linear layer's packed filter (", out, " x ", in,
                       ")");
  }
  *handled = true;
  return Status();
}

#define RAL_INSTANTIATE_LINEAR(R)                                                                \
  template Status tryLinearConv<R>(const KernelEnv&, const ConvConfig&, const MemRef<float, R>&, \
                                   const MemRef<float, R>&, const MemRef<float, 1>&,             \
                                   const MemRef<float, R>&, bool, int, bool*);
RAL_KERNEL_CONV_RANKS(RAL_INSTANTIATE_LINEAR)
#undef RAL_INSTANTIATE_LINEAR

}  // namespace ral::kernels::cpu
