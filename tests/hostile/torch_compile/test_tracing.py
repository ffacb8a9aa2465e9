"""What torch.onnx.export's tracer cannot capture: each kind is refused with a TracingError that
quotes the warning and its source line (without fallback), and runs correctly with fallback=True
(the untraceable part stays in PyTorch). Models that trace faithfully still compile, and a
compiled module that differs from eager PyTorch on a second input is refused even when the tracer
said nothing."""

import logging
import random
import warnings

import pytest
import torch
from torch import nn

import ral_torch


# Python control flow and values read into Python: the tracer warns.


class DataBranch(nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # the branch
            return torch.relu(x) * 2
        return x - 1


class ShapeBranch(nn.Module):
    def forward(self, x):
        if x.shape[0] > 4:  # the branch
            return x * 2
        return x - 1


class ItemScale(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        h = self.fc(x)
        return torch.tanh(h / h.abs().max().item())  # the branch


class IntOfMax(nn.Module):
    def forward(self, x):
        n = int(x.max())  # the branch
        return x[:, :n] * 2


class ToList(nn.Module):
    def forward(self, x):
        return x + torch.tensor(x.tolist()) * 2  # the branch


class NumpyRoundTrip(nn.Module):
    def forward(self, x):
        return x + torch.from_numpy(x.numpy() ** 2)  # the branch


class LoopOverRows(nn.Module):
    def forward(self, x):
        total = torch.zeros_like(x[0])
        for i in range(len(x)):  # the branch
            total = total + x[i] * (i + 1)
        return total


class Gate(nn.Module):
    def forward(self, h):
        if h.mean() > 0:  # the branch
            return torch.relu(h)
        return torch.sigmoid(h)


class GatedNet(nn.Module):
    """Control flow inside a submodule: with fallback the submodule stays in PyTorch, the linear
    layers around it are compiled."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.gate = Gate()
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(self.gate(self.fc1(x)))


# (model, example input, dynamic dims, inputs to compare with fallback: both sides of the branch)
CASES = {
    "data_branch": (DataBranch, lambda: torch.rand(3, 5) + 0.5, None,
                    lambda: [torch.rand(3, 5) + 0.5, -torch.rand(3, 5) - 0.5]),
    "shape_branch": (ShapeBranch, lambda: torch.randn(3, 5), {0: [0]},
                     lambda: [torch.randn(3, 5), torch.randn(7, 5), torch.randn(1, 5)]),
    "item": (ItemScale, lambda: torch.randn(4, 8), None,
             lambda: [torch.randn(4, 8), torch.randn(4, 8) * 100]),
    "int_of_max": (IntOfMax, lambda: torch.full((2, 6), 3.0), None,
                   lambda: [torch.full((2, 6), 3.0), torch.full((2, 6), 5.0)]),
    "tolist": (ToList, lambda: torch.randn(3, 4), None,
               lambda: [torch.randn(3, 4), torch.randn(3, 4)]),
    "numpy": (NumpyRoundTrip, lambda: torch.randn(3, 4), None,
              lambda: [torch.randn(3, 4), torch.randn(3, 4)]),
    "loop_over_rows": (LoopOverRows, lambda: torch.randn(3, 4), {0: [0]},
                       lambda: [torch.randn(3, 4), torch.randn(6, 4), torch.randn(1, 4)]),
    "submodule_branch": (GatedNet, lambda: torch.randn(5, 8), None,
                         lambda: [torch.randn(5, 8), torch.randn(5, 8) - 50,
                                  torch.randn(5, 8) + 50]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_refused_without_fallback(case, cache, still_works):
    cls, example, dynamic, _ = CASES[case]
    model = cls().eval()
    with pytest.raises(ral_torch.TracingError) as info:
        ral_torch.compile(model, example(), dynamic_dims=dynamic, cache_dir=cache)
    error = info.value
    message = str(error)
    assert isinstance(error, ral_torch.CompileError) and isinstance(error, RuntimeError)
    assert cls.__name__ in message
    assert "might cause the trace to be incorrect" in message or "trace" in message
    # The warning's place: this file, the line marked "the branch", quoted.
    assert error.warnings, message
    filename, lineno, source, _ = error.warnings[0]
    assert filename == __file__ and "the branch" in source, error.warnings
    assert f"{__file__}:{lineno}" in message and source in message
    assert "torch.where" in message and "fallback=True" in message
    still_works()


@pytest.mark.parametrize("case", sorted(CASES))
def test_fallback_gives_eager_results(case, cache, check, still_works):
    cls, example, dynamic, others = CASES[case]
    model = cls().eval()
    with pytest.warns(ral_torch.FallbackWarning):
        compiled = ral_torch.compile(model, example(), dynamic_dims=dynamic, fallback=True,
                                     cache_dir=cache)
    assert compiled.coverage < 1.0
    for x in others():
        check(compiled, model, x)
    still_works()


def test_fallback_compiles_around_an_untraceable_submodule(cache, check):
    model = GatedNet().eval()
    with pytest.warns(ral_torch.FallbackWarning):
        compiled = ral_torch.compile(model, torch.randn(5, 8), fallback=True, cache_dir=cache)
    assert 0.0 < compiled.coverage < 1.0, compiled.report
    assert "module gate" in compiled.report and "fc1" not in compiled.report.split("kept")[1]
    for shift in (-50.0, 0.0, 50.0):
        check(compiled, model, torch.randn(5, 8) + shift)


def test_fallback_keeps_item_in_pytorch_and_compiles_the_rest(cache, check):
    model = ItemScale().eval()
    with pytest.warns(ral_torch.FallbackWarning, match="item"):
        compiled = ral_torch.compile(model, torch.randn(4, 8), fallback=True, cache_dir=cache)
    assert 0.0 < compiled.coverage < 1.0, compiled.report
    check(compiled, model, torch.randn(4, 8) * 1000)


# No warning, but not the same computation: the second input catches it.


class TracesDifferently(nn.Module):
    def forward(self, x):
        if torch.jit.is_tracing():
            return x * 2
        return x * 3


class FixedSlice(nn.Module):
    def forward(self, x):
        rows = 3 if torch.jit.is_tracing() else x.shape[0]
        return x[:rows] * 2


class FixedReshape(nn.Module):
    def forward(self, x):
        rows = 3 if torch.jit.is_tracing() else x.shape[0]
        return x.reshape(rows, -1) * 2


def test_other_values_differ_is_refused(cache, still_works):
    with pytest.raises(ral_torch.TracingError) as info:
        ral_torch.compile(TracesDifferently(), torch.randn(3, 4), cache_dir=cache)
    message = str(info.value)
    assert "TracesDifferently" in message
    assert "differs from eager PyTorch on another input" in message
    assert "output 0" in message and "max error" in message
    assert "Likely causes" in message and "fallback=True" in message
    still_works()


def test_a_size_fixed_by_tracing_is_refused(cache, still_works):
    with pytest.raises(ral_torch.TracingError, match="differs from eager PyTorch") as info:
        ral_torch.compile(FixedSlice(), torch.randn(3, 4), dynamic_dims={0: [0]},
                          cache_dir=cache)
    message = str(info.value)
    assert "dynamic dim 1 larger" in message
    assert "output 0 has shape (3, 4), eager PyTorch (4, 4)" in message
    still_works()


class PairsTracedDifferently(nn.Module):
    def forward(self, x):
        pairs = x.reshape(-1, 2, 4).sum(1)  # the batch must be even
        return pairs * (2 if torch.jit.is_tracing() else 3)


def test_second_input_takes_a_size_the_model_accepts(cache, still_works):
    with pytest.raises(ral_torch.TracingError, match="every dynamic dim 2 larger"):
        ral_torch.compile(PairsTracedDifferently(), torch.randn(4, 4), dynamic_dims={0: [0]},
                          cache_dir=cache)
    still_works()


def test_compiled_failing_where_eager_works_is_refused(cache, still_works):
    with pytest.raises(ral_torch.TracingError, match="fails where eager PyTorch does not"):
        ral_torch.compile(FixedReshape(), torch.randn(3, 4), dynamic_dims={0: [0]},
                          cache_dir=cache)
    still_works()


def test_fallback_compiles_the_path_torch_fx_sees(cache, check):
    # torch.fx traces TracesDifferently's eager path: its compiled graph is right.
    model = TracesDifferently()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ral_torch.FallbackWarning)
        compiled = ral_torch.compile(model, torch.randn(3, 4), fallback=True, cache_dir=cache)
    check(compiled, model, torch.randn(3, 4))


class Sneaky(nn.Module):
    def forward(self, h):
        if h.dim() == 2:  # torch.fx cannot branch on a proxy; tracing reads a Python int
            return h * (2 if torch.jit.is_tracing() else 3)
        return h


class SneakyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 6)
        self.sneaky = Sneaky()
        self.fc2 = nn.Linear(6, 2)

    def forward(self, x):
        return self.fc2(self.sneaky(self.fc1(x)))


def test_fallback_checks_each_compiled_part(cache, check):
    # No warning anywhere: the whole module is refused by the comparison, and with fallback the
    # part holding `sneaky` compiles but differs from eager PyTorch: halved until `sneaky` alone
    # stays in PyTorch and the linear layers are compiled.
    model = SneakyNet().eval()
    with pytest.raises(ral_torch.TracingError, match="differs from eager PyTorch"):
        ral_torch.compile(model, torch.randn(4, 6), cache_dir=cache)
    with pytest.warns(ral_torch.FallbackWarning):
        compiled = ral_torch.compile(model, torch.randn(4, 6), fallback=True, cache_dir=cache)
    assert "compiled, but differs from eager PyTorch on another input" in compiled.report
    assert "module sneaky" in compiled.report
    assert compiled.coverage == pytest.approx(2 / 3), compiled.report
    check(compiled, model, torch.randn(4, 6))


def test_nondeterministic_eager_skips_the_check_with_a_note(cache, caplog, check):
    class PythonRandom(nn.Module):
        def forward(self, x):
            return x * random.uniform(0.5, 1.5)

    with caplog.at_level(logging.WARNING, logger="ral_torch"):
        ral_torch.compile(PythonRandom(), torch.randn(2, 3), cache_dir=cache)
    assert "different results for the same input twice" in caplog.text


def test_integer_inputs_keep_valid_indices(cache, check):
    class Embed(nn.Module):
        def __init__(self):
            super().__init__()
            self.table = nn.Embedding(10, 4)

        def forward(self, ids, scale):
            return self.table(ids) * scale

    model = Embed().eval()
    ids = torch.tensor([[1, 9, 3], [0, 2, 8]])
    compiled = ral_torch.compile(model, (ids, torch.rand(2, 3, 1)),
                                 dynamic_dims={0: [0, 1], 1: [0, 1]}, cache_dir=cache)
    check(compiled, model, torch.tensor([[4, 5, 6, 7]]), torch.rand(1, 4, 1))


# Models that trace faithfully still compile (no false refusals).


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.norm = nn.LayerNorm(64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(nn.functional.gelu(self.norm(self.fc1(x))))


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.head = nn.Linear(8 * 4 * 4, 5)
        self.bn.running_mean.uniform_(-0.5, 0.5)
        self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        h = nn.functional.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)
        return self.head(h.view(h.size(0), -1))  # a size read as a traced value: dynamic


def test_mlp_compiles(cache, check):
    model = MLP().eval()
    compiled = ral_torch.compile(model, torch.randn(4, 32), dynamic_dims={0: [0]},
                                 cache_dir=cache)
    assert compiled.coverage == 1.0
    for batch in (1, 4, 7):
        check(compiled, model, torch.randn(batch, 32))


def test_conv_net_compiles(cache, check):
    model = ConvNet().eval()
    compiled = ral_torch.compile(model, torch.randn(2, 3, 8, 8), dynamic_dims={0: [0]},
                                 cache_dir=cache)
    for batch in (1, 2, 5):
        check(compiled, model, torch.randn(batch, 3, 8, 8))


def test_transformer_layer_with_dynamic_batch_and_sequence_compiles(cache, check):
    model = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32,
                                       batch_first=True).eval()
    compiled = ral_torch.compile(model, torch.randn(2, 5, 16), dynamic_dims={0: [0, 1]},
                                 cache_dir=cache)
    assert compiled.coverage == 1.0
    for batch, seq in ((2, 5), (1, 1), (3, 9)):
        check(compiled, model, torch.randn(batch, seq, 16))
