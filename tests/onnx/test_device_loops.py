"""Compiled loops on a GPU device take every parallel dimension the compiler can prove legal
(compiler_passes/conversion/grid_parallelism.h): merged nested loops, one kernel per inner loop,
and reductions over many positions split into partial folds. Run on Vulkan (Mesa's lavapipe in
CI), which shares that step with CUDA and HSA, against numpy in float64."""

import subprocess

import numpy as np
from onnx import helper, numpy_helper

from onnx_graphs import F, compile_model, model, tensor, vulkan_ral_run


def run_vulkan(ral_run, tmp_path, module, x, outputs):
    np.save(tmp_path / "x.npy", x)
    files = [tmp_path / f"out{i}.npy" for i in range(outputs)]
    r = subprocess.run([ral_run, str(module), "--device=vulkan", f"--input=@{tmp_path / 'x.npy'}"]
                       + [f"--output=@{f}" for f in files], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return [np.load(f) for f in files]


def test_means_and_extrema_over_many_positions_on_vulkan(tmp_path):
    # 48 channels of 33x35 positions: the mean and the keepdims max are split reductions (33
    # partial folds per channel, then one fold of the partials), the min stays one fold per
    # channel; a NaN must reach the max and min of its channel; batches 2, 1 and 0.
    ral_run = vulkan_ral_run()
    nodes = [helper.make_node("GlobalAveragePool", ["x"], ["mean"]),
             helper.make_node("ReduceMax", ["x"], ["max"], axes=[2, 3], keepdims=1),
             helper.make_node("ReduceMin", ["x"], ["min"], axes=[2, 3], keepdims=0),
             helper.make_node("ReduceSum", ["x", "last"], ["rows"], keepdims=0),
             helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1])]
    m = model(nodes, [tensor("x", F, ["n", 48, 33, 35])],
              [tensor(o, F, None) for o in ["mean", "max", "min", "rows", "t"]],
              [numpy_helper.from_array(np.array([3], np.int64), "last")])
    rc, err, module = compile_model(tmp_path, m, "--device=vulkan")
    assert rc == 0, err
    rng = np.random.default_rng(7)
    for n in [2, 1, 0]:
        x = (rng.standard_normal((n, 48, 33, 35)) + 3).astype(np.float32)
        if n:
            x[n - 1, 5, 7, 9] = np.nan
        mean, mx, mn, rows, t = run_vulkan(ral_run, tmp_path, module, x, 5)
        w = x.astype(np.float64)
        np.testing.assert_allclose(mean, w.mean(axis=(2, 3), keepdims=True), rtol=1e-6)
        np.testing.assert_array_equal(mx, w.max(axis=(2, 3), keepdims=True).astype(np.float32))
        np.testing.assert_array_equal(mn, w.min(axis=(2, 3)).astype(np.float32))
        np.testing.assert_allclose(rows, w.sum(axis=3), rtol=1e-6)
        np.testing.assert_array_equal(t, x.transpose(0, 2, 3, 1))
        if n:
            assert np.isnan(mx[n - 1, 5, 0, 0]) and np.isnan(mn[n - 1, 5])
            assert not np.isnan(mx[n - 1, 4, 0, 0])


def test_loops_after_a_broadcast_on_vulkan(tmp_path):
    # A per-channel mean subtracted from every position (the mean a split reduction, the
    # subtraction a merged loop over batch x channels x positions), on a non-square input whose
    # spatial dims include a 1.
    ral_run = vulkan_ral_run()
    nodes = [helper.make_node("ReduceMean", ["x"], ["m"], axes=[2, 3], keepdims=1),
             helper.make_node("Sub", ["x", "m"], ["y"])]
    m = model(nodes, [tensor("x", F, ["n", 12, 1, 1031])], [tensor("y", F, None)])
    rc, err, module = compile_model(tmp_path, m, "--device=vulkan")
    assert rc == 0, err
    x = np.random.default_rng(8).standard_normal((3, 12, 1, 1031)).astype(np.float32)
    (y,) = run_vulkan(ral_run, tmp_path, module, x, 1)
    w = x.astype(np.float64)
    np.testing.assert_allclose(y, w - w.mean(axis=(2, 3), keepdims=True), rtol=1e-5, atol=1e-6)
