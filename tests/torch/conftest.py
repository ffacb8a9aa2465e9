"""Shared fixtures for the ral_torch tests.

CTest runs them with PYTHONPATH at the built ral_torch package and RAL_TEST_MODULE_DIR at the
directory of the test modules (.ralm files built from tests/modules and tests/torch/modules).
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
    """load(name) -> the ral_torch module for test module `name`."""
    return lambda name: ral_torch.load(module_path(name))


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
