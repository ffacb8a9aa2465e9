"""Sizes a model states itself (attributes, constants, static shapes) that overflow, wrap or exceed
2^48: the compile fails with an error naming the node and the attribute, never a crash of this
process, an abort, a module that does not verify, or a constant materialized first. Each test
then compiles and runs a sound model in the same process."""

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper

from conftest import F, I64, INT64_MAX, INT64_MIN, const, model, tensor
from ral_torch import _compiler


@pytest.fixture(autouse=True)
def _host_still_compiles(compiler):
    yield
    m = model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", F, [3])],
              [tensor("y", F, [3])])
    mod = compiler.load(m)
    assert torch.equal(mod(torch.tensor([-1.0, 0.0, 2.0])), torch.tensor([0.0, 0.0, 2.0]))


def test_depth_to_space_blocksize(compiler):
    for bs in (2 ** 32, 2 ** 62, INT64_MAX):
        m = model([helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s", blocksize=bs)],
                  [tensor("x", F, [1, 4, 2, 2])], [tensor("y", F, None)])
        compiler.refuses(m, "node 'd2s' (DepthToSpace): blocksize")


def test_conv_window_attributes(compiler):
    w = helper.make_tensor("w", F, [1, 1, 2, 2], [1.0] * 4)
    for attrs, named in (({"pads": [INT64_MAX - 1, 0, 0, 0]}, "pads[0]"),
                         ({"pads": [0, 0, 0, 2 ** 62]}, "pads[3]"),
                         ({"strides": [2 ** 62, 1]}, "strides[0]"),
                         ({"dilations": [1, INT64_MAX]}, "dilations[1]"),
                         ({"dilations": [2 ** 48, 2 ** 48]}, "dilations[0]")):
        m = model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv", **attrs)],
                  [tensor("x", F, [1, 1, 4, 4])], [tensor("y", F, None)], [w])
        compiler.refuses(m, "node 'conv' (Conv): " + named)


def test_conv_transpose_strides(compiler):
    w = helper.make_tensor("w", F, [1, 1, 2, 2], [1.0] * 4)
    for attrs, named in (({"strides": [2 ** 62, 1]}, "strides[0]"),
                         ({"strides": [2 ** 40, 2 ** 40]}, "node 'ct' (ConvTranspose)"),
                         ({"output_padding": [INT64_MAX, 0]}, "output_padding[0]"),
                         ({"output_shape": [INT64_MAX, 4]}, "output_shape[0]")):
        m = model([helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="ct", **attrs)],
                  [tensor("x", F, [1, 1, 3, 3])], [tensor("y", F, None)], [w])
        compiler.refuses(m, "node 'ct' (ConvTranspose)", named)


def test_pool_windows(compiler):
    for attrs, named in (({"strides": [2 ** 62, 1], "ceil_mode": 1}, "strides[0]"),
                         ({"kernel_shape": [2 ** 40, 2 ** 40]}, "kernel_shape"),
                         ({"kernel_shape": [0, 2]}, "kernel_shape[0]"),
                         ({"pads": [0, 0, INT64_MAX, 0]}, "pads[2]")):
        attrs = {"kernel_shape": [2, 2], **attrs}
        m = model([helper.make_node("MaxPool", ["x"], ["y"], name="pool", **attrs)],
                  [tensor("x", F, [1, 1, 4, 4])], [tensor("y", F, None)])
        compiler.refuses(m, "node 'pool' (MaxPool): " + named)
    # A window wider than the input (1 column, kernel and stride 2): no output position, a clean
    # error rather than a module that does not verify (a fuzzer's find, where x was both an input
    # and an initializer).
    m = model([helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[2, 2],
                                strides=[2, 2])], [tensor("x", F, [1, 1, 5, 1])],
              [tensor("y", F, None)])
    compiler.refuses(m, "node 'pool' (MaxPool): the window is larger than the padded input in "
                        "spatial dim 1")


