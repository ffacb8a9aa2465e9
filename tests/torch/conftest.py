"""Shared fixtures for the ral_torch tests.

CTest runs them with PYTHONPATH at the built ral_torch package and RAL_TEST_MODULE_DIR at the
directory of the test modules (.ralm files built from tests/modules and tests/torch/modules).
"""

import os
import threading

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


def assert_same(got, expected, inference=False):
    """got equals expected exactly: values, dtype, shape, strides (and, with `inference`, whether
    each is an inference tensor); tuples element by element."""
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected):
            assert_same(g, e, inference)
    else:
        assert isinstance(got, torch.Tensor)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        assert got.stride() == expected.stride()
        if inference:
            assert got.is_inference() == expected.is_inference()
        assert torch.equal(got, expected)


def run_threads(worker, count=4):
    """Runs worker(t) for t in range(count) on threads of their own and joins them."""
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(count)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
