"""The eager fast path (RalModule.__call__ -> ral_torch._fast.run): the same results and errors as
the TorchScript method, hooks and keyword arguments still honoured through nn.Module.__call__."""


import pytest
import torch

from conftest import assert_same, run_threads
from ral_torch import _module

fast = pytest.importorskip("ral_torch._fast")


def script_path(m, *inputs):
    """The result of the TorchScript custom-class method, shaped as the module returns it."""
    out = m.module.forward(list(inputs))
    return out[0] if len(out) == 1 else tuple(out)


class CountingRunner:
    """Wraps _fast.run to count the calls that reach it (for modules loaded afterwards)."""

    def __init__(self, monkeypatch):
        self.calls = 0
        real = fast.run

        def run(*args):
            self.calls += 1
            return real(*args)

        monkeypatch.setattr(fast, "run", run)


def test_the_extension_is_used(load):
    m = load("add_r2")
    runner = m._fast_path[0]
    assert runner.func is fast.run and runner.args == (m.module.handle(),)


@pytest.mark.parametrize(
    "name,dtype",
    [
        ("torch_add_i8", torch.int8),
        ("torch_add_i32", torch.int32),
        ("torch_add_i64", torch.int64),
        ("torch_add_ui8", torch.uint8),
        ("torch_add_f32", torch.float32),
        ("torch_add_f64", torch.float64),
        ("torch_copy_f16", torch.float16),
        ("torch_copy_bf16", torch.bfloat16),
        ("torch_copy_i1", torch.bool),
    ],
)
def test_dtypes_match_the_script_method(load, name, dtype):
    m = load(name)
    a = (torch.randn(4, 6) * 50).to(dtype)
    b = (torch.randn(6, 4) * 50).to(dtype).t()  # non-contiguous
    expected = script_path(m, a, b)
    assert_same(m(a, b), expected)
    assert_same(fast.run(m.module.handle(), a, b), expected)


def test_non_contiguous_inputs_and_views(load):
    m = load("add_r2")
    base = torch.randn(6, 10)
    for a, b in [
        (base.t(), torch.randn(10, 6)),
        (base[1:5, 2:9], base[0:4, 1:8]),
        (base[::2, ::3], torch.randn(3, 4)),
        (torch.randn(1, 7).expand(5, 7), torch.randn(5, 7)),
    ]:
        assert_same(m(a, b), script_path(m, a, b))
    alias = load("alias")
    x = torch.arange(20.0)[3::2]
    same, every_second = alias(x)
    assert same.data_ptr() == x.data_ptr() and every_second.data_ptr() == x.data_ptr()
    assert_same((same, every_second), script_path(alias, x))


def test_several_outputs_and_scalars(load):
    alias = load("alias")
    x = torch.arange(7.0)
    out = alias(x)
    assert isinstance(out, tuple) and len(out) == 2
    assert_same(out, script_path(alias, x))
    err = load("error")
    assert_same(err(torch.tensor(41)), script_path(err, torch.tensor(41)))
    matmul = load("torch_matmul")
    a, b = torch.randn(33, 17), torch.randn(17, 9)
    assert_same(matmul(a, b), script_path(matmul, a, b))


def test_errors_read_as_the_script_method_and_recover(load):
    m = load("add_r2")
    cases = [
        (torch.randn(2, 3), torch.randn(2, 3, dtype=torch.float64)),
        (torch.randn(2, 3, 4), torch.randn(2, 3)),
        (torch.randn(2, 3), torch.randn(3, 2)),
        (torch.empty(2, 3, device="meta"), torch.randn(2, 3)),
    ]
    for a, b in cases:
        with pytest.raises(RuntimeError) as script_error:
            m.module.forward([a, b])
        with pytest.raises(RuntimeError) as fast_error:
            m(a, b)
        assert str(fast_error.value) == str(script_error.value)
        assert "Exception raised from" not in str(fast_error.value)  # no C++ backtrace
        a, b = torch.randn(2, 3), torch.randn(2, 3)
        assert torch.equal(m(a, b), a + b)
    err = load("error")
    with pytest.raises(RuntimeError, match="error module: the input is negative"):
        err(torch.tensor(-3))
    assert err(torch.tensor(1)).item() == 2
    # Through the runner directly: RAL's own count check.
    with pytest.raises(RuntimeError, match=r"module 'add_r2' takes 2 input\(s\) .*got 3"):
        fast.run(m.module.handle(), *[torch.randn(2, 3)] * 3)


def test_non_tensor_arguments_are_type_errors(load):
    m = load("add_r2")
    with pytest.raises(TypeError, match="input 1 must be a torch.Tensor, not int"):
        m(torch.randn(2, 3), 3)
    with pytest.raises(TypeError, match="input 0 must be a torch.Tensor, not list"):
        m([1.0, 2.0], torch.randn(2))
    with pytest.raises(TypeError, match="handle must be an int"):
        fast.run("not a handle", torch.randn(2, 3), torch.randn(2, 3))
    with pytest.raises(TypeError):
        fast.run()
    # Wrong counts keep forward()'s own messages.
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        m(torch.randn(2, 3))
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    assert torch.equal(m(a, b), a + b)


