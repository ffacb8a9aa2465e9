"""Assigning `module` rebinds the eager paths and what torch.jit.script compiles alike; a module
with another number of inputs or outputs, or anything but a RAL module, is refused and the old one
keeps running."""

import gc

import pytest
import torch

from conftest import module_path
import ral_torch


def test_rebinding_reaches_eager_and_scripted_calls():
    m = ral_torch.load(module_path("add_r2"))
    replacement = ral_torch.load(module_path("torch_matmul")).module  # 2 inputs, 1 output too
    m.module = replacement
    a, b = torch.randn(2, 3), torch.randn(3, 4)
    expected = a @ b
    torch.testing.assert_close(m(a, b), expected)
    torch.testing.assert_close(torch.nn.Module.__call__(m, a, b), expected)
    torch.testing.assert_close(m.forward(a, b), expected)
    torch.testing.assert_close(torch.jit.script(m)(a, b), expected)
    assert m.module is replacement and "torch_matmul" in repr(m)


def test_rebinding_keeps_the_new_module_alive():
    m = ral_torch.load(module_path("add_r1"))
    m.module = ral_torch.load(module_path("add_r2_rowmajor")).module  # nothing else holds it
    gc.collect()
    a = torch.randn(3, 2)
    assert torch.equal(m(a.t(), a.t()), 2 * a.t())
    m.strict_zero_copy = True  # the setting is the new module's
    assert m.module.strict_zero_copy()
    with pytest.raises(RuntimeError, match="strict zero-copy is on"):
        m(a.t(), a.t())


def test_incompatible_replacements_are_refused():
    m = ral_torch.load(module_path("add_r2"))
    scripted_before = torch.jit.script(m)
    with pytest.raises(ValueError, match=r"cannot replace module 'add_r2' \(2 inputs, 1 outputs\) "
                       r"with 'alias' \(1 inputs, 2 outputs\).*ral_torch.load"):
        m.module = ral_torch.load(module_path("alias")).module
    with pytest.raises(TypeError, match="torch.classes.ral.Module .*not RalModule_add_r2"):
        m.module = ral_torch.load(module_path("add_r2"))  # the nn.Module, not its custom class
    with pytest.raises(TypeError, match="not NoneType"):
        m.module = None
    with pytest.raises(AttributeError, match="cannot be deleted"):
        del m.module
    a = torch.randn(2, 3)
    assert torch.equal(m(a, a), a + a) and m.module.name() == "add_r2"
    assert torch.equal(torch.jit.script(m)(a, a), a + a)
    assert torch.equal(scripted_before(a, a), a + a)


def test_hooks_survive_rebinding():
    m = ral_torch.load(module_path("add_r2"))
    m.register_forward_hook(lambda mod, inputs, out: out + 1)
    m.module = ral_torch.load(module_path("add_r2_rowmajor")).module
    a = torch.randn(2, 3)
    assert torch.equal(m(a, a), a + a + 1)
