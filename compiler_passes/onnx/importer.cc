// importModel: ModelProto -> func.func on tensors, one converter call per node (node_context.h).
#include "compiler_passes/onnx/importer.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/onnx/builders.h"
#include "compiler_passes/onnx/checked_int.h"
#include "compiler_passes/onnx/conv_fusion.h"
#include "compiler_passes/onnx/node_context.h"
#include "compiler_passes/onnx/proto_nesting.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "onnx/defs/schema.h"

namespace mlir {
namespace disc_ral {
namespace onnx {

// The supported opsets of the default domain; every converter handles each version's form.
// Old forms with attributes of their own (consumed_inputs, broadcast, Reshape's shape, ...) are
// refused by the attribute check, so an old model never gets a newer op's meaning.
constexpr int64_t kMinOpset = 1;
constexpr int64_t kMaxOpset = 17;

class Importer {
 public:
  Importer(MLIRContext* ctx, const ImportOptions& options, ImportStatus* status)
      : ctx_(ctx), options_(options), status_(status), builder_(ctx) {}

  OwningOpRef<ModuleOp> run(const ::onnx::ModelProto& model);

  Tensor& lookup(const std::string& name) { return values_[name]; }
  bool defined(const std::string& name) const { return values_.count(name) != 0; }
  void define(const std::string& name, Tensor t) { values_[name] = std::move(t); }
  Value materialize(Tensor& t, OpBuilder& b, Location loc);
  const ImportOptions& options() const { return options_; }

  void fail(const std::string& message, bool unsupported) {
    std::string line =
        options_.source_name.empty() ? message : options_.source_name + ": " + message;
    // A size computed twice fails twice; say it once.
    if (status_->errors.empty() || status_->errors.back() != line)
      status_->errors.push_back(std::move(line));
    status_->unsupported |= unsupported;
  }
  static std::string label(const ::onnx::NodeProto& node, int index) {
    const std::string name = node.name().empty() ? "#" + std::to_string(index) : node.name();
    return "node '" + name + "' (" + node.op_type() + ")";
  }
  std::string currentLabel() const { return current_label_; }
  MLIRContext* context() { return ctx_; }

  Location locOf(const std::string& what) {
    return NameLoc::get(StringAttr::get(ctx_, what),
                        FileLineColLoc::get(ctx_, options_.source_name, 0, 0));
  }

  // What NodeContext::input gives for an input the node does not have (after failing it).
  Tensor& absentInput() {
    absent_ = tensorOfData(DenseElementsAttr::get(RankedTensorType::get({0}, builder_.getF32Type()),
                                                  llvm::ArrayRef<float>{}));
    return absent_;
  }

  // Converts a subgraph (a branch of If, the body of Loop or Scan) into `block` (appending),
  // its inputs bound to `inputs`: its nodes see the enclosing graphs' values, and what it
  // defines is forgotten afterwards (so nothing built in the region is used outside it). Its
  // outputs, materialized at the block's end; failure once an error is reported.
  FailureOr<SmallVector<Tensor>> convertSubgraph(const ::onnx::GraphProto& graph,
                                                 ArrayRef<Tensor> inputs, Block* block,
                                                 const std::string& what);

  // Constant data: what the import may still create, and the bytes it just created.
  int64_t constantBudget() const { return options_.max_constant_bytes - constant_bytes_; }
  void chargeConstant(int64_t bytes) { constant_bytes_ += bytes; }

 private:
  bool checkNodes(const ::onnx::GraphProto& graph, const Registry& registry,
                  const std::string& prefix);
  bool defineInitializers(const ::onnx::GraphProto& graph);
  bool checkAgainstSchema(const ::onnx::NodeProto& node, const std::string& where);
  bool checkSingleAssignment(const ::onnx::GraphProto& graph);
  bool checkInputTypes(const ::onnx::NodeProto& node);
  bool checkUnsignedInputs(const ::onnx::NodeProto& node);
  void markUnsignedOutputs(const ::onnx::NodeProto& node);
  bool convertNodes(const ::onnx::GraphProto& graph, const Registry& registry, Block* body);

