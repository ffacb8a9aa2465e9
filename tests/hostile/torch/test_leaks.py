"""Loading modules leaves nothing behind: modules with the same name and forward() share one
generated class, and a class and its linecache entry go away with its last module."""

import gc
import linecache
import tracemalloc

import torch

from conftest import module_path
import ral_torch
from ral_torch import _module


def generated_classes():
    gc.collect()
    return [c for c in _module.RalModule.__subclasses__()]


def test_two_thousand_loads_do_not_grow():
    path = module_path("add_r2")
    with open(path, "rb") as f:
        data = f.read()
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    for _ in range(20):  # warm up torch's and Python's own caches
        ral_torch.load(path)(a, b)
        ral_torch.load_bytes(data)(a, b)
    gc.collect()
    lines, classes = len(linecache.cache), len(generated_classes())
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(1000):
            ral_torch.load(path)(a, b)
            ral_torch.load_bytes(data)(a, b)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(linecache.cache) == lines
    assert len(generated_classes()) == classes
    # Before: ~0.8 KB per load (1.6 MB here). Torch's own free lists keep a few KB.
    assert grown < 64 * 1024, grown


def test_modules_of_one_signature_share_a_class():
    first = ral_torch.load(module_path("add_r2"))
    second = ral_torch.load(module_path("add_r2"))
    assert type(first) is type(second)
    other = ral_torch.load(module_path("add_r1"))
    assert type(other) is not type(first)
    # Scripting both (TorchScript keeps one compiled type per class) still runs each module.
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    assert torch.equal(torch.jit.script(first)(a, b), a + b)
    assert torch.equal(torch.jit.script(second)(a, b), a + b)


def test_class_and_source_go_with_the_last_module():
    # A module no other test here loads (torch.jit.script keeps the classes it compiled).
    m = ral_torch.load(module_path("torch_add_i16"))
    filename = type(m).forward.__code__.co_filename
    assert filename in linecache.cache  # for TorchScript, which reads the source through it
    second = ral_torch.load(module_path("torch_add_i16"))
    del m
    gc.collect()
    assert filename in linecache.cache
    x = torch.ones(2, 2, dtype=torch.int16)
    assert torch.equal(second(x, x), 2 * x)
    del second
    gc.collect()
    assert filename not in linecache.cache
    assert not any(c.__name__ == "RalModule_torch_add_i16" for c in generated_classes())
