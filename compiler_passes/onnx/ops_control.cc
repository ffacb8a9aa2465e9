// Control flow: If as scf.if, Loop and Scan as scf.while, their subgraphs converted into the
// regions (NodeContext::subgraph). A value a region yields has one type on every path: where a
// branch or an iteration gives another static shape, the dims that differ become dynamic.
#include <functional>

#include "compiler_passes/onnx/builders.h"
#include "compiler_passes/onnx/checked_int.h"
#include "compiler_passes/onnx/node_context.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir {
namespace disc_ral {
namespace onnx {
namespace {

// The one element of `t` (a condition, a trip count): an error when its static shape holds
// another number, a run-time check when its shape is dynamic.
FailureOr<Value> onlyElement(NodeContext& n, OpBuilder& b, Value t, const std::string& what) {
  Location loc = n.loc();
  auto type = cast<RankedTensorType>(t.getType());
  if (type.hasStaticShape() && type.getNumElements() != 1)
    return n.error(what + " must hold one element, not " + std::to_string(type.getNumElements()));
  if (!type.hasStaticShape()) {
    Value count = indexValue(b, loc, product(b, loc, dimsOf(b, loc, t)));
    Value one = b.create<arith::ConstantIndexOp>(loc, 1);
    runtimeCheck(b, loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, count, one),
                 n.node().op_type() + ": " + what + " must hold one element");
  }
  SmallVector<Value> zeros(type.getRank(), b.create<arith::ConstantIndexOp>(loc, 0));
  return b.create<tensor::ExtractOp>(loc, t, zeros).getResult();
}

// The type both `a` and `c` fit (dims that differ dynamic); null for another rank or element.
RankedTensorType join(RankedTensorType a, RankedTensorType c) {
  if (a.getRank() != c.getRank() || a.getElementType() != c.getElementType()) return {};
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < a.getRank(); ++d)
    dims.push_back(a.getDimSize(d) == c.getDimSize(d) ? a.getDimSize(d) : ShapedType::kDynamic);
  return RankedTensorType::get(dims, a.getElementType());
}

Value castTo(OpBuilder& b, Location loc, Value v, Type type) {
  return v.getType() == type ? v : b.create<tensor::CastOp>(loc, type, v).getResult();
}

std::string typeText(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

Tensor tensorOf(Value v, bool is_unsigned) {
  Tensor t;
  t.type = cast<RankedTensorType>(v.getType());
  t.value = v;
  t.is_unsigned = is_unsigned;
  return t;
}

// If: a condition known at import converts only its branch, inline (exporters emit such Ifs
// on static shapes); otherwise both branches become an scf.if.
LogicalResult convertIf(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const ::onnx::GraphProto& then_g = n.attr("then_branch")->g();
  const ::onnx::GraphProto& else_g = n.attr("else_branch")->g();
  const int outputs = static_cast<int>(n.numOutputs());
  for (const auto* g : {&then_g, &else_g})
    if (g->output_size() != outputs)
      return n.error("a branch gives " + std::to_string(g->output_size()) + " outputs; the If has " +
                     std::to_string(outputs));
  Block* block = b.getInsertionBlock();
  if (auto c = n.constScalar(0)) {
    FailureOr<SmallVector<Tensor>> outs =
        n.subgraph(*c != 0 ? then_g : else_g, {}, block, *c != 0 ? "then_branch" : "else_branch");
    if (failed(outs)) return failure();
    for (int i = 0; i < outputs; ++i) n.setOutput(i, (*outs)[i]);
    return success();
  }
  FailureOr<Value> cond = onlyElement(n, b, n.value(0), "the condition");
  if (failed(cond)) return failure();
  // Branches first, in an scf.if without results; then the If with their joined types.
  auto draft = b.create<scf::IfOp>(loc, TypeRange{}, *cond, /*withElseRegion=*/true);
  SmallVector<SmallVector<Tensor>> branch;
  for (auto [region, g, what] : {std::make_tuple(&draft.getThenRegion(), &then_g, "then_branch"),
                                 std::make_tuple(&draft.getElseRegion(), &else_g, "else_branch")}) {
    Block& body = region->front();
    body.getTerminator()->erase();
    FailureOr<SmallVector<Tensor>> outs = n.subgraph(*g, {}, &body, what);
    if (failed(outs)) {
      draft.erase();
      return failure();
    }
    branch.push_back(*outs);
  }
  SmallVector<Type> types;
  SmallVector<bool> is_unsigned;
  for (int i = 0; i < outputs; ++i) {
    const Tensor &t = branch[0][i], &e = branch[1][i];
    if (t.type.getElementType() != e.type.getElementType() || t.is_unsigned != e.is_unsigned) {
      draft.erase();
      return n.error("output " + std::to_string(i) + " is " + typeText(t.type.getElementType()) +
                     " in then_branch and " + typeText(e.type.getElementType()) +
                     " in else_branch");
    }
    RankedTensorType joined = join(t.type, e.type);
    if (!joined) {
      draft.erase();
      return n.unsupported("If whose branches give output " + std::to_string(i) +
                           " different ranks");
    }
    types.push_back(joined);
    is_unsigned.push_back(t.is_unsigned);
  }
  for (int k = 0; k < 2; ++k) {
    Region& region = k == 0 ? draft.getThenRegion() : draft.getElseRegion();
    OpBuilder yb = OpBuilder::atBlockEnd(&region.front());
    SmallVector<Value> values;
    for (int i = 0; i < outputs; ++i) values.push_back(castTo(yb, loc, branch[k][i].value, types[i]));
    yb.create<scf::YieldOp>(loc, values);
  }
  auto op = b.create<scf::IfOp>(loc, types, *cond, /*withElseRegion=*/true);
  op.getThenRegion().takeBody(draft.getThenRegion());
  op.getElseRegion().takeBody(draft.getElseRegion());
  draft.erase();
  for (int i = 0; i < outputs; ++i) n.setOutput(i, tensorOf(op.getResult(i), is_unsigned[i]));
  return success();
}

// What Loop and Scan share: an scf.while over (step i, condition, carried values, one growing
// buffer per scan output), with the body converted into its "after" region.
struct LoopSpec {
  const ::onnx::GraphProto* body = nullptr;
  Value trip;              // i64 bound on the steps, or null
  Value cond;              // i1: whether the first step runs (with the trip bound)
  bool body_cond = false;  // the body's output 0 is the next condition (Loop with a cond input)
  bool cond_output = false;  // the body has a condition output at all (Loop)
  SmallVector<Tensor> carried;
  int64_t scans = 0;
  // The body's inputs at step i (i64), given the condition (i1) and the carried values.
  std::function<SmallVector<Tensor>(OpBuilder&, Location, Value, Value, ArrayRef<Tensor>)> inputs;
  // Where step i (index) writes its scan elements (index), and the capacity a full buffer of
  // capacity `cap` grows to.
  std::function<Value(OpBuilder&, Location, Value)> position;
  std::function<Value(OpBuilder&, Location, Value)> grow;
};

struct LoopResult {
  SmallVector<Tensor> carried;
  SmallVector<Tensor> scans;  // [steps, element dims...]
};

// Appends `elem` to scan buffer `buf` (capacity its dim 0) at `pos`, after `done` steps: grown
// when full; an element of another shape than the earlier ones fails the execution.
Value appendScan(NodeContext& n, OpBuilder& b, Location loc, Value buf, Value elem, Value pos,
                 Value done, const LoopSpec& spec, int64_t k) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  auto elem_type = cast<RankedTensorType>(elem.getType());
  SmallVector<OpFoldResult> elem_dims = dimsOf(b, loc, elem);
  Value first = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, done, zero);
  for (int64_t d = 0; d < elem_type.getRank(); ++d) {
    if (!elem_type.isDynamicDim(d)) continue;
    Value same = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                         indexValue(b, loc, dimOf(b, loc, buf, d + 1)),
                                         indexValue(b, loc, elem_dims[d]));
    runtimeCheck(b, loc, b.create<arith::OrIOp>(loc, first, same),
                 n.node().op_type() + ": scan output " + std::to_string(k) +
                     " changes shape between iterations");
  }
  Value cap = b.create<tensor::DimOp>(loc, buf, 0);
  Value full = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::uge, done, cap);
  auto grown = b.create<scf::IfOp>(
      loc, full,
      [&](OpBuilder& tb, Location tl) {
        SmallVector<OpFoldResult> dims = {spec.grow(tb, tl, cap)};
        dims.append(elem_dims.begin(), elem_dims.end());
        Value fresh = emptyTensor(tb, tl, dims, elem_type.getElementType());
        SmallVector<OpFoldResult> offsets(dims.size(), tb.getIndexAttr(0)),
            strides(dims.size(), tb.getIndexAttr(1));
        Value copied = tb.create<tensor::InsertSliceOp>(tl, buf, fresh, offsets,
                                                        dimsOf(tb, tl, buf), strides);
        tb.create<scf::YieldOp>(tl, castTo(tb, tl, copied, buf.getType()));
      },
      [&](OpBuilder& eb, Location el) { eb.create<scf::YieldOp>(el, buf); });
  SmallVector<OpFoldResult> offsets(elem_dims.size() + 1, b.getIndexAttr(0)),
      sizes = {b.getIndexAttr(1)}, strides(elem_dims.size() + 1, b.getIndexAttr(1));
  offsets[0] = pos;
  sizes.append(elem_dims.begin(), elem_dims.end());
  return b.create<tensor::InsertSliceOp>(loc, elem, grown.getResult(0), offsets, sizes, strides);
}

