"""TorchScript: the module inside torch.jit.script, saved with torch.jit.save and loaded in a fresh
process (which only imports ral_torch to register the custom class)."""

import os
import subprocess
import sys
from typing import Tuple

import torch

from conftest import module_path
import ral_torch


class Model(torch.nn.Module):
    """A scripted model around two RAL modules: (a + b) @ w, and alias of the result's column."""

    def __init__(self):
        super().__init__()
        self.add = ral_torch.load(module_path("add_r2"))
        self.matmul = ral_torch.load(module_path("torch_matmul"))
        self.alias = ral_torch.load(module_path("alias"))

    def forward(self, a: torch.Tensor, b: torch.Tensor, w: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        y = self.matmul(self.add(a, b), w)
        same, every_second = self.alias(y[:, 0].contiguous())
        return torch.relu(y), every_second + same[0]


def expected(a, b, w):
    y = (a + b) @ w
    col = y[:, 0]
    return torch.relu(y), col[::2] + col[0]


def test_script_matches_eager():
    model = Model()
    scripted = torch.jit.script(model)
    a, b, w = torch.randn(5, 3), torch.randn(5, 3), torch.randn(3, 4)
    for got in (model(a, b, w), scripted(a, b, w)):
        for g, e in zip(got, expected(a, b, w)):
            torch.testing.assert_close(g, e)


def test_script_module_directly():
    m = torch.jit.script(ral_torch.load(module_path("add_r1")))
    a, b = torch.randn(4), torch.randn(4)
    assert torch.equal(m(a, b), a + b)


def test_save_and_load_in_a_new_process(tmp_path):
    scripted = torch.jit.script(Model())
    path = str(tmp_path / "model.pt")
    torch.jit.save(scripted, path)
    a, b, w = torch.randn(6, 3), torch.randn(6, 3), torch.randn(3, 2)
    inputs = str(tmp_path / "inputs.pt")
    torch.save((a, b, w), inputs)
    outputs = str(tmp_path / "outputs.pt")
    # The module files are gone for the new process: the saved model carries them.
    code = (
        "import sys, torch, ral_torch\n"
        "m = torch.jit.load(sys.argv[1])\n"
        "a, b, w = torch.load(sys.argv[2])\n"
        "torch.save(m(a, b, w), sys.argv[3])\n"
    )
    env = dict(os.environ, RAL_TEST_MODULE_DIR="/nonexistent")
    subprocess.run([sys.executable, "-c", code, path, inputs, outputs], check=True, env=env, cwd=str(tmp_path))
    got = torch.load(outputs)
    for g, e in zip(got, scripted(a, b, w)):
        assert torch.equal(g, e)


def test_custom_class_pickles_through_jit_save(tmp_path):
    class Holder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = torch.classes.ral.Module(module_path("add_r1"))

        def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            return self.m.forward([a, b])[0]

    path = str(tmp_path / "holder.pt")
    torch.jit.save(torch.jit.script(Holder()), path)
    loaded = torch.jit.load(path)
    a, b = torch.randn(3), torch.randn(3)
    assert torch.equal(loaded(a, b), a + b)
    assert loaded.m.input_signature() == ["a:?xf32,strided<[?]>", "b:?xf32,strided<[?]>"]


def test_eager_pickle_round_trip(tmp_path):
    m = ral_torch.load(module_path("add_r2"))
    path = str(tmp_path / "eager.pt")
    torch.save(m, path)
    # A whole module is a full pickle, not weights: torch >= 2.6 loads only weights by default.
    loaded = torch.load(path, weights_only=False)
    a, b = torch.randn(2, 2), torch.randn(2, 2)
    assert torch.equal(loaded(a, b), a + b)
