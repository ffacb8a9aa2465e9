"""Integer arithmetic the importer folds (shape arithmetic on small integer tensors, known at
import time or computed from dims at run time) follows the element type as numpy does: it wraps
in int8/int16/int32, int64 stays exact (never through a double), division by 0 and MIN / -1 give
numpy's results, and a cast wraps before whatever reads the value (a Reshape's shape)."""

import numpy as np
import pytest
import torch
from onnx import TensorProto, helper

from conftest import F, I8, I32, I64, INT64_MAX, INT64_MIN, const, model, tensor

NP = {TensorProto.INT8: np.int8, TensorProto.INT16: np.int16, TensorProto.INT32: np.int32,
      TensorProto.INT64: np.int64}


def binary(op, dtype, a, b):
    return model([helper.make_node(op, ["a", "b"], ["y"], name="op")], [], [tensor("y", dtype, None)],
                 [const("a", dtype, a), const("b", dtype, b)])


def numpy_op(op, a, b, t):
    a, b = np.array(a, t), np.array(b, t)
    with np.errstate(all="ignore"):
        if op == "Add":
            return a + b
        if op == "Sub":
            return a - b
        if op == "Mul":
            return a * b
    # ONNX Div of integers truncates; numpy's 0 for a zero divisor; MIN / -1 wraps. In Python
    # integers: a double would round int64 quotients.
    bits = np.iinfo(t).bits
    out = []
    for x, y in zip(a.tolist(), b.tolist()):
        q = 0 if y == 0 else (abs(x) // abs(y)) * (1 if (x < 0) == (y < 0) else -1)
        out.append((q + 2 ** (bits - 1)) % 2 ** bits - 2 ** (bits - 1))
    return np.array(out, dtype=t)


@pytest.mark.parametrize("dtype", [TensorProto.INT8, TensorProto.INT16, TensorProto.INT32,
                                   TensorProto.INT64])
@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
def test_constant_folding_wraps_like_numpy(compiler, op, dtype):
    t = NP[dtype]
    info = np.iinfo(t)
    a = [100, info.max, info.min, -7, 0, info.min, 5]
    b = [100, 1, -1, 2, 0, info.max, 0] if op != "Div" else [2, -1, -1, 2, 0, 3, 0]
    got = compiler.load(binary(op, dtype, a, b))().numpy()
    assert got.dtype == t
    np.testing.assert_array_equal(got, numpy_op(op, a, b, t))


def test_int8_sum_then_divide(compiler):
    # (100 + 100) / 2 in int8: -56 / 2 = -28 (folding in int64 gave 100).
    m = model([helper.make_node("Add", ["a", "a"], ["s"]),
               helper.make_node("Div", ["s", "two"], ["y"])], [], [tensor("y", I8, None)],
              [const("a", I8, [100]), const("two", I8, [2])])
    assert compiler.load(m)().tolist() == [-28]


def test_neg_and_abs_of_the_minimum(compiler):
    for op in ("Neg", "Abs"):
        m = model([helper.make_node(op, ["a"], ["y"])], [], [tensor("y", I8, None)],
                  [const("a", I8, [-128, -3, 5])])
        with np.errstate(all="ignore"):
            want = (-np.array([-128, -3, 5], np.int8) if op == "Neg"
                    else np.abs(np.array([-128, -3, 5], np.int8)))
        assert compiler.load(m)().tolist() == want.tolist()


def test_casts_keep_int64_exact_and_wrap_narrowing(compiler):
    values = [2 ** 53 + 1, INT64_MAX, INT64_MIN, -(2 ** 53) - 1]
    m = model([helper.make_node("Cast", ["a"], ["y"], to=TensorProto.INT64)], [],
              [tensor("y", I64, None)], [const("a", I64, values)])
    assert compiler.load(m)().tolist() == values
    m = model([helper.make_node("Cast", ["a"], ["y"], to=TensorProto.INT8)], [],
              [tensor("y", I8, None)], [const("a", I64, [300, -129, 2 ** 40 + 5, INT64_MIN])])
    assert compiler.load(m)().tolist() == np.array([300, -129, 2 ** 40 + 5, INT64_MIN],
                                                   np.int64).astype(np.int8).tolist()
    # A wrapped cast reaching a Reshape: int64 300 is int8 44.
    m = model([helper.make_node("Cast", ["n"], ["n8"], to=TensorProto.INT8),
               helper.make_node("Cast", ["n8"], ["shape"], to=TensorProto.INT64),
               helper.make_node("Reshape", ["x", "shape"], ["y"], name="rs")],
              [tensor("x", F, [4, 11])], [tensor("y", F, None)], [const("n", I64, [300])])
    x = torch.arange(44.0).reshape(4, 11)
    assert torch.equal(compiler.load(m)(x), x.reshape(44))


def test_shape_arithmetic_at_run_time_wraps_in_its_type(compiler):
    # Shape -> Cast(int8) -> Add -> Cast(int64) -> Reshape's shape: int8 arithmetic on a dim known
    # only when the module runs. For a dim of 100: 100 + 100 wraps to -56, and -56 + 57 is 1.
    m = model([helper.make_node("Shape", ["x"], ["s"]),
               helper.make_node("Cast", ["s"], ["s8"], to=TensorProto.INT8),
               helper.make_node("Add", ["s8", "s8"], ["d"]),
               helper.make_node("Add", ["d", "k"], ["e"]),
               helper.make_node("Cast", ["e"], ["shape"], to=TensorProto.INT64),
               helper.make_node("Concat", ["shape", "minus1"], ["full"], axis=0),
               helper.make_node("Reshape", ["x", "full"], ["y"], name="rs")],
              [tensor("x", F, ["n"])], [tensor("y", F, None)],
              [const("k", I8, [57]), const("minus1", I64, [-1])])
    mod = compiler.load(m)
    for n in (100, 71, 3):
        with np.errstate(all="ignore"):
            first = int(np.int8(n) + np.int8(n) + np.int8(57))
        x = torch.arange(float(n))
        if first > 0 and n % first == 0:
            assert mod(x).shape == (first, n // first), n
        else:
            with pytest.raises(RuntimeError, match="node 'rs' \\(Reshape\\)"):
                mod(x)
    # int32 products of dims wrap in int32 as well (2^12 * 2^20 is 0): numpy's answer.
    m = model([helper.make_node("Shape", ["x"], ["s"]),
               helper.make_node("Cast", ["s"], ["s32"], to=TensorProto.INT32),
               helper.make_node("Mul", ["s32", "big"], ["y"])],
              [tensor("x", F, ["n"])], [tensor("y", I32, None)], [const("big", I32, [2 ** 20])])
    mod = compiler.load(m)
    with np.errstate(all="ignore"):
        assert mod(torch.zeros(4096)).tolist() == (np.array([4096], np.int32) *
                                                   np.int32(2 ** 20)).tolist()
        assert mod(torch.zeros(3)).tolist() == [3 * 2 ** 20]