// The buffer type of a scan output whose elements have `elem`'s type.
RankedTensorType bufferType(RankedTensorType elem) {
  SmallVector<int64_t> dims = {ShapedType::kDynamic};
  dims.append(elem.getShape().begin(), elem.getShape().end());
  return RankedTensorType::get(dims, elem.getElementType());
}

FailureOr<LoopResult> buildLoop(NodeContext& n, const LoopSpec& spec) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t carried = static_cast<int64_t>(spec.carried.size());
  const int64_t expected = (spec.cond_output ? 1 : 0) + carried + spec.scans;
  if (spec.body->output_size() != expected)
    return n.error("its body gives " + std::to_string(spec.body->output_size()) +
                   " outputs where " + std::to_string(expected) + " are expected");
  SmallVector<RankedTensorType> carried_types, scan_types;
  for (const Tensor& t : spec.carried) carried_types.push_back(t.type);
  // Scan elements' types are learnt from the body; a first guess from its declared outputs.
  SmallVector<bool> scan_unsigned(spec.scans, false);
  for (int64_t k = 0; k < spec.scans; ++k) {
    const ::onnx::TypeProto& declared =
        spec.body->output((spec.cond_output ? 1 : 0) + carried + k).type();
    RankedTensorType guess = RankedTensorType::get({}, b.getF32Type());
    if (declared.has_tensor_type() && declared.tensor_type().has_shape()) {
      bool is_unsigned = false;
      Type element = storageTypeOf(b.getContext(), declared.tensor_type().elem_type(), &is_unsigned);
      SmallVector<int64_t> dims;
      for (const auto& d : declared.tensor_type().shape().dim())
        dims.push_back(d.has_dim_value() && d.dim_value() >= 0 && d.dim_value() <= kMaxSize
                           ? d.dim_value()
                           : ShapedType::kDynamic);
      if (element) {
        guess = RankedTensorType::get(dims, element);
        scan_unsigned[k] = is_unsigned;
      }
    }
    scan_types.push_back(guess);
  }
  Type i64 = b.getI64Type(), i1 = b.getI1Type();
  // Each attempt converts the body with the types it assumes; when the body gives others (a
  // carried value that grows, a scan element's real type), the loop is rebuilt with them.
  constexpr int kAttempts = 8;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    Operation* first_op = nullptr;
    SmallVector<Value> inits = {intConstant(b, loc, i64, 0), spec.cond};
    first_op = inits[0].getDefiningOp();
    SmallVector<Type> types = {i64, i1};
    for (int64_t j = 0; j < carried; ++j) {
      inits.push_back(castTo(b, loc, spec.carried[j].value, carried_types[j]));
      types.push_back(carried_types[j]);
    }
    for (int64_t k = 0; k < spec.scans; ++k) {
      SmallVector<OpFoldResult> dims;
      for (int64_t d : bufferType(scan_types[k]).getShape())
        dims.push_back(b.getIndexAttr(ShapedType::isDynamic(d) ? 0 : d));
      Value empty = emptyTensor(b, loc, dims, scan_types[k].getElementType());
      inits.push_back(castTo(b, loc, empty, bufferType(scan_types[k])));
      types.push_back(bufferType(scan_types[k]));
    }
    auto loop = b.create<scf::WhileOp>(loc, types, inits);
    SmallVector<Location> locs(types.size(), loc);
    bool retry = false;
    {
      OpBuilder::InsertionGuard guard(b);
      Block* before = b.createBlock(&loop.getBefore(), {}, types, locs);
      Value go = before->getArgument(1);
      if (spec.trip)
        go = b.create<arith::AndIOp>(
            loc, go,
            b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, before->getArgument(0),
                                    spec.trip));
      b.create<scf::ConditionOp>(loc, go, before->getArguments());

      Block* after = b.createBlock(&loop.getAfter(), {}, types, locs);
      Value step = after->getArgument(0), c = after->getArgument(1);
      SmallVector<Tensor> state;
      for (int64_t j = 0; j < carried; ++j)
        state.push_back(tensorOf(after->getArgument(2 + j), spec.carried[j].is_unsigned));
      SmallVector<Tensor> inputs = spec.inputs(b, loc, step, c, state);
      FailureOr<SmallVector<Tensor>> outs = n.subgraph(*spec.body, inputs, after, "body");
      if (failed(outs)) {
        loop.erase();
        return failure();
      }
      b.setInsertionPointToEnd(after);
      const int64_t base = spec.cond_output ? 1 : 0;
      for (int64_t j = 0; j < carried; ++j) {
        const Tensor& out = (*outs)[base + j];
        if (out.type.getElementType() != carried_types[j].getElementType() ||
            out.is_unsigned != spec.carried[j].is_unsigned) {
          loop.erase();
          return n.error("its body gives carried value " + std::to_string(j) + " as " +
                         typeText(out.type.getElementType()) + "; it enters as " +
                         typeText(carried_types[j].getElementType()));
        }
        RankedTensorType joined = join(carried_types[j], out.type);
        if (!joined) {
          loop.erase();
          return n.unsupported("a carried value whose rank changes between iterations (value " +
                               std::to_string(j) + ")");
        }
        if (joined != carried_types[j]) {
          carried_types[j] = joined;
          retry = true;
        }
      }
      for (int64_t k = 0; k < spec.scans; ++k) {
        const Tensor& out = (*outs)[base + carried + k];
        if (out.type != scan_types[k] || out.is_unsigned != scan_unsigned[k]) {
          scan_types[k] = out.type;
          scan_unsigned[k] = out.is_unsigned;
          retry = true;
        }
      }
      if (!retry) {
        SmallVector<Value> next = {
            b.create<arith::AddIOp>(loc, step, intConstant(b, loc, i64, 1)), c};
        if (spec.body_cond) {
          FailureOr<Value> cond_out = onlyElement(n, b, (*outs)[0].value, "the body's condition");
          if (failed(cond_out)) {
            loop.erase();
            return failure();
          }
          next[1] = *cond_out;
        }
        for (int64_t j = 0; j < carried; ++j)
          next.push_back(castTo(b, loc, (*outs)[base + j].value, carried_types[j]));
        Value done = b.create<arith::IndexCastOp>(loc, b.getIndexType(), step);
        Value pos = spec.scans ? spec.position(b, loc, done) : Value();
        for (int64_t k = 0; k < spec.scans; ++k)
          next.push_back(appendScan(n, b, loc, after->getArgument(2 + carried + k),
                                    (*outs)[base + carried + k].value, pos, done, spec, k));
        b.create<scf::YieldOp>(loc, next);
      }
    }
    if (retry) {
      // Everything this attempt built, from its first init to the loop.
      Operation* op = loop;
      while (op != first_op) {
        Operation* prev = op->getPrevNode();
        if (op->use_empty()) op->erase();
        op = prev;
      }
      if (first_op->use_empty()) first_op->erase();
      // From the fourth attempt on, every carried dim is dynamic: that fits any body.
      if (attempt >= 3)
        for (RankedTensorType& t : carried_types)
          t = RankedTensorType::get(SmallVector<int64_t>(t.getRank(), ShapedType::kDynamic),
                                    t.getElementType());
      continue;
    }
    LoopResult result;
    for (int64_t j = 0; j < carried; ++j)
      result.carried.push_back(tensorOf(loop.getResult(2 + j), spec.carried[j].is_unsigned));
    Value steps = b.create<arith::IndexCastOp>(loc, b.getIndexType(), loop.getResult(0));
    for (int64_t k = 0; k < spec.scans; ++k) {
      Value buf = loop.getResult(2 + carried + k);
      SmallVector<OpFoldResult> sizes = dimsOf(b, loc, buf);
      sizes[0] = steps;
      SmallVector<OpFoldResult> offsets(sizes.size(), b.getIndexAttr(0)),
          strides(sizes.size(), b.getIndexAttr(1));
      Value out = b.create<tensor::ExtractSliceOp>(loc, buf, offsets, sizes, strides);
      result.scans.push_back(tensorOf(out, scan_unsigned[k]));
    }
    return result;
  }
  return n.error("the types its body gives did not settle (an importer bug; please report)");
}

