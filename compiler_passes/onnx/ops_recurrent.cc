// Recurrent layers: RNN, GRU and LSTM, every direction, activation and layout, with sequence
// lengths and initial states. Per direction, the input projection of every time step is one GEMM
// before the loop (X·Wᵀ + the biases), then an scf.for over the time steps carries the hidden
// (and cell) state: each step is one GEMM by the recurrence weights (two for GRU's default
// linear_before_reset = 0) and one elementwise loop for the gates, which updates the state in
// place. A batch entry past its sequence length keeps its state and outputs zeros; the reverse
// direction walks each sequence from its own last step, as ONNX Runtime does.
#include <string>
#include <tuple>

#include "compiler_passes/onnx/builders.h"
#include "compiler_passes/onnx/node_context.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir {
namespace disc_ral {
namespace onnx {
namespace {

enum class Cell { kRnn, kGru, kLstm };

struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
};

// What one layer computes, read from the node.
struct Layer {
  Cell cell;
  int64_t gates = 1;         // per hidden unit: RNN 1, GRU 3 (z, r, h), LSTM 4 (i, o, f, c)
  int64_t hidden = 0;        // hidden_size
  int64_t directions = 1;    // 2 when bidirectional
  bool reverse = false;      // direction "reverse" (the second of a bidirectional layer always is)
  bool batch_first = false;  // layout = 1
  bool linear_before_reset = false;     // GRU
  bool input_forget = false;            // LSTM: f = 1 - i
  std::optional<double> clip;           // pre-activations clipped to [-clip, clip]
  SmallVector<Activation> activations;  // per direction: f (RNN); f, g (GRU); f, g, h (LSTM)
};

int64_t activationsPerDirection(Cell cell) {
  return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 2 : 3;
}

// The `activations` attribute with the alphas and betas of the functions that take them, in
// order. A function that takes one and finds none in the lists is refused: the defaults of the
// operators of the same name are not what every runtime uses.
FailureOr<SmallVector<Activation>> readActivations(NodeContext& n, Cell cell, int64_t dirs) {
  const int64_t per = activationsPerDirection(cell);
  SmallVector<std::string> names;
  if (const ::onnx::AttributeProto* a = n.attr("activations")) {
    for (const std::string& s : a->strings()) names.push_back(s);
    if (static_cast<int64_t>(names.size()) != per * dirs)
      return n.error("'activations' has " + std::to_string(names.size()) + " names, " +
                     std::to_string(per * dirs) + " expected (" + std::to_string(per) +
                     " per direction)");
  } else {
    for (int64_t d = 0; d < dirs; ++d) {
      if (cell == Cell::kRnn) {
        names.push_back("Tanh");
      } else {
        names.push_back("Sigmoid");
        names.push_back("Tanh");
        if (cell == Cell::kLstm) names.push_back("Tanh");
      }
    }
  }
  std::vector<float> alphas, betas;
  if (const ::onnx::AttributeProto* a = n.attr("activation_alpha"))
    alphas.assign(a->floats().begin(), a->floats().end());
  if (const ::onnx::AttributeProto* a = n.attr("activation_beta"))
    betas.assign(a->floats().begin(), a->floats().end());
  size_t next_alpha = 0, next_beta = 0;
  SmallVector<Activation> out;
  for (const std::string& name : names) {
    Activation act{name};
    const bool takes_alpha = name == "Affine" || name == "LeakyRelu" || name == "ThresholdedRelu" ||
                             name == "ScaledTanh" || name == "HardSigmoid" || name == "Elu";
    const bool takes_beta = name == "Affine" || name == "ScaledTanh" || name == "HardSigmoid";
    const bool plain = name == "Relu" || name == "Tanh" || name == "Sigmoid" ||
                       name == "Softsign" || name == "Softplus";
    if (!takes_alpha && !plain) return n.unsupported("activation '" + name + "'");
    if (takes_alpha) {
      if (next_alpha >= alphas.size())
        return n.unsupported("activation '" + name + "' without its alpha in activation_alpha");
      act.alpha = alphas[next_alpha++];
    }
    if (takes_beta) {
      if (next_beta >= betas.size())
        return n.unsupported("activation '" + name + "' without its beta in activation_beta");
      act.beta = betas[next_beta++];
    }
    out.push_back(act);
  }
  if (next_alpha != alphas.size() || next_beta != betas.size())
    return n.error("activation_alpha/activation_beta have more values than the activations take");
  return out;
}

// v[d] of a tensor v [D, ...], rank-reduced.
Value sliceOuter(OpBuilder& b, Location loc, Value v, int64_t d) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> dims = dimsOf(b, loc, v);
  const int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes(dims),
      strides(rank, b.getIndexAttr(1));
  offsets[0] = b.getIndexAttr(d);
  sizes[0] = b.getIndexAttr(1);
  auto result = RankedTensorType::get(type.getShape().drop_front(), type.getElementType());
  return b.create<tensor::ExtractSliceOp>(loc, result, v, offsets, sizes, strides);
}

// v[offset : offset + size] of a 1-D tensor.
Value slice1d(OpBuilder& b, Location loc, Value v, int64_t offset, int64_t size) {
  auto type = RankedTensorType::get({size}, cast<RankedTensorType>(v.getType()).getElementType());
  return b.create<tensor::ExtractSliceOp>(
      loc, type, v, ArrayRef<OpFoldResult>{b.getIndexAttr(offset)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(size)}, ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
}

// Columns [offset, offset + size) of a 2-D tensor: a view once bufferized.
Value columns(OpBuilder& b, Location loc, Value v, int64_t offset, int64_t size) {
  auto type = cast<RankedTensorType>(v.getType());
  OpFoldResult rows = dimOf(b, loc, v, 0);
  auto result = RankedTensorType::get({type.getDimSize(0), size}, type.getElementType());
  OpFoldResult one = b.getIndexAttr(1);
  return b.create<tensor::ExtractSliceOp>(
      loc, result, v, ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(offset)},
      ArrayRef<OpFoldResult>{rows, b.getIndexAttr(size)}, ArrayRef<OpFoldResult>{one, one});
}

// a [M, K] · c [K, N] on a zero-filled result: ral_gemm.
Value gemm(OpBuilder& b, Location loc, Value a, Value c) {
  Type t = cast<RankedTensorType>(a.getType()).getElementType();
  Value init =
      filled(b, loc, {dimOf(b, loc, a, 0), dimOf(b, loc, c, 1)}, scalarConstant(b, loc, t, 0));
  return b.create<linalg::MatmulOp>(loc, ValueRange{a, c}, ValueRange{init}).getResult(0);
}

// Inputs of a direction's loop, all [.., ...] tensors in time-major order.
struct Direction {
  Value xw;        // [S, B, G·H]: X·Wᵀ + Wb (+ Rb where it may be added before the gates)
  Value rt;        // [H, G·H]: Rᵀ
  Value rb_h;      // GRU: Rb of the h gate [H] (added in the step); null otherwise
  Value peephole;  // LSTM: [3H] (i, o, f) or null
  Value h0, c0;    // [B, H]
  const Activation* acts;
  bool reverse;
};

// The step's time index for batch entry `bi`: t forwards, len - 1 - t in reverse, 0 when the
// entry's sequence has ended (`valid` false; its results are dropped).
struct StepIndex {
  Value valid, time;
};
StepIndex stepIndex(OpBuilder& b, Location loc, Value t, Value len, bool reverse) {
  Value valid = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, t, len);
  Value time = t;
  if (reverse) {
    Value one = b.create<arith::ConstantIndexOp>(loc, 1);
    time = b.create<arith::SubIOp>(loc, b.create<arith::SubIOp>(loc, len, one), t);
  }
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  return {valid, b.create<arith::SelectOp>(loc, valid, time, zero)};
}

