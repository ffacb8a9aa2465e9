"""Linear layers (MatMul or Gemm by a constant matrix) as ral_conv library calls on the CPU: a 1x1
channels-last convolution over the rows, with the bias Add, the residual Add and the activation
(GELU in torch's erf form included) that follow folded in. Each model is checked against torch in
float64 on dynamic batches (empty, 1, 3) and non-contiguous inputs, compiled as ral-compile does by
default and with --library-conv=false (linalg.matmul, ral_gemm and loops), and its tensor-level
import inspected for what was fused. What the kernel would compute differently (a bias that is
not one value per column, weights given at run time, a scaled Gemm, GELU constants that are not
GELU's, an intermediate the graph returns) must stay unfused and still be right.

CTest runs it with RAL_COMPILE at ral-compile and PYTHONPATH at the built ral_torch package.
"""

import math

import numpy as np
import pytest
import torch
from onnx import helper

import ral_torch
from test_conv_fusion import F, compile_to, const, imported, model, run_both

RNG = np.random.default_rng(11)


def weights(*shape):
    return RNG.standard_normal(shape).astype(np.float32) * 0.5


def gelu_nodes(v, out, prefix, scale_by_mul=False):
    """nn.GELU as torch.onnx.export writes it: v * (Erf(v / sqrt 2) + 1) * 0.5."""
    if scale_by_mul:
        first = helper.make_node("Mul", [f"{prefix}_r2", v], [f"{prefix}_d"])
    else:
        first = helper.make_node("Div", [v, f"{prefix}_s2"], [f"{prefix}_d"])
    nodes = [first,
             helper.make_node("Erf", [f"{prefix}_d"], [f"{prefix}_e"]),
             helper.make_node("Add", [f"{prefix}_e", f"{prefix}_one"], [f"{prefix}_p"]),
             helper.make_node("Mul", [v, f"{prefix}_p"], [f"{prefix}_m"]),
             helper.make_node("Mul", [f"{prefix}_m", f"{prefix}_half"], [out])]
    consts = [helper.make_node("Constant", [], [f"{prefix}_{name}"],
                               value=helper.make_tensor("v", F, [], [value]))
              for name, value in (("s2", math.sqrt(2)), ("r2", math.sqrt(0.5)), ("one", 1.0),
                                  ("half", 0.5))]
    return consts + nodes


def gelu(v):
    return v * (torch.erf(v / math.sqrt(2)) + 1) * 0.5


def test_matmul_bias_residual_relu_is_one_call(tmp_path):
    # [N, 5, 7] x [7, 7], the bias first in its Add (as torch exports it), the input as the
    # residual, a Relu.
    w, b = weights(7, 7), weights(7)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["c"]),
             helper.make_node("Add", ["b", "c"], ["cb"]),
             helper.make_node("Add", ["cb", "x"], ["a"]),
             helper.make_node("Relu", ["a"], ["y"])]
    m = model(nodes, [helper.make_tensor_value_info("x", F, ["N", 5, 7])],
              [helper.make_tensor_value_info("y", F, None)], [const("w", w), const("b", b)])
    ir = imported(tmp_path, m)
    assert ir.count("disc_ral.conv") == 1 and "channels_last" in ir
    assert 'activation = "relu"' in ir and "residual" in ir
    assert "linalg.generic" not in ir and "linalg.matmul" not in ir

    def reference(x):
        return torch.relu(x @ torch.from_numpy(w).double() + torch.from_numpy(b).double() + x)
    run_both(tmp_path, m, reference, (5, 7))


def test_an_input_used_as_the_residual_is_not_written(tmp_path):
    # The kernel adds into its output buffer; the input it reads the residual from is the
    # caller's and keeps its values (the compiler copies it).
    w = weights(4, 4)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["c"]),
             helper.make_node("Add", ["c", "x"], ["y"])]
    m = model(nodes, [helper.make_tensor_value_info("x", F, ["N", 4])],
              [helper.make_tensor_value_info("y", F, None)], [const("w", w)])
    assert "residual" in imported(tmp_path, m)
    fused = ral_torch.load(str(compile_to(tmp_path, m, "fused")))
    x = torch.randn(3, 4)
    before = x.clone()
    for _ in range(2):
        got = fused(x)
        assert torch.equal(x, before)
        np.testing.assert_allclose(got.double().numpy(),
                                   (x.double() @ torch.from_numpy(w).double() + x.double()).numpy(),
                                   rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("scale_by_mul", [False, True])
def test_gemm_with_its_bias_and_gelu(tmp_path, scale_by_mul):
    # nn.Linear on a 2-D input: Gemm(x, W [N, K], b, transB=1), then nn.GELU.
    w, b = weights(9, 4), weights(9)
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["c"], transB=1)]
    nodes += gelu_nodes("c", "y", "g", scale_by_mul)
    m = model(nodes, [helper.make_tensor_value_info("x", F, ["N", 4])],
              [helper.make_tensor_value_info("y", F, None)], [const("w", w), const("b", b)])
    ir = imported(tmp_path, m)
    assert ir.count("disc_ral.conv") == 1 and 'activation = "gelu_erf"' in ir
    assert "math.erf" not in ir and "linalg.generic" not in ir

    def reference(x):
        return gelu(x @ torch.from_numpy(w).double().T + torch.from_numpy(b).double())
    run_both(tmp_path, m, reference, (4,))