// Loop: `for (i = 0; i < M && cond; ++i) cond, v... = body(i, cond, v...)`, M or cond left out
// as ONNX says; scan outputs stacked along a new first dim.
LogicalResult convertLoop(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  if (!n.hasInput(0) && !n.hasInput(1))
    return n.error("has neither a trip count M nor a condition: it would never end");
  LoopSpec spec;
  spec.body = &n.attr("body")->g();
  spec.cond_output = true;
  spec.body_cond = n.hasInput(1);
  if (n.hasInput(0)) {
    FailureOr<Value> trip = onlyElement(n, b, n.value(0), "the trip count M");
    if (failed(trip)) return failure();
    spec.trip = *trip;
  }
  if (n.hasInput(1)) {
    FailureOr<Value> cond = onlyElement(n, b, n.value(1), "the condition");
    if (failed(cond)) return failure();
    spec.cond = *cond;
  } else {
    spec.cond = b.create<arith::ConstantIntOp>(loc, 1, 1);
  }
  for (size_t i = 2; i < n.numInputs(); ++i) {
    if (!n.hasInput(i)) return n.unsupported("Loop with an absent carried value");
    Tensor t = n.input(i);
    t.value = n.value(i);
    t.data = {};
    t.elems.reset();
    spec.carried.push_back(t);
  }
  spec.scans = spec.body->output_size() - 1 - static_cast<int64_t>(spec.carried.size());
  if (spec.scans < 0)
    return n.error("its body gives " + std::to_string(spec.body->output_size()) +
                   " outputs, fewer than the condition and the carried values");
  spec.inputs = [](OpBuilder& ib, Location il, Value step, Value c, ArrayRef<Tensor> state) {
    Tensor iteration = tensorOf(
        ib.create<tensor::FromElementsOp>(il, RankedTensorType::get({}, ib.getI64Type()), step),
        false);
    iteration.elems = SmallVector<OpFoldResult>{
        Value(ib.create<arith::IndexCastOp>(il, ib.getIndexType(), step))};
    SmallVector<Tensor> inputs = {
        iteration,
        tensorOf(ib.create<tensor::FromElementsOp>(il, RankedTensorType::get({}, ib.getI1Type()), c),
                 false)};
    inputs.append(state.begin(), state.end());
    return inputs;
  };
  spec.position = [](OpBuilder&, Location, Value done) { return done; };
  spec.grow = [](OpBuilder& gb, Location gl, Value cap) -> Value {
    Value twice = gb.create<arith::MulIOp>(gl, cap, gb.create<arith::ConstantIndexOp>(gl, 2));
    return gb.create<arith::MaxUIOp>(gl, twice, gb.create<arith::ConstantIndexOp>(gl, 4));
  };
  FailureOr<LoopResult> result = buildLoop(n, spec);
  if (failed(result)) return failure();
  const size_t outputs = result->carried.size() + result->scans.size();
  if (n.numOutputs() > outputs)
    return n.error("has " + std::to_string(n.numOutputs()) + " outputs; its body gives " +
                   std::to_string(outputs) + " values");
  for (size_t j = 0; j < result->carried.size(); ++j) n.setOutput(j, result->carried[j]);
  for (size_t k = 0; k < result->scans.size(); ++k)
    n.setOutput(result->carried.size() + k, result->scans[k]);
  return success();
}

