"""Shared fixtures for the torch host's hostile-input tests.

CTest runs them with PYTHONPATH at the built ral_torch package and RAL_TEST_MODULE_DIR at the
directory of the test modules (tests/modules, tests/torch/modules and the ones here).
"""

import os

import pytest
import torch

import ral_torch

MODULE_DIR = os.environ.get("RAL_TEST_MODULE_DIR", "")


def module_path(name: str) -> str:
    path = os.path.join(MODULE_DIR, name + ".ralm")
    if not os.path.exists(path):
        raise FileNotFoundError(
            "test module {} not found; set RAL_TEST_MODULE_DIR (CTest does)".format(path)
        )
    return path


@pytest.fixture
def load():
    """load(name, **kwargs) -> the ral_torch module for test module `name`."""
    return lambda name, **kwargs: ral_torch.load(module_path(name), **kwargs)


def check_recovers(m):
    """The module still gives the right answer (for the 2-D add modules)."""
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    assert torch.equal(m(a, b), a + b)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
