"""RAL modules are inference-only: under grad mode an input that requires grad is an error that
says how to call the module, on the eager fast path and in TorchScript; under no_grad and
inference_mode the module runs."""

import pytest
import torch

from conftest import check_recovers

MESSAGE = (
    r"input {} \(.*\) requires grad, but RAL modules are inference-only .*torch.no_grad\(\).*"
    r"torch.inference_mode\(\).*x.detach\(\)"
)


class Model(torch.nn.Module):
    """A model whose parameter goes into the RAL module: the common way to meet this."""

    def __init__(self, ral):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(2, 3))
        self.ral = ral

    def forward(self, x):
        return self.ral(x, self.weight)


def test_requires_grad_under_grad_mode_is_an_error_on_every_path(load):
    m = load("add_r2")
    a = torch.randn(2, 3, requires_grad=True)
    b = torch.randn(2, 3)
    scripted = torch.jit.script(m)
    for call in (
        lambda x, y: m(x, y),
        lambda x, y: torch.nn.Module.__call__(m, x, y),
        lambda x, y: m.module.forward([x, y]),
        lambda x, y: scripted(x, y),
    ):
        with pytest.raises(RuntimeError, match=MESSAGE.format(0)):
            call(a, b)
        with pytest.raises(RuntimeError, match=MESSAGE.format(1)):
            call(b, a)
    # A result with requires_grad from torch (it has a grad_fn) is refused too.
    with pytest.raises(RuntimeError, match=MESSAGE.format(0)):
        m(a * 2, b)
    check_recovers(m)


def test_no_grad_inference_mode_and_detach_run(load):
    m = load("add_r2")
    a = torch.randn(2, 3, requires_grad=True)
    b = torch.randn(2, 3)
    expected = a.detach() + b
    scripted = torch.jit.script(m)
    with torch.no_grad():
        assert torch.equal(m(a, b), expected)
        assert torch.equal(scripted(a, b), expected)
        assert torch.equal(m.module.forward([a, b])[0], expected)
    with torch.inference_mode():
        out = m(a, b)
        assert torch.equal(out, expected) and out.is_inference()
        assert torch.equal(scripted(a, b), expected)
    assert torch.equal(m(a.detach(), b), expected)


def test_a_model_with_parameters(load):
    model = Model(load("add_r2"))
    x = torch.randn(2, 3)
    with pytest.raises(RuntimeError, match=MESSAGE.format(1)):
        model(x)
    scripted = torch.jit.script(model)
    with pytest.raises(RuntimeError, match=MESSAGE.format(1)):
        scripted(x)
    with torch.no_grad():
        assert torch.equal(model(x), x + 1)
        assert torch.equal(scripted(x), x + 1)
    model.requires_grad_(False)
    assert torch.equal(model(x), x + 1)


def test_grad_mode_off_in_another_thread_does_not_leak(load):
    # Grad mode is per thread: the check reads the calling thread's.
    import threading

    m = load("add_r2")
    a = torch.randn(2, 3, requires_grad=True)
    errors = []

    def call():
        try:
            m(a, a)
        except RuntimeError as e:
            errors.append(str(e))

    with torch.no_grad():
        t = threading.Thread(target=call)
        t.start()
        t.join()
    assert len(errors) == 1 and "requires grad" in errors[0]
