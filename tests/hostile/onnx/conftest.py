"""Shared helpers of the hostile-model suite: ONNX graphs built with onnx.helper, compiled by the
compiler library in this very process (ral_torch._compiler, libral_compiler.so through ctypes: no
subprocess shields the host from a crash), run through ral_torch, and compared with numpy.

CTest runs the suite with PYTHONPATH at the built ral_torch package.
"""

import os

import numpy as np
import pytest
import torch
from onnx import TensorProto, helper

import ral_torch
from ral_torch import _compiler

F = TensorProto.FLOAT
I8 = TensorProto.INT8
I32 = TensorProto.INT32
I64 = TensorProto.INT64
INT64_MIN = -(2 ** 63)
INT64_MAX = 2 ** 63 - 1


def model(nodes, inputs, outputs, initializers=(), opset=14):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def tensor(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def const(name, dtype, values, dims=None):
    values = list(values) if isinstance(values, (list, tuple)) else [values]
    return helper.make_tensor(name, dtype, [len(values)] if dims is None else dims, values)


class Compiler:
    """Compiles models in process; every call leaves the host alive or the test run dies."""

    def __init__(self, tmp_path):
        self.tmp_path = tmp_path
        self.count = 0

    def compile(self, m, *flags):
        """(exit code, diagnostics, output path) of compiling `m` (a ModelProto or bytes)."""
        self.count += 1
        src = self.tmp_path / f"m{self.count}.onnx"
        src.write_bytes(m if isinstance(m, bytes) else m.SerializeToString())
        out = self.tmp_path / f"m{self.count}.ralm"
        rc, diagnostics = _compiler.compile_file(str(src), str(out), list(flags))
        return rc, diagnostics, out

    def refuses(self, m, *expected, code=_compiler.FAILED):
        """The compile fails with exit code `code` and diagnostics holding every `expected`."""
        rc, diagnostics, out = self.compile(m)
        assert rc == code, f"exit code {rc}, diagnostics:\n{diagnostics}"
        for text in expected:
            assert text in diagnostics, f"{text!r} not in:\n{diagnostics}"
        assert "does not verify" not in diagnostics, diagnostics
        assert not out.exists()
        return diagnostics

    def load(self, m, *flags):
        rc, diagnostics, out = self.compile(m, *flags)
        assert rc == 0, diagnostics
        return ral_torch.load(str(out))


@pytest.fixture
def compiler(tmp_path):
    return Compiler(tmp_path)


def fails_then_recovers(mod, bad_args, good_args, expected, *messages):
    """A call with `bad_args` raises RuntimeError naming each of `messages`; the next call with
    `good_args` returns `expected` (a tensor or a tuple of them) exactly."""
    with pytest.raises(RuntimeError) as info:
        mod(*bad_args)
    for m in messages:
        assert m in str(info.value), f"{m!r} not in {info.value}"
    got = mod(*good_args)
    if isinstance(expected, tuple):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert torch.equal(g, e), (g, e)
    else:
        assert torch.equal(got, expected), (got, expected)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
    np.random.seed(0)
