"""Sizes read from tensors when the module runs (shape inputs, pads, split sizes, repeats, Range's
inputs, scales, depths): values that make a size wrap, go negative or exceed 2^48 fail that
execution with an error naming the node, and the next execution is correct. The same graphs with
values near the limits that are fine (INT64_MAX slice ends) give numpy's result."""

import numpy as np
import pytest
import torch
from onnx import helper

from conftest import F, I64, INT64_MAX, INT64_MIN, fails_then_recovers, model, tensor

# 3 * W = 2^64 + 2: with 12, a product of 24 once it wraps.
W = (2 ** 64 + 2) // 3


def test_reshape_whose_product_wraps(compiler):
    m = model([helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
              [tensor("x", F, ["a", 6]), tensor("s", I64, [3])], [tensor("y", F, None)])
    mod = compiler.load(m)
    x = torch.arange(24.0).reshape(4, 6)
    good = (x, torch.tensor([2, 3, 4]))
    for shape in ([3, W, 12], [W, 3, 12], [2 ** 62, 2 ** 62, 0], [-1, 3, W], [3, W, -1]):
        fails_then_recovers(mod, (x, torch.tensor(shape)), good, x.reshape(2, 3, 4),
                            "node 'rs' (Reshape)")
    # An empty input may take any dims that multiply to 0, none beyond 2^48.
    e = torch.zeros(0, 6)
    assert mod(e, torch.tensor([0, 7, 5])).shape == (0, 7, 5)
    fails_then_recovers(mod, (e, torch.tensor([0, 2 ** 60, 5])), good, x.reshape(2, 3, 4),
                        "node 'rs' (Reshape)", "2^48")


def test_pad_whose_pads_wrap(compiler):
    m = model([helper.make_node("Pad", ["x", "p"], ["y"], name="pad")],
              [tensor("x", F, [2, 3]), tensor("p", I64, [4])], [tensor("y", F, None)])
    mod = compiler.load(m)
    x = torch.arange(6.0).reshape(2, 3)
    expected = torch.from_numpy(np.pad(x.numpy(), ((1, 0), (0, 2))))
    good = (x, torch.tensor([1, 0, 0, 2]))
    for pads in ([0, INT64_MAX, 0, 2], [0, 1, 0, INT64_MAX], [2 ** 62, 0, 2 ** 62, 0],
                 [0, 2 ** 48, 0, 0], [-1, 0, 0, 0]):
        fails_then_recovers(mod, (x, torch.tensor(pads)), good, expected, "node 'pad' (Pad)")


def test_split_whose_sizes_wrap(compiler):
    m = model([helper.make_node("Split", ["x", "s"], ["a", "b", "c"], name="split")],
              [tensor("x", F, ["n"]), tensor("s", I64, [3])],
              [tensor("a", F, None), tensor("b", F, None), tensor("c", F, None)], opset=13)
    mod = compiler.load(m)
    x = torch.arange(3.0)
    good = (x, torch.tensor([1, 0, 2]))
    expected = (x[:1], x[1:1], x[1:])
    # Each size non-negative, their sum 2^64 + 3: it once read before the input's buffer.
    for sizes in ([INT64_MAX, INT64_MAX, 5], [INT64_MAX, 4, INT64_MAX], [-1, 2, 2]):
        fails_then_recovers(mod, (x, torch.tensor(sizes)), good, expected, "node 'split' (Split)")


def test_expand_and_tile_to_huge_or_negative_shapes(compiler):
    m = model([helper.make_node("Expand", ["x", "s"], ["y"], name="ex")],
              [tensor("x", F, [1, 3]), tensor("s", I64, [3])], [tensor("y", F, None)])
    mod = compiler.load(m)
    x = torch.arange(3.0).reshape(1, 3)
    good = (x, torch.tensor([2, 1, 3]))
    for shape in ([2 ** 62, 1, 3], [-2, 1, 3], [2 ** 40, 2 ** 40, 3]):
        fails_then_recovers(mod, (x, torch.tensor(shape)), good, x.expand(2, 1, 3),
                            "node 'ex' (Expand)")
    m = model([helper.make_node("Tile", ["x", "r"], ["y"], name="tile")],
              [tensor("x", F, [2, 3]), tensor("r", I64, [2])], [tensor("y", F, None)])
    mod = compiler.load(m)
    x = torch.arange(6.0).reshape(2, 3)
    good = (x, torch.tensor([2, 1]))
    for reps in ([2 ** 62, 1], [2 ** 40, 2 ** 40], [-1, 1]):
        fails_then_recovers(mod, (x, torch.tensor(reps)), good, x.repeat(2, 1),
                            "node 'tile' (Tile)")


def test_constant_of_shape_from_a_run_time_shape(compiler):
    m = model([helper.make_node("ConstantOfShape", ["s"], ["y"], name="cos",
                                value=helper.make_tensor("v", F, [1], [7.0]))],
              [tensor("s", I64, [2])], [tensor("y", F, None)])
    mod = compiler.load(m)
    good = (torch.tensor([2, 3]),)
    for shape in ([2 ** 62, 1], [-3, 1], [2 ** 30, 2 ** 30]):
        fails_then_recovers(mod, (torch.tensor(shape),), good, torch.full((2, 3), 7.0),
                            "node 'cos' (ConstantOfShape)")


def test_range_from_run_time_scalars(compiler):
    m = model([helper.make_node("Range", ["s", "l", "d"], ["y"], name="range")],
              [tensor("s", I64, []), tensor("l", I64, []), tensor("d", I64, [])],
              [tensor("y", I64, None)], opset=11)
    mod = compiler.load(m)
    t = torch.tensor
    good = (t(-7), t(20), t(3))
    expected = torch.from_numpy(np.arange(-7, 20, 3))
    for bad in ((t(INT64_MIN), t(INT64_MAX), t(1)), (t(0), t(INT64_MAX), t(1)),
                (t(0), t(5), t(0)), (t(INT64_MAX), t(INT64_MIN), t(-1))):
        fails_then_recovers(mod, bad, good, expected, "node 'range' (Range)")
    # Large but fine: a huge delta takes one element; an empty range.
    assert torch.equal(mod(t(INT64_MIN), t(INT64_MAX), t(INT64_MAX)),
                       t([INT64_MIN, -1, INT64_MAX - 1]))
    assert mod(t(5), t(INT64_MIN), t(1)).shape == (0,)
    m = model([helper.make_node("Range", ["s", "l", "d"], ["y"], name="frange")],
              [tensor("s", F, []), tensor("l", F, []), tensor("d", F, [])],
              [tensor("y", F, None)], opset=11)
    mod = compiler.load(m)
    good = (t(0.5), t(3.0), t(0.5))
    expected = torch.from_numpy(np.arange(0.5, 3.0, 0.5, dtype=np.float32))
    for bad in ((t(0.0), t(float("inf")), t(1.0)), (t(0.0), t(float("nan")), t(1.0)),
                (t(0.0), t(1e30), t(1.0)), (t(0.0), t(1.0), t(0.0)),
                (t(0.0), t(1.0), t(float("nan")))):
        fails_then_recovers(mod, bad, good, expected, "node 'frange' (Range)")


def test_slice_bounds_at_the_int64_extremes(compiler):
    # Run-time starts and ends of INT64_MAX / INT64_MIN mean "to the end": numpy's results, never
    # an overflow error.
    m = model([helper.make_node("Slice", ["x", "b", "e", "a", "st"], ["y"], name="sl")],
              [tensor("x", F, ["n"]), tensor("b", I64, [1]), tensor("e", I64, [1])],
              [tensor("y", F, None)],
              [helper.make_tensor("a", I64, [1], [0]), helper.make_tensor("st", I64, [1], [-1])])
    mod = compiler.load(m)
    x = torch.arange(10.0)
    xn = x.numpy()
    for b, e in ((INT64_MAX, INT64_MIN), (-1, INT64_MIN), (INT64_MIN, INT64_MAX), (7, 2),
                 (INT64_MAX, -11), (3, INT64_MIN + 1)):
        want = xn[b:e:-1]  # Python's slice clamping is ONNX's for these bounds
        got = mod(x, torch.tensor([b]), torch.tensor([e]))
        assert np.array_equal(got.numpy(), want), (b, e, got, want)


def test_resize_scales_and_onehot_depth_read_at_run_time(compiler):
    m = model([helper.make_node("Resize", ["x", "", "sc"], ["y"], name="rsz", mode="nearest")],
              [tensor("x", F, [1, 1, 2, 2]), tensor("sc", F, [4])], [tensor("y", F, None)],
              opset=13)
    mod = compiler.load(m)
    x = torch.arange(4.0).reshape(1, 1, 2, 2)
    good = (x, torch.tensor([1.0, 1.0, 2.0, 2.0]))
    expected = mod(*good)
    assert torch.equal(expected, x.repeat_interleave(2, 2).repeat_interleave(2, 3))
    for scales in ([1.0, 1.0, float("inf"), 1.0], [1.0, 1.0, float("nan"), 1.0],
                   [1.0, 1.0, 1e30, 1.0], [1.0, 1.0, -2.0, 1.0]):
        fails_then_recovers(mod, (x, torch.tensor(scales)), good, expected,
                            "node 'rsz' (Resize)")
    m = model([helper.make_node("OneHot", ["i", "d", "v"], ["y"], name="oh")],
              [tensor("i", I64, [3]), tensor("d", F, [1]), tensor("v", F, [2])],
              [tensor("y", F, None)], opset=11)
    mod = compiler.load(m)
    i, v = torch.tensor([0, 2, -1]), torch.tensor([0.0, 1.0])
    good = (i, torch.tensor([3.0]), v)
    expected = torch.eye(3)[[0, 2, 2]]
    assert torch.equal(mod(*good), expected)
    for depth in (float("nan"), float("inf"), 1e30, 0.0, -5.0):
        fails_then_recovers(mod, (i, torch.tensor([depth]), v), good, expected,
                            "node 'oh' (OneHot)")


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_gather_indices_checked_against_the_dim(compiler, dtype):
    onnx_type = {torch.int32: 6, torch.int64: I64}[dtype]
    m = model([helper.make_node("Gather", ["x", "i"], ["y"], name="g", axis=0)],
              [tensor("x", F, ["n"]), tensor("i", onnx_type, ["k"])], [tensor("y", F, None)])
    mod = compiler.load(m)
    x = torch.arange(5.0)
    good = (x, torch.tensor([4, -5, 0], dtype=dtype))
    for idx in ([5], [-6], [2 ** 31 - 1], [-(2 ** 31)]):
        fails_then_recovers(mod, (x, torch.tensor(idx, dtype=dtype)), good,
                            torch.tensor([4.0, 0.0, 0.0]), "node 'g' (Gather)",
                            "index is out of range")
