#include "compiler_passes/onnx/conv_fusion.h"

#include <algorithm>
#include <map>

namespace mlir {
namespace disc_ral {
namespace onnx {

std::vector<ConvEpilogue> planConvEpilogues(const ::onnx::GraphProto& graph, bool hardswish) {
  // value -> the nodes reading it; -1 stands for the graph's outputs.
  std::map<std::string, std::vector<int>> users;
  for (int n = 0; n < graph.node_size(); ++n)
    for (const std::string& in : graph.node(n).input())
      if (!in.empty()) users[in].push_back(n);
  for (const auto& out : graph.output()) users[out.name()].push_back(-1);
  auto usersOf = [&](const std::string& v) -> const std::vector<int>& { return users[v]; };
  auto onlyUser = [&](const std::string& v) {
    const std::vector<int>& u = usersOf(v);
    return u.size() == 1 ? u[0] : -1;
  };
  auto isOp = [&](int n, const char* op, int inputs) {
    return n >= 0 && graph.node(n).op_type() == op && graph.node(n).domain().empty() &&
           graph.node(n).input_size() >= 1 && graph.node(n).output_size() == 1 &&
           (inputs < 0 || graph.node(n).input_size() == inputs);
  };

  std::vector<ConvEpilogue> plans;
  // A node joins one epilogue at most (an Add of two Conv outputs goes with the first Conv).
  std::vector<bool> claimed(static_cast<size_t>(graph.node_size()), false);
  for (int c = 0; c < graph.node_size(); ++c) {
    const ::onnx::NodeProto& conv = graph.node(c);
    if (conv.op_type() != "Conv" || !conv.domain().empty() || conv.output_size() != 1) continue;
    ConvEpilogue e;
    e.conv = c;
    std::string v = conv.output(0);
    int u = onlyUser(v);
    if (isOp(u, "BatchNormalization", 5) && graph.node(u).input(0) == v) {
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
    } else if (usersOf(v).size() == 2) {
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
    if (e.absorbed.empty() ||
        std::any_of(e.absorbed.begin(), e.absorbed.end(), [&](int a) { return claimed[a]; }))
      continue;
    for (int a : e.absorbed) claimed[a] = true;
    e.output = graph.node(e.absorbed.back()).output(0);
    plans.push_back(std::move(e));
  }
  return plans;
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
