"""ONNX's QDQ form around Conv on the CPU: DequantizeLinear of 8-bit activations and of int8
weights, the Conv (with its bias, activation and the QuantizeLinear after it) imported as one
quantized disc_ral.conv run by ral_qconv (oneDNN's int8 convolution), against numpy in float64.
The forms it does not take (weight zero points, an activation that does not commute with the
output scale, a conv output read twice) stay correct through the f32 path."""

import numpy as np
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from onnx_graphs import F, compile_model, load, model, tensor

U8, I8 = TensorProto.UINT8, TensorProto.INT8
N = helper.make_node


def imported(tmp_path, m, *flags):
    """The tensor-level MLIR `m` imports as."""
    rc, err, out = compile_model(tmp_path, m, "--emit=import", *flags, name="imported")
    assert rc == 0, err
    return out.read_text()


def qdq(v, scale, zp, lo, hi):
    return (np.clip(np.rint(v / scale) + zp, lo, hi) - zp) * scale


def conv(x, w, b, stride=1, pad=0, groups=1):
    return torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w),
                                      None if b is None else torch.from_numpy(b).double(),
                                      stride=stride, padding=pad, groups=groups).numpy()


def weights(rng, shape):
    return rng.integers(-127, 128, shape).astype(np.int8)


def check(got, want, step):
    # f32 against f64 may round a value at a step's midpoint the other way: one step at most,
    # and rarely.
    diff = np.abs(got - want)
    assert diff.max() <= step * 1.001, diff.max()
    assert (diff > 1e-6).mean() < 0.02, (diff > 1e-6).mean()


