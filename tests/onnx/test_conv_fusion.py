"""Convolutions as ral_conv library calls (oneDNN on the CPU) with what follows them folded in:
an inference BatchNormalization (into the weights), a residual Add and an activation; the
activations between convolutions kept channels-last. Each model is checked against torch in
float64 on dynamic batches (empty, 1, 3) and non-contiguous inputs, compiled three ways: as
ral-compile does by default, with --library-conv=false (im2col and GEMM), and its tensor-level
import inspected for what was fused. Patterns the fused kernel would compute differently (a
broadcasting residual, Clip bounds known only at run time, an intermediate the graph returns)
must stay unfused and still be right.

CTest runs it with RAL_COMPILE at ral-compile and PYTHONPATH at the built ral_torch package.
"""

import json
import os
import subprocess

import numpy as np
import onnx
import pytest
import torch
import torch.nn.functional as tf
from onnx import TensorProto, helper, numpy_helper

import ral_torch

RAL_COMPILE = os.environ.get("RAL_COMPILE", "ral-compile")
F = TensorProto.FLOAT
RNG = np.random.default_rng(7)


def model(nodes, inputs, outputs, initializers=(), opset=14):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def const(name, array):
    return numpy_helper.from_array(np.asarray(array, dtype=np.float32), name)


def compile_to(tmp_path, m, name, *flags):
    src = tmp_path / f"{name}.onnx"
    onnx.save(m, str(src))
    out = tmp_path / f"{name}.ralm"
    r = subprocess.run([RAL_COMPILE, str(src), "-o", str(out), *flags], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    return out


def imported(tmp_path, m):
    out = compile_to(tmp_path, m, "import", "--emit=import")
    return out.read_text()


def run_both(tmp_path, m, reference, shape_of_batch, batches=(0, 1, 3), outputs=1):
    """Runs the library and the im2col compilation on each batch (and on a non-contiguous view)
    and compares every output with reference(x) in float64."""
    fused = ral_torch.load(str(compile_to(tmp_path, m, "fused")))
    loops = ral_torch.load(str(compile_to(tmp_path, m, "loops", "--library-conv=false")))
    for batch in batches:
        x = torch.from_numpy(RNG.standard_normal((batch,) + shape_of_batch).astype(np.float32))
        # The same values as a view with strides of a wider buffer.
        wide = torch.zeros((batch,) + shape_of_batch[:-1] + (2 * shape_of_batch[-1],))
        view = wide[..., ::2]
        view.copy_(x)
        assert batch == 0 or not view.is_contiguous()
        want = reference(x.double())
        want = want if isinstance(want, tuple) else (want,)
        for module in (fused, loops):
            for given in (x, view):
                got = module(given)
                got = got if isinstance(got, (tuple, list)) else (got,)
                assert len(got) == outputs
                for g, w in zip(got, want):
                    assert g.shape == w.shape
                    np.testing.assert_allclose(g.double().numpy(), w.numpy(), rtol=2e-4,
                                               atol=2e-4)


def conv_params(f, c, k, groups=1):
    return (RNG.standard_normal((f, c // groups) + k).astype(np.float32) * 0.5,
            RNG.standard_normal(f).astype(np.float32) * 0.1)


def test_conv_batchnorm_residual_relu_is_one_call(tmp_path):
    w, b = conv_params(6, 4, (3, 3))
    scale, shift = RNG.uniform(0.5, 2, 6), RNG.standard_normal(6)
    mean, var = RNG.standard_normal(6), RNG.uniform(0.2, 3, 6)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "s", "t", "m", "v"], ["n"],
                              epsilon=1e-3),
             helper.make_node("Conv", ["x", "w2"], ["r"]),
             helper.make_node("Add", ["n", "r"], ["a"]),
             helper.make_node("Relu", ["a"], ["y"])]
    w2 = RNG.standard_normal((6, 4, 1, 1)).astype(np.float32)
    m = model(nodes, [helper.make_tensor_value_info("x", F, ["N", 4, 7, 5])],
              [helper.make_tensor_value_info("y", F, None)],
              [const("w", w), const("b", b), const("s", scale), const("t", shift),
               const("m", mean), const("v", var), const("w2", w2)])
    ir = imported(tmp_path, m)
    assert ir.count("disc_ral.conv") == 2
    assert 'activation = "relu"' in ir and "residual" in ir
    assert "linalg.generic" not in ir  # BatchNormalization, Add and Relu all folded

    def reference(x):
        c = tf.conv2d(x, torch.from_numpy(w).double(), torch.from_numpy(b).double(), padding=1)
        n = (c - torch.tensor(mean)[:, None, None]) / torch.sqrt(
            torch.tensor(var)[:, None, None] + 1e-3) * torch.tensor(scale)[:, None, None] + \
            torch.tensor(shift)[:, None, None]
        return torch.relu(n + tf.conv2d(x, torch.from_numpy(w2).double()))
    run_both(tmp_path, m, reference, (4, 7, 5))


