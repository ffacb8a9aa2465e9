// ral_conv on the CPU (kernels/conv/conv.h has the contract): RAL's own kernel for pointwise
// convolutions where it runs (conv_tiles_cpu.h), else oneDNN's convolution and deconvolution
// primitives, with bias, residual (a sum post-op, before the activation) and activation (an
// eltwise post-op) fused; SiLU, slow as a post-op, runs right after the primitive instead.
//
// Layout: oneDNN 2.6 runs f32 convolutions on dense channels-last memory with its brgemm kernels
// (brgconv, brdgmm_dw for depthwise) and on channels-first memory with gemm:jit. On one AVX-512
// core (56x56, 3x3) gemm:jit is 2x slower for 64 -> 64 channels and 20x slower for a 96-channel
// depthwise conv, and still 1.8x and 5x slower when channels-first operands are reordered to
// channels-last and back around the fast kernel. So every primitive takes dense channels-last x
// and y (nwc/nhwc/ndhwc) and weights in the layout oneDNN picks. An x or y stored otherwise is
// reordered into scratch (and y back) by a oneDNN reorder over its real strides; operands with a
// zero or negative stride, which oneDNN descriptors cannot express, go through the strided copy.
//
// Caching: one ConvCache per Context (its resource cache) maps everything a primitive depends on
// (shapes, strides, config, clip bounds, thread count, aliasing) to an immutable Entry: the
// primitive, the plan and reorders of each operand and, for constant filters, the weights in
// the primitive's layout per filter address (their own mutex). Entries are built one at a time;
// scratchpads are per call (scratchpad_mode::user), so one Entry runs on many threads at once.
//
// Threads: oneDNN runs on OpenMP. Each call sets the calling thread's OpenMP thread count to the
// CPU driver's (RAL_CPU_THREADS, else the usable CPUs) and restores it afterwards, so RAL never
// runs more threads than it was given and a host's own OpenMP setting survives.
//
// oneDNN reports errors by throwing dnnl::error; every call into it is inside a try block here,
// and a failure becomes a status naming the configuration.
#include "kernels/conv/conv_cpu.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "drivers/cpu/cpu_info.h"
#include "kernels/common/devices.h"
#include "kernels/common/omp_threads.h"
#include "kernels/common/parallel.h"
#include "kernels/conv/conv.h"
#include "kernels/conv/conv_dnnl.h"
#include "kernels/conv/conv_linear_cpu.h"
#include "kernels/conv/conv_tiles.h"
#include "kernels/conv/conv_tiles_cpu.h"
#include "kernels/copy/strided_copy.h"
#include "ral/driver_services.h"
#include "ral/registration.h"

namespace ral::kernels::cpu {
namespace {

using namespace conv_dnnl;  // NOLINT(build/namespaces): this file's own helpers

constexpr const char* kKernel = "ral_conv";

// How one operand reaches the primitive's memory.
enum class Path {
  kDirect,   // the user's memory is in the primitive's layout
  kReorder,  // a oneDNN reorder over the user's strides, into (and for y out of) scratch
  kCopy,     // the strided copy into (and out of) scratch; for w, into dense w then a reorder
};

// Everything cached for one configuration. Immutable after construction except
// `constant_weights`.
struct Entry {
  dnnl::primitive conv;
  memory::desc src_md, weights_md, bias_md, dst_md;
  bool has_bias = false;
  Path x_path = Path::kDirect, y_path = Path::kDirect;
  memory::desc x_user_md, y_user_md;  // real strides (kReorder)
  dnnl::reorder x_in, y_in, y_out;    // as the paths need
  size_t scratchpad_bytes = 0;                   // the largest of every primitive's
  bool winograd = false;  // src_md / dst_md are oneDNN's blocked layout, x and y reordered
  // The activation runs after the primitive, as RAL's (ownsActivation), not as its post-op.
  bool own_activation = false;
  // Constant filters in the primitive's layout, by address.
  WeightsPlan weights;

