"""ral_torch.compile on real PyTorch modules: exported to ONNX, compiled in process by
libral_compiler.so, and compared with eager PyTorch (float32, rtol = atol = 1e-4).

Also: the module cache, the fallback to PyTorch for unsupported operators, torch.jit.script,
pickling and torch.save, errors on bad inputs, and inputs that are views. Skipped when the
package has no compiler library (a build without MLIR).
"""

import io
import pickle
import warnings

import pytest
import torch
from torch import nn

import ral_torch
from ral_torch import _compiler

pytestmark = pytest.mark.skipif(
    not _compiler.available(), reason=f"no compiler library at {_compiler.library_path()}")

TOL = dict(rtol=1e-4, atol=1e-4)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One module cache for this file's compiles (the cache test uses its own)."""
    return str(tmp_path_factory.mktemp("ral-cache"))


def check(compiled, model, *inputs):
    with torch.no_grad():
        want = model(*inputs)
        got = compiled(*inputs)
    torch.testing.assert_close(got, want, **TOL)


# The models.


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 128)
        self.norm = nn.LayerNorm(128)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(self.act(self.norm(self.fc1(x))))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Linear(16 * 8 * 8, 10)
        # Running statistics other than 0 and 1, so that eval-mode BatchNorm computes something.
        for m in self.features:
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                nn.init.uniform_(m.weight, 0.5, 1.5)
                nn.init.uniform_(m.bias, -0.2, 0.2)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


