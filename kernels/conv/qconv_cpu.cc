// ral_qconv on the CPU (kernels/conv/qconv.h has the contract): oneDNN's int8 convolution
// (u8 or s8 activations, s8 weights, s32 sums; brgconv with VNNI where the CPU has it), with the
// scales as output scales, the zero points as run-time zero-point arguments, the activation as
// an eltwise post-op and the conversion to u8 / s8 / f32 done by the primitive as it stores.
//
// oneDNN 2.6's order of operations is the contract's: the bias is added to the s32 sum, the
// result scaled, the post-op applied, the destination zero point added, then rounded to nearest
// even and saturated. Source zero points include the padding (oneDNN's padding compensation), so
// a padded position contributes nothing, as in ONNX.
//
// Layout and caching as ral_conv's (conv_cpu.cc): the primitive takes dense channels-last x and
// y, other strides are reordered through scratch; one Entry per configuration (shapes, strides,
// config, scales, thread count) per Context; constant filters kept reordered by address.
#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
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
#include "kernels/conv/conv_dnnl.h"
#include "kernels/conv/qconv.h"
#include "kernels/copy/strided_copy.h"
#include "ral/driver_services.h"
#include "ral/registration.h"

namespace ral::kernels::cpu {
namespace {

using namespace conv_dnnl;  // NOLINT(build/namespaces): this file's own helpers

constexpr const char* kKernel = "ral_qconv";

// One call's operands and decisions.
struct Call {
  const QConvConfig* q;
  View x, w, bias, scales, y;
  memory::data_type x_type, y_type;
  size_t y_size;  // bytes per y element
  bool alias;     // y overlaps x or w: computed into scratch, then copied
  int threads;
};

// Everything cached for one configuration; immutable but for `constant_weights`.
struct Entry {
  dnnl::primitive conv;
  memory::desc src_md, bias_md, dst_md, x_user_md, y_user_md;
  bool has_bias = false;
  bool x_direct = false, x_reorder = false, y_direct = false, y_reorder = false;
  dnnl::reorder x_in, y_out;
  size_t scratchpad_bytes = 0;
  WeightsPlan weights;
};

// Every Entry of one Context; emptied when full (dynamic shapes could grow it without end).
class QConvCache {
 public:
  static constexpr size_t kMaxEntries = 256;
  QConvCache() : engine_(dnnl::engine::kind::cpu, 0) {}
  const dnnl::engine& engine() const { return engine_; }

  // Builds are serialized: oneDNN's primitive creation never runs on two threads at once.
  template <typename Build>
  std::shared_ptr<Entry> findOrBuild(const std::vector<int64_t>& key, Build build) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it != entries_.end()) return it->second;
    std::shared_ptr<Entry> e = build();
    if (entries_.size() >= kMaxEntries) entries_.clear();
    entries_.emplace(key, e);
    return e;
  }

 private:
  dnnl::engine engine_;
  std::mutex mutex_;
  std::map<std::vector<int64_t>, std::shared_ptr<Entry>> entries_;
};

std::vector<int64_t> cacheKey(const Call& k) {
  std::vector<int64_t> key;
  key.reserve(96);
  auto add = [&](const View& m) {
    key.push_back(m.rank);
    for (int d = 0; d < m.rank; ++d) key.push_back(m.sizes[d]);
    for (int d = 0; d < m.rank; ++d) key.push_back(m.strides[d]);
  };
  for (const View* v : {&k.x, &k.w, &k.bias, &k.y}) add(*v);
  const ConvConfig& c = k.q->conv;
  for (int64_t v : {c.groups, static_cast<int64_t>(c.activation), c.flags}) key.push_back(v);
  for (const int64_t* f : {c.strides, c.dilations, c.pad_begin, c.pad_end})
    for (int d = 0; d < c.spatial; ++d) key.push_back(f[d]);
  for (float f : {c.alpha, c.beta}) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    key.push_back(bits);
  }
  key.push_back(k.q->x_zero_point);
  key.push_back(k.q->y_zero_point);
  key.push_back(static_cast<int64_t>(k.x_type));
  key.push_back(static_cast<int64_t>(k.y_type));
  // The scales are baked into the primitive.
  for (int64_t i = 0; i < k.scales.sizes[0]; ++i) {
    uint32_t bits;
    std::memcpy(&bits, k.scales.as<float>() + i * k.scales.strides[0], 4);
    key.push_back(bits);
  }
  key.push_back(k.threads);
  key.push_back(k.alias ? 1 : 0);
  return key;
}