  // The memory objects of one call, pointed at its buffers with set_data_handle: creating them
  // costs allocations on every call (EfficientNet-B0 makes 81 convolution calls per image).
  // Calls in flight each take their own set; idle sets wait in `bindings`.
  struct Bindings {
    memory src, dst, bias, scratchpad;
  };
  std::mutex bindings_mutex;
  std::vector<std::unique_ptr<Bindings>> bindings;
};

// A Bindings of `e` for one call, back to `e` when done.
class CallBindings {
 public:
  CallBindings(Entry& e, const dnnl::engine& eng) : e_(e) {
    {
      std::lock_guard<std::mutex> lock(e.bindings_mutex);
      if (!e.bindings.empty()) {
        b_ = std::move(e.bindings.back());
        e.bindings.pop_back();
      }
    }
    if (b_) return;
    b_ = std::make_unique<Entry::Bindings>();
    b_->src = memory(e.src_md, eng, DNNL_MEMORY_NONE);
    b_->dst = memory(e.dst_md, eng, DNNL_MEMORY_NONE);
    if (e.has_bias) b_->bias = memory(e.bias_md, eng, DNNL_MEMORY_NONE);
    const int64_t scratchpad_bytes = std::max<int64_t>(1, e.scratchpad_bytes);
    b_->scratchpad =
        memory(memory::desc({scratchpad_bytes}, memory::data_type::u8, memory::format_tag::a),
               eng, DNNL_MEMORY_NONE);
  }
  ~CallBindings() {
    std::lock_guard<std::mutex> lock(e_.bindings_mutex);
    if (e_.bindings.size() < kMaxIdle) e_.bindings.push_back(std::move(b_));
  }
  CallBindings(const CallBindings&) = delete;
  CallBindings& operator=(const CallBindings&) = delete;
  Entry::Bindings* operator->() const { return b_.get(); }

 private:
  static constexpr size_t kMaxIdle = 16;
  Entry& e_;
  std::unique_ptr<Entry::Bindings> b_;
};

// What decides an Entry: shapes, strides, config, thread count and aliasing, as integers in a
// fixed array (built on every call: no allocation).
struct EntryKey {
  static constexpr int kCapacity = 64;  // 4 operands x (1 + 2 x 5) + 19 config values, at most
  std::array<int64_t, kCapacity> v{};
  int n = 0;
  void add(int64_t x) { v[n++] = x; }
  bool operator==(const EntryKey& o) const {
    return n == o.n && std::equal(v.begin(), v.begin() + n, o.v.begin());
  }
};
struct EntryKeyHash {
  size_t operator()(const EntryKey& k) const {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the values
    for (int i = 0; i < k.n; ++i) h = (h ^ static_cast<uint64_t>(k.v[i])) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

// Every Entry of one Context, by key; bounded (see kMaxEntries).
class ConvCache {
 public:
  // Dynamic shapes could otherwise grow the map without end. When it is full it is emptied;
  // entries in use stay alive through their shared_ptr.
  static constexpr size_t kMaxEntries = 512;

  ConvCache() : engine_(dnnl::engine::kind::cpu, 0) {}
  const dnnl::engine& engine() const { return engine_; }

  // A stream for one call: reused, as creating one allocates. Given back by the caller.
  std::unique_ptr<dnnl::stream> takeStream() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!streams_.empty()) {
        std::unique_ptr<dnnl::stream> s = std::move(streams_.back());
        streams_.pop_back();
        return s;
      }
    }
    return std::make_unique<dnnl::stream>(engine_);
  }
  void giveBackStream(std::unique_ptr<dnnl::stream> s) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (streams_.size() < 16) streams_.push_back(std::move(s));
  }

  // The Entry under `key`, built by `build()` (which may throw) on the first request. Builds
  // are serialized: each configuration is built once, and oneDNN's primitive creation, whose
  // internal synchronization ThreadSanitizer cannot see, never runs on two threads at once.
  template <typename Build>
  std::shared_ptr<Entry> findOrBuild(const EntryKey& key, Build build) {
    if (auto e = find(key)) return e;
    std::lock_guard<std::mutex> building(build_mutex_);
    if (auto e = find(key)) return e;
    std::shared_ptr<Entry> e = build();
    std::lock_guard<std::mutex> lock(mutex_);
    if (entries_.size() >= kMaxEntries) entries_.clear();
    entries_.emplace(key, e);
    return e;
  }

 private:
  std::shared_ptr<Entry> find(const EntryKey& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : it->second;
  }