  MLIRContext* ctx_;
  const ImportOptions& options_;
  ImportStatus* status_;
  OpBuilder builder_;
  const Registry* registry_ = nullptr;
  // What names the subgraph being converted ("node 'l' (Loop) body: "), before its nodes' labels.
  std::string label_prefix_;
  std::map<std::string, Tensor> values_;
  std::string current_label_;
  // The current node's type parameters ("T") bound to unsigned inputs (checkInputTypes).
  std::set<std::string> unsigned_params_;
  int64_t opset_ = 0;
  int64_t constant_bytes_ = 0;
  int64_t subgraph_conversions_ = 0;
  static constexpr int64_t kMaxSubgraphConversions = 2000;
  Tensor absent_;
};

Value Importer::materialize(Tensor& t, OpBuilder& b, Location loc) {
  if (t.value) return t.value;
  if (t.data) {
    t.value = b.create<arith::ConstantOp>(loc, t.data);
  } else if (t.elems) {
    SmallVector<Value> values;
    Type element = t.type.getElementType();
    for (OpFoldResult e : *t.elems) {
      if (auto c = constantIndex(e)) {
        values.push_back(intConstant(b, loc, element, *c));  // exact, where a double is not
        continue;
      }
      values.push_back(b.create<arith::IndexCastOp>(loc, element, indexValue(b, loc, e)));
    }
    t.value = b.create<tensor::FromElementsOp>(loc, t.type, values);
  }
  return t.value;
}

// The node against its operator's schema at the model's opset (ONNX's own definitions): how many
// inputs and outputs, required inputs present, attribute types. A node that breaks it is a
// malformed model: named here instead of read wrongly (an `axis` given as a float) or out of
// range (a binary op with one input) by a converter.
bool Importer::checkAgainstSchema(const ::onnx::NodeProto& node, const std::string& where) {
  const ::onnx::OpSchema* schema =
      ::onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset_), "");
  if (!schema) {
    fail(where + ": " + node.op_type() + " does not exist at opset " + std::to_string(opset_),
         false);
    return false;
  }
  const int inputs = node.input_size(), outputs = node.output_size();
  if (inputs < schema->min_input() || inputs > schema->max_input() ||
      outputs < schema->min_output() || outputs > schema->max_output()) {
    fail(where + ": has " + std::to_string(inputs) + " inputs and " + std::to_string(outputs) +
             " outputs; opset " + std::to_string(opset_) + "'s " + node.op_type() + " takes " +
             std::to_string(schema->min_input()) + ".." + std::to_string(schema->max_input()) +
             " inputs and " + std::to_string(schema->min_output()) + ".." +
             std::to_string(schema->max_output()) + " outputs",
         false);
    return false;
  }
  const auto& formal = schema->inputs();
  for (int i = 0; i < inputs; ++i) {
    const size_t f = std::min<size_t>(static_cast<size_t>(i), formal.size() - 1);
    if (node.input(i).empty() &&
        formal[f].GetOption() != ::onnx::OpSchema::FormalParameterOption::Optional) {
      fail(where + ": required input " + std::to_string(i) + " ('" + formal[f].GetName() +
               "') is missing",
           false);
      return false;
    }
  }
  for (const ::onnx::AttributeProto& a : node.attribute()) {
    auto it = schema->attributes().find(a.name());
    if (it == schema->attributes().end()) {
      fail(where + ": attribute '" + a.name() + "' does not exist for opset " +
               std::to_string(opset_) + "'s " + node.op_type(),
           false);
      return false;
    }
    if (a.type() != it->second.type) {
      fail(where + ": attribute '" + a.name() + "' has type " +
               ::onnx::AttributeProto_AttributeType_Name(a.type()) + ", the operator's is " +
               ::onnx::AttributeProto_AttributeType_Name(it->second.type),
           false);
      return false;
    }
  }
  for (const auto& [name, attribute] : schema->attributes()) {
    if (!attribute.required) continue;
    bool present = false;
    for (const ::onnx::AttributeProto& a : node.attribute()) present |= a.name() == name;
    if (!present) {
      fail(where + ": required attribute '" + name + "' is missing", false);
      return false;
    }
  }
  return true;
}

bool Importer::checkNodes(const ::onnx::GraphProto& graph, const Registry& registry,
                          const std::string& prefix) {
  bool ok = true;
  for (int n = 0; n < graph.node_size(); ++n) {
    const ::onnx::NodeProto& node = graph.node(n);
    const std::string where = prefix + label(node, n);
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      fail(where + ": unsupported operator domain '" + node.domain() +
               "' (only the default ONNX domain is imported)",
           true);
      ok = false;
      continue;
    }
    auto spec = registry.find(node.op_type());
    if (spec == registry.end()) {
      fail(where + ": unsupported operator " + node.op_type(), true);
      ok = false;
      continue;
    }
    bool known_attributes = true;
    for (const ::onnx::AttributeProto& a : node.attribute()) {
      if (llvm::is_contained(spec->second.attributes, a.name())) continue;
      fail(where + ": unsupported attribute '" + a.name() + "'", true);
      ok = known_attributes = false;
    }
    if (known_attributes && !checkAgainstSchema(node, where)) ok = false;
    // Subgraphs (If's branches, Loop's and Scan's bodies): their nodes too, so every operator
    // the model lacks is named at once. Protobuf's nesting limit bounds the recursion.
    for (const ::onnx::AttributeProto& a : node.attribute()) {
      if (a.has_g() && !checkNodes(a.g(), registry, where + " " + a.name() + ": ")) ok = false;
      for (const ::onnx::GraphProto& g : a.graphs())
        if (!checkNodes(g, registry, where + " " + a.name() + ": ")) ok = false;
    }
  }
  return ok;
}