@pytest.mark.parametrize("activation", ["clip", "silu", "hardswish", "sigmoid"])
def test_activations_fold_into_the_convolution(tmp_path, activation):
    w, b = conv_params(8, 8, (3, 3), groups=8)  # depthwise
    inits = [const("w", w), const("b", b)]
    conv = helper.make_node("Conv", ["x", "w", "b"], ["c"], group=8, strides=[2, 1],
                            pads=[1, 0, 2, 1], dilations=[1, 2])
    if activation == "clip":
        nodes = [conv, helper.make_node("Clip", ["c", "lo", "hi"], ["y"])]
        inits += [const("lo", 0.0), const("hi", 0.75)]
        act = lambda c: c.clamp(0.0, 0.75)  # noqa: E731
    elif activation == "silu":
        nodes = [conv, helper.make_node("Sigmoid", ["c"], ["s"]),
                 helper.make_node("Mul", ["s", "c"], ["y"])]
        act = lambda c: c * torch.sigmoid(c)  # noqa: E731
    elif activation == "hardswish":
        nodes = [conv, helper.make_node("HardSwish", ["c"], ["y"])]
        act = lambda c: c * (c + 3).clamp(0, 6) / 6  # noqa: E731
    else:
        nodes = [conv, helper.make_node("Sigmoid", ["c"], ["y"])]
        act = torch.sigmoid
    m = model(nodes, [helper.make_tensor_value_info("x", F, ["N", 8, 9, 6])],
              [helper.make_tensor_value_info("y", F, None)], inits)
    ir = imported(tmp_path, m)
    assert f'activation = "{activation}"' in ir
    assert "linalg.generic" not in ir

    def reference(x):
        c = tf.conv2d(tf.pad(x, (0, 1, 1, 2)), torch.from_numpy(w).double(),
                      torch.from_numpy(b).double(), stride=(2, 1), dilation=(1, 2), groups=8)
        return act(c)
    run_both(tmp_path, m, reference, (8, 9, 6))