def test_signed_activations_per_tensor_scales_strides_and_groups(tmp_path):
    # int8 activations with a zero point, one weight scale for all channels, stride 2 and two
    # groups, Clip as the activation, an int8 QuantizeLinear after it.
    rng = np.random.default_rng(1)
    w = weights(rng, (6, 2, 3, 3))
    b = rng.standard_normal(6).astype(np.float32)
    inits = {"xs": np.array(0.05, np.float32), "xz": np.array(-3, np.int8),
             "w": w, "ws": np.array(0.01, np.float32), "b": b,
             "lo": np.array(-0.5, np.float32), "hi": np.array(1.5, np.float32),
             "ys": np.array(0.02, np.float32), "yz": np.array(-10, np.int8)}
    nodes = [N("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             N("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             N("DequantizeLinear", ["w", "ws"], ["wd"]),
             N("Conv", ["xd", "wd", "b"], ["c"], strides=[2, 2], pads=[1, 0, 1, 1], group=2),
             N("Clip", ["c", "lo", "hi"], ["r"]),
             N("QuantizeLinear", ["r", "ys", "yz"], ["yq"]),
             N("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    m = model(nodes, [tensor("x", F, ["n", 4, "h", 9])], [tensor("y", F, None)],
              [numpy_helper.from_array(v, k) for k, v in inits.items()], opset=13)
    text = imported(tmp_path, m)
    assert text.count("scales = array<f32") == 1 and "output_zero_point = -10" in text
    mod = load(tmp_path, m)
    for shape in [(2, 4, 7, 9), (1, 4, 1, 9)]:
        x = rng.standard_normal(shape).astype(np.float32) * 2
        xd = qdq(x.astype(np.float64), 0.05, -3, -128, 127)
        # ONNX's asymmetric pads: one row above and below, none left, one right.
        xp = np.pad(xd, ((0, 0), (0, 0), (1, 1), (0, 1)))
        c = conv(xp, w.astype(np.float64) * 0.01, b, stride=2, groups=2)
        want = qdq(np.clip(c, -0.5, 1.5), 0.02, -10, -128, 127)
        check(mod(torch.from_numpy(x)).double().numpy(), want, 0.02)


def test_without_quantize_after_the_result_is_f32(tmp_path):
    # Conv -> Sigmoid -> QuantizeLinear: sigmoid does not commute with the output scale, so the
    # integer convolution gives f32, the sigmoid fused after it, and QuantizeLinear runs alone.
    # A second Conv's output is also read twice (no QuantizeLinear to fold).
    rng = np.random.default_rng(2)
    w1, w2 = weights(rng, (5, 3, 3, 3)), weights(rng, (4, 5, 1, 1))
    s1 = rng.uniform(0.002, 0.01, 5).astype(np.float32)
    inits = {"xs": np.array(0.02, np.float32), "xz": np.array(128, np.uint8),
             "w1": w1, "s1": s1, "z1": np.zeros(5, np.int8),
             "hs": np.array(1 / 255, np.float32), "hz": np.array(0, np.uint8),
             "w2": w2, "s2": np.array(0.02, np.float32)}
    nodes = [N("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             N("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             N("DequantizeLinear", ["w1", "s1", "z1"], ["w1d"], axis=0),
             N("Conv", ["xd", "w1d"], ["c1"], pads=[1, 1, 1, 1]),
             N("Sigmoid", ["c1"], ["g"]),
             N("QuantizeLinear", ["g", "hs", "hz"], ["hq"]),
             N("DequantizeLinear", ["hq", "hs", "hz"], ["hd"]),
             N("DequantizeLinear", ["w2", "s2"], ["w2d"]),
             N("Conv", ["hd", "w2d"], ["c2"]),
             N("Mul", ["c2", "c2"], ["y"])]
    m = model(nodes, [tensor("x", F, ["n", 3, 6, 5])], [tensor("y", F, None)],
              [numpy_helper.from_array(v, k) for k, v in inits.items()], opset=13)
    text = imported(tmp_path, m)
    assert text.count("scales = array<f32") == 2 and "-> tensor<?x5x6x5xf32>" in text
    mod = load(tmp_path, m)
    x = rng.standard_normal((3, 3, 6, 5)).astype(np.float32)
    xd = qdq(x.astype(np.float64), 0.02, 128, 0, 255)
    c1 = conv(xd, w1.astype(np.float64) * s1.reshape(5, 1, 1, 1), None, pad=1)
    hd = qdq(1 / (1 + np.exp(-c1)), np.float32(1 / 255), 0, 0, 255)
    c2 = conv(hd, w2.astype(np.float64) * np.float32(0.02), None)
    got = mod(torch.from_numpy(x)).double().numpy()
    # One step of h moves c2 by at most its weights' sum times the step.
    step = np.abs(w2.astype(np.float64) * 0.02).sum(axis=(1, 2, 3)).max() / 255
    np.testing.assert_allclose(np.sqrt(got), np.abs(c2), atol=step * 1.001)
    assert (np.abs(np.sqrt(got) - np.abs(c2)) > 1e-5).mean() < 0.02


@pytest.mark.parametrize("form", ["weight_zero_point", "dynamic_weights"])
def test_forms_the_int8_kernel_does_not_take_stay_f32(tmp_path, form):
    rng = np.random.default_rng(3)
    w = weights(rng, (4, 3, 3, 3))
    inits = {"xs": np.array(0.02, np.float32), "xz": np.array(128, np.uint8),
             "ws": np.array(0.01, np.float32),
             "wz": np.array(3 if form == "weight_zero_point" else 0, np.int8)}
    inputs = [tensor("x", F, ["n", 3, 5, 5])]
    if form == "dynamic_weights":
        inputs.append(tensor("w", I8, [4, 3, 3, 3]))
    else:
        inits["w"] = w
    nodes = [N("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             N("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             N("DequantizeLinear", ["w", "ws", "wz"], ["wd"]),
             N("Conv", ["xd", "wd"], ["y"])]
    m = model(nodes, inputs, [tensor("y", F, None)],
              [numpy_helper.from_array(v, k) for k, v in inits.items()], opset=13)
    assert "scales = array<f32" not in imported(tmp_path, m)
    mod = load(tmp_path, m)
    x = rng.standard_normal((2, 3, 5, 5)).astype(np.float32)
    xd = qdq(x.astype(np.float64), 0.02, 128, 0, 255)
    want = conv(xd, (w.astype(np.float64) - int(inits["wz"])) * 0.01, None)
    args = [torch.from_numpy(x)] + ([torch.from_numpy(w)] if form == "dynamic_weights" else [])
    np.testing.assert_allclose(mod(*args).double().numpy(), want, rtol=1e-5, atol=1e-5)


def test_gpu_devices_keep_the_f32_convolution(tmp_path):
    # ral_qconv is a CPU kernel: for CUDA the QDQ form imports as dequantize + f32 conv.
    rng = np.random.default_rng(4)
    inits = {"xs": np.array(0.02, np.float32), "xz": np.array(128, np.uint8),
             "w": weights(rng, (4, 3, 1, 1)), "ws": np.array(0.01, np.float32)}
    nodes = [N("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             N("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             N("DequantizeLinear", ["w", "ws"], ["wd"]),
             N("Conv", ["xd", "wd"], ["y"])]
    m = model(nodes, [tensor("x", F, [1, 3, 4, 4])], [tensor("y", F, None)],
              [numpy_helper.from_array(v, k) for k, v in inits.items()], opset=13)
    assert "scales = array<f32" in imported(tmp_path, m)
    assert "scales = array<f32" not in imported(tmp_path, m, "--device=cuda")


def test_qlinear_conv_with_constant_weights_runs_the_int8_kernel(tmp_path):
    # QLinearConv (ONNX Runtime's QOperator form) with constant weights, scales and zero points:
    # ral_qconv; the same node with its weights as inputs: the generic integer path. Both bit for
    # bit against ONNX's arithmetic: the int32 sum plus bias, times x_scale * w_scale / y_scale
    # in f32, rounded half to even, plus y_zero_point, saturated.
    rng = np.random.default_rng(5)
    w = weights(rng, (6, 4, 3, 3))
    sw = rng.uniform(0.002, 0.01, 6).astype(np.float32)
    bias = rng.integers(-3000, 3000, 6).astype(np.int32)
    consts = {"xs": np.array(0.03, np.float32), "xz": np.array(120, np.uint8), "w": w,
              "ws": sw, "wz": np.zeros(6, np.int8), "ys": np.array(0.07, np.float32),
              "yz": np.array(9, np.uint8), "b": bias}
    node = N("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"],
             pads=[1, 1, 1, 1], strides=[1, 2])
    m = model([node], [tensor("x", U8, ["n", 4, 7, 8])], [tensor("y", U8, None)],
              [numpy_helper.from_array(v, k) for k, v in consts.items()], opset=13)
    assert "scales = array<f32" in imported(tmp_path, m)
    generic = model([node], [tensor("x", U8, ["n", 4, 7, 8]), tensor("w", I8, [6, 4, 3, 3])],
                    [tensor("y", U8, None)],
                    [numpy_helper.from_array(v, k) for k, v in consts.items() if k != "w"],
                    opset=13)
    assert "scales = array<f32" not in imported(tmp_path, generic)
    on_kernel = load(tmp_path, m)
    x = rng.integers(0, 256, (2, 4, 7, 8)).astype(np.uint8)
    xp = np.pad(x.astype(np.int64) - 120, ((0, 0), (0, 0), (1, 1), (1, 1)))
    acc = conv(xp.astype(np.float64), w.astype(np.float64), None, stride=(1, 2))
    acc = np.rint(acc).astype(np.int64) + bias.reshape(1, 6, 1, 1)
    mult = (np.float32(0.03) * sw / np.float32(0.07)).astype(np.float32).reshape(1, 6, 1, 1)
    want = np.clip(np.rint(acc.astype(np.float32) * mult) + 9, 0, 255)
    np.testing.assert_array_equal(on_kernel(torch.from_numpy(x)).numpy(), want)
    got_generic = load(tmp_path, generic)(torch.from_numpy(x), torch.from_numpy(w))
    np.testing.assert_array_equal(got_generic.numpy(), want)


def test_residual_block_keeps_the_add_after_an_int8_convolution(tmp_path):
    # A ResNet block in QDQ form: conv1 + ReLU + QuantizeLinear folded into one int8
    # convolution; conv2's residual Add and ReLU stay nodes after its int8 convolution's f32
    # output; the downsampling branch's 1x1 conv (the Add's other operand) is an int8
    # convolution of its own.
    rng = np.random.default_rng(6)
    w1, w2, w3 = weights(rng, (4, 4, 3, 3)), weights(rng, (4, 4, 3, 3)), weights(rng, (4, 4, 1, 1))
    s1, s2 = (rng.uniform(0.002, 0.01, 4).astype(np.float32) for _ in range(2))
    b1, b2 = (rng.standard_normal(4).astype(np.float32) * 0.1 for _ in range(2))
    inits = {"xs": np.array(0.02, np.float32), "xz": np.array(128, np.uint8),
             "w1": w1, "s1": s1, "b1": b1, "w2": w2, "s2": s2, "b2": b2, "w3": w3,
             "s3": np.array(0.004, np.float32),
             "hs": np.array(0.03, np.float32), "hz": np.array(0, np.uint8),
             "ys": np.array(0.04, np.float32), "yz": np.array(0, np.uint8)}
    nodes = [N("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             N("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             N("DequantizeLinear", ["w1", "s1"], ["w1d"], axis=0),
             N("Conv", ["xd", "w1d", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             N("Relu", ["c1"], ["r1"]),
             N("QuantizeLinear", ["r1", "hs", "hz"], ["hq"]),
             N("DequantizeLinear", ["hq", "hs", "hz"], ["hd"]),
             N("DequantizeLinear", ["w2", "s2"], ["w2d"], axis=0),
             N("Conv", ["hd", "w2d", "b2"], ["c2"], pads=[1, 1, 1, 1]),
             N("DequantizeLinear", ["w3", "s3"], ["w3d"]),
             N("Conv", ["xd", "w3d"], ["c3"]),
             N("Add", ["c2", "c3"], ["a"]),
             N("Relu", ["a"], ["r2"]),
             N("QuantizeLinear", ["r2", "ys", "yz"], ["yq"]),
             N("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    m = model(nodes, [tensor("x", F, ["n", 4, 6, 6])], [tensor("y", F, None)],
              [numpy_helper.from_array(v, k) for k, v in inits.items()], opset=13)
    text = imported(tmp_path, m)
    assert text.count("scales = array<f32") == 3 and "residual" not in text
    mod = load(tmp_path, m)
    x = rng.standard_normal((2, 4, 6, 6)).astype(np.float32)
    xd = qdq(x.astype(np.float64), 0.02, 128, 0, 255)
    c1 = conv(xd, w1.astype(np.float64) * s1.reshape(4, 1, 1, 1), b1, pad=1)
    hd = qdq(np.maximum(c1, 0), 0.03, 0, 0, 255)
    c2 = conv(hd, w2.astype(np.float64) * s2.reshape(4, 1, 1, 1), b2, pad=1)
    c3 = conv(xd, w3.astype(np.float64) * np.float64(np.float32(0.004)), None)
    want = qdq(np.maximum(c2 + c3, 0), 0.04, 0, 0, 255)
    check(mod(torch.from_numpy(x)).double().numpy(), want, 0.04)


@pytest.mark.parametrize("residual", [False, True])
def test_qdq_matmul_runs_as_an_int8_linear_layer(tmp_path, residual):
    # DequantizeLinear of uint8 activations [B, S, K] and of int8 weights [K, N] (one scale per
    # column), MatMul, a bias Add, then ReLU and QuantizeLinear (folded into the kernel), or a
    # residual Add (a node after the kernel's f32 result).
    rng = np.random.default_rng(7)
    K, M = 24, 10
    w = weights(rng, (K, M))
    sw = rng.uniform(0.002, 0.01, M).astype(np.float32)
    bias = rng.standard_normal(M).astype(np.float32)
    inits = {"xs": np.array(0.02, np.float32), "xz": np.array(100, np.uint8), "w": w, "ws": sw,
             "b": bias, "ys": np.array(0.03, np.float32), "yz": np.array(5, np.uint8)}
    nodes = [N("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             N("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             N("DequantizeLinear", ["w", "ws"], ["wd"], axis=1),
             N("MatMul", ["xd", "wd"], ["mm"]),
             N("Add", ["mm", "b"], ["a"])]
    inputs = [tensor("x", F, ["b", "s", K])]
    if residual:
        inputs.append(tensor("r", F, ["b", "s", M]))
        nodes += [N("Add", ["a", "r"], ["y"])]
    else:
        nodes += [N("Relu", ["a"], ["r1"]), N("QuantizeLinear", ["r1", "ys", "yz"], ["yq"]),
                  N("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    m = model(nodes, inputs, [tensor("y", F, None)],
              [numpy_helper.from_array(v, k) for k, v in inits.items()], opset=13)
    text = imported(tmp_path, m)
    assert text.count("scales = array<f32") == 1 and "channels_last" in text
    mod = load(tmp_path, m)
    for shape in [(2, 3), (1, 1), (3, 0)]:
        x = rng.standard_normal(shape + (K,)).astype(np.float32)
        xd = qdq(x.astype(np.float64), 0.02, 100, 0, 255)
        mm = xd @ (w.astype(np.float64) * sw.astype(np.float64)) + bias
        args = [torch.from_numpy(x)]
        if residual:
            r = rng.standard_normal(shape + (M,)).astype(np.float32)
            args.append(torch.from_numpy(r))
            got = mod(*args).double().numpy()
            np.testing.assert_allclose(got, mm + r, rtol=1e-5, atol=1e-4)
        else:
            got = mod(*args).double().numpy()
            assert got.shape == shape + (M,)
            if got.size:
                check(got, qdq(np.maximum(mm, 0), 0.03, 5, 0, 255), 0.03)


def test_qdq_gemm_with_transposed_weights_and_its_own_bias(tmp_path):
    # torch's Linear exported as Gemm(transB=1) with weights [N, K] (one scale per row, axis 0)
    # and its bias as C: the int8 kernel without a QuantizeLinear after it (an f32 result).
    rng = np.random.default_rng(8)
    K, M = 16, 5
    w = weights(rng, (M, K))
    sw = rng.uniform(0.002, 0.01, M).astype(np.float32)
    bias = rng.standard_normal(M).astype(np.float32)
    inits = {"xs": np.array(0.02, np.float32), "xz": np.array(128, np.uint8), "w": w, "ws": sw,
             "b": bias}
    nodes = [N("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             N("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             N("DequantizeLinear", ["w", "ws"], ["wd"], axis=0),
             N("Gemm", ["xd", "wd", "b"], ["y"], transB=1)]
    m = model(nodes, [tensor("x", F, ["b", K])], [tensor("y", F, None)],
              [numpy_helper.from_array(v, k) for k, v in inits.items()], opset=13)
    assert imported(tmp_path, m).count("scales = array<f32") == 1
    mod = load(tmp_path, m)
    x = rng.standard_normal((3, K)).astype(np.float32)
    xd = qdq(x.astype(np.float64), 0.02, 128, 0, 255)
    want = xd @ (w.astype(np.float64) * sw.reshape(M, 1)).T + bias
    np.testing.assert_allclose(mod(torch.from_numpy(x)).double().numpy(), want, rtol=1e-5,
                               atol=1e-4)