def test_range_of_constants(compiler):
    def ranged(dtype, s, l, d):
        return model([helper.make_node("Range", ["s", "l", "d"], ["y"], name="r")], [],
                     [tensor("y", dtype, None)],
                     [helper.make_tensor("s", dtype, [], [s]), helper.make_tensor("l", dtype, [], [l]),
                      helper.make_tensor("d", dtype, [], [d])], opset=11)

    inf, nan = float("inf"), float("nan")
    for s, l, d in ((0, inf, 1), (0, nan, 1), (0, 1, nan), (-1e19, 1e19, 1.0), (0, 1, 0)):
        compiler.refuses(ranged(F, s, l, d), "node 'r' (Range)")
    for s, l, d in ((INT64_MIN, INT64_MAX, 1), (0, 2 ** 50, 1), (0, 1, 0)):
        compiler.refuses(ranged(I64, s, l, d), "node 'r' (Range)")
    # 2^31 elements: compiled at once (computed when the module runs, never folded here).
    rc, diagnostics, _ = compiler.compile(ranged(I64, 0, 2 ** 31, 1))
    assert rc == 0, diagnostics
    # Exact int64 arithmetic where a double would round: 2^53 + 1.
    mod = compiler.load(ranged(I64, 2 ** 53 + 1, 2 ** 53 + 4, 1))
    assert mod().tolist() == [2 ** 53 + 1, 2 ** 53 + 2, 2 ** 53 + 3]
    mod = compiler.load(ranged(I64, INT64_MAX - 2, INT64_MAX, 1))
    assert mod().tolist() == [INT64_MAX - 2, INT64_MAX - 1]


def test_resize_constant_scales(compiler):
    for scale in (1e30, float("inf"), float("nan"), 0.0, -1.0):
        m = model([helper.make_node("Resize", ["x", "", "sc"], ["y"], name="rsz")],
                  [tensor("x", F, [1, 1, 2, 2])], [tensor("y", F, None)],
                  [helper.make_tensor("sc", F, [4], [1.0, 1.0, scale, 1.0])], opset=13)
        compiler.refuses(m, "node 'rsz' (Resize): scale")
    m = model([helper.make_node("Resize", ["x", "", "", "sz"], ["y"], name="rsz")],
              [tensor("x", F, [1, 1, 2, 2])], [tensor("y", F, None)],
              [helper.make_tensor("sz", I64, [4], [1, 1, 2 ** 50, 2])], opset=13)
    compiler.refuses(m, "node 'rsz' (Resize)", "2^48")


def test_expand_and_reshape_to_impossible_constant_shapes(compiler):
    for shape in ([-2, 3], [2 ** 62, 3], [INT64_MIN, 3]):
        m = model([helper.make_node("Expand", ["x", "s"], ["y"], name="ex")],
                  [tensor("x", F, [1, 3])], [tensor("y", F, None)], [const("s", I64, shape)])
        compiler.refuses(m, "node 'ex' (Expand): shape element 0")
    w = (2 ** 64 + 2) // 3
    for shape in ([3, w, 2], [-1, 3, w], [2 ** 62, 2 ** 62, 0]):
        m = model([helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
                  [tensor("x", F, [2, 3])], [tensor("y", F, None)], [const("s", I64, shape)])
        compiler.refuses(m, "node 'rs' (Reshape)")


def test_split_constant_sizes_that_wrap(compiler):
    for sizes in ([INT64_MAX, INT64_MAX, 5], [2 ** 62] * 4 + [3]):
        outs = [f"o{i}" for i in range(len(sizes))]
        m = model([helper.make_node("Split", ["x", "s"], outs, name="split")],
                  [tensor("x", F, [3])], [tensor(o, F, None) for o in outs],
                  [const("s", I64, sizes)], opset=13)
        compiler.refuses(m, "node 'split' (Split)")


def test_static_shapes_beyond_the_limit(compiler):
    m = model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", F, [2 ** 30, 2 ** 30])],
              [tensor("y", F, None)])
    compiler.refuses(m, "graph input 'x'", "2^48")
    # dims whose product wraps to the 4 bytes of data given
    init = TensorProto(name="w", data_type=F, dims=[2 ** 62, 4, 4], raw_data=b"\0" * 4)
    m = model([helper.make_node("Add", ["x", "w"], ["y"])], [tensor("x", F, [1])],
              [tensor("y", F, None)], [init])
    compiler.refuses(m, "initializer 'w'", "2^48")
    m = model([helper.make_node("ConstantOfShape", ["s"], ["y"], name="cos")], [],
              [tensor("y", F, None)], [const("s", I64, [2 ** 40, 2 ** 40])])
    compiler.refuses(m, "node 'cos' (ConstantOfShape)")