// One direction of the layer: returns Y [S, B, H] (zeros past each sequence's end, in time
// order), the last hidden state and the last cell state (LSTM) [B, H].
SmallVector<Value> runDirection(OpBuilder& b, Location loc, const Layer& layer,
                                const Direction& dir, Value lens, OpFoldResult seq) {
  Type t = cast<RankedTensorType>(dir.h0.getType()).getElementType();
  const int64_t h = layer.hidden;
  const bool lstm = layer.cell == Cell::kLstm, gru = layer.cell == Cell::kGru;
  SmallVector<OpFoldResult> state_dims = dimsOf(b, loc, dir.h0);
  SmallVector<OpFoldResult> y_dims = {seq, state_dims[0], b.getIndexAttr(h)};
  Value y0 = emptyTensor(b, loc, y_dims, t);
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  SmallVector<Value> init = {dir.h0, y0};
  if (lstm) init.push_back(dir.c0);
  MLIRContext* ctx = b.getContext();
  AffineExpr bi = getAffineDimExpr(0, ctx), hi = getAffineDimExpr(1, ctx);
  auto map = [&](AffineExpr e0, AffineExpr e1) { return AffineMap::get(2, 0, {e0, e1}, ctx); };
  AffineMap id = map(bi, hi), batch = AffineMap::get(2, 0, {bi}, ctx),
            units = AffineMap::get(2, 0, {hi}, ctx);
  SmallVector<utils::IteratorType> parallel(2, utils::IteratorType::parallel);

  auto loop = b.create<scf::ForOp>(
      loc, zero, indexValue(b, loc, seq), one, init,
      [&](OpBuilder& lb, Location ll, Value step, ValueRange carried) {
        Value hc = carried[0], y = carried[1];
        // What every gate body needs: the step's time index per batch entry, and gate g's
        // pre-activation x·Wᵀ + bias (+ the recurrent product `rec` at its column).
        auto preActivation = [&](OpBuilder& nb, Location nl, const StepIndex& s, Value bidx,
                                 Value hidx, int64_t g, Value rec) -> Value {
          Value col =
              nb.create<arith::AddIOp>(nl, hidx, nb.create<arith::ConstantIndexOp>(nl, g * h));
          Value x = nb.create<tensor::ExtractOp>(nl, dir.xw, ValueRange{s.time, bidx, col});
          return rec ? nb.create<arith::AddFOp>(nl, x, rec).getResult() : x;
        };
        auto activate = [&](OpBuilder& nb, Location nl, Value v, const Activation& a) -> Value {
          if (layer.clip) {
            v = nb.create<arith::MaximumFOp>(nl, v, scalarConstant(nb, nl, t, -*layer.clip));
            v = nb.create<arith::MinimumFOp>(nl, v, scalarConstant(nb, nl, t, *layer.clip));
          }
          return floatActivation(nb, nl, a.name, v, a.alpha, a.beta);
        };
        auto indexOf = [&](OpBuilder& nb, Location nl, Value len) {
          Value bidx = nb.create<linalg::IndexOp>(nl, 0), hidx = nb.create<linalg::IndexOp>(nl, 1);
          Value l = nb.create<arith::IndexCastOp>(nl, nb.getIndexType(), len);
          return std::make_tuple(bidx, hidx, stepIndex(nb, nl, step, l, dir.reverse));
        };

        // The recurrent products: H·Rᵀ for every gate, or for GRU without linear_before_reset
        // z and r first, then (r ⊙ H)·Rhᵀ.
        Value rec, rec_h;
        if (gru && !layer.linear_before_reset) {
          Value rt_zr = columns(lb, ll, dir.rt, 0, 2 * h), rt_h = columns(lb, ll, dir.rt, 2 * h, h);
          rec = gemm(lb, ll, hc, rt_zr);
          // r ⊙ H (r from this step's reset gate).
          Value rh =
              lb.create<linalg::GenericOp>(
                    ll, TypeRange{hc.getType()}, ValueRange{columns(lb, ll, rec, h, h), hc, lens},
                    ValueRange{emptyTensor(lb, ll, state_dims, t)},
                    ArrayRef<AffineMap>{id, id, batch, id}, parallel,
                    [&](OpBuilder& nb, Location nl, ValueRange a) {
                      Value bidx, hidx;
                      StepIndex s;
                      std::tie(bidx, hidx, s) = indexOf(nb, nl, a[2]);
                      Value r = activate(nb, nl, preActivation(nb, nl, s, bidx, hidx, 1, a[0]),
                                         dir.acts[0]);
                      nb.create<linalg::YieldOp>(
                          nl, ValueRange{nb.create<arith::MulFOp>(nl, r, a[1]).getResult()});
                    })
                  .getResult(0);
          rec_h = gemm(lb, ll, rh, rt_h);
        } else {
          rec = gemm(lb, ll, hc, dir.rt);
        }

        // The gates, and the new state written over the old one. Inputs: the lengths, then
        // each gate's recurrent product at this unit, GRU's (r ⊙ H)·Rhᵀ and Rb of its h gate,
        // LSTM's peepholes.
        SmallVector<Value> ins = {lens};
        SmallVector<AffineMap> maps = {batch};
        const int64_t rec_gates = rec_h ? 2 : layer.gates;
        for (int64_t gi = 0; gi < rec_gates; ++gi) {
          ins.push_back(columns(lb, ll, rec, gi * h, h));
          maps.push_back(id);
        }
        if (rec_h) {
          ins.push_back(rec_h);
          maps.push_back(id);
        }
        if (dir.rb_h) {
          ins.push_back(dir.rb_h);
          maps.push_back(units);
        }
        if (dir.peephole) {
          for (int64_t p = 0; p < 3; ++p) {
            ins.push_back(slice1d(lb, ll, dir.peephole, p * h, h));
            maps.push_back(units);
          }
        }
        const size_t n_in = ins.size();
        SmallVector<Value> outs = {hc, emptyTensor(lb, ll, state_dims, t)};
        if (lstm) outs.push_back(carried[2]);
        for (size_t i = 0; i < outs.size(); ++i) maps.push_back(id);
        SmallVector<Type> types;
        for (Value v : outs) types.push_back(v.getType());
        auto gates = lb.create<linalg::GenericOp>(
            ll, types, ins, outs, maps, parallel, [&](OpBuilder& nb, Location nl, ValueRange a) {
              // Plain variables: lambdas below capture them (C++17 cannot capture bindings).
              Value bidx, hidx;
              StepIndex s;
              std::tie(bidx, hidx, s) = indexOf(nb, nl, a[0]);
              auto c = [&](double v) { return scalarConstant(nb, nl, t, v); };
              size_t next = 1 + rec_gates;
              Value rec_h_v = rec_h ? a[next++] : Value();
              Value rb_h_v = dir.rb_h ? a[next++] : Value();
              const size_t peep = next;
              auto pre = [&](int64_t gi, Value r) {
                return preActivation(nb, nl, s, bidx, hidx, gi, r);
              };
              Value h_old = a[n_in], c_old = lstm ? a[n_in + 2] : Value();
              Value h_new, c_new;
              if (layer.cell == Cell::kRnn) {
                h_new = activate(nb, nl, pre(0, a[1]), dir.acts[0]);
              } else if (gru) {
                // Gates z, r, h at 0, 1, 2.
                Value z = activate(nb, nl, pre(0, a[1]), dir.acts[0]);
                Value hh;
                if (layer.linear_before_reset) {
                  Value r = activate(nb, nl, pre(1, a[2]), dir.acts[0]);
                  Value rh = nb.create<arith::AddFOp>(nl, a[3], rb_h_v);
                  hh = pre(2, nb.create<arith::MulFOp>(nl, r, rh));
                } else {
                  hh = pre(2, nb.create<arith::AddFOp>(nl, rec_h_v, rb_h_v));
                }
                hh = activate(nb, nl, hh, dir.acts[1]);
                // (1 - z) ⊙ h~ + z ⊙ H
                h_new = nb.create<arith::AddFOp>(
                    nl, nb.create<arith::MulFOp>(nl, nb.create<arith::SubFOp>(nl, c(1), z), hh),
                    nb.create<arith::MulFOp>(nl, z, h_old));
              } else {
                // Gates i, o, f, c at 0, 1, 2, 3; peepholes i, o, f.
                auto gate = [&](int64_t gi, Value cell) {
                  Value v = pre(gi, a[1 + gi]);
                  if (dir.peephole)
                    v = nb.create<arith::AddFOp>(nl, v,
                                                 nb.create<arith::MulFOp>(nl, a[peep + gi], cell));
                  return activate(nb, nl, v, dir.acts[0]);
                };
                Value i = gate(0, c_old);
                Value f = layer.input_forget ? nb.create<arith::SubFOp>(nl, c(1), i).getResult()
                                             : gate(2, c_old);
                Value cc = activate(nb, nl, pre(3, a[4]), dir.acts[1]);
                c_new = nb.create<arith::AddFOp>(nl, nb.create<arith::MulFOp>(nl, f, c_old),
                                                 nb.create<arith::MulFOp>(nl, i, cc));
                Value o = gate(1, c_new);
                Value ch = floatActivation(nb, nl, dir.acts[2].name, c_new, dir.acts[2].alpha,
                                           dir.acts[2].beta);
                h_new = nb.create<arith::MulFOp>(nl, o, ch);
              }
              SmallVector<Value> results = {nb.create<arith::SelectOp>(nl, s.valid, h_new, h_old),
                                            nb.create<arith::SelectOp>(nl, s.valid, h_new, c(0))};
              if (lstm) results.push_back(nb.create<arith::SelectOp>(nl, s.valid, c_new, c_old));
              nb.create<linalg::YieldOp>(nl, results);
            });
        // This step's outputs go to row `step` (reordered per sequence after the loop).
        SmallVector<OpFoldResult> offsets = {step, lb.getIndexAttr(0), lb.getIndexAttr(0)};
        SmallVector<OpFoldResult> sizes = {lb.getIndexAttr(1), state_dims[0], state_dims[1]};
        SmallVector<OpFoldResult> strides(3, lb.getIndexAttr(1));
        y = lb.create<tensor::InsertSliceOp>(ll, gates.getResult(1), y, offsets, sizes, strides);
        SmallVector<Value> yields = {gates.getResult(0), y};
        if (lstm) yields.push_back(gates.getResult(2));
        lb.create<scf::YieldOp>(ll, yields);
      });
  Value y = loop.getResult(1);
  if (dir.reverse) {
    // Step s of batch entry b is time len_b - 1 - s: Y[t, b] = steps[len_b - 1 - t, b].
    Value steps = y;
    y = generate(
        b, loc, emptyTensor(b, loc, y_dims, t), {lens},
        {AffineMap::get(3, 0, {getAffineDimExpr(1, ctx)}, ctx)},
        [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
          Value ti = nb.create<linalg::IndexOp>(nl, 0);
          Value bidx = nb.create<linalg::IndexOp>(nl, 1);
          Value hidx = nb.create<linalg::IndexOp>(nl, 2);
          Value len = nb.create<arith::IndexCastOp>(nl, nb.getIndexType(), a[0]);
          StepIndex s = stepIndex(nb, nl, ti, len, true);
          Value v = nb.create<tensor::ExtractOp>(nl, steps, ValueRange{s.time, bidx, hidx});
          return nb.create<arith::SelectOp>(nl, s.valid, v, scalarConstant(nb, nl, t, 0));
        });
  }
  SmallVector<Value> out = {y, loop.getResult(0)};
  if (lstm) out.push_back(loop.getResult(2));
  return out;
}