// A graph's initializers as constants, also when a graph input of the same name (IR < 4) could
// override them (a compiled model has fixed weights).
bool Importer::defineInitializers(const ::onnx::GraphProto& graph) {
  bool ok = true;
  for (const ::onnx::TensorProto& init : graph.initializer()) {
    std::string error;
    bool unsupported = false, is_unsigned = false;
    FailureOr<DenseElementsAttr> data =
        constantOf(ctx_, init, constantBudget(), &error, &unsupported, &is_unsigned);
    if (failed(data)) {
      fail(label_prefix_ + "initializer '" + init.name() + "': " + error, unsupported);
      ok = false;
      continue;
    }
    chargeConstant(static_cast<int64_t>(data->getRawData().size()));
    define(init.name(), unsignedAware(tensorOfData(*data), is_unsigned));
  }
  return ok;
}

FailureOr<SmallVector<Tensor>> Importer::convertSubgraph(const ::onnx::GraphProto& graph,
                                                         ArrayRef<Tensor> inputs, Block* block,
                                                         const std::string& what) {
  const std::string where = current_label_ + " " + what;
  // A loop converts its body again when the body's types differ from the ones assumed, so
  // nested loops could multiply conversions: a bound keeps a hostile model's import short.
  if (++subgraph_conversions_ > kMaxSubgraphConversions) {
    fail(where + ": control flow needs more than " + std::to_string(kMaxSubgraphConversions) +
             " subgraph conversions (nested too deep)",
         true);
    return failure();
  }
  if (graph.input_size() != static_cast<int>(inputs.size())) {
    fail(where + " takes " + std::to_string(graph.input_size()) + " inputs; " +
             std::to_string(inputs.size()) + " are given to it",
         false);
    return failure();
  }
  // The enclosing scope, restored on the way out: the subgraph's names (which may shadow outer
  // ones) go, and so do values it materialized in its region.
  std::map<std::string, Tensor> outer = values_;
  const std::string outer_label = current_label_, outer_prefix = label_prefix_;
  const std::set<std::string> outer_params = unsigned_params_;
  auto restore = llvm::make_scope_exit([&] {
    values_ = std::move(outer);
    current_label_ = outer_label;
    label_prefix_ = outer_prefix;
    unsigned_params_ = outer_params;
  });
  label_prefix_ = where + ": ";
  for (int i = 0; i < graph.input_size(); ++i) {
    const ::onnx::ValueInfoProto& in = graph.input(i);
    // A declared element type must be what the input is (shapes may differ: the loop's
    // carried values are typed by what flows in).
    if (in.type().has_tensor_type() && in.type().tensor_type().elem_type() != 0) {
      bool is_unsigned = false;
      Type declared = storageTypeOf(ctx_, in.type().tensor_type().elem_type(), &is_unsigned);
      if (declared != inputs[i].type.getElementType() || is_unsigned != inputs[i].is_unsigned) {
        fail(where + " input '" + in.name() + "' is declared " +
                 dtypeName(in.type().tensor_type().elem_type()) + " but is given another type",
             false);
        return failure();
      }
    } else if (in.type().value_case() != ::onnx::TypeProto::VALUE_NOT_SET &&
               !in.type().has_tensor_type()) {
      fail(where + " input '" + in.name() +
               "': unsupported type (only tensors are imported, not sequences, maps or optionals)",
           true);
      return failure();
    }
    define(in.name(), inputs[i]);
  }
  if (!defineInitializers(graph) || !checkSingleAssignment(graph) ||
      !convertNodes(graph, *registry_, block))
    return failure();
  current_label_ = outer_label;
  OpBuilder b = OpBuilder::atBlockEnd(block);
  SmallVector<Tensor> outputs;
  for (const ::onnx::ValueInfoProto& out : graph.output()) {
    if (!defined(out.name())) {
      fail(where + " output '" + out.name() + "' is not produced by any node", false);
      return failure();
    }
    Tensor t = lookup(out.name());
    materialize(t, b, locOf(where + " output '" + out.name() + "'"));
    outputs.push_back(std::move(t));
  }
  return outputs;
}