def test_large_constant_of_shape_is_filled_at_run_time(compiler):
    m = model([helper.make_node("ConstantOfShape", ["s"], ["y"], name="cos",
                                value=helper.make_tensor("v", F, [1], [2.5]))], [],
              [tensor("y", F, None)], [const("s", I64, [512, 1024])])
    rc, diagnostics, out = compiler.compile(m)
    assert rc == 0, diagnostics
    assert out.stat().st_size < 1024 * 1024  # no 2 MiB splat stored in the module


def test_names_defined_twice(compiler):
    m = model([helper.make_node("Relu", ["x"], ["y"], name="a"),
               helper.make_node("Neg", ["x"], ["y"], name="b")],
              [tensor("x", F, [2])], [tensor("y", F, [2])])
    compiler.refuses(m, "node 'b' (Neg) output: 'y' is already defined by node 'a' (Relu)")
    m = model([helper.make_node("Relu", ["x"], ["x"], name="a")], [tensor("x", F, [2])],
              [tensor("x", F, [2])])
    compiler.refuses(m, "'x' is already defined by graph input 'x'")
    m = model([helper.make_node("Add", ["x", "w"], ["w"], name="a")], [tensor("x", F, [1])],
              [tensor("w", F, [1])], [const("w", F, [1.0])])
    compiler.refuses(m, "already defined by initializer 'w'")
    m = model([helper.make_node("Add", ["x", "x"], ["y"])], [tensor("x", F, [1]), tensor("x", F, [1])],
              [tensor("y", F, [1])])
    compiler.refuses(m, "graph input 'x' is listed twice")


def test_subgraphs_nested_beyond_protobufs_limit(compiler):
    # 1500 If nodes, each the then_branch of the one above, built top-down in place (make_node
    # would copy the whole subgraph at every level).
    leaf = helper.make_graph([helper.make_node("Identity", ["c"], ["o"])], "leaf", [],
                             [tensor("o", F, [1])])
    m = model([helper.make_node("If", ["c"], ["y"], name="outer")],
              [tensor("c", TensorProto.BOOL, [])], [tensor("y", F, [1])])
    node = m.graph.node[0]
    for level in range(1500):
        node.attribute.add(name="else_branch", type=onnx.AttributeProto.GRAPH).g.CopyFrom(leaf)
        then = node.attribute.add(name="then_branch", type=onnx.AttributeProto.GRAPH).g
        then.name = f"g{level}"
        then.output.add().CopyFrom(tensor("o", F, [1]))
        node = then.node.add(op_type="If", name=f"if{level}", input=["c"], output=["o"])
    node.attribute.add(name="then_branch", type=onnx.AttributeProto.GRAPH).g.CopyFrom(leaf)
    node.attribute.add(name="else_branch", type=onnx.AttributeProto.GRAPH).g.CopyFrom(leaf)
    data = m.SerializeToString()  # Python's protobuf writes it; C++'s parser stops at 100 levels
    compiler.refuses(data, "node 'outer' (If), attribute 'then_branch'", "nests messages",
                     code=_compiler.UNSUPPORTED)


def test_host_survives_everything_above_in_one_process(compiler):
    # Every refusal above ran in this process; one more model of each kind that works.
    m = model([helper.make_node("Range", ["s", "l", "d"], ["y"], name="r")], [],
              [tensor("y", I64, None)],
              [const("s", I64, [0], []), const("l", I64, [5], []), const("d", I64, [2], [])],
              opset=11)
    assert compiler.load(m)().tolist() == [0, 2, 4]