// An optional input of shape [dirs, ...] (initial_h, initial_c, the bias, the peepholes): its
// direction-d slice, or null when the input is absent.
Value optionalSlice(NodeContext& n, size_t i, int64_t d) {
  if (!n.hasInput(i)) return nullptr;
  return sliceOuter(n.b(), n.loc(), n.value(i), d);
}

LogicalResult convertRecurrent(NodeContext& n, Cell cell) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const std::string op = n.node().op_type();
  Layer layer;
  layer.cell = cell;
  layer.gates = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4;
  const std::string direction = n.s("direction", "forward");
  if (direction == "bidirectional") {
    layer.directions = 2;
  } else if (direction == "reverse") {
    layer.reverse = true;
  } else if (direction != "forward") {
    return n.error("unknown direction '" + direction + "'");
  }
  layer.batch_first = n.i("layout", 0) != 0;
  layer.linear_before_reset = n.i("linear_before_reset", 0) != 0;
  layer.input_forget = n.i("input_forget", 0) != 0;
  if (n.has("clip")) {
    layer.clip = n.f("clip", 0);
    if (!(*layer.clip > 0)) return n.error("clip must be positive");
  }
  FailureOr<SmallVector<Activation>> acts = readActivations(n, cell, layer.directions);
  if (failed(acts)) return failure();
  layer.activations = *acts;

  Type t = n.elementType(0);
  if (!t.isF32() && !t.isF64())
    return n.unsupported(op + " of element type other than float and double");
  if (n.rank(0) != 3 || n.rank(1) != 3 || n.rank(2) != 3)
    return n.error("X, W and R must have rank 3");
  RankedTensorType w_type = n.type(1), r_type = n.type(2);
  const int64_t g = layer.gates, dirs = layer.directions;
  // hidden_size, or R's last dim when the attribute is left out.
  layer.hidden = n.i("hidden_size", r_type.getDimSize(2));
  const int64_t h = layer.hidden;
  if (ShapedType::isDynamic(h)) return n.unsupported(op + " without a static hidden_size");
  // In [1, 2^48], so the weights' expected dims (up to 2 * 4 * h) cannot overflow.
  if (failed(checkWindowAttribute(n, "hidden_size", {h}, 1))) return failure();
  auto expect = [&](RankedTensorType type, ArrayRef<int64_t> want, const char* what) -> bool {
    for (size_t d = 0; d < want.size(); ++d)
      if (!ShapedType::isDynamic(want[d]) && type.getDimSize(d) != want[d] &&
          !type.isDynamicDim(d)) {
        n.error(std::string(what) + " must have shape [" + std::to_string(want[0]) + ", " +
                std::to_string(want[1]) + (want.size() > 2 ? ", " + std::to_string(want[2]) : "") +
                "] (dims of a dynamic size aside)");
        return false;
      }
    return true;
  };
  if (!expect(w_type, {dirs, g * h, ShapedType::kDynamic}, "W") ||
      !expect(r_type, {dirs, g * h, h}, "R"))
    return failure();
  // Every dim these weights are used with must be known, so the gate loops' column offsets
  // and the GEMMs' shapes are right.
  for (RankedTensorType type : {w_type, r_type})
    if (type.isDynamicDim(0) || type.isDynamicDim(1))
      return n.unsupported(op + " weights of a dynamic shape");
  if (n.hasInput(3) && (n.rank(3) != 2 || !expect(n.type(3), {dirs, 2 * g * h}, "B")))
    return n.rank(3) != 2 ? n.error("B must have rank 2") : failure();
  if (cell == Cell::kLstm && n.hasInput(7) &&
      (n.rank(7) != 2 || !expect(n.type(7), {dirs, 3 * h}, "P")))
    return n.rank(7) != 2 ? n.error("P must have rank 2") : failure();

  // X in time-major order [S, B, I].
  Value x = n.value(0);
  if (layer.batch_first) x = transpose(b, loc, x, {1, 0, 2});
  SmallVector<OpFoldResult> xd = dimsOf(b, loc, x);
  if (failed(checkSameDim(n, xd[2], dimOf(b, loc, n.value(1), 2), "X's input size and W's")))
    return failure();
  const OpFoldResult seq = xd[0], batch = xd[1];

  // Sequence lengths (int32 [B]; all S when absent), each checked to be in [0, S].
  Value lens;
  if (n.hasInput(4)) {
    if (!n.elementType(4).isInteger(32) || n.rank(4) != 1)
      return n.error("sequence_lens must be an int32 vector");
    if (failed(checkSameDim(n, dimOf(b, loc, n.value(4), 0), batch, "sequence_lens and batch")))
      return failure();
    lens = n.value(4);
    // Checked by the host before any step, one length at a time (on a GPU each is read back
    // from the device): a check inside the gate kernels could not fail the execution there.
    Value s32 = b.create<arith::IndexCastOp>(loc, b.getI32Type(), indexValue(b, loc, seq));
    auto check = b.create<scf::ForOp>(loc, b.create<arith::ConstantIndexOp>(loc, 0),
                                      indexValue(b, loc, batch),
                                      b.create<arith::ConstantIndexOp>(loc, 1));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(check.getBody());
      Value len = b.create<tensor::ExtractOp>(loc, lens, check.getInductionVar());
      Value ok = b.create<arith::AndIOp>(
          loc,
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, len,
                                  intConstant(b, loc, len.getType(), 0)),
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sle, len, s32));
      runtimeCheck(b, loc, ok, "a sequence length is outside [0, the sequence's length]");
    }
  } else {
    lens = filled(b, loc, {batch},
                  b.create<arith::IndexCastOp>(loc, b.getI32Type(), indexValue(b, loc, seq)));
  }

  // The states given for each direction, time-major layout [dirs, B, H].
  if ((n.hasInput(5) && n.rank(5) != 3) || (cell == Cell::kLstm && n.hasInput(6) && n.rank(6) != 3))
    return n.error("initial_h and initial_c must have rank 3");
  auto stateInput = [&](size_t i) -> Value {
    if (!n.hasInput(i)) return nullptr;
    Value v = n.value(i);
    return layer.batch_first ? transpose(b, loc, v, {1, 0, 2}) : v;
  };
  Value h0_all = stateInput(5), c0_all = cell == Cell::kLstm ? stateInput(6) : Value();
  for (Value v : {h0_all, c0_all}) {
    if (!v) continue;
    SmallVector<OpFoldResult> d = dimsOf(b, loc, v);
    if (failed(checkSameDim(n, d[0], b.getIndexAttr(dirs), "initial state directions")) ||
        failed(checkSameDim(n, d[1], batch, "initial state batch")) ||
        failed(checkSameDim(n, d[2], b.getIndexAttr(h), "initial state hidden size")))
      return failure();
  }

  Value xflat = reshape(b, loc, x, {mulIndex(b, loc, seq, batch), xd[2]});
  // The weights as the GEMMs read them, [D, X, G·H]: transposed at import when constant (as a
  // model ships them), so no execution transposes megabytes of weights before its first step.
  auto transposedWeights = [&](size_t i) -> Value {
    Tensor& in = n.input(i);
    if (in.data && n.constantFits(static_cast<int64_t>(in.data.getRawData().size())))
      if (DenseElementsAttr folded = transposeConstant(in.data, {0, 2, 1})) {
        (void)n.chargeConstant(static_cast<int64_t>(folded.getRawData().size()), "weights");
        return b.create<arith::ConstantOp>(loc, folded);
      }
    return transpose(b, loc, n.value(i), {0, 2, 1});
  };
  Value w = transposedWeights(1), r = transposedWeights(2);
  SmallVector<Value> ys, hs, cs;
  for (int64_t d = 0; d < dirs; ++d) {
    Direction dir;
    dir.reverse = layer.reverse || d == 1;
    dir.acts = &layer.activations[d * activationsPerDirection(cell)];
    Value wt = sliceOuter(b, loc, w, d);      // [I, G·H]
    dir.rt = sliceOuter(b, loc, r, d);        // [H, G·H]
    Value xw = gemm(b, loc, xflat, wt);
    if (Value bias = optionalSlice(n, 3, d)) {
      // Wb + Rb, except GRU's Rb of the h gate, which goes inside the step.
      Value wb = slice1d(b, loc, bias, 0, g * h), rb = slice1d(b, loc, bias, g * h, g * h);
      const int64_t pre = cell == Cell::kGru ? 2 * h : g * h;
      Value sum = generate(b, loc, emptyTensor(b, loc, {b.getIndexAttr(g * h)}, t), {wb, rb},
                           {b.getMultiDimIdentityMap(1), b.getMultiDimIdentityMap(1)},
                           [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
                             Value i = nb.create<linalg::IndexOp>(nl, 0);
                             Value in = nb.create<arith::CmpIOp>(
                                 nl, arith::CmpIPredicate::slt, i,
                                 nb.create<arith::ConstantIndexOp>(nl, pre));
                             return nb.create<arith::SelectOp>(
                                 nl, in, nb.create<arith::AddFOp>(nl, a[0], a[1]), a[0]);
                           });
      xw = elementwise(b, loc, {xw, sum}, t, [](OpBuilder& nb, Location nl, ValueRange a) -> Value {
        return nb.create<arith::AddFOp>(nl, a[0], a[1]);
      });
      if (cell == Cell::kGru) dir.rb_h = slice1d(b, loc, rb, 2 * h, h);
    } else if (cell == Cell::kGru) {
      dir.rb_h = filled(b, loc, {b.getIndexAttr(h)}, scalarConstant(b, loc, t, 0));
    }
    dir.xw = reshape(b, loc, xw, {seq, batch, b.getIndexAttr(g * h)});
    if (cell == Cell::kLstm) dir.peephole = optionalSlice(n, 7, d);
    SmallVector<OpFoldResult> state = {batch, b.getIndexAttr(h)};
    dir.h0 = h0_all ? sliceOuter(b, loc, h0_all, d)
                    : filled(b, loc, state, scalarConstant(b, loc, t, 0));
    if (cell == Cell::kLstm)
      dir.c0 = c0_all ? sliceOuter(b, loc, c0_all, d)
                      : filled(b, loc, state, scalarConstant(b, loc, t, 0));
    SmallVector<Value> out = runDirection(b, loc, layer, dir, lens, seq);
    ys.push_back(out[0]);
    hs.push_back(out[1]);
    if (cell == Cell::kLstm) cs.push_back(out[2]);
  }

  // Y [S, dirs, B, H] (layout 1: [B, S, dirs, H]); Y_h and Y_c [dirs, B, H] ([B, dirs, H]).
  auto stack = [&](ArrayRef<Value> parts, int64_t axis) -> Value {
    SmallVector<OpFoldResult> dims = dimsOf(b, loc, parts[0]);
    dims.insert(dims.begin() + axis, b.getIndexAttr(dirs));
    Value all = emptyTensor(b, loc, dims, t);
    const int64_t rank = static_cast<int64_t>(dims.size());
    for (int64_t d = 0; d < dirs; ++d) {
      SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes(dims),
          strides(rank, b.getIndexAttr(1));
      offsets[axis] = b.getIndexAttr(d);
      sizes[axis] = b.getIndexAttr(1);
      all = b.create<tensor::InsertSliceOp>(loc, parts[d], all, offsets, sizes, strides);
    }
    return all;
  };
  Value y = stack(ys, 1);
  Value yh = stack(hs, 0);
  Value yc = cell == Cell::kLstm ? stack(cs, 0) : Value();
  if (layer.batch_first) {
    y = transpose(b, loc, y, {2, 0, 1, 3});
    yh = transpose(b, loc, yh, {1, 0, 2});
    if (yc) yc = transpose(b, loc, yc, {1, 0, 2});
  }
  n.setOutput(0, y);
  n.setOutput(1, yh);
  if (yc) n.setOutput(2, yc);
  return success();
}

LogicalResult convertRnn(NodeContext& n) { return convertRecurrent(n, Cell::kRnn); }
LogicalResult convertGru(NodeContext& n) { return convertRecurrent(n, Cell::kGru); }
LogicalResult convertLstm(NodeContext& n) { return convertRecurrent(n, Cell::kLstm); }

}  // namespace

void addRecurrentOps(Registry& r) {
  const std::vector<std::string> common = {
      "activation_alpha", "activation_beta", "activations", "clip",
      "direction",        "hidden_size",     "layout"};
  r["RNN"] = {convertRnn, common};
  std::vector<std::string> gru = common;
  gru.push_back("linear_before_reset");
  r["GRU"] = {convertGru, gru};
  std::vector<std::string> lstm = common;
  lstm.push_back("input_forget");
  r["LSTM"] = {convertLstm, lstm};
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