OwningOpRef<ModuleOp> Importer::run(const ::onnx::ModelProto& model) {
  for (const ::onnx::OperatorSetIdProto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
  if (opset_ == 0 && model.opset_import_size() == 0) opset_ = 1;  // the IR's implicit default
  if (opset_ < kMinOpset || opset_ > kMaxOpset) {
    fail("unsupported opset " + std::to_string(opset_) + " of the default domain (supported: " +
             std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) + ")",
         true);
    return nullptr;
  }
  if (!model.has_graph()) {
    fail("the model has no graph", false);
    return nullptr;
  }
  const ::onnx::GraphProto& graph = model.graph();

  Registry registry;
  addElementwiseOps(registry);
  addLinearOps(registry);
  addConvOps(registry);
  addPoolOps(registry);
  addReductionOps(registry);
  addNormalizationOps(registry);
  addShapeOps(registry);
  addGenerateOps(registry);
  addSliceOps(registry);
  addGatherOps(registry);
  addResizeOps(registry);
  addRecurrentOps(registry);
  addImageOps(registry);
  addQuantizeOps(registry);
  addSelectOps(registry);
  addControlOps(registry);
  registry_ = &registry;
  if (!checkNodes(graph, registry, "") || !checkSingleAssignment(graph)) return nullptr;
  if (!defineInitializers(graph)) return nullptr;
  bool ok = true;

  // The entry's inputs: graph inputs that are not initializers.
  SmallVector<Type> input_types;
  std::vector<std::string> input_names;
  std::vector<bool> input_unsigned;
  for (const ::onnx::ValueInfoProto& in : graph.input()) {
    if (defined(in.name())) continue;
    const std::string where = "graph input '" + in.name() + "'";
    if (!in.type().has_tensor_type()) {
      fail(where +
               ": unsupported type (only tensors are imported, not sequences, maps or "
               "optionals)",
           true);
      ok = false;
      continue;
    }
    const ::onnx::TypeProto_Tensor& tt = in.type().tensor_type();
    bool is_unsigned = false;
    Type element = storageTypeOf(ctx_, tt.elem_type(), &is_unsigned);
    if (!element) {
      fail(where + ": unsupported element type " + dtypeName(tt.elem_type()), true);
      ok = false;
      continue;
    }
    if (!tt.has_shape()) {
      fail(where + ": unsupported unknown rank (the importer needs every input's rank)", true);
      ok = false;
      continue;
    }
    SmallVector<int64_t> shape;
    CheckedInt count = 1;
    for (const auto& d : tt.shape().dim()) {
      shape.push_back(d.has_dim_value() && d.dim_value() >= 0 ? d.dim_value()
                                                              : ShapedType::kDynamic);
      if (!ShapedType::isDynamic(shape.back())) count *= shape.back();
    }
    // As the runtime refuses such a tensor, so does the import (sizes derived from its dims are
    // then at most 2^48 too).
    if (!count.isSize()) {
      fail(where + ": its static dims hold more than 2^48 elements", false);
      ok = false;
      continue;
    }
    input_types.push_back(RankedTensorType::get(shape, element));
    input_names.push_back(in.name());
    input_unsigned.push_back(is_unsigned);
  }
  if (!ok) return nullptr;

  OwningOpRef<ModuleOp> module = ModuleOp::create(locOf("model"));
  if (!graph.name().empty())
    (*module)->setAttr("onnx.graph_name", builder_.getStringAttr(graph.name()));
  builder_.setInsertionPointToEnd(module->getBody());
  auto func = builder_.create<func::FuncOp>(locOf("graph"), options_.entry,
                                            builder_.getFunctionType(input_types, {}));
  Block* body = func.addEntryBlock();
  for (size_t i = 0; i < input_names.size(); ++i) {
    Tensor t;
    t.type = cast<RankedTensorType>(input_types[i]);
    t.value = body->getArgument(i);
    t.is_unsigned = input_unsigned[i];
    define(input_names[i], t);
    func.setArgAttr(i, "onnx.name", builder_.getStringAttr(input_names[i]));
    if (t.is_unsigned) func.setArgAttr(i, kUnsignedAttr, builder_.getUnitAttr());
  }
  if (!convertNodes(graph, registry, body)) return nullptr;
  OpBuilder b = OpBuilder::atBlockEnd(body);

  SmallVector<Value> results;
  SmallVector<Type> result_types;
  std::vector<bool> result_unsigned;
  b.setInsertionPointToEnd(body);
  for (const ::onnx::ValueInfoProto& out : graph.output()) {
    if (!defined(out.name())) {
      fail("graph output '" + out.name() + "' is not produced by any node", false);
      return nullptr;
    }
    Tensor& t = lookup(out.name());
    Value v = materialize(t, b, locOf("output '" + out.name() + "'"));
    if (out.type().has_tensor_type()) {
      bool declared_unsigned = false;
      Type declared = storageTypeOf(ctx_, out.type().tensor_type().elem_type(), &declared_unsigned);
      if (declared && (declared != t.type.getElementType() || declared_unsigned != t.is_unsigned)) {
        fail("graph output '" + out.name() + "' is declared " +
                 dtypeName(out.type().tensor_type().elem_type()) +
                 " but computes another element type",
             false);
        return nullptr;
      }
    }
    results.push_back(v);
    result_types.push_back(v.getType());
    result_unsigned.push_back(t.is_unsigned);
  }
  b.create<func::ReturnOp>(locOf("return"), results);
  func.setFunctionType(builder_.getFunctionType(input_types, result_types));
  for (int i = 0; i < graph.output_size(); ++i) {
    func.setResultAttr(i, "onnx.name", builder_.getStringAttr(graph.output(i).name()));
    if (result_unsigned[i]) func.setResultAttr(i, kUnsignedAttr, builder_.getUnitAttr());
  }
  // Every error of the verifier, with the node its op came from.
  std::vector<std::string> invalid;
  {
    ScopedDiagnosticHandler handler(ctx_, [&](Diagnostic& diag) -> LogicalResult {
      if (diag.getSeverity() == DiagnosticSeverity::Error)
        invalid.push_back(nodeMessage(diag.getLocation(), diag.str()));
      return success();
    });
    if (succeeded(verify(*module))) return module;
  }
  for (const std::string& why : invalid)
    fail("the imported module does not verify (a bug in the importer; please report): " + why,
         false);
  if (invalid.empty())
    fail("the imported module does not verify (a bug in the importer; please report)", false);
  return nullptr;
}

