"""Shared fixtures for the ral_torch.compile hostile tests: one module cache for the models that
are compiled again and again (most compiles after the first are hits), a small model whose compile
and call must work after every failure, and a count of the compiler's runs."""

import pytest
import torch
from torch import nn

import ral_torch
from ral_torch import _compiler

collect_ignore = []
if not _compiler.available():
    collect_ignore = ["test_tracing.py", "test_state.py", "test_cache.py", "test_errors.py"]

TOL = dict(rtol=1e-4, atol=1e-4)


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return torch.tanh(self.fc(x))


@pytest.fixture(scope="session")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("ral-cache"))


@pytest.fixture(scope="session")
def small():
    torch.manual_seed(123)
    return Small().eval()


@pytest.fixture
def still_works(cache, small):
    """Call after a failure: a compile and a call still give the right answer."""
    def check():
        x = torch.randn(3, 6)
        compiled = ral_torch.compile(small, x, cache_dir=cache)
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), small(x), **TOL)
    return check


@pytest.fixture
def compiler_runs(monkeypatch):
    """A list that grows by one each time the compiler compiles a whole module."""
    runs = []
    real = _compiler.compile_or_raise

    def counting(*args, **kwargs):
        runs.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(_compiler, "compile_or_raise", counting)
    return runs


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


@pytest.fixture
def check():
    """check(compiled, model, *inputs): the compiled module gives eager PyTorch's results."""
    def compare(compiled, model, *inputs):
        with torch.no_grad():
            want = model(*inputs)
            got = compiled(*inputs)
        torch.testing.assert_close(got, want, **TOL)
    return compare