  dnnl::engine engine_;
  std::mutex build_mutex_;  // held while an Entry is built
  std::mutex mutex_;        // guards entries_ and streams_ (held only for look-ups and inserts)
  std::unordered_map<EntryKey, std::shared_ptr<Entry>, EntryKeyHash> entries_;
  std::vector<std::unique_ptr<dnnl::stream>> streams_;  // idle
};

// One call's operands and decisions.
struct Call {
  const ConvConfig* c;
  View x, w, bias, y;
  bool alias;  // y overlaps x, w or bias: computed into scratch, then copied
  int threads;
};

EntryKey cacheKey(const Call& k) {
  EntryKey key;
  auto add = [&](const View& m) {
    key.add(m.rank);
    for (int d = 0; d < m.rank; ++d) key.add(m.sizes[d]);
    for (int d = 0; d < m.rank; ++d) key.add(m.strides[d]);
  };
  add(k.x);
  add(k.w);
  add(k.bias);
  add(k.y);
  const ConvConfig& c = *k.c;
  key.add(c.groups);
  key.add(static_cast<int64_t>(c.activation));
  key.add(c.flags);
  for (const int64_t* f : {c.strides, c.dilations, c.pad_begin, c.pad_end})
    for (int d = 0; d < c.spatial; ++d) key.add(f[d]);
  if (c.activation == ConvActivation::kClip) {
    uint32_t a, b;
    std::memcpy(&a, &c.alpha, 4);
    std::memcpy(&b, &c.beta, 4);
    key.add(a);
    key.add(b);
  }
  key.add(k.threads);
  key.add(k.alias ? 1 : 0);
  return key;
}

// Whether Winograd is tried for `k`: 2-D 3x3, stride 1, no dilation, one group, 64 or more
// channels in and out (below that the reorders cost what it saves), x and y reachable by
// oneDNN reorders (positive strides, y not overlapping an input), and not switched off by
// RAL_CONV_ALGORITHM=direct. Winograd's transforms round differently from a direct sum:
// results differ from it by a few float ulps times the window's size, like any other
// summation order.
bool winogradCandidate(const Call& k) {
  static const bool enabled = [] {
    const char* v = std::getenv("RAL_CONV_ALGORITHM");
    return v == nullptr || std::string(v) != "direct";
  }();
  const ConvConfig& c = *k.c;
  if (!enabled || c.spatial != 2 || c.transposed() || c.groups != 1 || k.alias) return false;
  for (int d = 0; d < 2; ++d)
    if (k.w.sizes[2 + d] != 3 || c.strides[d] != 1 || c.dilations[d] != 1) return false;
  return k.x.sizes[1] >= 64 && k.y.sizes[1] >= 64 && positiveStrides(k.x) &&
         positiveStrides(k.y);
}

// SiLU as oneDNN 2.6's eltwise post-op costs as much as the convolution it follows (a 32-channel
// 3x3 depthwise at 112x112 on one Zen 4 core: 124 us without, 473 with; 240 channels at 28x28
// with 5x5: 133 and 230): on AVX-512 hosts RAL applies it to the result instead (30-80 us).
bool ownsActivation(const ConvConfig& c) {
  return c.activation == ConvActivation::kSilu && convTilesAvailable();
}

