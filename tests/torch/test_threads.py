"""Several Python threads calling one loaded module at the same time get correct results."""

import torch

from conftest import run_threads


def test_four_threads_thousand_calls_each(load):
    m = load("add_r2")
    scripted = torch.jit.script(m)
    errors = []
    counts = [0] * 4

    def worker(t):
        try:
            g = torch.Generator().manual_seed(t)
            for i in range(1000):
                rows = 1 + (i + t) % 5
                a = torch.randn(rows, 8, generator=g)
                b = torch.randn(8, rows, generator=g).t()
                fn = scripted if i % 2 else m
                if not torch.equal(fn(a, b), a + b):
                    errors.append("thread {} call {}: wrong result".format(t, i))
                    return
                counts[t] += 1
        except Exception as e:  # reported below, with the thread
            errors.append("thread {}: {!r}".format(t, e))

    run_threads(worker)
    assert not errors, errors
    assert counts == [1000] * 4


def test_threads_with_errors_in_between(load):
    m = load("error")
    errors = []

    def worker(t):
        for i in range(500):
            v = (i % 7) - 3
            try:
                out = m(torch.tensor(v)).item()
                if v < 0 or out != v + 1:
                    errors.append("thread {}: {} -> {}".format(t, v, out))
            except RuntimeError as e:
                if v >= 0 or "negative" not in str(e):
                    errors.append("thread {}: {} raised {}".format(t, v, e))

    run_threads(worker)
    assert not errors, errors[:5]