// ONNX graphs are in SSA form (onnx.checker refuses a name assigned twice): a second definition
// would otherwise silently replace the first for every later reader.
bool Importer::checkSingleAssignment(const ::onnx::GraphProto& graph) {
  std::map<std::string, std::string> definer;  // name -> what defines it
  bool ok = true;
  auto define_once = [&](const std::string& name, const std::string& what) {
    if (name.empty()) return;
    auto [it, inserted] = definer.emplace(name, what);
    if (inserted) return;
    fail(what + ": '" + name + "' is already defined by " + it->second +
             " (an ONNX graph assigns each name once)",
         false);
    ok = false;
  };
  for (const ::onnx::TensorProto& init : graph.initializer())
    define_once(init.name(), "initializer '" + init.name() + "'");
  std::set<std::string> inputs;
  for (const ::onnx::ValueInfoProto& in : graph.input()) {
    if (!inputs.insert(in.name()).second) {
      fail("graph input '" + in.name() + "' is listed twice", false);
      ok = false;
    }
    // A graph input named like an initializer is that initializer's declaration (IR < 4).
    if (!definer.count(in.name())) define_once(in.name(), "graph input '" + in.name() + "'");
  }
  for (int n = 0; n < graph.node_size(); ++n)
    for (const std::string& out : graph.node(n).output())
      define_once(out, label(graph.node(n), n) + " output");
  return ok;
}

namespace {

// The ONNX type string of an element type the importer handles: what a schema's allowed types
// hold ("tensor(float)").
std::string onnxTypeString(Type t) {
  if (t.isF32()) return "tensor(float)";
  if (t.isF64()) return "tensor(double)";
  if (t.isF16()) return "tensor(float16)";
  if (t.isBF16()) return "tensor(bfloat16)";
  if (t.isInteger(1)) return "tensor(bool)";
  return "tensor(int" + std::to_string(t.getIntOrFloatBitWidth()) + ")";
}

// The type string of a graph value: unsigned integers are "tensor(uint8)" ...
std::string onnxTypeString(const Tensor& t) {
  Type e = t.type.getElementType();
  if (t.is_unsigned) return "tensor(uint" + std::to_string(e.getIntOrFloatBitWidth()) + ")";
  return onnxTypeString(e);
}

std::string typeName(const Tensor& t) {
  std::string s = onnxTypeString(t);
  return s.substr(7, s.size() - 8);  // "float" of "tensor(float)"
}

// The operators whose converters read Tensor::is_unsigned (or never depend on the sign): any
// other refuses unsigned inputs by name rather than compute them as signed.
const std::set<std::string>& unsignedOps() {
  static const std::set<std::string> ops = {
      // Data movement and shapes: the bits are moved, never interpreted.
      "Identity", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Concat", "Slice",
      "Split", "Gather", "GatherElements", "GatherND", "Expand", "Tile", "Shape", "Size", "Where",
      "DepthToSpace", "SpaceToDepth", "Trilu", "MaxPool",
      // Wrapping arithmetic and equality are the same bits signed or not.
      "Add", "Sub", "Mul", "Sum", "Equal",
      // Sign-aware converters.
      "Div", "Mod", "Min", "Max", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Cast",
      "CastLike", "BitShift", "QuantizeLinear", "DequantizeLinear", "QLinearMatMul",
      "MatMulInteger", "ConvInteger", "QLinearConv",
      // Control flow hands values to its subgraphs, whose nodes are checked in turn.
      "If", "Loop", "Scan"};
  return ops;
}

}  // namespace

// Each input against its operator's type constraints at the model's opset: a type its formal
// parameter allows, and one type for the inputs sharing a type parameter ("T"). Converters read
// an input's data as what the schema says it is (a float BatchNormalization scale, an int64
// Reshape shape), so a model that breaks them is refused here, naming the input.
bool Importer::checkInputTypes(const ::onnx::NodeProto& node) {
  const ::onnx::OpSchema* schema =
      ::onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset_), "");
  if (!schema || schema->inputs().empty()) return true;
  const auto& formal = schema->inputs();
  // type parameter -> type string, input binding it
  std::map<std::string, std::pair<std::string, int>> bound;
  unsigned_params_.clear();
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty()) continue;
    const auto& f = formal[std::min<size_t>(static_cast<size_t>(i), formal.size() - 1)];
    const Tensor& input = lookup(node.input(i));
    const std::string type = onnxTypeString(input);
    const std::string what = current_label_ + ": input " + std::to_string(i) + " ('" + f.GetName() +
                             "') is " + typeName(input);
    const auto& allowed = f.GetTypes();
    if (!allowed.empty() &&
        llvm::none_of(allowed, [&](::onnx::DataType d) { return d && *d == type; })) {
      std::vector<std::string> names;
      for (::onnx::DataType d : allowed)
        if (d && d->size() > 8 && d->compare(0, 7, "tensor(") == 0)
          names.push_back(d->substr(7, d->size() - 8));
      std::sort(names.begin(), names.end());
      fail(what + ", which opset " + std::to_string(opset_) + "'s " + node.op_type() +
               " does not take (it takes " + llvm::join(names, ", ") + ")",
           false);
      return false;
    }
    // A heterogeneous variadic parameter (Loop's and Scan's carried values) binds no one type.
    auto [it, inserted] = bound.emplace(f.GetTypeStr(), std::make_pair(type, i));
    if (f.GetIsHomogeneous() && !inserted && it->second.first != type) {
      const std::string& other = it->second.first;
      fail(what + " where input " + std::to_string(it->second.second) + " made " + f.GetTypeStr() +
               " " + other.substr(7, other.size() - 8) + " (they must be one type)",
           false);
      return false;
    }
    if (input.is_unsigned) unsigned_params_.insert(f.GetTypeStr());
  }
  return true;
}