// Scan (opset 9 on): the body run once per slice of the scan inputs along their axes (forward
// or reversed), the states carried, the scan outputs stacked along their axes.
LogicalResult convertScan(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  if (n.opset() < 9) return n.unsupported("Scan of opset 8 (its batch dim and sequence_lens)");
  const int64_t inputs = static_cast<int64_t>(n.numInputs());
  const int64_t m = n.i("num_scan_inputs", 0);
  if (m < 1 || m > inputs) return n.error("num_scan_inputs must be in [1, the number of inputs]");
  const int64_t states = inputs - m;
  LoopSpec spec;
  spec.body = &n.attr("body")->g();
  spec.scans = spec.body->output_size() - states;
  if (spec.scans < 0) return n.error("its body gives fewer outputs than there are states");
  auto listOf = [&](const char* name, int64_t count) -> FailureOr<SmallVector<int64_t>> {
    SmallVector<int64_t> v = n.ints(name);
    if (v.empty()) v.assign(count, 0);
    if (static_cast<int64_t>(v.size()) != count)
      return n.error(std::string(name) + " must have " + std::to_string(count) + " values");
    return v;
  };
  FailureOr<SmallVector<int64_t>> in_axes = listOf("scan_input_axes", m),
                                  in_dirs = listOf("scan_input_directions", m),
                                  out_axes = listOf("scan_output_axes", spec.scans),
                                  out_dirs = listOf("scan_output_directions", spec.scans);
  if (failed(in_axes) || failed(in_dirs) || failed(out_axes) || failed(out_dirs)) return failure();
  for (int64_t d : llvm::concat<int64_t>(*in_dirs, *out_dirs))
    if (d != 0 && d != 1) return n.error("a scan direction must be 0 or 1");
  for (int64_t j = 0; j < states; ++j) {
    if (!n.hasInput(j)) return n.unsupported("Scan with an absent state");
    Tensor t = n.input(j);
    t.value = n.value(j);
    t.data = {};
    t.elems.reset();
    spec.carried.push_back(t);
  }
  // The scan inputs with their scan axis first; the number of steps is their common length.
  SmallVector<Value> xs;
  SmallVector<bool> xs_unsigned;
  OpFoldResult length;
  for (int64_t j = 0; j < m; ++j) {
    const int64_t rank = n.rank(states + j);
    if (rank < 1) return n.error("scan input " + std::to_string(j) + " is a scalar");
    FailureOr<int64_t> axis = n.axis((*in_axes)[j], rank);
    if (failed(axis)) return failure();
    SmallVector<int64_t> perm = {*axis};
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis) perm.push_back(d);
    Value x = n.value(states + j);
    if (*axis != 0) x = transpose(b, loc, x, perm);
    OpFoldResult len = dimOf(b, loc, x, 0);
    if (j == 0) length = len;
    else if (failed(checkSameDim(n, length, len, "the scan inputs' lengths")))
      return failure();
    xs.push_back(x);
    xs_unsigned.push_back(n.isUnsigned(states + j));
  }
  Value steps = indexValue(b, loc, length);
  spec.trip = b.create<arith::IndexCastOp>(loc, b.getI64Type(), steps);
  spec.cond = b.create<arith::ConstantIntOp>(loc, 1, 1);
  SmallVector<int64_t> dirs = *in_dirs;
  spec.inputs = [&xs, &xs_unsigned, dirs, steps](OpBuilder& ib, Location il, Value step, Value,
                                                 ArrayRef<Tensor> state) {
    SmallVector<Tensor> inputs(state.begin(), state.end());
    Value i = ib.create<arith::IndexCastOp>(il, ib.getIndexType(), step);
    Value last = ib.create<arith::SubIOp>(il, steps, ib.create<arith::ConstantIndexOp>(il, 1));
    Value reversed = ib.create<arith::SubIOp>(il, last, i);
    for (size_t j = 0; j < xs.size(); ++j) {
      auto type = cast<RankedTensorType>(xs[j].getType());
      SmallVector<OpFoldResult> offsets(type.getRank(), ib.getIndexAttr(0)),
          sizes = dimsOf(ib, il, xs[j]), strides(type.getRank(), ib.getIndexAttr(1));
      offsets[0] = dirs[j] ? reversed : i;
      sizes[0] = ib.getIndexAttr(1);
      auto slice_type = RankedTensorType::get(type.getShape().drop_front(), type.getElementType());
      Value slice = ib.create<tensor::ExtractSliceOp>(il, slice_type, xs[j], offsets, sizes, strides);
      inputs.push_back(tensorOf(slice, xs_unsigned[j]));
    }
    return inputs;
  };
  // Every step writes each scan output once, in step order (a reversed output is reversed at
  // the end): the buffers hold all steps from the first write.
  const SmallVector<int64_t> odirs = *out_dirs;
  spec.position = [](OpBuilder&, Location, Value done) { return done; };
  spec.grow = [steps](OpBuilder&, Location, Value) { return steps; };
  FailureOr<LoopResult> result = buildLoop(n, spec);
  if (failed(result)) return failure();
  for (int64_t j = 0; j < states; ++j) n.setOutput(j, result->carried[j]);
  for (int64_t k = 0; k < spec.scans; ++k) {
    Tensor t = result->scans[k];
    Value v = t.value;
    const int64_t rank = t.type.getRank();
    if (odirs[k]) {
      // Row r of the output is step T - 1 - r.
      SmallVector<OpFoldResult> dims = dimsOf(b, loc, v);
      Value init = emptyTensor(b, loc, dims, t.type.getElementType());
      v = generate(b, loc, init, {}, {}, [&](OpBuilder& gb, Location gl, ValueRange) {
        SmallVector<Value> at;
        for (int64_t d = 0; d < rank; ++d) at.push_back(gb.create<linalg::IndexOp>(gl, d));
        Value last = gb.create<arith::SubIOp>(gl, steps, gb.create<arith::ConstantIndexOp>(gl, 1));
        at[0] = gb.create<arith::SubIOp>(gl, last, at[0]);
        return gb.create<tensor::ExtractOp>(gl, v, at).getResult();
      });
    }
    FailureOr<int64_t> axis = n.axis((*out_axes)[k], rank);
    if (failed(axis)) return failure();
    if (*axis != 0) {
      SmallVector<int64_t> perm;
      for (int64_t d = 0; d < rank; ++d) perm.push_back(d < *axis ? d + 1 : d == *axis ? 0 : d);
      v = transpose(b, loc, v, perm);
    }
    n.setOutput(states + k, tensorOf(v, t.is_unsigned));
  }
  return success();
}

}  // namespace

void addControlOps(Registry& r) {
  r["If"] = {convertIf, {"then_branch", "else_branch"}};
  r["Loop"] = {convertLoop, {"body"}};
  r["Scan"] = {convertScan,
               {"body", "num_scan_inputs", "scan_input_axes", "scan_input_directions",
                "scan_output_axes", "scan_output_directions"}};
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