def test_tensor_subclasses_and_parameters(load):
    m = load("add_r1")
    p = torch.nn.Parameter(torch.randn(4))
    b = torch.randn(4)
    with torch.no_grad():  # a Parameter requires grad; RAL modules are inference-only
        assert torch.equal(m(p, b), p.detach() + b)
    with pytest.raises(RuntimeError, match="requires grad"):
        m(p, b)

    class Sub(torch.Tensor):
        pass

    x = torch.randn(4).as_subclass(Sub)
    assert_same(m(x, b), script_path(m, x, b))


def test_module_hooks_are_honoured(load, monkeypatch):
    counter = CountingRunner(monkeypatch)
    m = load("add_r2")
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    seen = []
    pre = m.register_forward_pre_hook(lambda mod, inputs: (inputs[0] * 2, inputs[1]))
    post = m.register_forward_hook(lambda mod, inputs, out: seen.append(out) or out + 1)
    out = m(a, b)
    assert torch.equal(out, a * 2 + b + 1)
    assert len(seen) == 1
    pre.remove()
    post.remove()
    calls = counter.calls
    called = []
    monkeypatch.setattr(_module, "_module_call", lambda *args, **kw: called.append(1))
    assert torch.equal(m(a, b), a + b)  # straight to the runner again
    assert counter.calls == calls + 1 and len(seen) == 1 and not called


def test_global_hooks_are_honoured(load):
    m = load("add_r2")
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    seen = []
    handle = torch.nn.modules.module.register_module_forward_hook(
        lambda mod, inputs, out: seen.append(type(mod).__name__)
    )
    try:
        assert torch.equal(m(a, b), a + b)
    finally:
        handle.remove()
    assert len(seen) == 1 and seen[0].startswith("RalModule_")
    pre = torch.nn.modules.module.register_module_forward_pre_hook(
        lambda mod, inputs: (inputs[1], inputs[1])
    )
    try:
        assert torch.equal(m(a, b), b + b)
    finally:
        pre.remove()
    assert torch.equal(m(a, b), a + b)


def test_backward_hook_takes_the_module_path(load, monkeypatch):
    m = load("add_r2")
    handle = m.register_full_backward_hook(lambda mod, gin, gout: None)
    called = []
    monkeypatch.setattr(_module, "_module_call", lambda *args, **kw: called.append(1) or "slow")
    assert m(torch.randn(2, 3), torch.randn(2, 3)) == "slow"
    handle.remove()
    assert isinstance(m(torch.randn(2, 3), torch.randn(2, 3)), torch.Tensor)
    assert called == [1]


def test_reassigned_hook_dicts_are_seen(load):
    m = load("add_r2")
    from collections import OrderedDict

    m._forward_hooks = OrderedDict()  # some code clears hooks this way
    m.register_forward_hook(lambda mod, inputs, out: out * 0)
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    assert torch.equal(m(a, b), torch.zeros(2, 3))


def test_keyword_arguments(load):
    m = load("add_r2")
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    assert torch.equal(m(a=a, b=b), a + b)
    assert torch.equal(m(a, b=b), a + b)
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        m(a, c=b)


def test_forward_called_directly(load):
    m = load("alias")
    x = torch.arange(5.0)
    same, every_second = m.forward(x)
    assert torch.equal(same, x) and torch.equal(every_second, x[::2])


def test_reassigned_module_is_what_eager_calls_run(load):
    m = load("add_r1")
    other = load("add_r2")
    m.module = other.module  # same number of inputs and outputs: the fast path follows
    del other
    import gc

    gc.collect()
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    assert torch.equal(m(a, b), a + b)
    assert torch.equal(torch.jit.script(m)(a, b), a + b)


def test_tracing_records_the_script_method(load):
    m = load("add_r1")
    a, b = torch.randn(4), torch.randn(4)

    class Outer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = m

        def forward(self, x, y):
            return self.inner(x, y) * 2

    traced = torch.jit.trace(Outer(), (a, b), check_trace=False)
    c, d = torch.randn(4), torch.randn(4)  # new inputs: the add must be in the graph
    assert torch.equal(traced(c, d), (c + d) * 2)


def test_scripted_model_does_not_use_call(load):
    m = load("add_r2")
    scripted = torch.jit.script(m)
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    assert torch.equal(scripted(a, b), a + b)
    assert not hasattr(scripted, "_fast_path") and not hasattr(scripted, "_run")


def test_four_threads_thousand_calls_through_the_fast_path(load, monkeypatch):
    counter = CountingRunner(monkeypatch)
    m = load("add_r2")
    errors = []

    def worker(t):
        try:
            g = torch.Generator().manual_seed(t)
            for i in range(1000):
                rows = 1 + (i + t) % 5
                a = torch.randn(rows, 8, generator=g)
                b = torch.randn(8, rows, generator=g).t()
                if not torch.equal(m(a, b), a + b):
                    errors.append("thread {} call {}: wrong result".format(t, i))
                    return
        except Exception as e:  # reported below, with the thread
            errors.append("thread {}: {!r}".format(t, e))

    run_threads(worker)
    assert not errors, errors
    assert counter.calls == 4000