// Builds the Entry of `k` (throws dnnl::error when oneDNN refuses the convolution).
std::shared_ptr<Entry> buildEntry(const dnnl::engine& eng, const Call& k) {
  const QConvConfig& q = *k.q;
  const ConvConfig& c = q.conv;
  const int s = c.spatial, rank = s + 2;
  auto e = std::make_shared<Entry>();
  e->src_md = memory::desc(dimsOf(k.x.sizes, rank), k.x_type, channelsLastTag(rank));
  e->dst_md = memory::desc(dimsOf(k.y.sizes, rank), k.y_type, channelsLastTag(rank));
  const WeightsLayout wl = weightsLayout(c, k.w, k.w.strides);
  const auto s8 = memory::data_type::s8;
  const memory::desc w_any(dimsOf(wl.dims, wl.rank), s8, memory::format_tag::any);
  e->has_bias = k.bias.sizes[0] > 0;
  if (e->has_bias)
    e->bias_md = memory::desc({k.bias.sizes[0]}, memory::data_type::f32, memory::format_tag::a);
  Dims strides(c.strides, c.strides + s), dilates(s), pad_l(c.pad_begin, c.pad_begin + s),
      pad_r(c.pad_end, c.pad_end + s);
  for (int d = 0; d < s; ++d) dilates[d] = c.dilations[d] - 1;

  dnnl::primitive_attr attr = userScratchpad();
  std::vector<float> scales(static_cast<size_t>(k.scales.sizes[0]));
  for (size_t i = 0; i < scales.size(); ++i)
    scales[i] = k.scales.as<float>()[static_cast<int64_t>(i) * k.scales.strides[0]];
  // Mask bit 1: one scale per index of dst's dim 1, the output channels.
  attr.set_output_scales(scales.size() > 1 ? 2 : 0, scales);
  if (q.x_zero_point != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  if (q.y_zero_point != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
  dnnl::post_ops ops;
  appendActivation(c, &ops);
  attr.set_post_ops(ops);

  using Conv = dnnl::convolution_forward;
  const auto prop = dnnl::prop_kind::forward_inference;
  const auto alg = dnnl::algorithm::convolution_direct;
  const Conv::desc d = e->has_bias ? Conv::desc(prop, alg, e->src_md, w_any, e->bias_md, e->dst_md,
                                                strides, dilates, pad_l, pad_r)
                                   : Conv::desc(prop, alg, e->src_md, w_any, e->dst_md, strides,
                                                dilates, pad_l, pad_r);
  Conv::primitive_desc pd(d, attr, eng);
  e->scratchpad_bytes = scratchpadBytes(pd);
  e->conv = Conv(pd);
  e->weights.plan(eng, c, k.w, s8, pd.weights_desc(), &e->scratchpad_bytes);

  // x and y: direct when dense channels-last, else a reorder over their real strides (or the
  // strided copy where oneDNN cannot describe them).
  if (isDenseChannelsLast(k.x)) {
    e->x_direct = true;
  } else if (positiveStrides(k.x)) {
    e->x_user_md = memory::desc(dimsOf(k.x.sizes, rank), k.x_type, dimsOf(k.x.strides, rank));
    e->x_reorder = makeReorder(eng, e->x_user_md, e->src_md, &e->x_in, &e->scratchpad_bytes);
  }
  if (!k.alias && isDenseChannelsLast(k.y)) {
    e->y_direct = true;
  } else if (positiveStrides(k.y)) {
    e->y_user_md = memory::desc(dimsOf(k.y.sizes, rank), k.y_type, dimsOf(k.y.strides, rank));
    e->y_reorder = makeReorder(eng, e->dst_md, e->y_user_md, &e->y_out, &e->scratchpad_bytes);
  }
  return e;
}

struct Buffers {
  Scratch scratchpad, x, y, w, w_dense, bias;
};

Status copyView(const KernelEnv& env, const View& from, size_t elem_size, void* to_data,
                const int64_t* to_strides, const char* from_what, const char* to_what) {
  return stridedCopy(Tag{}, env, kKernel, elem_size, from.rank, from.sizes, from.data, from.strides,
                     to_data, to_strides, from_what, to_what);
}

// Runs `e` for one call; throws dnnl::error.
Status execute(const KernelEnv& env, const dnnl::engine& eng, Entry& e, const Call& k) {
  dnnl::stream stream(eng);
  Buffers b;
  RAL_RETURN_IF_ERROR(b.scratchpad.allocate(env.driver, std::max<size_t>(1, e.scratchpad_bytes)));
  const memory scratchpad(
      memory::desc({static_cast<int64_t>(std::max<size_t>(1, e.scratchpad_bytes))},
                   memory::data_type::u8, memory::format_tag::a),
      eng, b.scratchpad.as<void>());
  auto run = [&](dnnl::reorder& r, const memory& from, const memory& to) {
    r.execute(stream,
              {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}, {DNNL_ARG_SCRATCHPAD, scratchpad}});
  };

  memory src(e.src_md, eng, DNNL_MEMORY_NONE);
  if (e.x_direct) {
    src.set_data_handle(k.x.data);
  } else {
    RAL_RETURN_IF_ERROR(b.x.allocate(env.driver, e.src_md.get_size()));
    src.set_data_handle(b.x.as<void>());
    if (e.x_reorder) {
      run(e.x_in, memory(e.x_user_md, eng, k.x.data), src);
    } else {
      int64_t to[5];
      channelsLastStrides(k.x, to);
      RAL_RETURN_IF_ERROR(copyView(env, k.x, 1, b.x.as<void>(), to, "x", "scratch"));
    }
  }

  RAL_ASSIGN_OR_RETURN(memory weights,
                       e.weights.weights(env, eng, k.w, 1, k.q->conv.constantFilter(), b.w_dense,
                                         b.w, kKernel, run));

  memory bias;
  if (e.has_bias) {
    float* data = k.bias.as<float>();
    if (k.bias.sizes[0] > 1 && k.bias.strides[0] != 1) {
      RAL_RETURN_IF_ERROR(b.bias.allocate(env.driver, k.bias.sizes[0] * sizeof(float)));
      float* dense = b.bias.as<float>();
      for (int64_t i = 0; i < k.bias.sizes[0]; ++i) dense[i] = data[i * k.bias.strides[0]];
      data = dense;
    }
    bias = memory(e.bias_md, eng, data);
  }

  memory dst(e.dst_md, eng, DNNL_MEMORY_NONE);
  int64_t y_scratch_strides[5];
  channelsLastStrides(k.y, y_scratch_strides);
  if (e.y_direct) {
    dst.set_data_handle(k.y.data);
  } else {
    RAL_RETURN_IF_ERROR(b.y.allocate(env.driver, e.dst_md.get_size()));
    dst.set_data_handle(b.y.as<void>());
  }

  int32_t x_zp = k.q->x_zero_point, y_zp = k.q->y_zero_point;
  const memory::desc zp_md({1}, memory::data_type::s32, memory::format_tag::a);
  const memory x_zp_mem(zp_md, eng, &x_zp), y_zp_mem(zp_md, eng, &y_zp);
  std::vector<dnnl_exec_arg_t> args = {{DNNL_ARG_SRC, src.get()},
                                       {DNNL_ARG_WEIGHTS, weights.get()},
                                       {DNNL_ARG_DST, dst.get()},
                                       {DNNL_ARG_SCRATCHPAD, scratchpad.get()}};
  if (e.has_bias) args.push_back({DNNL_ARG_BIAS, bias.get()});
  if (x_zp != 0) args.push_back({DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, x_zp_mem.get()});
  if (y_zp != 0) args.push_back({DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, y_zp_mem.get()});
  dnnl::error::wrap_c_api(dnnl_primitive_execute(e.conv.get(), stream.get(),
                                                 static_cast<int>(args.size()), args.data()),
                          "could not execute the int8 convolution primitive");

  if (e.y_reorder) {
    run(e.y_out, dst, memory(e.y_user_md, eng, k.y.data));
  } else if (!e.y_direct) {
    View from = k.y;
    from.data = b.y.as<void>();
    std::memcpy(from.strides, y_scratch_strides, sizeof(y_scratch_strides));
    RAL_RETURN_IF_ERROR(copyView(env, from, k.y_size, k.y.data, k.y.strides, "scratch", "y"));
  }
  stream.wait();
  return Status();
}

// x without elements (C = 0 or an empty spatial dim): every y is the output of acc = 0.
template <typename Y>
void fillWithoutInput(const Call& k) {
  const View& y = k.y;
  const int64_t total = numel(y);
  for (int64_t i = 0; i < total; ++i) {
    int64_t rest = i, off = 0, channel = 0;
    for (int d = y.rank - 1; d >= 0; --d) {
      const int64_t idx = rest % y.sizes[d];
      rest /= y.sizes[d];
      off += idx * y.strides[d];
      if (d == 1) channel = idx;
    }
    const double bias = k.bias.sizes[0] > 0 ? k.bias.as<float>()[channel * k.bias.strides[0]] : 0;
    const int64_t si = k.scales.sizes[0] > 1 ? channel : 0;
    const double scale = k.scales.as<float>()[si * k.scales.strides[0]];
    y.as<Y>()[off] = qconvOutput<Y>(*k.q, scale, bias);
  }
}

std::string describe(const Call& k) {
  auto shape = [](const View& v) {
    std::string s = "[";
    for (int d = 0; d < v.rank; ++d) s += (d ? "x" : "") + std::to_string(v.sizes[d]);
    return s + "]";
  };
  return convConfigString(k.q->conv) + ", x " + shape(k.x) + " " + (k.q->x_unsigned ? "u8" : "s8") +
         ", w " + shape(k.w) + ", y " + shape(k.y) + " (channels-first)";
}

Status fromDnnl(const dnnl::error& e, const Call& k) { return dnnlStatus(e, kKernel, describe(k)); }

struct Impl {
  template <typename Y, int R>
  static Status qconv(ExecutionContext* ctx, const QConvConfig& q, const MemRef<int8_t, R>& x,
                      const MemRef<int8_t, R>& w, const MemRef<float, 1>& bias,
                      const MemRef<float, 1>& scales, const MemRef<Y, R>& y) {
    if (y.numel() == 0) return Status();
    constexpr bool f32 = std::is_same_v<Y, float>;
    const auto u8 = memory::data_type::u8, s8 = memory::data_type::s8;
    Call k{&q,
           viewOf(x),
           viewOf(w),
           viewOf(bias),
           viewOf(scales),
           viewOf(y),
           q.x_unsigned ? u8 : s8,
           f32 ? memory::data_type::f32 : (q.y_unsigned ? u8 : s8),
           sizeof(Y),
           false,
           1};
    for (int d = 0; d < R; ++d)
      if (k.y.sizes[d] > 1 && k.y.strides[d] == 0)
        return invalidArgument(kKernel, ": y ", shapeString(y), " has stride 0 in dim ", d,
                               ": its elements overlap");
    if (x.numel() == 0) {
      fillWithoutInput<Y>(k);
      return Status();
    }
    for (const View* v : {&k.x, &k.w, &k.y})
      for (int d = 0; d < v->rank; ++d)
        if (v->sizes[d] > INT_MAX)
          return unsupported(kKernel, ": dimension ", v->sizes[d],
                             " exceeds oneDNN's 32-bit dimensions (", describe(k), ")");
    RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, DeviceKind::kCpu));
    auto* threads = env.driver->service<HostThreadsService>();
    k.threads = threads ? threads->threadCount() : ::ral::cpu::usableCpuCount();
    k.alias = overlaps(y, x) || overlaps(y, w);
    OmpThreads omp(k.threads);
    try {
      RAL_ASSIGN_OR_RETURN(QConvCache * cache,
                           env.context->getOrCreate<QConvCache>(
                               uint64_t{0}, [] { return std::make_unique<QConvCache>(); }));
      std::shared_ptr<Entry> e =
          cache->findOrBuild(cacheKey(k), [&] { return buildEntry(cache->engine(), k); });
      return execute(env, cache->engine(), *e, k);
    } catch (const dnnl::error& e) {
      return fromDnnl(e, k);
    } catch (const std::exception& e) {
      return internalError(kKernel, ": ", e.what(), " (", describe(k), ")");
    }
  }
};

constexpr char kDevice[] = "cpu";
RAL_KERNEL_CONV_RANKS(RAL_REGISTER_QCONV)

}  // namespace
}  // namespace ral::kernels::cpu

RAL_REGISTRATION_ANCHOR(kernels_qconv_cpu);
