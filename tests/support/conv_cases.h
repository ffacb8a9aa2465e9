// ral_conv test cases shared by the CPU kernel's tests (tests/unit/kernels_conv_test.cc), the
// CUDA kernel's (tests/cuda) and the kernel conformance suite: a case's parameters, host tensors
// in several layouts and the shapes of its operands.
#ifndef RAL_TESTS_SUPPORT_CONV_CASES_H_
#define RAL_TESTS_SUPPORT_CONV_CASES_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ral/memref.h"

namespace ral::testing {

// How a test tensor is stored (its logical shape is what the kernel is given).
enum class Store {
  kDense,
  kPadded,             // every dim one longer in memory, at an offset
  kColumnMajor,        // dims stored in reverse order
  kEveryOtherChannel,  // the odd entries of dim 1 (or, channels-last, of the last dim)
  kChannelsLast,       // dim 1 stored innermost ([F, K..., C] for a filter)
  kReversed,           // the last dim with a negative stride
  kBroadcastBatch,     // batch stride 0
};

inline const char* storeName(Store s) {
  switch (s) {
    case Store::kDense:
      return "dense";
    case Store::kPadded:
      return "padded";
    case Store::kColumnMajor:
      return "column-major";
    case Store::kEveryOtherChannel:
      return "every-other-channel";
    case Store::kChannelsLast:
      return "channels-last";
    case Store::kReversed:
      return "reversed";
    case Store::kBroadcastBatch:
      return "broadcast-batch";
  }
  return "?";
}

struct ConvCase {
  int64_t n = 1, c = 1, f = 1, groups = 1;
  std::vector<int64_t> in, k, stride, dil, pb, pe, op;  // op: output padding (transposed)
  int act = 0;
  float alpha = 0, beta = 0;
  int64_t flags = 0;
  bool bias = true;
  Store xs = Store::kDense, ys = Store::kDense, ws = Store::kDense, bs = Store::kDense;

  int spatial() const { return static_cast<int>(in.size()); }
  bool transposed() const { return flags & 8; }
  bool channelsLast() const { return flags & 4; }
  bool residual() const { return flags & 1; }
  bool constantFilter() const { return flags & 2; }
  int64_t out(int d) const {
    const int64_t extent = dil[d] * (k[d] - 1) + 1;
    if (transposed()) return (in[d] - 1) * stride[d] - pb[d] - pe[d] + extent + op[d];
    return (in[d] + pb[d] + pe[d] - extent) / stride[d] + 1;
  }
  std::string describe() const {
    std::ostringstream os;
    auto list = [&](const char* name, const std::vector<int64_t>& v) {
      os << " " << name << "[";
      for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
      os << "]";
    };
    os << "n" << n << " c" << c << " f" << f << " g" << groups;
    list("in", in);
    list("k", k);
    list("s", stride);
    list("d", dil);
    list("pb", pb);
    list("pe", pe);
    if (transposed()) list("op", op);
    os << " act" << act << " [" << alpha << "," << beta << "] flags" << flags << " bias" << bias
       << " x " << storeName(xs) << " y " << storeName(ys) << " w " << storeName(ws) << " b "
       << storeName(bs);
    return os.str();
  }
};

// A case with stride and dilation 1 and no padding.
inline ConvCase basicConv(int64_t n, int64_t c, int64_t f, std::vector<int64_t> in,
                          std::vector<int64_t> k) {
  ConvCase cs;
  cs.n = n;
  cs.c = c;
  cs.f = f;
  const size_t s = in.size();
  cs.in = std::move(in);
  cs.k = std::move(k);
  cs.stride.assign(s, 1);
  cs.dil.assign(s, 1);
  cs.pb.assign(s, 0);
  cs.pe.assign(s, 0);
  cs.op.assign(s, 0);
  return cs;
}

// conv.h's activation `act` on v in double, clip to [lo, hi]: the tests' reference, written
// apart from the kernels' own.
inline double referenceActivation(int act, double v, double lo = 0, double hi = 0) {
  switch (act) {
    case 1:
      return std::max(v, 0.0);
    case 2:
      return std::min(std::max(v, lo), hi);
    case 3:
      return 1 / (1 + std::exp(-v));
    case 4:
      return v / (1 + std::exp(-v));
    case 5:
      return v * std::min(std::max(v + 3, 0.0), 6.0) / 6;
    case 6:
      return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    case 7:
      return 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
  }
  return v;
}

// Host storage and a view of it in the layout `store` asks for.
template <int R>
struct HostTensor {
  std::vector<float> storage;
  MemRef<float, R> view{};