// Builds the Entry of `k` (throws dnnl::error when oneDNN refuses the convolution).
std::shared_ptr<Entry> buildEntry(const dnnl::engine& eng, const Call& k,
                                  bool allow_winograd = true) {
  const ConvConfig& c = *k.c;
  const int s = c.spatial, rank = s + 2;
  auto e = std::make_shared<Entry>();
  const auto f32 = memory::data_type::f32;
  e->src_md = memory::desc(dimsOf(k.x.sizes, rank), f32, channelsLastTag(rank));
  e->dst_md = memory::desc(dimsOf(k.y.sizes, rank), f32, channelsLastTag(rank));
  const WeightsLayout wl = weightsLayout(c, k.w, k.w.strides);
  const memory::desc w_any(dimsOf(wl.dims, wl.rank), f32, memory::format_tag::any);
  e->has_bias = k.bias.sizes[0] > 0;
  if (e->has_bias) e->bias_md = memory::desc({k.bias.sizes[0]}, f32, memory::format_tag::a);

  Dims strides(c.strides, c.strides + s), dilates(s), pad_l(c.pad_begin, c.pad_begin + s),
      pad_r(c.pad_end, c.pad_end + s);
  for (int d = 0; d < s; ++d) {
    dilates[d] = c.dilations[d] - 1;  // oneDNN counts the elements skipped
    if (c.transposed()) {
      // oneDNN derives the input size from the output one with a floor division by the stride,
      // so output padding of a stride or more is expressed as less end padding.
      const int64_t extent = c.dilations[d] * (k.w.sizes[2 + d] - 1) + 1;
      const int64_t base =
          (k.x.sizes[2 + d] - 1) * c.strides[d] - c.pad_begin[d] - c.pad_end[d] + extent;
      const int64_t output_padding = k.y.sizes[2 + d] - base;
      pad_r[d] -= output_padding / c.strides[d] * c.strides[d];
    }
  }

  dnnl::primitive_attr attr = userScratchpad();
  dnnl::post_ops ops;
  if (c.residual()) ops.append_sum(1.0f);
  e->own_activation = ownsActivation(c);
  if (!e->own_activation) appendActivation(c, &ops);
  attr.set_post_ops(ops);

  const auto prop = dnnl::prop_kind::forward_inference;
  if (c.transposed()) {
    using Deconv = dnnl::deconvolution_forward;
    const auto alg = dnnl::algorithm::deconvolution_direct;
    const Deconv::desc d = e->has_bias ? Deconv::desc(prop, alg, e->src_md, w_any, e->bias_md,
                                                      e->dst_md, strides, dilates, pad_l, pad_r)
                                       : Deconv::desc(prop, alg, e->src_md, w_any, e->dst_md,
                                                      strides, dilates, pad_l, pad_r);
    Deconv::primitive_desc pd(d, attr, eng);
    e->weights_md = pd.weights_desc();
    e->scratchpad_bytes = scratchpadBytes(pd);
    e->conv = Deconv(pd);
  } else {
    using Conv = dnnl::convolution_forward;
    auto describe = [&](dnnl::algorithm alg, const memory::desc& src, const memory::desc& dst) {
      return e->has_bias ? Conv::desc(prop, alg, src, w_any, e->bias_md, dst, strides, dilates,
                                      pad_l, pad_r)
                         : Conv::desc(prop, alg, src, w_any, dst, strides, dilates, pad_l, pad_r);
    };
    bool done = false;
    if (allow_winograd && winogradCandidate(k)) {
      // Winograd in oneDNN's blocked layout, with x and y reordered around it: 1.3x to 2.3x
      // faster than the direct kernels on 3x3 stride-1 convolutions of 64 or more channels.
      try {
        const memory::desc any(dimsOf(k.x.sizes, rank), f32, memory::format_tag::any);
        const memory::desc any_y(dimsOf(k.y.sizes, rank), f32, memory::format_tag::any);
        Conv::primitive_desc pd(describe(dnnl::algorithm::convolution_winograd, any, any_y), attr,
                                eng);
        e->src_md = pd.src_desc();
        e->dst_md = pd.dst_desc();
        e->weights_md = pd.weights_desc();
        e->scratchpad_bytes = scratchpadBytes(pd);
        e->conv = Conv(pd);
        e->winograd = true;
        done = true;
      } catch (const dnnl::error&) {
        // Not for this shape or post-op: the direct algorithm below.
      }
    }
    if (!done) {
      Conv::primitive_desc pd(describe(dnnl::algorithm::convolution_direct, e->src_md, e->dst_md),
                              attr, eng);
      e->weights_md = pd.weights_desc();
      e->scratchpad_bytes = scratchpadBytes(pd);
      e->conv = Conv(pd);
    }
  }

  // x: direct, a reorder over its strides, or the strided copy when oneDNN has no reorder.
  // (Winograd's blocked layout is only ever reached by a reorder: winogradCandidate.)
  if (!e->winograd && isDenseChannelsLast(k.x)) {
    e->x_path = Path::kDirect;
  } else {
    e->x_path = Path::kCopy;
    if (positiveStrides(k.x)) {
      e->x_user_md = memory::desc(dimsOf(k.x.sizes, rank), f32, dimsOf(k.x.strides, rank));
      if (makeReorder(eng, e->x_user_md, e->src_md, &e->x_in, &e->scratchpad_bytes))
        e->x_path = Path::kReorder;
    }
  }
  // y: likewise, and never direct when it overlaps an input.
  if (!e->winograd && !k.alias && isDenseChannelsLast(k.y)) {
    e->y_path = Path::kDirect;
  } else {
    e->y_path = Path::kCopy;
    if (positiveStrides(k.y)) {
      e->y_user_md = memory::desc(dimsOf(k.y.sizes, rank), f32, dimsOf(k.y.strides, rank));
      if (makeReorder(eng, e->dst_md, e->y_user_md, &e->y_out, &e->scratchpad_bytes) &&
          (!c.residual() ||
           makeReorder(eng, e->y_user_md, e->dst_md, &e->y_in, &e->scratchpad_bytes)))
        e->y_path = Path::kReorder;
    }
  }
  // The blocked layout is reached only by reorders; without them, the direct algorithm.
  if (e->winograd && (e->x_path != Path::kReorder || e->y_path != Path::kReorder))
    return buildEntry(eng, k, false);
  e->weights.plan(eng, c, k.w, f32, e->weights_md, &e->scratchpad_bytes);
  return e;
}