def test_what_the_kernel_would_compute_differently_stays_unfused(tmp_path):
    w, b = conv_params(3, 2, (1, 3))
    bias4 = RNG.standard_normal((1, 3, 1, 1)).astype(np.float32)
    nodes = [
        # A residual that broadcasts: not the kernel's in-place add.
        helper.make_node("Conv", ["x", "w", "b"], ["c1"], pads=[0, 1, 0, 1]),
        helper.make_node("Add", ["c1", "bias4"], ["y1"]),
        # Clip bounds known only at run time.
        helper.make_node("Conv", ["x", "w"], ["c2"], pads=[0, 1, 0, 1]),
        helper.make_node("Clip", ["c2", "lo", "hi"], ["y2"]),
        # An intermediate the graph returns.
        helper.make_node("Conv", ["x", "w"], ["c3"], pads=[0, 1, 0, 1]),
        helper.make_node("Relu", ["c3"], ["y3"]),
    ]
    m = model(nodes, [helper.make_tensor_value_info("x", F, ["N", 2, 4, 5]),
                      helper.make_tensor_value_info("lo", F, []),
                      helper.make_tensor_value_info("hi", F, [])],
              [helper.make_tensor_value_info(n, F, None) for n in ("y1", "y2", "y3", "c3")],
              [const("w", w), const("b", b), const("bias4", bias4)])
    ir = imported(tmp_path, m)
    assert "residual" not in ir and "activation" not in ir
    fused = ral_torch.load(str(compile_to(tmp_path, m, "fused")))
    for batch in (0, 1, 2):
        x = torch.from_numpy(RNG.standard_normal((batch, 2, 4, 5)).astype(np.float32))
        lo, hi = torch.tensor(-0.25), torch.tensor(0.5)
        y1, y2, y3, c3 = fused(x, lo, hi)
        xd, wd = x.double(), torch.from_numpy(w).double()
        c = tf.conv2d(xd, wd, padding=(0, 1))
        np.testing.assert_allclose(y1.numpy(), (c + torch.from_numpy(b).double()[:, None, None]
                                                + torch.from_numpy(bias4).double()).numpy(),
                                   rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(y2.numpy(), c.clamp(-0.25, 0.5).numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(y3.numpy(), torch.relu(c).numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(c3.numpy(), c.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("spatial", [1, 3])
def test_one_and_three_dimensional_convolutions_and_transposed(tmp_path, spatial):
    k = (3,) * spatial
    w, b = conv_params(4, 2, k)
    wt = RNG.standard_normal((4, 3) + (2,) * spatial).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1] * (2 * spatial),
                              strides=[2] * spatial),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("ConvTranspose", ["r", "wt"], ["y"], strides=[2] * spatial,
                              output_padding=[1] * spatial)]
    shape = (2,) + (5,) * spatial
    m = model(nodes, [helper.make_tensor_value_info("x", F, ["N"] + list(shape))],
              [helper.make_tensor_value_info("y", F, None)],
              [const("w", w), const("b", b), const("wt", wt)])
    ir = imported(tmp_path, m)
    assert ir.count("disc_ral.conv") == 2 and "transposed" in ir
    conv = {1: tf.conv1d, 3: tf.conv3d}[spatial]
    convt = {1: tf.conv_transpose1d, 3: tf.conv_transpose3d}[spatial]

    def reference(x):
        r = torch.relu(conv(x, torch.from_numpy(w).double(), torch.from_numpy(b).double(),
                            stride=2, padding=1))
        return convt(r, torch.from_numpy(wt).double(), stride=2, output_padding=1)
    run_both(tmp_path, m, reference, shape, batches=(0, 2))


def test_an_input_used_as_the_residual_is_not_written(tmp_path):
    # ral_conv adds the residual in its output buffer: an input read as the residual is the
    # caller's, so the compiler gives the kernel a copy.
    w, b = conv_params(3, 3, (3, 3))
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["x", "c"], ["y"])]
    m = model(nodes, [helper.make_tensor_value_info("x", F, ["N", 3, 4, 5])],
              [helper.make_tensor_value_info("y", F, None)], [const("w", w), const("b", b)])
    assert "residual" in imported(tmp_path, m)
    fused = ral_torch.load(str(compile_to(tmp_path, m, "fused")))
    x = torch.randn(2, 3, 4, 5)
    before = x.clone()
    want = x.double() + tf.conv2d(x.double(), torch.from_numpy(w).double(),
                                  torch.from_numpy(b).double(), padding=1)
    for _ in range(2):
        got = fused(x)
        assert torch.equal(x, before)
        np.testing.assert_allclose(got.double().numpy(), want.numpy(), rtol=1e-4, atol=1e-5)