def test_transformer_block_shapes(tmp_path):
    # [N, 3, 2, 8]: batch dims fold into the rows; bias [1, 16]; a GELU then a second layer
    # with a residual Add of its input's producer.
    w1, b1, w2, b2 = weights(8, 16), weights(1, 16), weights(16, 8), weights(8)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]),
             helper.make_node("Add", ["h", "b1"], ["hb"])]
    nodes += gelu_nodes("hb", "g", "g")
    nodes += [helper.make_node("MatMul", ["g", "w2"], ["o"]),
              helper.make_node("Add", ["o", "b2"], ["ob"]),
              helper.make_node("Add", ["x", "ob"], ["y"])]
    m = model(nodes, [helper.make_tensor_value_info("x", F, ["N", 3, 2, 8])],
              [helper.make_tensor_value_info("y", F, None)],
              [const("w1", w1), const("b1", b1), const("w2", w2), const("b2", b2)])
    ir = imported(tmp_path, m)
    assert ir.count("disc_ral.conv") == 2
    assert 'activation = "gelu_erf"' in ir and "residual" in ir
    assert "linalg.generic" not in ir

    def reference(x):
        d = [torch.from_numpy(a).double() for a in (w1, b1, w2, b2)]
        return x + (gelu(x @ d[0] + d[1]) @ d[2] + d[3])
    run_both(tmp_path, m, reference, (3, 2, 8))


@pytest.mark.parametrize("k,n", [(1, 5), (6, 1), (1, 1)])
def test_size_one_contraction_and_columns(tmp_path, k, n):
    w, b = weights(k, n), weights(n)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["c"]),
             helper.make_node("Add", ["c", "b"], ["y"])]
    m = model(nodes, [helper.make_tensor_value_info("x", F, ["N", 2, k])],
              [helper.make_tensor_value_info("y", F, None)], [const("w", w), const("b", b)])
    assert "disc_ral.conv" in imported(tmp_path, m)
    run_both(tmp_path, m, lambda x: x @ torch.from_numpy(w).double() +
             torch.from_numpy(b).double(), (2, k))


def test_what_the_kernel_would_compute_differently_stays_unfused(tmp_path):
    w = weights(4, 3)
    full_bias = weights(2, 3)  # one value per element of a [2, 3] result: not a bias
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["c1"]),
        helper.make_node("Add", ["c1", "full"], ["y1"]),
        # Weights given at run time: a GEMM.
        helper.make_node("MatMul", ["x", "wr"], ["y2"]),
        # A scaled Gemm: a GEMM and a loop.
        helper.make_node("Gemm", ["x", "w"], ["y3"], alpha=2.0),
        # Div by 1.5, not sqrt 2: an Erf of its own.
        helper.make_node("MatMul", ["x", "w"], ["c4"]),
        helper.make_node("Constant", [], ["k"], value=helper.make_tensor("v", F, [], [1.5])),
        helper.make_node("Div", ["c4", "k"], ["d4"]),
        helper.make_node("Erf", ["d4"], ["e4"]),
        helper.make_node("Constant", [], ["one"], value=helper.make_tensor("v", F, [], [1.0])),
        helper.make_node("Add", ["e4", "one"], ["p4"]),
        helper.make_node("Mul", ["c4", "p4"], ["m4"]),
        helper.make_node("Constant", [], ["half"], value=helper.make_tensor("v", F, [], [0.5])),
        helper.make_node("Mul", ["m4", "half"], ["y4"]),
        # An intermediate the graph returns.
        helper.make_node("MatMul", ["x", "w"], ["c5"]),
        helper.make_node("Relu", ["c5"], ["y5"]),
    ]
    m = model(nodes, [helper.make_tensor_value_info("x", F, [2, 4]),
                      helper.make_tensor_value_info("wr", F, [4, 3])],
              [helper.make_tensor_value_info(v, F, None)
               for v in ("y1", "y2", "y3", "y4", "y5", "c5")],
              [const("w", w), const("full", full_bias)])
    ir = imported(tmp_path, m)
    assert "residual" not in ir and "activation" not in ir and "math.erf" in ir
    assert "linalg.matmul" in ir  # the run-time weights and the scaled Gemm
    fused = ral_torch.load(str(compile_to(tmp_path, m, "fused")))
    for _ in range(2):
        x = torch.from_numpy(RNG.standard_normal((2, 4)).astype(np.float32))
        wr = torch.from_numpy(weights(4, 3))
        got = fused(x, wr)
        xd, wd = x.double(), torch.from_numpy(w).double()
        c = xd @ wd
        want = [c + torch.from_numpy(full_bias).double(), xd @ wr.double(), 2 * c,
                c * (torch.erf(c / 1.5) + 1) * 0.5, torch.relu(c), c]
        for g, v in zip(got, want):
            np.testing.assert_allclose(g.double().numpy(), v.numpy(), rtol=1e-4, atol=1e-5)


def test_wrong_contraction_size_fails_the_call_and_the_next_one_works(tmp_path):
    w = weights(5, 2)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    m = model(nodes, [helper.make_tensor_value_info("x", F, ["N", "K"])],
              [helper.make_tensor_value_info("y", F, None)], [const("w", w)])
    fused = ral_torch.load(str(compile_to(tmp_path, m, "fused")))
    with pytest.raises(RuntimeError, match="contraction dims"):
        fused(torch.randn(3, 4))
    x = torch.randn(3, 5)
    np.testing.assert_allclose(fused(x).double().numpy(),
                               (x.double() @ torch.from_numpy(w).double()).numpy(),
                               rtol=1e-4, atol=1e-5)