// Scratch memory of one call.
struct Buffers {
  Scratch scratchpad, x, y, w, w_dense, bias;
};

Status copyView(const KernelEnv& env, const View& from, void* to_data, const int64_t* to_strides,
                const char* from_what, const char* to_what) {
  return stridedCopy(Tag{}, env, kKernel, sizeof(float), from.rank, from.sizes, from.data,
                     from.strides, to_data, to_strides, from_what, to_what);
}

// Runs `e` for one call; throws dnnl::error.
Status execute(const KernelEnv& env, ConvCache& cache, Entry& e, const Call& k) {
  const dnnl::engine& eng = cache.engine();
  struct StreamLease {
    ConvCache& cache;
    std::unique_ptr<dnnl::stream> stream;
    ~StreamLease() { cache.giveBackStream(std::move(stream)); }
  } lease{cache, cache.takeStream()};
  dnnl::stream& stream = *lease.stream;
  CallBindings bound(e, eng);
  Buffers b;
  RAL_RETURN_IF_ERROR(b.scratchpad.allocate(env.driver, e.scratchpad_bytes));
  // One buffer serves every primitive of the call in turn (a zero-size one is never read).
  const memory scratchpad = bound->scratchpad;
  scratchpad.set_data_handle(b.scratchpad.as<void>());
  auto run = [&](dnnl::reorder& r, const memory& from, const memory& to) {
    r.execute(stream,
              {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}, {DNNL_ARG_SCRATCHPAD, scratchpad}});
  };

  // x
  const memory src = bound->src;
  if (e.x_path == Path::kDirect) {
    src.set_data_handle(k.x.data);
  } else {
    RAL_RETURN_IF_ERROR(b.x.allocate(env.driver, e.src_md.get_size()));
    src.set_data_handle(b.x.as<void>());
    if (e.x_path == Path::kReorder) {
      run(e.x_in, memory(e.x_user_md, eng, k.x.data), src);
    } else {
      int64_t to[5];
      channelsLastStrides(k.x, to);
      RAL_RETURN_IF_ERROR(copyView(env, k.x, b.x.as<void>(), to, "x", "scratch"));
    }
  }

  // w
  RAL_ASSIGN_OR_RETURN(memory weights,
                       e.weights.weights(env, eng, k.w, sizeof(float), k.c->constantFilter(),
                                         b.w_dense, b.w, kKernel, run));

  // bias: dense unless its stride says otherwise.
  const memory bias = bound->bias;
  if (e.has_bias) {
    float* data = k.bias.as<float>();
    if (k.bias.sizes[0] > 1 && k.bias.strides[0] != 1) {
      RAL_RETURN_IF_ERROR(b.bias.allocate(env.driver, k.bias.sizes[0] * sizeof(float)));
      float* dense = b.bias.as<float>();
      for (int64_t i = 0; i < k.bias.sizes[0]; ++i) dense[i] = k.bias.as<float>()[i * k.bias.strides[0]];
      data = dense;
    }
    bias.set_data_handle(data);
  }

  // y (with the residual in it first, when there is one)
  const memory dst = bound->dst;
  int64_t y_scratch_strides[5];
  channelsLastStrides(k.y, y_scratch_strides);
  if (e.y_path == Path::kDirect) {
    dst.set_data_handle(k.y.data);
  } else {
    RAL_RETURN_IF_ERROR(b.y.allocate(env.driver, e.dst_md.get_size()));
    dst.set_data_handle(b.y.as<void>());
    if (k.c->residual()) {
      if (e.y_path == Path::kReorder) {
        run(e.y_in, memory(e.y_user_md, eng, k.y.data), dst);
      } else {
        RAL_RETURN_IF_ERROR(
            copyView(env, k.y, b.y.as<void>(), y_scratch_strides, "y (residual)", "scratch"));
      }
    }
  }

  // Through the C API: the C++ one takes its arguments as an unordered_map, built per call.
  const dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, src.get()},
                                  {DNNL_ARG_WEIGHTS, weights.get()},
                                  {DNNL_ARG_DST, dst.get()},
                                  {DNNL_ARG_SCRATCHPAD, scratchpad.get()},
                                  {DNNL_ARG_BIAS, e.has_bias ? bias.get() : nullptr}};
  dnnl::error::wrap_c_api(
      dnnl_primitive_execute(e.conv.get(), stream.get(), e.has_bias ? 5 : 4, args),
      "could not execute the convolution primitive");
  if (e.own_activation) {
    // Over the whole buffer: a blocked layout's padding is zeros, which the activation keeps.
    auto* out = static_cast<float*>(dst.get_data_handle());
    const int64_t n = static_cast<int64_t>(e.dst_md.get_size() / sizeof(float));
    const ConvConfig& c = *k.c;
    RAL_RETURN_IF_ERROR(parallelFor(env.driver, n, 1 << 14, [&](int64_t begin, int64_t end) {
      tiles::activateAvx512(out + begin, end - begin, static_cast<int>(c.activation), c.alpha,
                            c.beta);
      return Status();
    }));
  }

  if (e.y_path == Path::kReorder) {
    run(e.y_out, dst, memory(e.y_user_md, eng, k.y.data));
  } else if (e.y_path == Path::kCopy) {
    View from = k.y;
    from.data = b.y.as<float>();
    std::memcpy(from.strides, y_scratch_strides, sizeof(y_scratch_strides));
    RAL_RETURN_IF_ERROR(copyView(env, from, k.y.data, k.y.strides, "scratch", "y"));
  }
  stream.wait();
  return Status();
}