// Unsigned inputs only reach the converters that handle them (unsignedOps).
bool Importer::checkUnsignedInputs(const ::onnx::NodeProto& node) {
  if (unsignedOps().count(node.op_type())) return true;
  for (int i = 0; i < node.input_size(); ++i)
    if (!node.input(i).empty() && lookup(node.input(i)).is_unsigned) {
      fail(current_label_ + ": unsupported " + typeName(lookup(node.input(i))) + " input " +
               std::to_string(i) + " (" + node.op_type() + " of unsigned integers)",
           true);
      return false;
    }
  return true;
}

// An output whose type parameter an unsigned input bound is unsigned too (Add's C is A's T);
// outputs of another parameter (Shape's int64) are not.
void Importer::markUnsignedOutputs(const ::onnx::NodeProto& node) {
  if (unsigned_params_.empty()) return;
  const ::onnx::OpSchema* schema =
      ::onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset_), "");
  if (!schema || schema->outputs().empty()) return;
  const auto& formal = schema->outputs();
  for (int o = 0; o < node.output_size(); ++o) {
    if (node.output(o).empty()) continue;
    const auto& f = formal[std::min<size_t>(static_cast<size_t>(o), formal.size() - 1)];
    Tensor& t = lookup(node.output(o));
    if (unsigned_params_.count(f.GetTypeStr()) && isa<IntegerType>(t.type.getElementType()) &&
        !t.type.getElementType().isInteger(1)) {
      t.is_unsigned = true;
      t.elems.reset();
    }
  }
}

bool Importer::convertNodes(const ::onnx::GraphProto& graph, const Registry& registry,
                            Block* body) {
  // Errors the converters and the size arithmetic they call emit at a node's location fail that
  // node (builders.h); each is reported once, with the node's label.
  bool node_failed = false;
  ScopedDiagnosticHandler handler(ctx_, [&](Diagnostic& diag) -> LogicalResult {
    if (diag.getSeverity() != DiagnosticSeverity::Error) return success();
    node_failed = true;
    fail(current_label_ + ": " + diag.str(), false);
    return success();
  });
  OpBuilder b = OpBuilder::atBlockEnd(body);
  // Converts node `n`; `epilogue` offers a Conv the nodes it may fold in (conv_fusion.h).
  auto convert = [&](int n, ConvEpilogue* epilogue) {
    const ::onnx::NodeProto& node = graph.node(n);
    current_label_ = label_prefix_ + label(node, n);
    for (const std::string& in : node.input())
      if (!in.empty() && !defined(in)) {
        fail(current_label_ + ": input '" + in +
                 "' is not defined before the node (the graph "
                 "is not in topological order, or the name is wrong)",
             false);
        return false;
      }
    if (!checkInputTypes(node) || !checkUnsignedInputs(node)) return false;
    // The converter's ops carry the node's label as their location, so a later error names it.
    b.setInsertionPointToEnd(body);
    NodeContext node_context(*this, node, b, opset_);
    node_context.setEpilogue(epilogue);
    if (failed(registry.lookup(node.op_type()).convert(node_context)) || node_failed) return false;
    if (epilogue && epilogue->fused) return defined(epilogue->output);
    for (int o = 0; o < node.output_size(); ++o)
      if (!node.output(o).empty() && !defined(node.output(o))) {
        fail(current_label_ + ": output " + std::to_string(o) + " ('" + node.output(o) +
                 "') is not produced: unsupported for this operator",
             true);
        return false;
      }
    markUnsignedOutputs(node);
    if (options_.check_budget) {
      const std::string over = options_.check_budget();
      if (!over.empty()) {
        fail(current_label_ + ": " + over, false);
        return false;
      }
    }
    return true;
  };
  // A Conv with an epilogue converts where its last node is (the residual is defined by then);
  // the nodes in between wait with it.
  std::vector<ConvEpilogue> epilogues;
  if (options_.library_conv)
    epilogues = planConvEpilogues(graph, {options_.conv_hardswish, options_.conv_gelu,
                                          options_.library_linear, options_.int8_conv});
  std::map<int, ConvEpilogue*> at_last;
  std::set<int> waiting;
  for (ConvEpilogue& e : epilogues) {
    std::vector<int> chain = {e.conv};
    chain.insert(chain.end(), e.absorbed.begin(), e.absorbed.end());
    if (e.quantize.node >= 0) chain.push_back(e.quantize.node);
    waiting.insert(chain.begin(), chain.end() - 1);
    at_last[chain.back()] = &e;
  }
  for (int n = 0; n < graph.node_size(); ++n) {
    if (waiting.count(n)) continue;
    auto planned = at_last.find(n);
    if (planned == at_last.end()) {
      if (!convert(n, nullptr)) return false;
      continue;
    }
    ConvEpilogue* e = planned->second;
    if (!convert(e->conv, e)) return false;
    if (!e->fused)
      for (int a : e->absorbed)
        if (!convert(a, nullptr)) return false;
    if (e->quantize.node >= 0 && !e->quantize_fused && !convert(e->quantize.node, nullptr))
      return false;
  }
  current_label_.clear();
  return true;
}

