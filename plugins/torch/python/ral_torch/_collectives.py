"""Collectives of RAL modules inside PyTorch: torch.distributed carries them.

A module that calls ral_all_reduce (and the other collective kernels, docs/collectives.md) runs
inside PyTorch on the process group ral_torch is given (set_process_group), else torch's default
group (torch.distributed.init_process_group). The torch context's communicator
(plugins/torch/python_communicator.cc) calls _handle with the module's buffers as CPU tensors.

Before each collective the ranks compare what they are about to do (kind, dtype, count,
reduction or root, how many collectives so far) with one small all_gather: ranks that disagree
fail with a ValueError naming every rank's call instead of handing a mismatched message to the
backend (Gloo ends the process on one). After any failure the group's collectives fail at once
with the first error: the ranks no longer agree on which message is which.
"""

import threading

import torch
import torch.distributed as dist

_KINDS = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all", "send"]
_OPS = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX]
_OP_NAMES = ["sum", "prod", "min", "max", "avg"]
_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int32, torch.int64]
_DTYPE_NAMES = ["f16", "bf16", "f32", "f64", "i32", "i64"]

_lock = threading.Lock()
_group = None  # None: torch's default group
_calls = 0
_broken = None


def set_process_group(group=None):
    """Runs RAL modules' collectives on `group` (None: torch's default process group).

    Every rank must call it with its own handle of the same group, before its modules' first
    collective. Resets a group broken by an earlier failure.
    """
    global _group, _calls, _broken
    with _lock:
        _group, _calls, _broken = group, 0, None


def _describe(desc):
    kind = _KINDS[desc[1]] if 0 <= desc[1] < len(_KINDS) else "?"
    dtype = _DTYPE_NAMES[desc[2]] if 0 <= desc[2] < len(_DTYPE_NAMES) else "?"
    text = f"{kind} of {desc[3]} {dtype}"
    if kind in ("all_reduce", "reduce_scatter"):
        text += f" ({_OP_NAMES[desc[4]] if 0 <= desc[4] < len(_OP_NAMES) else '?'})"
    elif kind == "broadcast":
        text += f" from root {desc[4]}"
    return text + f" as collective #{desc[0]}"


def _agree(kind, tensor, count, arg):
    """Raises ValueError unless every rank is about to make the same collective."""
    global _calls
    _calls += 1
    mine = torch.tensor([_calls, _KINDS.index(kind), _DTYPES.index(tensor.dtype), count, arg],
                        dtype=torch.int64)
    size = dist.get_world_size(_group)
    everyone = [torch.empty_like(mine) for _ in range(size)]
    dist.all_gather(everyone, mine, group=_group)
    rank = dist.get_rank(_group)
    for other, theirs in enumerate(everyone):
        if not torch.equal(theirs, mine):
            raise ValueError(f"the ranks disagree: rank {other} calls {_describe(theirs.tolist())}, "
                             f"rank {rank} calls {_describe(mine.tolist())}")


def _run(kind, a, b, arg, tag):
    group = _group
    if kind == "all_reduce":
        _agree(kind, b, b.numel(), arg)
        if a.data_ptr() != b.data_ptr():
            b.copy_(a)
        dist.all_reduce(b, op=_OPS[arg] if arg < 4 else dist.ReduceOp.SUM, group=group)
        if arg == 4:  # avg: Gloo has no average
            b.div_(dist.get_world_size(group))
    elif kind == "all_gather":
        _agree(kind, a, a.numel(), 0)
        dist.all_gather(list(b.chunk(dist.get_world_size(group))), a, group=group)
    elif kind == "reduce_scatter":
        # Gloo has no reduce_scatter in torch 1.x: reduce all, keep this rank's block.
        _agree(kind, b, b.numel(), arg)
        whole = a.clone()
        dist.all_reduce(whole, op=_OPS[arg] if arg < 4 else dist.ReduceOp.SUM, group=group)
        b.copy_(whole.chunk(dist.get_world_size(group))[dist.get_rank(group)])
        if arg == 4:
            b.div_(dist.get_world_size(group))
    elif kind == "broadcast":
        _agree(kind, b, b.numel(), arg)
        dist.broadcast(b, src=_global_rank(arg), group=group)
    elif kind == "all_to_all":
        _agree(kind, a, a.numel(), 0)
        dist.all_to_all_single(b, a, group=group)
    elif kind == "send":
        # The description first, so the receiver can name a mismatch before the data.
        desc = torch.tensor([0, _KINDS.index("send"), _DTYPES.index(a.dtype), a.numel(), tag],
                            dtype=torch.int64)
        dist.send(desc, dst=_global_rank(arg), group=group, tag=tag)
        dist.send(a, dst=_global_rank(arg), group=group, tag=tag)
    elif kind == "recv":
        want = [0, _KINDS.index("send"), _DTYPES.index(b.dtype), b.numel(), tag]
        desc = torch.empty(5, dtype=torch.int64)
        dist.recv(desc, src=_global_rank(arg), group=group, tag=tag)
        if desc.tolist() != want:
            raise ValueError(f"recv of {_describe(want)} from rank {arg} met rank {arg}'s "
                             f"{_describe(desc.tolist())}")
        dist.recv(b, src=_global_rank(arg), group=group, tag=tag)
    else:
        raise ValueError(f"unknown collective {kind!r}")


def _global_rank(rank):
    if _group is None:
        return rank
    return dist.distributed_c10d._get_global_rank(_group, rank)


def _handle(kind, a, b, arg, tag):
    """Called by the torch context's communicator (python_communicator.cc)."""
    global _broken
    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError(
            "torch.distributed is not initialized, and this module calls collectives: call "
            "torch.distributed.init_process_group in every rank first")
    if str(dist.get_backend(_group)) == "nccl":
        raise RuntimeError(
            "the process group's only backend is NCCL, which cannot carry the CPU tensors RAL "
            "hands it: initialize it with backend='cpu:gloo,cuda:nccl' (a CUDA module's data "
            "then still moves through NCCL, docs/collectives.md)")
    if kind in ("rank", "size"):
        return dist.get_rank(_group) if kind == "rank" else dist.get_world_size(_group)
    with _lock:
        if _broken is not None:
            raise _broken
        if kind in ("send", "recv"):
            size = dist.get_world_size(_group)
            if not 0 <= arg < size or arg == dist.get_rank(_group):
                raise ValueError(f"peer {arg} is not another rank of the {size}")
        elif kind == "broadcast" and not 0 <= arg < dist.get_world_size(_group):
            raise ValueError(f"broadcast root {arg} is not a rank of the "
                             f"{dist.get_world_size(_group)}")
        try:
            _run(kind, a, b, arg, tag)
        except Exception as e:  # noqa: BLE001  (any failure breaks the group's order)
            _broken = type(e)(f"{e} (rank {dist.get_rank(_group)} of "
                              f"{dist.get_world_size(_group)}; collectives of this group fail "
                              "from now on: the ranks no longer agree on the order)")
            raise _broken from e
