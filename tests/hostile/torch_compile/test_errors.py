"""Every failure of ral_torch.compile is a Python exception of RAL's kinds with a message that says
what happened (the compiler's exit codes, a missing compiler library, an unusable temporary
directory), and the next compile works."""

import os
import tempfile

import pytest
import torch
from torch import nn

import ral_torch
from ral_torch import _compiler


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(7, 2)

    def forward(self, x):
        return self.fc(x) - 1


@pytest.mark.parametrize("rc, text, kind", [
    (_compiler.INTERNAL, "internal compiler error: assertion in a pass", "internal error"),
    (_compiler.USAGE, "ral-compile: error: unknown option --mcpu=bogus",
     "refused its arguments"),
    (_compiler.FAILED, "LLVM ERROR: out of memory (turned into an error result)", "failed"),
    (77, "", "exited with code 77"),
])
def test_compiler_exit_codes_are_compile_errors(rc, text, kind, tmp_path, monkeypatch,
                                                still_works):
    monkeypatch.setattr(_compiler, "compile_file", lambda *args, **kwargs: (rc, text))
    with pytest.raises(ral_torch.CompileError) as info:
        ral_torch.compile(Model().eval(), torch.randn(3, 7), cache_dir=str(tmp_path))
    assert type(info.value) is ral_torch.CompileError
    assert info.value.returncode == rc and kind in str(info.value)
    assert "Model" in str(info.value) and (text or "no diagnostics") in str(info.value)
    monkeypatch.undo()
    still_works()


def test_compiler_failure_with_fallback_is_narrowed_down(tmp_path, monkeypatch, check):
    # The whole module fails once (exit code 4); fallback asks node by node, and the part made of
    # them compiles: the right result, and the report says what happened.
    real = _compiler.compile_file
    state = {"first": True}

    def first_fails(input_path, output_path, options=None):
        if state["first"] and "--emit" not in str(options):
            state["first"] = False
            return _compiler.INTERNAL, "internal error"
        return real(input_path, output_path, options)

    monkeypatch.setattr(_compiler, "compile_file", first_fails)
    model = Model().eval()
    compiled = ral_torch.compile(model, torch.randn(3, 7), fallback=True,
                                 cache_dir=str(tmp_path))
    assert "did not compile" in compiled.report and "internal error" in compiled.report
    check(compiled, model, torch.randn(3, 7))


def test_missing_compiler_library(monkeypatch, cache, still_works):
    monkeypatch.setenv("RAL_COMPILER_LIBRARY", "/nonexistent/libral_compiler.so")
    with pytest.raises(RuntimeError, match="/nonexistent/libral_compiler.so"):
        ral_torch.compile(Model().eval(), torch.randn(3, 7), cache_dir=cache)
    monkeypatch.undo()
    still_works()


def test_unusable_temporary_directory(tmp_path, monkeypatch, still_works):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setattr(tempfile, "tempdir", str(blocker / "tmp"))
    with pytest.raises(RuntimeError, match="TMPDIR") as info:
        ral_torch.compile(Model().eval(), torch.randn(3, 7), cache_dir=str(tmp_path / "c"))
    assert str(blocker / "tmp") in str(info.value)
    assert not isinstance(info.value, OSError)
    monkeypatch.undo()
    still_works()


def test_module_that_does_not_load_after_compiling(tmp_path, monkeypatch, still_works):
    real = _compiler.compile_or_raise

    def writes_garbage(input_path, output_path, options=None, what=None):
        real(input_path, output_path, options, what)
        with open(output_path, "r+b") as f:
            f.truncate(100)
        return ""

    monkeypatch.setattr(_compiler, "compile_or_raise", writes_garbage)
    with pytest.raises(ral_torch.CompileError, match="does not load"):
        ral_torch.compile(Model().eval(), torch.randn(3, 7), cache_dir=str(tmp_path))
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".ralm")], "a bad module was cached"
    monkeypatch.undo()
    still_works()


@pytest.mark.parametrize("opset", [0, 99, "13", True])
def test_bad_opset_is_refused_before_exporting(opset, cache, still_works):
    with pytest.raises(ValueError, match="opset"):
        ral_torch.compile(Model().eval(), torch.randn(3, 7), opset=opset, fallback=True,
                          cache_dir=cache)
    still_works()


def test_model_raising_on_its_example_keeps_its_exception(cache, still_works):
    class Raises(nn.Module):
        def forward(self, x):
            raise KeyError("the model's own error")

    with pytest.raises(KeyError, match="the model's own error"):
        ral_torch.compile(Raises(), torch.randn(2, 2), cache_dir=cache)
    still_works()


class Wide(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(1024, 1024)  # 4 MiB of weights

    def forward(self, x):
        return self.fc(x)


def test_max_memory_bounds_the_compile(tmp_path, still_works):
    model = Wide().eval()
    x = torch.randn(2, 1024)
    with pytest.raises(ral_torch.CompileError) as info:
        ral_torch.compile(model, x, cache_dir=str(tmp_path), max_memory="1M")
    assert "bytes" in str(info.value) and "Wide" in str(info.value)
    compiled = ral_torch.compile(model, x, cache_dir=str(tmp_path), max_memory=1 << 30)
    assert torch.allclose(compiled(x), model(x), rtol=1e-4, atol=1e-4)
    for bad in (-5, "4 G", "", True, 1.5):
        with pytest.raises(ValueError, match="max_memory"):
            ral_torch.compile(model, x, cache_dir=str(tmp_path), max_memory=bad)
    with pytest.raises(ral_torch.CompileError, match="max-memory"):
        ral_torch.compile(model, x, cache_dir=str(tmp_path), max_memory="lots")
    still_works()
