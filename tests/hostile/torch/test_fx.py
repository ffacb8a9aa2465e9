"""torch.fx: a model holding a RAL module traces with the module as a leaf (a call_module node), and
the GraphModule gives the model's results; tracing into the module is a clear error."""

import pytest
import torch
import torch.fx

from conftest import module_path
import ral_torch


class LeafTracer(torch.fx.Tracer):
    def is_leaf_module(self, m, qualname):
        return isinstance(m, ral_torch.RalModule) or super().is_leaf_module(m, qualname)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 3)
        self.add = ral_torch.load(module_path("add_r2"))
        self.alias = ral_torch.load(module_path("alias"))

    def forward(self, x, y):
        s = self.add(self.linear(x), y)
        # Indexed, not unpacked: torch 1.13's Proxy.__iter__ misreads Python 3.11 bytecode.
        out = self.alias(s.flatten())
        return torch.relu(out[0]) + 1, out[1] * 2


def trace(model):
    return torch.fx.GraphModule(model, LeafTracer().trace(model))


def test_leaf_trace_gives_the_same_results():
    model = Model().eval()
    gm = trace(model)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_module"]
    assert targets == ["linear", "add", "alias"]
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    with torch.no_grad():
        expected = model(x, y)
        got = gm(x, y)
    for e, g in zip(expected, got):
        assert torch.equal(e, g)
    # The GraphModule runs the same RAL modules, on their fast path.
    assert gm.add is model.add


def test_leaf_trace_with_hooks_and_keyword_arguments():
    model = Model().eval()
    model.add.register_forward_hook(lambda mod, inputs, out: out * 0)
    gm = trace(model)
    with torch.no_grad():
        same, _ = gm(torch.randn(2, 3), torch.randn(2, 3))
    assert torch.equal(same, torch.ones(6))

    class Keywords(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.add = ral_torch.load(module_path("add_r2"))

        def forward(self, x):
            return self.add(a=x, b=x)

    gm = trace(Keywords())
    x = torch.randn(2, 3)
    assert torch.equal(gm(x), x + x)


def test_tracing_into_the_module_is_a_clear_error():
    with pytest.raises(torch.fx.proxy.TraceError, match="torch.fx traced into a RAL module.*leaf"):
        torch.fx.symbolic_trace(Model())
    with pytest.raises(torch.fx.proxy.TraceError, match="traced into a RAL module"):
        torch.fx.symbolic_trace(ral_torch.load(module_path("add_r2")))
    # The modules still run after a failed trace (FX has put nn.Module.__call__ back).
    m = ral_torch.load(module_path("add_r2"))
    a = torch.randn(2, 3)
    assert torch.equal(m(a, a), a + a)
