"""Attribute and input values at the edges of what ONNX defines: where ONNX (and numpy) define a
result, RAL gives that result; where they refuse, RAL refuses with the node named."""

import numpy as np
import pytest
import torch
from onnx import helper

from conftest import F, I64, INT64_MAX, INT64_MIN, const, fails_then_recovers, model, tensor


@pytest.mark.parametrize("step", [INT64_MIN, -INT64_MAX, -(2 ** 48), INT64_MAX, 2 ** 40, -3])
def test_slice_with_extreme_steps(compiler, step):
    starts, ends = ([INT64_MAX], [INT64_MIN]) if step < 0 else ([0], [INT64_MAX])
    m = model([helper.make_node("Slice", ["x", "b", "e", "a", "s"], ["y"], name="sl")],
              [tensor("x", F, [2, 10])], [tensor("y", F, None)],
              [const("b", I64, starts), const("e", I64, ends), const("a", I64, [1]),
               const("s", I64, [step])])
    x = torch.arange(20.0).reshape(2, 10)
    # numpy (and Python's slice) clamp a step of -2^63 to -(2^63 - 1): one element either way.
    want = x.numpy()[:, slice(starts[0], ends[0], max(step, -INT64_MAX))]
    got = compiler.load(m)(x)
    assert np.array_equal(got.numpy(), want), (step, got, want)


def test_slice_of_known_elements_with_extreme_steps(compiler):
    # The same on a shape vector the importer follows element by element.
    m = model([helper.make_node("Shape", ["x"], ["s"]),
               helper.make_node("Slice", ["s", "b", "e", "a", "st"], ["y"], name="sl")],
              [tensor("x", F, [2, 3, 4])], [tensor("y", I64, None)],
              [const("b", I64, [INT64_MAX]), const("e", I64, [INT64_MIN]), const("a", I64, [0]),
               const("st", I64, [INT64_MIN])])
    assert compiler.load(m)(torch.zeros(2, 3, 4)).tolist() == [4]


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_arg_reduction_over_an_empty_axis(compiler, op):
    m = model([helper.make_node(op, ["x"], ["y"], name="arg", axis=1)], [tensor("x", F, [3, 0])],
              [tensor("y", I64, None)])
    compiler.refuses(m, f"node 'arg' ({op}): the reduced axis 1 is empty")
    m = model([helper.make_node(op, ["x"], ["y"], name="arg", axis=1, keepdims=0)],
              [tensor("x", F, ["a", "b"])], [tensor("y", I64, None)])
    mod = compiler.load(m)
    x = torch.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]])
    want = getattr(np, op.lower())(x.numpy(), axis=1)
    for empty in (torch.zeros(3, 0), torch.zeros(0, 0)):
        fails_then_recovers(mod, (empty,), (x,), torch.from_numpy(want), f"node 'arg' ({op})",
                            "empty")
    # An empty batch over a non-empty axis is fine: an empty result.
    assert mod(torch.zeros(0, 4)).shape == (0,)


def test_max_pool_ceil_mode_with_a_large_stride(compiler):
    # With ceil_mode, a window that would start past the input reads only padding: it is dropped,
    # as PyTorch and ONNX Runtime do (ONNX 1.12's formula would give it -inf). Nothing is padded
    # by the stride either. (A stride of 2^62 is refused: test_import_sizes.)
    for stride in (3, 1000, 2 ** 40):
        m = model([helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[2],
                                    strides=[stride], ceil_mode=1)],
                  [tensor("x", F, [1, 1, 5])], [tensor("y", F, None)])
        x = torch.tensor([[[3.0, 1.0, 4.0, 1.0, 5.0]]])
        want = torch.nn.functional.max_pool1d(x, 2, min(stride, 2 ** 31 - 1), ceil_mode=True)
        assert torch.equal(compiler.load(m)(x), want), stride