  HostTensor(const std::array<int64_t, R>& sizes, Store store, int channel_dim) {
    std::array<int64_t, R> alloc = sizes;
    if (store == Store::kPadded)
      for (auto& s : alloc) s += 1;
    if (store == Store::kEveryOtherChannel) alloc[channel_dim] *= 2;
    if (store == Store::kBroadcastBatch) alloc[0] = 1;
    // Memory order, innermost first.
    std::array<int, R> order{};
    for (int k = 0; k < R; ++k) order[k] = store == Store::kColumnMajor ? k : R - 1 - k;
    if (store == Store::kChannelsLast && R > 2) {
      int k = 0;
      order[k++] = 1;
      for (int d = R - 1; d >= 2; --d) order[k++] = d;
      order[k] = 0;
    }
    int64_t running = 1;
    for (int k = 0; k < R; ++k) {
      view.strides[order[k]] = running;
      running *= alloc[order[k]];
    }
    int64_t offset = store == Store::kPadded ? 3 : 0;
    if (store == Store::kEveryOtherChannel) {
      offset += view.strides[channel_dim];
      view.strides[channel_dim] *= 2;
    }
    if (store == Store::kReversed && sizes[R - 1] > 0) {
      offset += (sizes[R - 1] - 1) * view.strides[R - 1];
      view.strides[R - 1] = -view.strides[R - 1];
    }
    if (store == Store::kBroadcastBatch) view.strides[0] = 0;
    for (int d = 0; d < R; ++d) view.sizes[d] = sizes[d];
    // Values outside the view are large, so reading one shows in the result.
    storage.assign(static_cast<size_t>(running + offset + 1), 1000.0f);
    view.allocated = view.aligned = storage.data();
    view.offset = offset;
  }
  // Moves keep the storage (and so the view) in place; copies would not.
  HostTensor(HostTensor&&) = default;
  HostTensor(const HostTensor&) = delete;
  HostTensor& operator=(const HostTensor&) = delete;
  int64_t numel() const { return view.numel(); }
  // The logical index of the i-th element in row-major order.
  std::array<int64_t, R> index(int64_t i) const {
    std::array<int64_t, R> idx{};
    for (int d = R - 1; d >= 0; --d) idx[d] = i % view.sizes[d], i /= view.sizes[d];
    return idx;
  }
  void fill(std::mt19937& rng, double lo = -1, double hi = 1) {
    std::uniform_real_distribution<double> dist(lo, hi);
    for (int64_t i = 0; i < numel(); ++i) view.at(index(i)) = static_cast<float>(dist(rng));
  }
};

// The shapes of a case's operands with R dims (R - 2 spatial).
template <int R>
struct ConvShapes {
  static std::array<int64_t, R> activation(const ConvCase& cs, int64_t ch,
                                           const std::vector<int64_t>& sp) {
    std::array<int64_t, R> s{};
    s[0] = cs.n;
    s[cs.channelsLast() ? R - 1 : 1] = ch;
    for (int d = 0; d < R - 2; ++d) s[cs.channelsLast() ? 1 + d : 2 + d] = sp[d];
    return s;
  }
  static std::vector<int64_t> outSizes(const ConvCase& cs) {
    std::vector<int64_t> o;
    for (int d = 0; d < cs.spatial(); ++d) o.push_back(cs.out(d));
    return o;
  }
  static std::array<int64_t, R> x(const ConvCase& cs) { return activation(cs, cs.c, cs.in); }
  static std::array<int64_t, R> y(const ConvCase& cs) {
    return activation(cs, cs.f, outSizes(cs));
  }
  static std::array<int64_t, R> weight(const ConvCase& cs) {
    std::array<int64_t, R> s{};
    s[0] = cs.transposed() ? cs.c : cs.f;
    s[1] = cs.transposed() ? cs.f / cs.groups : cs.c / cs.groups;
    for (int d = 0; d < R - 2; ++d) s[2 + d] = cs.k[d];
    return s;
  }
  static int channelDim(const ConvCase& cs) { return cs.channelsLast() ? R - 1 : 1; }
};

// Convolutions of every shape family a kernel may map differently: 1-, 2- and 3-D, groups,
// depthwise, strides, dilations, symmetric pads and asymmetric ones cuDNN's symmetric pads can
// and cannot express.
inline std::vector<ConvCase> convShapeCases() {
  std::vector<ConvCase> cases;
  ConvCase c = basicConv(2, 3, 4, {9}, {3});
  c.pb = c.pe = {1};
  cases.push_back(c);
  c = basicConv(1, 2, 3, {11}, {3});  // asymmetric: the input is padded explicitly
  c.stride = {2};
  c.dil = {2};
  c.pb = {2};
  cases.push_back(c);
  c = basicConv(1, 4, 6, {7, 5}, {3, 2});
  c.stride = {1, 2};
  c.pb = {1, 0};
  c.pe = {0, 1};
  cases.push_back(c);
  c = basicConv(2, 4, 6, {6, 6}, {3, 3});
  c.groups = 2;
  c.stride = {2, 2};
  c.dil = {2, 1};
  c.pb = {2, 1};
  c.pe = {1, 2};
  cases.push_back(c);
  c = basicConv(1, 5, 5, {8, 7}, {3, 3});  // depthwise
  c.groups = 5;
  c.pb = c.pe = {1, 1};
  cases.push_back(c);
  c = basicConv(1, 4, 8, {9, 6}, {3, 3});  // depthwise, channel multiplier 2
  c.groups = 4;
  c.stride = {2, 1};
  c.dil = {1, 2};
  c.pb = {1, 2};
  c.pe = {0, 2};
  cases.push_back(c);
  c = basicConv(1, 3, 2, {10, 11}, {2, 3});  // pad_begin > pad_end, same output as symmetric
  c.stride = {3, 3};
  c.pb = {0, 1};
  c.pe = {2, 0};
  cases.push_back(c);
  c = basicConv(1, 3, 4, {5, 6, 4}, {3, 2, 1});
  c.stride = {1, 2, 1};
  c.dil = {1, 1, 2};
  c.pb = {1, 0, 1};
  c.pe = {0, 1, 1};
  cases.push_back(c);
  c = basicConv(2, 3, 3, {4, 5, 3}, {2, 3, 3});  // depthwise 3-D
  c.groups = 3;
  c.pb = {1, 1, 1};
  c.pe = {0, 1, 1};
  cases.push_back(c);
  cases.push_back(basicConv(1, 3, 2, {1, 7}, {1, 3}));  // size-1 spatial dim
  cases.push_back(basicConv(2, 1, 1, {1, 1}, {1, 1}));  // everything 1
  cases.push_back(basicConv(3, 8, 5, {4, 4}, {1, 1}));  // 1x1
  cases.push_back(basicConv(0, 3, 4, {5, 5}, {3, 3}));  // empty batch
  const size_t n = cases.size();
  for (size_t i = 0; i < n; i += 2) {
    ConvCase nb = cases[i];
    nb.bias = false;
    cases.push_back(nb);
  }
  return cases;
}

// Transposed convolutions: output padding below the stride, of a stride or more (dilation
// larger than the stride), beyond the end padding, groups, 1- to 3-D.
inline std::vector<ConvCase> convTransposedCases() {
  std::vector<ConvCase> cases;
  ConvCase c = basicConv(2, 3, 4, {5}, {3});
  c.stride = {2};
  c.pb = {1};
  c.op = {1};
  cases.push_back(c);
  c = basicConv(1, 4, 6, {4, 5}, {3, 2});
  c.groups = 2;
  c.stride = {2, 3};
  c.dil = {1, 2};
  c.pb = {1, 0};
  c.pe = {0, 1};
  c.op = {1, 2};
  cases.push_back(c);
  c = basicConv(1, 4, 4, {5, 5}, {3, 3});  // depthwise
  c.groups = 4;
  c.stride = {2, 2};
  c.pb = c.pe = {1, 1};
  c.op = {1, 0};
  cases.push_back(c);
  c = basicConv(1, 2, 3, {4, 4}, {3, 2});  // output padding of a stride or more (dilation 3)
  c.dil = {3, 2};
  c.pb = {1, 0};
  c.pe = {2, 1};
  c.op = {2, 1};
  cases.push_back(c);
  c = basicConv(1, 3, 2, {5, 4}, {2, 3});  // output padding beyond the end padding
  c.dil = {3, 2};
  c.op = {2, 1};
  cases.push_back(c);
  c = basicConv(1, 2, 2, {3, 4, 2}, {2, 2, 3});
  c.stride = {2, 1, 2};
  c.pb = {0, 1, 1};
  c.pe = {1, 0, 0};
  c.op = {1, 0, 1};
  cases.push_back(c);
  cases.push_back(basicConv(0, 2, 3, {3, 3}, {2, 2}));  // empty batch
  for (ConvCase& cs : cases) cs.flags = 8;
  return cases;
}

}  // namespace ral::testing

#endif  // RAL_TESTS_SUPPORT_CONV_CASES_H_
