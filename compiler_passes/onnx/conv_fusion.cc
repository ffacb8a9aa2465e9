#include "compiler_passes/onnx/conv_fusion.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>

namespace mlir {
namespace disc_ral {
namespace onnx {

namespace {

// The value of a one-element float constant stored in the model (raw or float_data), if `t` is
// one.
std::optional<float> scalarOf(const ::onnx::TensorProto& t) {
  if (t.data_type() != ::onnx::TensorProto::FLOAT ||
      t.data_location() != ::onnx::TensorProto::DEFAULT ||
      std::any_of(t.dims().begin(), t.dims().end(), [](int64_t d) { return d != 1; }))
    return std::nullopt;
  if (t.float_data_size() == 1) return t.float_data(0);
  if (t.raw_data().size() == sizeof(float)) {
    float f;
    std::memcpy(&f, t.raw_data().data(), sizeof(f));
    return f;
  }
  return std::nullopt;
}

}  // namespace

std::vector<ConvEpilogue> planConvEpilogues(const ::onnx::GraphProto& graph,
                                            const EpiloguePlanOptions& options) {
  const bool hardswish = options.hardswish, linear = options.linear;
  // value -> the nodes reading it; -1 stands for the graph's outputs.
  std::map<std::string, std::vector<int>> users;
  for (int n = 0; n < graph.node_size(); ++n)
    for (const std::string& in : graph.node(n).input())
      if (!in.empty()) users[in].push_back(n);
  for (const auto& out : graph.output()) users[out.name()].push_back(-1);
  // A node with subgraphs (If, Loop, Scan) reads every name they mention: fusing a value away
  // that a subgraph reads would leave it undefined there.
  std::function<void(const ::onnx::GraphProto&, int)> mentions = [&](const ::onnx::GraphProto& g,
                                                                     int n) {
    for (const auto& node : g.node()) {
      for (const std::string& in : node.input())
        if (!in.empty()) users[in].push_back(n);
      for (const auto& a : node.attribute()) {
        if (a.has_g()) mentions(a.g(), n);
        for (const auto& sub : a.graphs()) mentions(sub, n);
      }
    }
    for (const auto& out : g.output()) users[out.name()].push_back(n);
  };
  for (int n = 0; n < graph.node_size(); ++n)
    for (const auto& a : graph.node(n).attribute()) {
      if (a.has_g()) mentions(a.g(), n);
      for (const auto& sub : a.graphs()) mentions(sub, n);
    }
  auto usersOf = [&](const std::string& v) -> const std::vector<int>& { return users[v]; };
  std::map<std::string, int> producer;
  for (int n = 0; n < graph.node_size(); ++n)
    for (const std::string& out : graph.node(n).output())
      if (!out.empty()) producer[out] = n;
  auto onlyUser = [&](const std::string& v) {
    const std::vector<int>& u = usersOf(v);
    return u.size() == 1 ? u[0] : -1;
  };
  auto isOp = [&](int n, const char* op, int inputs) {
    return n >= 0 && graph.node(n).op_type() == op && graph.node(n).domain().empty() &&
           graph.node(n).input_size() >= 1 && graph.node(n).output_size() == 1 &&
           (inputs < 0 || graph.node(n).input_size() == inputs);
  };

  // Values known at import time: initializers, Constants and Identities of them; and the
  // one-float ones' values.
  std::set<std::string> constant;
  std::map<std::string, float> scalar;
  for (const auto& init : graph.initializer()) {
    constant.insert(init.name());
    if (auto f = scalarOf(init)) scalar[init.name()] = *f;
  }
  for (const auto& node : graph.node()) {
    if (!node.domain().empty() || node.output_size() != 1) continue;
    if (node.op_type() == "Constant") {
      constant.insert(node.output(0));
      for (const auto& a : node.attribute())
        if (a.name() == "value" && a.has_t())
          if (auto f = scalarOf(a.t())) scalar[node.output(0)] = *f;
    } else if (node.op_type() == "Identity" && node.input_size() == 1 &&
               constant.count(node.input(0))) {
      constant.insert(node.output(0));
      auto f = scalar.find(node.input(0));
      if (f != scalar.end()) scalar[node.output(0)] = f->second;
    }
  }
  // Whether node n's inputs are `v` and a constant scalar within 1e-6 of `value`, either order.
  auto withScalar = [&](int n, const std::string& v, double value) {
    const ::onnx::NodeProto& node = graph.node(n);
    if (node.input_size() != 2 || (node.input(0) != v && node.input(1) != v)) return false;
    const std::string& other = node.input(0) == v ? node.input(1) : node.input(0);
    auto f = scalar.find(other);
    return f != scalar.end() && std::abs(f->second - value) <= 1e-6 * std::abs(value);
  };

  // Node n as a QuantizeLinear / DequantizeLinear of ONNX's default domain with no attribute
  // but axis (blocked quantization and output_dtype are left to the nodes' own converters).
  auto quantizeNode = [&](int n, const char* op) {
    QuantizeNode q;
    if (n < 0) return q;
    const ::onnx::NodeProto& node = graph.node(n);
    if (node.op_type() != op || !node.domain().empty() || node.input_size() < 2 ||
        node.input_size() > 3 || node.output_size() != 1)
      return q;
    for (const auto& a : node.attribute()) {
      if (a.name() != "axis") return q;
      q.axis = a.i();
    }
    q.node = n;
    q.value = node.input(0);
    q.scale = node.input(1);
    q.zero_point = node.input_size() > 2 ? node.input(2) : "";
    q.output = node.output(0);
    return q;
  };
  auto producerOf = [&](const std::string& v) {
    auto p = producer.find(v);
    return p == producer.end() ? -1 : p->second;
  };

  std::vector<ConvEpilogue> plans;
  // A node joins one epilogue at most (an Add of two Conv outputs goes with the first Conv).
  std::vector<bool> claimed(static_cast<size_t>(graph.node_size()), false);
  for (int c = 0; c < graph.node_size(); ++c) {
    const ::onnx::NodeProto& conv = graph.node(c);
    const bool is_linear = conv.op_type() == "MatMul" || conv.op_type() == "Gemm";
    if ((conv.op_type() != "Conv" && !(linear && is_linear)) || !conv.domain().empty() ||
        conv.output_size() != 1)
      continue;
    ConvEpilogue e;
    e.conv = c;
    e.linear = is_linear;
    std::string v = conv.output(0);
    int u = onlyUser(v);
    if (is_linear && isOp(u, "Add", 2)) {
      // The bias: an Add of a constant (the converter checks that it is one value per column).
      const ::onnx::NodeProto& add = graph.node(u);
      const std::string& other = add.input(0) == v ? add.input(1) : add.input(0);
      if (add.input(0) != add.input(1) && constant.count(other)) {
        e.bias = other;
        e.absorbed.push_back(u);
        v = add.output(0);
        u = onlyUser(v);
      }
    }
    if (!is_linear && isOp(u, "BatchNormalization", 5) && graph.node(u).input(0) == v) {
      const ::onnx::NodeProto& bn = graph.node(u);
      bool training = false;
      for (const auto& a : bn.attribute()) {
        if (a.name() == "epsilon") e.epsilon = a.f();
        if (a.name() == "training_mode" && a.i() != 0) training = true;
      }
      if (!training) {
        e.batch_norm.assign(bn.input().begin() + 1, bn.input().end());
        e.absorbed.push_back(u);
        v = bn.output(0);
        u = onlyUser(v);
      }
    }
    if (isOp(u, "Add", 2)) {
      const ::onnx::NodeProto& add = graph.node(u);
      if (add.input(0) != add.input(1)) {
        e.residual = add.input(0) == v ? add.input(1) : add.input(0);
        e.absorbed.push_back(u);
        v = add.output(0);
        u = onlyUser(v);
      }
    }
    if ((isOp(u, "Relu", 1) || isOp(u, "Sigmoid", 1) || (hardswish && isOp(u, "HardSwish", 1)) ||
         isOp(u, "Clip", -1)) &&
        graph.node(u).input(0) == v) {
      const std::string& op = graph.node(u).op_type();
      e.activation = op == "Relu" ? "relu" : op == "Sigmoid" ? "sigmoid"
                                 : op == "HardSwish"        ? "hardswish"
                                                            : "clip";
      e.activation_node = u;
      e.absorbed.push_back(u);
      const ::onnx::NodeProto& act = graph.node(u);
      if (act.input_size() > 1) e.clip_min = act.input(1);
      if (act.input_size() > 2) e.clip_max = act.input(2);
      for (const auto& a : act.attribute()) {
        if (a.name() == "min") e.attr_min = a.f();
        if (a.name() == "max") e.attr_max = a.f();
      }
    } else if (usersOf(v).size() == 2 && options.gelu) {
      // GELU, erf form: Mul(Mul(v, Add(Erf(Div(v, sqrt 2)), 1)), 0.5) (or Mul by 1 / sqrt 2),
      // each intermediate read by the next node alone.
      int d = usersOf(v)[0], m = usersOf(v)[1];
      if (!(isOp(d, "Div", 2) || isOp(d, "Mul", 2)) || !isOp(m, "Mul", 2) || m < d)
        std::swap(d, m);
      const bool scaled = isOp(d, "Div", 2) ? graph.node(d).input(0) == v &&
                                                  withScalar(d, v, std::sqrt(2.0))
                                            : isOp(d, "Mul", 2) && withScalar(d, v, std::sqrt(0.5));
      const int erf = scaled ? onlyUser(graph.node(d).output(0)) : -1;
      const int one = isOp(erf, "Erf", 1) ? onlyUser(graph.node(erf).output(0)) : -1;
      const bool plus_one = isOp(one, "Add", 2) && withScalar(one, graph.node(erf).output(0), 1.0);
      const std::string& sum = plus_one ? graph.node(one).output(0) : v;
      if (plus_one && isOp(m, "Mul", 2) && onlyUser(sum) == m &&
          ((graph.node(m).input(0) == v && graph.node(m).input(1) == sum) ||
           (graph.node(m).input(1) == v && graph.node(m).input(0) == sum))) {
        const int half = onlyUser(graph.node(m).output(0));
        if (isOp(half, "Mul", 2) && withScalar(half, graph.node(m).output(0), 0.5)) {
          e.activation = "gelu_erf";
          e.activation_node = half;
          for (int a : {d, erf, one, m, half}) e.absorbed.push_back(a);
        }
      }
    }
    if (e.activation == "none" && usersOf(v).size() == 2) {
      // SiLU: Sigmoid(v) and Mul(v, Sigmoid(v)), the Sigmoid read by the Mul alone.
      int s = usersOf(v)[0], m = usersOf(v)[1];
      if (isOp(m, "Sigmoid", 1)) std::swap(s, m);
      if (isOp(s, "Sigmoid", 1) && isOp(m, "Mul", 2) && s < m) {
        const std::string& sig = graph.node(s).output(0);
        const ::onnx::NodeProto& mul = graph.node(m);
        if (onlyUser(sig) == m && ((mul.input(0) == v && mul.input(1) == sig) ||
                                   (mul.input(1) == v && mul.input(0) == sig))) {
          e.activation = "silu";
          e.activation_node = m;
          e.absorbed.push_back(s);
          e.absorbed.push_back(m);
        }
      }
    }
    const std::string last =
        e.absorbed.empty() ? conv.output(0) : graph.node(e.absorbed.back()).output(0);
    if (options.int8) {
      e.dequantize_input = quantizeNode(producerOf(conv.input(0)), "DequantizeLinear");
      if (conv.input_size() > 1)
        e.dequantize_filter = quantizeNode(producerOf(conv.input(1)), "DequantizeLinear");
      if (e.dequantize_input.node < 0 || e.dequantize_filter.node < 0 ||
          !constant.count(e.dequantize_filter.value)) {
        e.dequantize_input = e.dequantize_filter = QuantizeNode();
      } else {
        const QuantizeNode q = quantizeNode(onlyUser(last), "QuantizeLinear");
        if (q.node >= 0 && q.value == last && !claimed[q.node]) e.quantize = q;
      }
    }
    const bool int8 = e.dequantize_input.node >= 0;
    if (std::any_of(e.absorbed.begin(), e.absorbed.end(), [&](int a) { return claimed[a]; })) {
      // Its epilogue went with another Conv (the other operand of a residual Add: ResNet's
      // downsampling branch); an int8 plan still serves the Conv alone.
      if (!int8) continue;
      ConvEpilogue alone;
      alone.conv = e.conv;
      alone.linear = e.linear;
      alone.dequantize_input = e.dequantize_input;
      alone.dequantize_filter = e.dequantize_filter;
      e = std::move(alone);
    }
    if (e.absorbed.empty() && !int8) continue;
    for (int a : e.absorbed) claimed[a] = true;
    if (e.quantize.node >= 0) claimed[e.quantize.node] = true;
    e.output = e.absorbed.empty() ? conv.output(0) : last;
    plans.push_back(std::move(e));
  }
  return plans;
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