class DetNet(nn.Module):
    """Two parts the compiler handles around determinants (ONNX Det), which it does not."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(8, 8)

    def forward(self, x):
        h = torch.relu(self.fc1(x)).reshape(-1, 8, 2, 2)
        return torch.tanh(self.fc2(torch.linalg.det(h)))


def transformer():
    return nn.TransformerEncoderLayer(d_model=32, nhead=4, batch_first=True).eval()


# Models against eager PyTorch.


def test_mlp_layernorm_gelu(cache):
    model = MLP().eval()
    x = torch.randn(8, 64)
    compiled = ral_torch.compile(model, (x,), cache_dir=cache)
    assert isinstance(compiled, ral_torch.CompiledModule)
    assert compiled.coverage == 1.0
    check(compiled, model, x)
    check(compiled, model, torch.randn(8, 64) * 10)


def test_cnn_conv_bn_relu_maxpool_linear(cache):
    model = CNN().eval()
    x = torch.randn(2, 3, 32, 32)
    compiled = ral_torch.compile(model, x, cache_dir=cache)
    check(compiled, model, x)
    check(compiled, model, torch.randn(2, 3, 32, 32))


def test_transformer_encoder_layer_dynamic_batch_and_sequence(cache):
    model = transformer()
    compiled = ral_torch.compile(model, (torch.randn(2, 5, 32),), dynamic_dims={0: [0, 1]},
                                 cache_dir=cache)
    for batch, seq in ((2, 5), (1, 1), (1, 7), (3, 5), (4, 16), (1, 33)):
        check(compiled, model, torch.randn(batch, seq, 32))


def test_dynamic_batch_by_parameter_name(cache):
    model = MLP().eval()
    compiled = ral_torch.compile(model, torch.randn(4, 64), dynamic_dims={"x": [0]},
                                 cache_dir=cache)
    for batch in (1, 4, 9):
        check(compiled, model, torch.randn(batch, 64))


def test_several_outputs(cache):
    class TwoHeads(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(8, 4), nn.Linear(8, 3)

        def forward(self, x, y):
            return self.a(x), torch.sigmoid(self.b(y))

    model = TwoHeads().eval()
    x, y = torch.randn(2, 8), torch.randn(5, 8)
    compiled = ral_torch.compile(model, (x, y), cache_dir=cache)
    got = compiled(x, y)
    assert isinstance(got, tuple) and len(got) == 2
    check(compiled, model, x, y)


def test_lstm_topk_cumsum_compile_without_fallback(cache):
    # Recurrent layers, top-k and running sums: every op compiles (no fallback), at several
    # batch and sequence sizes.
    class Scorer(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(8, 16, batch_first=True)
            self.fc = nn.Linear(16, 10)

        def forward(self, x):
            h, _ = self.lstm(x)
            return torch.cumsum(torch.topk(self.fc(h), 3, dim=-1).values, dim=1)

    torch.manual_seed(5)
    model = Scorer().eval()
    compiled = ral_torch.compile(model, (torch.randn(2, 5, 8),), dynamic_dims={0: [0, 1]},
                                 cache_dir=cache)
    assert compiled.coverage == 1.0
    for shape in [(2, 5, 8), (1, 9, 8), (3, 1, 8)]:
        check(compiled, model, torch.randn(*shape))


# Fallback.


def test_unsupported_operator_without_fallback_names_it(cache):
    model = DetNet().eval()
    with pytest.raises(ral_torch.UnsupportedOperatorError) as info:
        ral_torch.compile(model, torch.randn(4, 16), cache_dir=cache)
    error = info.value
    assert isinstance(error, RuntimeError)
    assert "Det" in [op for _, op, _ in error.operators]
    assert "Det" in str(error)
    assert "fallback=True" in str(error)


def test_fallback_keeps_unsupported_operator_in_pytorch(cache):
    model = DetNet().eval()
    x = torch.randn(4, 16)
    with pytest.warns(ral_torch.FallbackWarning, match="det"):
        compiled = ral_torch.compile(model, (x,), fallback=True, cache_dir=cache)
    assert 0.0 < compiled.coverage < 1.0
    assert "det" in compiled.report and "Det" in compiled.report
    check(compiled, model, x)
    check(compiled, model, torch.randn(4, 16))


def test_fallback_with_dynamic_batch(cache):
    model = DetNet().eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ral_torch.FallbackWarning)
        compiled = ral_torch.compile(model, torch.randn(3, 16), dynamic_dims={0: [0]},
                                     fallback=True, cache_dir=cache)
    for batch in (1, 3, 10):
        check(compiled, model, torch.randn(batch, 16))


def test_fallback_without_need_compiles_everything(cache):
    model = MLP().eval()
    compiled = ral_torch.compile(model, torch.randn(2, 64), fallback=True, cache_dir=cache)
    assert compiled.coverage == 1.0
    check(compiled, model, torch.randn(2, 64))


# The module cache.


def test_second_compile_hits_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RAL_CACHE_DIR", str(tmp_path))
    compiles = []
    real = _compiler.compile_file

    def counting(*args, **kwargs):
        compiles.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(_compiler, "compile_file", counting)
    model = MLP().eval()
    x = torch.randn(3, 64)
    first = ral_torch.compile(model, x)
    assert len(compiles) == 1
    assert len(list(tmp_path.glob("*.ralm"))) == 1
    second = ral_torch.compile(model, x)
    assert len(compiles) == 1, "the second compile of the same module was not a cache hit"
    assert "hit" in second.report
    torch.testing.assert_close(second(x), first(x), rtol=0, atol=0)
    # Other weights are another module.
    with torch.no_grad():
        model.fc2.bias.add_(1.0)
    third = ral_torch.compile(model, x)
    assert len(compiles) == 2
    check(third, model, x)
    assert not list(tmp_path.glob(".tmp-*")), "a temporary file was left in the cache"


# Scripting, pickling, saving.


@pytest.fixture(scope="module")
def mlp_pair(cache):
    torch.manual_seed(1)
    model = MLP().eval()
    return model, ral_torch.compile(model, torch.randn(5, 64), cache_dir=cache)


@pytest.fixture(scope="module")
def fallback_pair(cache):
    torch.manual_seed(2)
    model = DetNet().eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ral_torch.FallbackWarning)
        compiled = ral_torch.compile(model, torch.randn(4, 16), fallback=True, cache_dir=cache)
    return model, compiled


@pytest.mark.parametrize("pair", ["mlp_pair", "fallback_pair"])
def test_script(pair, request):
    model, compiled = request.getfixturevalue(pair)
    scripted = torch.jit.script(compiled)
    x = torch.randn(*([5, 64] if pair == "mlp_pair" else [4, 16]))
    check(scripted, model, x)
    # Also as a submodule of a scripted model.

    class Outer(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x) * 2.0

    outer = torch.jit.script(Outer(compiled))
    with torch.no_grad():
        torch.testing.assert_close(outer(x), model(x) * 2.0, **TOL)


@pytest.mark.parametrize("pair", ["mlp_pair", "fallback_pair"])
def test_pickle_and_torch_save(pair, request):
    model, compiled = request.getfixturevalue(pair)
    x = torch.randn(*([5, 64] if pair == "mlp_pair" else [4, 16]))
    copy = pickle.loads(pickle.dumps(compiled))
    check(copy, model, x)
    assert copy.coverage == compiled.coverage and copy.report == compiled.report
    buffer = io.BytesIO()
    torch.save(compiled, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)
    check(loaded, model, x)
    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(compiled), buffer)
    buffer.seek(0)
    check(torch.jit.load(buffer), model, x)


# Bad inputs and views.


def test_wrong_rank_and_dtype_then_correct(mlp_pair):
    model, compiled = mlp_pair
    x = torch.randn(5, 64)
    with pytest.raises(RuntimeError, match="rank"):
        compiled(torch.randn(5, 64, 1))
    check(compiled, model, x)
    with pytest.raises(RuntimeError, match="element type"):
        compiled(x.double())
    check(compiled, model, x)
    with pytest.raises(RuntimeError, match="dimension"):
        compiled(torch.randn(6, 64))  # compiled for batch 5 (static)
    check(compiled, model, x)
    with pytest.raises(TypeError):
        compiled(x, x)
    check(compiled, model, x)


def test_non_contiguous_inputs(mlp_pair):
    model, compiled = mlp_pair
    x = torch.randn(5, 64)
    column_major = x.t().contiguous().t()
    assert not column_major.is_contiguous()
    check(compiled, model, column_major)
    wide = torch.randn(5, 128)
    check(compiled, model, wide[:, ::2])
    check(compiled, model, wide[:, 64:])
    tall = torch.randn(12, 64)
    check(compiled, model, tall[3:8])
    check(compiled, model, tall[::2][:5])
    check(compiled, model, torch.randn(64, 1).expand(64, 5).t())


def test_non_contiguous_inputs_cnn(cache):
    model = CNN().eval()
    x = torch.randn(2, 3, 32, 32)
    compiled = ral_torch.compile(model, x, cache_dir=cache)
    check(compiled, model, x.contiguous(memory_format=torch.channels_last))
    check(compiled, model, torch.randn(2, 3, 64, 32)[:, :, ::2])


def test_device_without_torch_tensors_is_refused_before_compiling(cache):
    model = nn.Linear(4, 2).eval()
    with pytest.raises(ValueError, match="'vulkan' is not one PyTorch tensors live on"):
        ral_torch.compile(model, (torch.randn(3, 4),), device="vulkan", cache_dir=cache)
