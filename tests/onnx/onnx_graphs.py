"""What the ONNX tests share: ONNX models built with onnx.helper, compiled by the ral-compile CLI
(RAL_COMPILE) into a test's tmp_path, and loaded through ral_torch."""

import os
import subprocess

from onnx import TensorProto, helper

RAL_COMPILE = os.environ.get("RAL_COMPILE", "ral-compile")
UNSUPPORTED = 5  # ral-compile's exit code for what the importer does not handle
F = TensorProto.FLOAT


def model(nodes, inputs, outputs, initializers=(), opset=14):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def tensor(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def compile_model(tmp_path, m, *flags, name="m"):
    """(exit code, stderr, output path) of `ral-compile` on `m` (a ModelProto or bytes)."""
    path = tmp_path / f"{name}.onnx"
    path.write_bytes(m if isinstance(m, bytes) else m.SerializeToString())
    out = tmp_path / f"{name}.ralm"
    r = subprocess.run([RAL_COMPILE, str(path), "-o", str(out), *flags], capture_output=True,
                       text=True)
    return r.returncode, r.stderr, out


def load(tmp_path, m, *flags):
    """`m` compiled and loaded through ral_torch; the test fails with the compiler's errors."""
    import ral_torch
    rc, err, out = compile_model(tmp_path, m, *flags)
    assert rc == 0, err
    return ral_torch.load(str(out))


def vulkan_ral_run():
    """ral-run (RAL_RUN) when it lists a Vulkan device (Mesa's lavapipe in CI); the test is
    skipped otherwise."""
    import pytest
    ral_run = os.environ.get("RAL_RUN")
    if not ral_run:
        pytest.skip("RAL_RUN is not set")
    if "vulkan" not in subprocess.run([ral_run, "--list-devices"], capture_output=True,
                                      text=True).stdout:
        pytest.skip("no Vulkan device")
    return ral_run
