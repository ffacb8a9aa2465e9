"""A module split across ranks inside PyTorch: its collectives go through torch.distributed (Gloo).

Two ranks started with torch.multiprocessing each load the tensor-parallel MLP
(examples/tensor_parallel_mlp.mlir) with ral_torch and run their shard; the outputs must equal the
unsplit MLP computed by torch in float64, through the direct call, submit() and a non-contiguous
input. Then ranks that disagree (different batches) both fail naming both calls, and a module
calling a collective without torch.distributed fails with an error saying so.
"""

import os
import socket

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import ral_torch
from conftest import module_path

HIDDEN = 256
pytestmark = pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(),
                                reason="this torch has no Gloo process group")


def _weights():
    g = torch.Generator().manual_seed(3)
    return (torch.randn(128, HIDDEN, generator=g) * 0.1, torch.randn(HIDDEN, generator=g),
            torch.randn(HIDDEN, 10, generator=g) * 0.1, torch.randn(10, generator=g))


def _rank(rank, world, port, batches, results):
    os.environ.pop("RAL_WORLD_SIZE", None)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    try:
        m = ral_torch.load(module_path("compiled_tensor_parallel_mlp"))
        w1, b1, w2, b2 = _weights()
        k = HIDDEN // world
        shard = (w1[:, rank * k:(rank + 1) * k].contiguous(), b1[rank * k:(rank + 1) * k],
                 w2[rank * k:(rank + 1) * k].contiguous(), b2)
        out = {}
        for i, batch in enumerate(batches[rank]):
            x = torch.randn(batch, 128, generator=torch.Generator().manual_seed(i))
            try:
                out[f"call{i}"] = m(x, *shard)
                out[f"submit{i}"] = m.submit(x, *shard).wait()
                out[f"strided{i}"] = m(x.t().contiguous().t(), *shard)
            except RuntimeError as e:
                out[f"error{i}"] = str(e)
                break
        # As numpy arrays: a tensor would travel as a file descriptor that the parent fetches
        # from this process, which may have exited by then.
        results.put((rank, {k: v.numpy() if isinstance(v, torch.Tensor) else v
                            for k, v in out.items()}))
    finally:
        dist.destroy_process_group()


def _run_ranks(world, batches):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    procs = [ctx.Process(target=_rank, args=(r, world, port, batches, results))
             for r in range(world)]
    for p in procs:
        p.start()
    got = dict(results.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    return got


def test_tensor_parallel_mlp_matches_the_unsplit_model():
    got = _run_ranks(2, {0: [5, 1, 0], 1: [5, 1, 0]})
    w1, b1, w2, b2 = (t.double() for t in _weights())
    for i, batch in enumerate([5, 1, 0]):
        x = torch.randn(batch, 128, generator=torch.Generator().manual_seed(i)).double()
        want = torch.relu(x @ w1 + b1) @ w2 + b2
        for rank in range(2):
            for how in ("call", "submit", "strided"):
                y = torch.from_numpy(got[rank][f"{how}{i}"])
                assert y.shape == (batch, 10)
                torch.testing.assert_close(y.double(), want, rtol=1e-5, atol=1e-5)


def test_ranks_that_disagree_fail_naming_both_calls():
    got = _run_ranks(2, {0: [3], 1: [4]})
    for rank in range(2):
        message = got[rank]["error0"]
        assert "the ranks disagree" in message
        assert "all_reduce of 30 f32 (sum)" in message and "all_reduce of 40 f32 (sum)" in message


def test_a_collective_without_torch_distributed_says_so():
    assert not dist.is_initialized()
    m = ral_torch.load(module_path("compiled_tensor_parallel_mlp"))
    w1, b1, w2, b2 = _weights()
    for _ in range(2):  # and says so again: nothing is remembered
        with pytest.raises(RuntimeError, match="torch.distributed is not initialized"):
            m(torch.randn(2, 128), w1, b1, w2, b2)


def test_a_group_with_only_nccl_says_how_to_add_a_cpu_backend(monkeypatch):
    # An NCCL-only group cannot be made without a GPU; what RAL sees of one is its backend name.
    monkeypatch.setattr(dist, "is_initialized", lambda: True)
    monkeypatch.setattr(dist, "get_backend", lambda group=None: "nccl")
    m = ral_torch.load(module_path("compiled_tensor_parallel_mlp"))
    w1, b1, w2, b2 = _weights()
    with pytest.raises(RuntimeError, match="backend='cpu:gloo,cuda:nccl'"):
        m(torch.randn(2, 128), w1, b1, w2, b2)