// ---- NodeContext ---------------------------------------------------------------------------

NodeContext::NodeContext(Importer& importer, const ::onnx::NodeProto& node, OpBuilder& builder,
                         int64_t opset)
    : importer_(importer),
      node_(node),
      b_(builder),
      loc_(importer.locOf(importer.currentLabel())),
      opset_(opset) {}

bool NodeContext::libraryConv() const { return importer_.options().library_conv; }
bool NodeContext::int8Conv() const {
  return importer_.options().library_conv && importer_.options().int8_conv;
}
bool NodeContext::hostReadsTensors() const { return importer_.options().host_reads_tensors; }
bool NodeContext::libraryLinear() const {
  return importer_.options().library_conv && importer_.options().library_linear;
}

Tensor* NodeContext::named(const std::string& name) {
  return importer_.defined(name) ? &importer_.lookup(name) : nullptr;
}

Value NodeContext::materialize(Tensor& t) { return importer_.materialize(t, b_, loc_); }

void NodeContext::defineNamed(const std::string& name, Value v, bool is_unsigned) {
  Tensor t;
  t.type = cast<RankedTensorType>(v.getType());
  t.value = v;
  t.is_unsigned = is_unsigned;
  importer_.define(name, std::move(t));
}

bool NodeContext::hasInput(size_t i) const {
  return i < numInputs() && !node_.input(static_cast<int>(i)).empty();
}

Tensor& NodeContext::input(size_t i) {
  if (hasInput(i)) return importer_.lookup(node_.input(static_cast<int>(i)));
  // A converter read an input the node does not have (protobuf would abort on the index): the
  // node fails, and an empty tensor keeps the rest of the conversion well-formed.
  (void)error("has no input " + std::to_string(i) +
              " (an importer bug: its converter read it unchecked; please report)");
  return importer_.absentInput();
}

Value NodeContext::value(size_t i) { return importer_.materialize(input(i), b_, loc_); }

std::optional<SmallVector<OpFoldResult>> NodeContext::elems(size_t i) {
  if (!hasInput(i)) return std::nullopt;
  return input(i).elems;
}

std::optional<SmallVector<OpFoldResult>> NodeContext::shapeElems(size_t i) {
  if (!hasInput(i)) return std::nullopt;
  Tensor& t = input(i);
  if (t.elems) return t.elems;
  Type element = t.type.getElementType();
  if (!isa<IntegerType>(element) || element.isInteger(1) || t.type.getRank() > 1 ||
      !t.type.hasStaticShape() || t.type.getNumElements() > kMaxShapeElements)
    return std::nullopt;
  Value v = value(i);
  SmallVector<OpFoldResult> elems;
  for (int64_t k = 0; k < t.type.getNumElements(); ++k) {
    SmallVector<Value> at;
    if (t.type.getRank() == 1) at.push_back(b_.create<arith::ConstantIndexOp>(loc_, k));
    Value e = b_.create<tensor::ExtractOp>(loc_, v, at);
    elems.push_back(Value(b_.create<arith::IndexCastOp>(loc_, b_.getIndexType(), e)));
  }
  t.elems = elems;  // read once, whoever asks again
  return elems;
}

std::optional<SmallVector<int64_t>> NodeContext::constInts(size_t i) {
  auto e = elems(i);
  if (!e) return std::nullopt;
  SmallVector<int64_t> values;
  for (OpFoldResult x : *e) {
    auto c = constantIndex(x);
    if (!c) return std::nullopt;
    values.push_back(*c);
  }
  return values;
}

std::optional<double> NodeContext::constScalar(size_t i) {
  if (!hasInput(i)) return std::nullopt;
  DenseElementsAttr data = input(i).data;
  if (!data || data.getNumElements() != 1) return std::nullopt;
  Type element = data.getElementType();
  if (isa<FloatType>(element)) return (*data.getValues<APFloat>().begin()).convertToDouble();
  if (element.isInteger(1)) return (*data.getValues<bool>().begin()) ? 1.0 : 0.0;
  return static_cast<double>((*data.getValues<APInt>().begin()).getSExtValue());
}