def test_weights_given_at_run_time_are_read_every_call(tmp_path):
    # Not a module constant: the kernel must not keep a prepared copy between calls.
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])]
    m = model(nodes, [helper.make_tensor_value_info("x", F, [1, 2, 4, 4]),
                      helper.make_tensor_value_info("w", F, [3, 2, 3, 3])],
              [helper.make_tensor_value_info("y", F, None)])
    fused = ral_torch.load(str(compile_to(tmp_path, m, "fused")))
    x = torch.randn(1, 2, 4, 4)
    w = torch.randn(3, 2, 3, 3)
    for _ in range(3):
        got = fused(x, w)
        np.testing.assert_allclose(got.double().numpy(),
                                   tf.conv2d(x.double(), w.double(), padding=1).numpy(),
                                   rtol=1e-4, atol=1e-5)
        w.mul_(-2.0)  # same buffer, new values


def test_wrong_channel_count_fails_the_call_and_the_next_one_works(tmp_path):
    w, b = conv_params(3, 2, (3, 3))
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"]),
             helper.make_node("Relu", ["c"], ["y"])]
    m = model(nodes, [helper.make_tensor_value_info("x", F, ["N", "C", 5, 5])],
              [helper.make_tensor_value_info("y", F, None)], [const("w", w), const("b", b)])
    fused = ral_torch.load(str(compile_to(tmp_path, m, "fused")))
    with pytest.raises(RuntimeError, match="input channels"):
        fused(torch.randn(1, 3, 5, 5))
    x = torch.randn(2, 2, 5, 5)
    want = torch.relu(tf.conv2d(x.double(), torch.from_numpy(w).double(),
                                torch.from_numpy(b).double()))
    np.testing.assert_allclose(fused(x).double().numpy(), want.numpy(), rtol=1e-4, atol=1e-5)


