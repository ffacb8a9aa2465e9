// What ral_conv and ral_qconv share on the CPU over oneDNN (conv_cpu.cc, qconv_cpu.cc): strided
// views of runtime rank, the channels-last layouts the fast primitives take, the weights as
// oneDNN's logical dims over their real strides, activations as eltwise post-ops, and reorders
// with a user-owned scratchpad. Plain functions, thread-safe.
#ifndef RAL_KERNELS_CONV_CONV_DNNL_H_
#define RAL_KERNELS_CONV_CONV_DNNL_H_

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "kernels/common/kernel_util.h"
#include "kernels/conv/conv.h"
#include "kernels/copy/strided_copy.h"
#include "ral/memref.h"

namespace ral::kernels::cpu::conv_dnnl {

using dnnl::memory;
using Dims = memory::dims;

// A strided view of runtime rank (channels-first for x and y, w's own dims for w).
struct View {
  int rank = 0;
  void* data = nullptr;
  int64_t sizes[5] = {};
  int64_t strides[5] = {};
  template <typename T>
  T* as() const {
    return static_cast<T*>(data);
  }
};
template <typename T, int R>
View viewOf(const MemRef<T, R>& m) {
  View v;
  v.rank = R;
  v.data = const_cast<std::remove_const_t<T>*>(m.data());
  // A size-1 dim's stride is never used: it becomes the outermost one (the span of the others),
  // so descriptors and keys do not depend on it and a leading size-1 batch keeps NCHW / NHWC
  // recognisable to oneDNN's reorders.
  int64_t span = 1;
  for (int d = 0; d < R; ++d)
    if (m.sizes[d] > 1) span = std::max(span, std::abs(m.strides[d]) * m.sizes[d]);
  for (int d = 0; d < R; ++d) {
    v.sizes[d] = m.sizes[d];
    v.strides[d] = m.sizes[d] == 1 ? span : m.strides[d];
  }
  return v;
}

inline bool positiveStrides(const View& v) {
  for (int d = 0; d < v.rank; ++d)
    if (v.strides[d] <= 0) return false;
  return true;
}

// Dense channels-last strides of a channels-first shape [N, C, D...].
inline void channelsLastStrides(const View& v, int64_t* strides) {
  int64_t running = v.sizes[1];
  strides[1] = 1;
  for (int d = v.rank - 1; d >= 2; --d) {
    strides[d] = running;
    running *= v.sizes[d];
  }
  strides[0] = running;
}

inline bool isDenseChannelsLast(const View& v) {
  int64_t want[5];
  channelsLastStrides(v, want);
  for (int d = 0; d < v.rank; ++d)
    if (v.sizes[d] != 1 && v.strides[d] != want[d]) return false;
  return true;
}

// Row-major dense strides.
inline void rowMajorStrides(const View& v, int64_t* strides) {
  int64_t running = 1;
  for (int d = v.rank - 1; d >= 0; --d) {
    strides[d] = running;
    running *= v.sizes[d];
  }
}

inline int64_t numel(const View& v) {
  int64_t n = 1;
  for (int d = 0; d < v.rank; ++d) n *= v.sizes[d];
  return n;
}

inline memory::format_tag channelsLastTag(int rank) {
  return rank == 3   ? memory::format_tag::nwc
         : rank == 4 ? memory::format_tag::nhwc
                     : memory::format_tag::ndhwc;
}

inline dnnl::algorithm eltwiseAlgorithm(ConvActivation a) {
  switch (a) {
    case ConvActivation::kRelu:
      return dnnl::algorithm::eltwise_relu;
    case ConvActivation::kClip:
      return dnnl::algorithm::eltwise_clip;
    case ConvActivation::kSigmoid:
      return dnnl::algorithm::eltwise_logistic;
    case ConvActivation::kSilu:
      return dnnl::algorithm::eltwise_swish;
    case ConvActivation::kHardSwish:
      return dnnl::algorithm::eltwise_hardswish;
    case ConvActivation::kGeluErf:
      return dnnl::algorithm::eltwise_gelu_erf;
    case ConvActivation::kGeluTanh:
      return dnnl::algorithm::eltwise_gelu_tanh;
    case ConvActivation::kNone:
      break;
  }
  return dnnl::algorithm::undef;
}

// c's activation as oneDNN's eltwise algorithm and parameters (undef for none).
struct Eltwise {
  dnnl::algorithm alg;
  float alpha, beta;
};
inline Eltwise eltwiseOf(const ConvConfig& c) {
  const bool clip = c.activation == ConvActivation::kClip;
  // swish's alpha scales the sigmoid's argument: 1 is silu. oneDNN refuses clip bounds that
  // cross; min(max(v, alpha), beta) is then beta everywhere, as with [beta, beta].
  const float alpha = clip                                    ? std::min(c.alpha, c.beta)
                      : c.activation == ConvActivation::kSilu ? 1.0f
                                                              : 0.0f;
  return {eltwiseAlgorithm(c.activation), alpha, clip ? c.beta : 0.0f};
}

// c's activation appended to `ops` as an eltwise post-op (nothing for none).
inline void appendActivation(const ConvConfig& c, dnnl::post_ops* ops) {
  if (c.activation == ConvActivation::kNone) return;
  const Eltwise e = eltwiseOf(c);
  ops->append_eltwise(1.0f, e.alg, e.alpha, e.beta);
}

// The weights as oneDNN's logical dims ([F, C, K...], or [G, F/G, C/G, K...] with groups) over
// w's memory: the strides are w's, permuted. Transposed weights are stored [C, F/G, K...].
struct WeightsLayout {
  int rank = 0;
  int64_t dims[6] = {};
  int64_t strides[6] = {};
};
inline WeightsLayout weightsLayout(const ConvConfig& c, const View& w, const int64_t* w_strides) {
  WeightsLayout l;
  const int s = c.spatial;
  const int64_t g = c.groups;
  // Output-channel and input-channel (size, stride) in w's memory.
  int64_t f = 0, f_stride = 0, ci = 0, ci_stride = 0;
  if (c.transposed()) {
    ci = w.sizes[0];  // C
    ci_stride = w_strides[0];
    f = w.sizes[1] * g;
    f_stride = w_strides[1];
  } else {
    f = w.sizes[0];
    f_stride = w_strides[0];
    ci = w.sizes[1] * g;
    ci_stride = w_strides[1];
  }
  int d = 0;
  if (g > 1) {
    // The group index steps over the channels of one group in the dim w groups by.
    l.dims[d] = g;
    l.strides[d++] = c.transposed() ? (ci / g) * ci_stride : (f / g) * f_stride;
  }
  l.dims[d] = f / g;
  l.strides[d++] = f_stride;
  l.dims[d] = ci / g;
  l.strides[d++] = ci_stride;
  for (int k = 0; k < s; ++k) {
    l.dims[d] = w.sizes[2 + k];
    l.strides[d++] = w_strides[2 + k];
  }
  // Size-1 dims outermost, as in viewOf.
  int64_t span = 1;
  for (int k = 0; k < d; ++k)
    if (l.dims[k] > 1) span = std::max(span, std::abs(l.strides[k]) * l.dims[k]);
  for (int k = 0; k < d; ++k)
    if (l.dims[k] == 1) l.strides[k] = span;
  l.rank = d;
  return l;
}

inline Dims dimsOf(const int64_t* p, int n) { return Dims(p, p + n); }

inline size_t scratchpadBytes(const dnnl::primitive_desc_base& pd) {
  return pd.scratchpad_desc().get_size();
}

inline dnnl::primitive_attr userScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// A reorder between two descriptors, or nothing (and false) when oneDNN has none.
inline bool makeReorder(const dnnl::engine& eng, const memory::desc& from, const memory::desc& to,
                        dnnl::reorder* out, size_t* scratchpad) {
  try {
    dnnl::reorder::primitive_desc pd(eng, from, eng, to, userScratchpad());
    *out = dnnl::reorder(pd);
    *scratchpad = std::max(*scratchpad, scratchpadBytes(pd));
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

// How a call's weights reach a primitive: as they are (already in its layout), or reordered
// from their real strides (after a dense copy where a stride is not positive). Constant filters
// are reordered once per address and kept for the life of the owning cache entry.
struct WeightsPlan {
  memory::desc user_md, primitive_md;
  dnnl::reorder reorder;
  bool direct = false, positive = true;
  std::mutex mutex;  // guards kept
  std::unordered_map<const void*, std::unique_ptr<memory>> kept;

  // Plans w (of data type `type`) into `primitive`; throws dnnl::error when oneDNN has no
  // reorder to it. The reorder's scratchpad joins *scratchpad.
  void plan(const dnnl::engine& eng, const ConvConfig& c, const View& w, memory::data_type type,
            const memory::desc& primitive, size_t* scratchpad) {
    primitive_md = primitive;
    int64_t dense[5];
    rowMajorStrides(w, dense);
    positive = positiveStrides(w);
    const WeightsLayout l = weightsLayout(c, w, positive ? w.strides : dense);
    user_md = memory::desc(dimsOf(l.dims, l.rank), type, dimsOf(l.strides, l.rank));
    direct = positive && user_md == primitive_md;
    if (!direct && !makeReorder(eng, user_md, primitive_md, &reorder, scratchpad))
      throw dnnl::error(dnnl_unimplemented,
                        "no reorder of the weights into the primitive's layout");
  }

  // The weights of one call in the primitive's layout (`elem_size` bytes each); `dense` and
  // `reordered` are the call's scratch, `run(reorder, from, to)` runs a reorder on its stream.
  template <typename Run>
  StatusOr<memory> weights(const KernelEnv& env, const dnnl::engine& eng, const View& w,
                           size_t elem_size, bool constant_filter, Scratch& dense,
                           Scratch& reordered, const char* kernel, Run run) {
    if (direct) return memory(primitive_md, eng, w.data);
    std::unique_lock<std::mutex> lock(mutex, std::defer_lock);
    if (constant_filter) {
      lock.lock();
      auto it = kept.find(w.data);
      if (it != kept.end()) return *it->second;
    }
    memory user;
    if (positive) {
      user = memory(user_md, eng, w.data);
    } else {
      int64_t strides[5];
      rowMajorStrides(w, strides);
      RAL_RETURN_IF_ERROR(dense.allocate(env.driver, numel(w) * elem_size));
      RAL_RETURN_IF_ERROR(stridedCopy(Tag{}, env, kernel, elem_size, w.rank, w.sizes, w.data,
                                      w.strides, dense.as<void>(), strides, "w", "scratch"));
      user = memory(user_md, eng, dense.as<void>());
    }
    if (constant_filter) {
      // Allocated by oneDNN, owned here: it lives as long as the cache entry.
      auto owned = std::make_unique<memory>(primitive_md, eng);
      run(reorder, user, *owned);
      memory result = *owned;
      kept.emplace(w.data, std::move(owned));
      return result;
    }
    RAL_RETURN_IF_ERROR(reordered.allocate(env.driver, primitive_md.get_size()));
    memory result(primitive_md, eng, reordered.as<void>());
    run(reorder, user, result);
    return result;
  }
};

// A oneDNN error as a status naming `kernel` and the call (`what`).
inline Status dnnlStatus(const dnnl::error& e, const char* kernel, const std::string& what) {
  if (e.status == dnnl_out_of_memory)
    return outOfMemory(kernel, ": oneDNN is out of memory for ", what);
  if (e.status == dnnl_unimplemented || e.status == dnnl_invalid_arguments)
    return unsupported(kernel, ": oneDNN cannot run ", what, ": ", e.what());
  return internalError(kernel, ": oneDNN failed on ", what, ": ", e.what());
}

}  // namespace ral::kernels::cpu::conv_dnnl

#endif  // RAL_KERNELS_CONV_CONV_DNNL_H_