// Where no input reaches y (an input without elements: C = 0 or an empty spatial dim; the
// output padding of a transposed convolution past its end padding), y is act(bias [+ y_in]).
// Fills every element of y outside the leading box `computed` (sizes per dim; null: all).
Status fillWithoutInput(const Call& k, const int64_t* computed) {
  const View& y = k.y;
  const int64_t total = numel(y);
  for (int64_t i = 0; i < total; ++i) {
    int64_t rest = i, off = 0, channel = 0;
    bool inside = computed != nullptr;
    for (int d = y.rank - 1; d >= 0; --d) {
      const int64_t idx = rest % y.sizes[d];
      rest /= y.sizes[d];
      off += idx * y.strides[d];
      if (d == 1) channel = idx;
      inside = inside && idx < computed[d];
    }
    if (inside) continue;
    double v = k.bias.sizes[0] > 0 ? k.bias.as<float>()[channel * k.bias.strides[0]] : 0.0;
    if (k.c->residual()) v += y.as<float>()[off];
    y.as<float>()[off] = static_cast<float>(convActivate(*k.c, v));
  }
  return Status();
}

std::string describe(const Call& k) {
  auto shape = [](const View& v) {
    std::string s = "[";
    for (int d = 0; d < v.rank; ++d) s += (d ? "x" : "") + std::to_string(v.sizes[d]);
    return s + "]";
  };
  return convConfigString(*k.c) + ", x " + shape(k.x) + ", w " + shape(k.w) + ", bias " +
         shape(k.bias) + ", y " + shape(k.y) + " (channels-first)";
}