FailureOr<SmallVector<Tensor>> NodeContext::subgraph(const ::onnx::GraphProto& graph,
                                                     ArrayRef<Tensor> inputs, Block* block,
                                                     const std::string& what) {
  return importer_.convertSubgraph(graph, inputs, block, what);
}

const ::onnx::AttributeProto* NodeContext::attr(llvm::StringRef name) const {
  for (const ::onnx::AttributeProto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

bool NodeContext::has(llvm::StringRef name) const { return attr(name) != nullptr; }

int64_t NodeContext::i(llvm::StringRef name, int64_t fallback) const {
  const ::onnx::AttributeProto* a = attr(name);
  return a ? a->i() : fallback;
}

float NodeContext::f(llvm::StringRef name, float fallback) const {
  const ::onnx::AttributeProto* a = attr(name);
  return a ? a->f() : fallback;
}

std::string NodeContext::s(llvm::StringRef name, llvm::StringRef fallback) const {
  const ::onnx::AttributeProto* a = attr(name);
  return a ? a->s() : fallback.str();
}

SmallVector<int64_t> NodeContext::ints(llvm::StringRef name) const {
  SmallVector<int64_t> values;
  if (const ::onnx::AttributeProto* a = attr(name))
    for (int64_t v : a->ints()) values.push_back(v);
  return values;
}

void NodeContext::setOutput(size_t i, Value v) {
  Tensor t;
  t.type = cast<RankedTensorType>(v.getType());
  t.value = v;
  setOutput(i, std::move(t));
}

void NodeContext::setOutput(size_t i, Tensor t) {
  if (!wantsOutput(i)) return;
  importer_.define(node_.output(static_cast<int>(i)), std::move(t));
}

void NodeContext::setUnsignedOutput(size_t i, Value v) {
  Tensor t;
  t.type = cast<RankedTensorType>(v.getType());
  t.value = v;
  t.is_unsigned = true;
  setOutput(i, std::move(t));
}

ImportFailure NodeContext::unsupported(const llvm::Twine& what) {
  importer_.fail(importer_.currentLabel() + ": unsupported " + what.str(), true);
  return {};
}

ImportFailure NodeContext::error(const llvm::Twine& what) {
  importer_.fail(importer_.currentLabel() + ": " + what.str(), false);
  return {};
}

FailureOr<DenseElementsAttr> NodeContext::constant(const ::onnx::TensorProto& t,
                                                   bool* is_unsigned) {
  std::string error;
  bool unsupported = false;
  FailureOr<DenseElementsAttr> data =
      constantOf(b_.getContext(), t, importer_.constantBudget(), &error, &unsupported, is_unsigned);
  if (failed(data)) return unsupported ? this->unsupported(error) : this->error(error);
  importer_.chargeConstant(static_cast<int64_t>(data->getRawData().size()));
  return data;
}

bool NodeContext::constantFits(int64_t bytes) const {
  return bytes <= importer_.constantBudget();
}

LogicalResult NodeContext::chargeConstant(int64_t bytes, const llvm::Twine& what) {
  if (bytes > importer_.constantBudget())
    return error(what + " would take " + std::to_string(bytes) + " bytes, beyond the " +
                 std::to_string(importer_.constantBudget()) +
                 " bytes of constants the compile may still hold");
  importer_.chargeConstant(bytes);
  return success();
}

FailureOr<int64_t> NodeContext::axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    (void)error("axis " + std::to_string(axis) + " is out of range for rank " +
                std::to_string(rank));
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

// ---- entry point ---------------------------------------------------------------------------

OwningOpRef<ModuleOp> importModel(llvm::StringRef bytes, const ImportOptions& options,
                                  MLIRContext* context, ImportStatus* status) {
  ::onnx::ModelProto model;
  const std::string prefix = options.source_name.empty() ? "" : options.source_name + ": ";
  if (bytes.size() > static_cast<size_t>(INT32_MAX)) {
    status->errors.push_back(prefix + "a model of " + std::to_string(bytes.size()) +
                             " bytes; protobuf reads at most 2 GiB (save the weights as "
                             "external data, which the importer does not read either)");
    return nullptr;
  }
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    // Protobuf gives no reason; the one a valid-looking model meets is its nesting limit.
    constexpr int kProtobufDepth = 100;
    if (auto deep = findDeepNesting(bytes, kProtobufDepth)) {
      status->errors.push_back(
          prefix + deep->where + ": nests messages " + std::to_string(deep->depth) +
          " deep, beyond the " + std::to_string(kProtobufDepth) +
          " levels protobuf parses");
      status->unsupported = true;
      return nullptr;
    }
    status->errors.push_back(prefix + "not a valid ONNX model (the protobuf does not parse)");
    return nullptr;
  }
  context->loadDialect<affine::AffineDialect, arith::ArithDialect, cf::ControlFlowDialect,
                       func::FuncDialect, linalg::LinalgDialect, math::MathDialect,
                       scf::SCFDialect, tensor::TensorDialect, DiscRalDialect>();
  Importer importer(context, options, status);
  return importer.run(model);
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
