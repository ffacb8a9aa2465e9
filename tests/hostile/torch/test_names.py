"""Input names from the module file become forward()'s parameter names only when they are plain,
unambiguous identifiers; any other name gets a positional one. The module loads, runs and scripts
whatever its names are."""

import inspect
import os
import subprocess

import pytest
import torch

from conftest import module_path
import ral_torch
from ral_torch import _module


@pytest.mark.parametrize(
    "name, parameters",
    [
        ("hostile_torch_names_reserved", ["_x0", "x0"]),  # `torch` is forward()'s own name
        ("hostile_torch_names_keywords", ["x0", "x1"]),  # `class`, and a dunder name
        ("hostile_torch_names_nfkc", ["x0", "x"]),  # fullwidth x folds into x
    ],
)
def test_hostile_names(name, parameters):
    m = ral_torch.load(module_path(name))
    assert list(inspect.signature(m.forward).parameters) == parameters
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    assert torch.equal(m(a, b), a + b)
    assert torch.equal(m(**dict(zip(parameters, (a, b)))), a + b)
    assert torch.equal(torch.jit.script(m)(a, b), a + b)


def test_parameter_names_never_collide():
    cases = [
        ["x1:?xf32", "?xf32", "x0:?xf32"],
        ["self:f32", "out:f32", "Tensor:f32", "List:f32", "Tuple:f32"],
        ["a:f32", "a:f32", "_x1:f32", "x1:f32"],
        ["é:f32", "e\u0301:f32", "ﬁ:f32", "fi:f32"],
        ["None:f32", "lambda:f32", "1x:f32", ":f32", "a b:f32", "__init__:f32"],
    ]
    for signatures in cases:
        names = _module._parameter_names(signatures)
        assert len(set(names)) == len(names), names
        source = _module._forward_source(names, 1)
        compile(source, "<test>", "exec")  # valid Python: no duplicate or reserved parameter
        for n in names:
            assert n.isascii() and n.isidentifier() and n not in _module._RESERVED_NAMES


def test_class_names_are_plain():
    assert _module._class_suffix("add-r2/é") == "add_r2__"
    assert _module._class_suffix("") == "module"
    assert len(_module._class_suffix("x" * 10000)) == 64


def test_names_that_are_not_utf8(tmp_path):
    # A module file's names are bytes: Python reads every string torch hands it as UTF-8, so
    # invalid bytes come back escaped (never a UnicodeDecodeError in place of the result or the
    # module's error message).
    # Packed with those names (a file edited in place would fail its manifest checksum).
    library = module_path("hostile_torch_names_keywords")[: -len(".ralm")] + ".so"
    out = tmp_path / "not_utf8.ralm"
    subprocess.run(
        [os.environ["RAL_PACK"].encode(), b"--host-library=" + library.encode(),
         b"--name=hostile_torch_names_k\xfe\xedwords", b"--input=cl\xffss:?x?xf32",
         b"--input=__x:?x?xf32", b"--output=sum:?x?xf32", b"-o", bytes(out)],
        check=True)
    m = ral_torch.load_bytes(out.read_bytes())
    assert m.module.name() == "hostile_torch_names_k\\xfe\\xedwords"
    assert m.input_signature() == ["cl\\xffss:?x?xf32", "__x:?x?xf32"]
    a = torch.randn(2, 3)
    assert torch.equal(m(a, a), a + a)
    message = r"module 'hostile_torch_names_k\\xfe\\xedwords': typed: the inputs have different"
    with pytest.raises(RuntimeError, match=message):
        m(a, torch.randn(3, 2))
    with pytest.raises(RuntimeError, match=message):
        torch.jit.script(m)(a, torch.randn(3, 2))
    assert "\\xfe\\xed" in repr(m)