Status fromDnnl(const dnnl::error& e, const Call& k) {
  return dnnlStatus(e, kKernel, describe(k));
}

struct Impl {
  template <int R>
  static Status conv(ExecutionContext* ctx, const ConvConfig& c, const MemRef<float, R>& x,
                     const MemRef<float, R>& w, const MemRef<float, 1>& bias,
                     const MemRef<float, R>& y) {
    if (y.numel() == 0) return Status();
    Call k{&c, viewOf(x), viewOf(w), viewOf(bias), viewOf(y), false, 1};
    for (int d = 0; d < R; ++d)
      if (k.y.sizes[d] > 1 && k.y.strides[d] == 0)
        return invalidArgument(kKernel, ": y ", shapeString(y), " has stride 0 in dim ", d,
                               ": its elements overlap");
    if (x.numel() == 0) return fillWithoutInput(k, nullptr);
    for (const View* v : {&k.x, &k.w, &k.y})
      for (int d = 0; d < v->rank; ++d)
        if (v->sizes[d] > INT_MAX)
          return unsupported(kKernel, ": dimension ", v->sizes[d],
                             " exceeds oneDNN's 32-bit dimensions (", describe(k), ")");
    RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, DeviceKind::kCpu));
    auto* threads = env.driver->service<HostThreadsService>();
    k.threads = threads ? threads->threadCount() : ::ral::cpu::usableCpuCount();
    k.alias = overlaps(y, x) || overlaps(y, w) || overlaps(y, bias);
    bool handled = false;
    RAL_RETURN_IF_ERROR(tryPointwiseConv(env, c, x, w, bias, y, k.alias, &handled));
    if (handled) return Status();
    RAL_RETURN_IF_ERROR(tryLinearConv(env, c, x, w, bias, y, k.alias, k.threads, &handled));
    if (handled) return Status();
    // Output padding of a transposed convolution past the end padding receives no input, and
    // oneDNN cannot express it (its end padding would be negative): oneDNN computes y without
    // those trailing positions and they are filled afterwards.
    Call body = k;
    bool tail = false;
    if (c.transposed()) {
      for (int d = 0; d < c.spatial; ++d) {
        const int64_t extent = c.dilations[d] * (w.sizes[2 + d] - 1) + 1;
        const int64_t base =
            (x.sizes[2 + d] - 1) * c.strides[d] - c.pad_begin[d] - c.pad_end[d] + extent;
        const int64_t excess = (y.sizes[2 + d] - base) - c.pad_end[d];
        if (excess > 0) {
          body.y.sizes[2 + d] -= excess;
          tail = true;
        }
      }
    }
    if (numel(body.y) > 0) RAL_RETURN_IF_ERROR(runDnnl(env, body));
    return tail ? fillWithoutInput(k, body.y.sizes) : Status();
  }

 private:
  static Status runDnnl(const KernelEnv& env, const Call& k) {
    OmpThreads omp(k.threads);
    try {
      RAL_ASSIGN_OR_RETURN(ConvCache * cache, env.context->getOrCreate<ConvCache>(uint64_t{0}, [] {
        return std::make_unique<ConvCache>();
      }));
      const EntryKey key = cacheKey(k);
      std::shared_ptr<Entry> e =
          cache->findOrBuild(key, [&] { return buildEntry(cache->engine(), k); });
      return execute(env, *cache, *e, k);
    } catch (const dnnl::error& e) {
      return fromDnnl(e, k);
    } catch (const std::exception& e) {
      return internalError(kKernel, ": ", e.what(), " (", describe(k), ")");
    }
  }
};

constexpr char kDevice[] = "cpu";
RAL_KERNEL_CONV_RANKS(RAL_REGISTER_CONV)

}  // namespace

Status convCpu(ExecutionContext* ctx, const ConvConfig& c, const MemRef<float, 4>& x,
               const MemRef<float, 4>& w, const MemRef<float, 1>& bias, const MemRef<float, 4>& y) {
  return Impl::conv<4>(ctx, c, x, w, bias, y);
}

}  // namespace ral::kernels::cpu

RAL_REGISTRATION_ANCHOR(kernels_conv_cpu);