def test_pools_and_loops_over_a_batch_of_one_split_across_threads(tmp_path):
    # Between convolutions, pools run channels-last with the channels innermost, and each loop
    # of more than a workgroup's work is split in parts over its inner dimension even at batch
    # 1 (the batch is the outermost, dynamic, loop): max and average pools with padding, a
    # global pool and an elementwise tail, several per row, against torch in float64.
    w1, b1 = conv_params(16, 8, (1, 1))
    w2, b2 = conv_params(16, 16, (3, 3))
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"]),
        helper.make_node("MaxPool", ["c1"], ["mp"], kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1]),
        helper.make_node("AveragePool", ["c1"], ["ap"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         count_include_pad=0),
        helper.make_node("Conv", ["mp", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["g"]),
        helper.make_node("Sigmoid", ["ap"], ["s"]),
        helper.make_node("Mul", ["s", "c1"], ["y"]),
    ]
    m = model(nodes, [helper.make_tensor_value_info("x", F, ["n", 8, 40, 37])],
              [helper.make_tensor_value_info("r", F, None),
               helper.make_tensor_value_info("g", F, None),
               helper.make_tensor_value_info("y", F, None)],
              [const("w1", w1), const("b1", b1), const("w2", w2), const("b2", b2)])

    def reference(x):
        c1 = tf.conv2d(x, torch.from_numpy(w1).double(), torch.from_numpy(b1).double())
        mp = tf.max_pool2d(c1, 3, 2, 1)
        ap = tf.avg_pool2d(c1, 3, 1, 1, count_include_pad=False)
        r = torch.relu(tf.conv2d(mp, torch.from_numpy(w2).double(), torch.from_numpy(b2).double(),
                                 padding=1))
        return r, r.mean(dim=(2, 3), keepdim=True), torch.sigmoid(ap) * c1

    run_both(tmp_path, m, reference, (8, 40, 37), batches=(1, 3, 0), outputs=3)


def test_reductions_over_one_static_image_are_split_not_launched_per_position(tmp_path):
    # One image of static shape: its unit batch dimension folds away, so the spatial reductions
    # of the channels-last convolution output (a mean, a max and a min) have no loop over images
    # around them. They are split into parts like a batch's (host_split_reduction.h) instead of
    # launching a kernel per position (1,480 launches each here before). Checked against torch in
    # float64, with a NaN that must reach its channel's max and min, and the launches of one
    # execution counted in ral-run's trace.
    w, b = conv_params(24, 8, (3, 3))
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("ReduceMean", ["c"], ["mean"], axes=[2, 3], keepdims=1),
             helper.make_node("ReduceMax", ["c"], ["max"], axes=[2, 3], keepdims=0),
             helper.make_node("ReduceMin", ["c"], ["min"], axes=[2, 3], keepdims=1)]
    m = model(nodes, [helper.make_tensor_value_info("x", F, [1, 8, 40, 37])],
              [helper.make_tensor_value_info(o, F, None) for o in ("mean", "max", "min")],
              [const("w", w), const("b", b)])
    module = compile_to(tmp_path, m, "image")
    x = RNG.standard_normal((1, 8, 40, 37)).astype(np.float32)
    c = tf.conv2d(torch.from_numpy(x).double(), torch.from_numpy(w).double(),
                  torch.from_numpy(b).double(), padding=1)
    got = ral_torch.load(str(module))(torch.from_numpy(x))
    np.testing.assert_allclose(got[0].double().numpy(), c.mean(dim=(2, 3), keepdim=True).numpy(),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1].double().numpy(), c.amax(dim=(2, 3)).numpy(), rtol=1e-5)
    np.testing.assert_allclose(got[2].double().numpy(), c.amin(dim=(2, 3), keepdim=True).numpy(),
                               rtol=1e-5)
    # A NaN input position: every channel's window over it has a NaN (weights are never zero).
    x[0, 3, 20, 11] = np.nan
    got = ral_torch.load(str(module))(torch.from_numpy(x))
    assert torch.isnan(got[1]).all() and torch.isnan(got[2]).all()

    ral_run = os.environ.get("RAL_RUN")
    if not ral_run:
        pytest.skip("RAL_RUN is not set")
    np.save(tmp_path / "x.npy", np.nan_to_num(x))
    trace = tmp_path / "trace.json"
    r = subprocess.run([ral_run, str(module), f"--input=@{tmp_path / 'x.npy'}",
                        f"--output=@{tmp_path / 'mean.npy'}", f"--output=@{tmp_path / 'max.npy'}",
                        f"--output=@{tmp_path / 'min.npy'}", f"--trace={trace}"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    events = json.loads(trace.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    launches = [e for e in events if e.get("name") == "ral_kernel_launch"]
    assert 0 < len(launches) <= 16, f"{len(launches)} kernel launches for one execution"


def test_depthwise_separable_blocks_are_one_call(tmp_path, monkeypatch):
    """MobileNet-V2's inverted residuals (expansion, depthwise, projection: a stride-2 block,
    then a stride-1 block with its residual Add) and EfficientNet's expansion + depthwise whose
    output the graph also reads: on the CPU each chain is one ral_conv_block call
    (--conv-blocks, the default), checked against torch in float64 on rows narrower and wider
    than the kernel's row batches, and against --conv-blocks=false."""
    # Blocks this small would run stage by stage (their expansions fit in L2): ask for fusion.
    monkeypatch.setenv("RAL_CONV_BLOCK", "fused")
    we1, be1 = conv_params(24, 4, (1, 1))
    wd1, bd1 = conv_params(24, 24, (3, 3), groups=24)
    wp1, bp1 = conv_params(8, 24, (1, 1))
    we2, be2 = conv_params(48, 8, (1, 1))
    wd2, bd2 = conv_params(48, 48, (3, 3), groups=48)
    wp2, bp2 = conv_params(8, 48, (1, 1))
    we3, be3 = conv_params(32, 8, (1, 1))
    wd3, bd3 = conv_params(32, 32, (5, 5), groups=32)

    def clip(src, dst):
        return helper.make_node("Clip", [src, "zero", "six"], [dst])
    nodes = [helper.make_node("Conv", ["x", "we1", "be1"], ["e1"]), clip("e1", "r1"),
             helper.make_node("Conv", ["r1", "wd1", "bd1"], ["d1"], group=24, strides=[2, 2],
                              pads=[1, 1, 1, 1]), clip("d1", "s1"),
             helper.make_node("Conv", ["s1", "wp1", "bp1"], ["p1"]),
             helper.make_node("Conv", ["p1", "we2", "be2"], ["e2"]), clip("e2", "r2"),
             helper.make_node("Conv", ["r2", "wd2", "bd2"], ["d2"], group=48, pads=[1, 1, 1, 1]),
             clip("d2", "s2"),
             helper.make_node("Conv", ["s2", "wp2", "bp2"], ["q2"]),
             helper.make_node("Add", ["p1", "q2"], ["y"]),
             helper.make_node("Conv", ["y", "we3", "be3"], ["e3"]),
             helper.make_node("Sigmoid", ["e3"], ["g3"]), helper.make_node("Mul", ["e3", "g3"],
                                                                           ["t3"]),
             helper.make_node("Conv", ["t3", "wd3", "bd3"], ["d3"], group=32, pads=[2, 2, 2, 2]),
             helper.make_node("Sigmoid", ["d3"], ["g4"]), helper.make_node("Mul", ["d3", "g4"],
                                                                           ["z"]),
             helper.make_node("ReduceMean", ["z"], ["m"], axes=[2, 3], keepdims=1),
             helper.make_node("Mul", ["z", "m"], ["out"])]
    inits = [const(n, v) for n, v in [("we1", we1), ("be1", be1), ("wd1", wd1), ("bd1", bd1),
                                     ("wp1", wp1), ("bp1", bp1), ("we2", we2), ("be2", be2),
                                     ("wd2", wd2), ("bd2", bd2), ("wp2", wp2), ("bp2", bp2),
                                     ("we3", we3), ("be3", be3), ("wd3", wd3), ("bd3", bd3),
                                     ("zero", 0.0), ("six", 6.0)]]

    def reference(x):
        def conv(v, w, b, **kw):
            return tf.conv2d(v, torch.from_numpy(w).double(), torch.from_numpy(b).double(), **kw)
        r1 = conv(x, we1, be1).clamp(0, 6)
        s1 = conv(r1, wd1, bd1, stride=2, padding=1, groups=24).clamp(0, 6)
        p1 = conv(s1, wp1, bp1)
        r2 = conv(p1, we2, be2).clamp(0, 6)
        s2 = conv(r2, wd2, bd2, padding=1, groups=48).clamp(0, 6)
        y = p1 + conv(s2, wp2, bp2)
        e3 = conv(y, we3, be3)
        t3 = e3 * torch.sigmoid(e3)
        d3 = conv(t3, wd3, bd3, padding=2, groups=32)
        z = d3 * torch.sigmoid(d3)
        return z * z.mean(dim=(2, 3), keepdim=True)

    for hw in ((9, 11), (6, 101)):  # narrow rows (batched), rows of 48+ pixels
        m = model(nodes, [helper.make_tensor_value_info("x", F, ["N", 4, *hw])],
                  [helper.make_tensor_value_info("out", F, None)], inits, opset=13)
        llvm = compile_to(tmp_path, m, "llvm", "--emit=mlir").read_text()
        assert llvm.count('"ral_conv_block___cpu___') == 1  # one callee, called three times
        run_both(tmp_path, m, reference, (4, *hw), batches=(0, 1, 3))
        separate = ral_torch.load(str(compile_to(tmp_path, m, "separate",
                                                 "--conv-blocks=false")))
        x = torch.from_numpy(RNG.standard_normal((2, 4, *hw)).astype(np.float32))
        np.testing.assert_allclose(separate(x).double().numpy(), reference(x.double()).numpy(),
                                   rtol=2e-4, atol=2e-4)


def test_squeeze_excitation_scales_the_projection_input(tmp_path):
    """EfficientNet's squeeze-and-excitation: the depthwise output z times its channel scale s
    (ReduceMean, two 1x1 Convs with SiLU and Sigmoid) feeds only the projection Conv, so on the
    CPU the product is never stored: one ral_conv_scaled call scales z as the projection reads it
    (--conv-scales, the default). A second scaled product that the graph also reads, and a
    product by a per-pixel tensor, stay a multiply and a ral_conv. Checked against torch in
    float64 at several batches, and against --conv-scales=false."""
    wd, bd = conv_params(40, 40, (3, 3), groups=40)
    w1, b1 = conv_params(10, 40, (1, 1))
    w2, b2 = conv_params(40, 10, (1, 1))
    wp, bp = conv_params(24, 40, (1, 1))
    wq, bq = conv_params(16, 40, (1, 1))
    nodes = [helper.make_node("Conv", ["x", "wd", "bd"], ["d"], group=40, pads=[1, 1, 1, 1]),
             helper.make_node("Sigmoid", ["d"], ["gd"]), helper.make_node("Mul", ["d", "gd"],
                                                                          ["z"]),
             helper.make_node("ReduceMean", ["z"], ["m"], axes=[2, 3], keepdims=1),
             helper.make_node("Conv", ["m", "w1", "b1"], ["h1"]),
             helper.make_node("Sigmoid", ["h1"], ["g1"]), helper.make_node("Mul", ["h1", "g1"],
                                                                           ["t1"]),
             helper.make_node("Conv", ["t1", "w2", "b2"], ["h2"]),
             helper.make_node("Sigmoid", ["h2"], ["s"]),
             helper.make_node("Mul", ["z", "s"], ["zs"]),
             helper.make_node("Conv", ["zs", "wp", "bp"], ["y"]),
             # The same product read twice: by a Conv and as an output.
             helper.make_node("Mul", ["s", "x"], ["xs"]),
             helper.make_node("Conv", ["xs", "wq", "bq"], ["q"]),
             # A per-pixel product is not a channel scale.
             helper.make_node("Mul", ["z", "x"], ["zg"]),
             helper.make_node("Conv", ["zg", "wq", "bq"], ["r"])]
    inits = [const(n, v) for n, v in [("wd", wd), ("bd", bd), ("w1", w1), ("b1", b1),
                                     ("w2", w2), ("b2", b2), ("wp", wp), ("bp", bp),
                                     ("wq", wq), ("bq", bq)]]

    def reference(x):
        def conv(v, w, b, **kw):
            return tf.conv2d(v, torch.from_numpy(w).double(), torch.from_numpy(b).double(), **kw)
        d = conv(x, wd, bd, padding=1, groups=40)
        z = d * torch.sigmoid(d)
        h1 = conv(z.mean(dim=(2, 3), keepdim=True), w1, b1)
        s = torch.sigmoid(conv(h1 * torch.sigmoid(h1), w2, b2))
        xs = s * x
        return (conv(z * s, wp, bp), conv(xs, wq, bq), xs,
                conv(z * x, wq, bq))

    m = model(nodes, [helper.make_tensor_value_info("x", F, ["N", 40, 9, 13])],
              [helper.make_tensor_value_info(n, F, None) for n in ("y", "q", "xs", "r")], inits,
              opset=13)
    llvm = compile_to(tmp_path, m, "llvm", "--emit=mlir").read_text()
    assert llvm.count('"ral_conv_scaled___cpu___') == 1  # the callee (which calls: lit tests)
    run_both(tmp_path, m, reference, (40, 9, 13), batches=(0, 1, 3), outputs=4)
    separate = ral_torch.load(str(compile_to(tmp_path, m, "separate", "--conv-scales=false")))
    x = torch.from_numpy(RNG.standard_normal((2, 40, 9, 13)).astype(np.float32))
    for got, want in zip(separate(x), reference(x.double())):
        np.testing.assert_allclose(got.double().numpy(), want.numpy(), rtol=2e-4, atol=2e-4)
