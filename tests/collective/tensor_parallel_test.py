#!/usr/bin/python3
"""A module split across ranks, end to end: examples/tensor_parallel_mlp.mlir compiled by
ral-compile and run by ral-run on 1, 2 and 4 ranks (processes on loopback), against the
single-process examples/mlp.mlir and a float64 numpy reference; then what a job sees when a rank
dies, never arrives or disagrees, with every process ending by itself.

  tensor_parallel_test.py <ral-compile> <ral-run> <examples dir> <work dir> [--vulkan]

With --vulkan the module also runs compiled for Vulkan (its buffers in device memory, staged
through host memory for the collective) on 2 ranks.
"""
import os
import signal
import socket
import subprocess
import sys
import time

import numpy as np

RAL_COMPILE, RAL_RUN, EXAMPLES, WORK = sys.argv[1:5]
VULKAN = "--vulkan" in sys.argv[5:]
os.makedirs(WORK, exist_ok=True)
failures = []
HIDDEN = 256


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("RAL_") and k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR",
                                                     "MASTER_PORT")}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run(args, timeout=120, **env):
    return subprocess.run([RAL_RUN] + args, capture_output=True, text=True, timeout=timeout,
                          env=clean_env(**env))


def path(name):
    return os.path.join(WORK, name)


def compile_example(name, *flags):
    out = path(name + "".join(f.replace("--device=", "_") for f in flags) + ".ralm")
    subprocess.run([RAL_COMPILE, os.path.join(EXAMPLES, name + ".mlir"), "-o", out, *flags],
                   check=True)
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


tp = compile_example("tensor_parallel_mlp")
mlp = compile_example("mlp")
tp_vulkan = compile_example("tensor_parallel_mlp", "--device=vulkan") if VULKAN else None

rng = np.random.default_rng(7)
w1 = (rng.standard_normal((128, HIDDEN)) * 0.1).astype(np.float32)
b1 = rng.standard_normal(HIDDEN).astype(np.float32)
w2 = (rng.standard_normal((HIDDEN, 10)) * 0.1).astype(np.float32)
b2 = rng.standard_normal(10).astype(np.float32)
for name, value in (("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2)):
    np.save(path(name + ".npy"), value)


_sharded = set()


def shard_inputs(n):
    """The --input arguments of an n-rank run: column slices of w1/b1, row slices of w2 (written
    once: ranks already running read them)."""
    k = HIDDEN // n
    for r in range(n if n not in _sharded else 0):
        np.save(path(f"w1.{n}.{r}.npy"), np.ascontiguousarray(w1[:, r * k:(r + 1) * k]))
        np.save(path(f"b1.{n}.{r}.npy"), b1[r * k:(r + 1) * k])
        np.save(path(f"w2.{n}.{r}.npy"), np.ascontiguousarray(w2[r * k:(r + 1) * k]))
    _sharded.add(n)
    return [f"--input=@{path(f'{name}.{n}.{{rank}}.npy')}" for name in ("w1", "b1", "w2")]


# Every rank's output equals the unsplit model's, at batch 5, 1 and 0.
for batch in (5, 1, 0):
    x = rng.standard_normal((batch, 128)).astype(np.float32)
    np.save(path(f"x{batch}.npy"), x)
    xd = x.astype(np.float64)
    ref = np.maximum(xd @ w1 + b1, 0) @ w2 + b2
    single = run([mlp, f"--input=@{path(f'x{batch}.npy')}", f"--input=@{path('w1.npy')}",
                  f"--input=@{path('b1.npy')}", f"--input=@{path('w2.npy')}",
                  f"--input=@{path('b2.npy')}", f"--output=@{path('single.npy')}"])
    check(single.returncode == 0, f"mlp batch {batch}: {single.stderr}")
    whole = np.load(path("single.npy"))
    for n in (1, 2, 4):
        args = [tp, f"--world-size={n}", f"--input=@{path(f'x{batch}.npy')}"] + \
            shard_inputs(n) + [f"--input=@{path('b2.npy')}",
                               f"--output=@{path(f'y.{n}.{{rank}}.npy')}"]
        r = run(args)
        check(r.returncode == 0, f"{n} ranks, batch {batch}: exit {r.returncode}: {r.stderr}")
        for rank in range(n):
            if r.returncode != 0:
                break
            y = np.load(path(f"y.{n}.{rank}.npy"))
            check(y.shape == (batch, 10), f"{n} ranks: rank {rank}'s output is {y.shape}")
            check(np.allclose(y, ref, rtol=1e-5, atol=1e-5),
                  f"{n} ranks, batch {batch}: rank {rank} differs from float64 numpy by "
                  f"{np.max(np.abs(y - ref)) if y.size else 0}")
            check(np.allclose(y, whole, rtol=1e-5, atol=1e-5),
                  f"{n} ranks, batch {batch}: rank {rank} differs from mlp.mlir")
        check(all(f"[rank {k}] output 0:" in r.stdout for k in range(n)) or n == 1,
              f"{n} ranks: every rank reports its output: {r.stdout}")
    if VULKAN:
        args = [tp_vulkan, "--world-size=2", f"--input=@{path(f'x{batch}.npy')}"] + \
            shard_inputs(2) + [f"--input=@{path('b2.npy')}", f"--output=@{path('yv.{rank}.npy')}"]
        r = run(args)
        check(r.returncode == 0, f"vulkan, 2 ranks, batch {batch}: {r.stderr}")
        for rank in range(2 if r.returncode == 0 else 0):
            y = np.load(path(f"yv.{rank}.npy"))
            check(np.allclose(y, ref, rtol=1e-5, atol=1e-5),
                  f"vulkan, batch {batch}: rank {rank} differs from float64 numpy")

# torchrun's variables, one process per rank started by hand.
port = free_port()
args2 = shard_inputs(2)
procs = []
for rank in range(2):
    rank_args = [a.replace("{rank}", str(rank)) for a in args2]
    procs.append(subprocess.Popen(
        [RAL_RUN, tp, f"--input=@{path('x5.npy')}"] + rank_args +
        [f"--input=@{path('b2.npy')}", f"--output=@{path(f'torchrun.{rank}.npy')}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=clean_env(RANK=rank, WORLD_SIZE=2, MASTER_ADDR="127.0.0.1", MASTER_PORT=port)))
for rank, p in enumerate(procs):
    out, err = p.communicate(timeout=120)
    check(p.returncode == 0, f"torchrun-style rank {rank}: {err}")
check(np.array_equal(np.load(path("torchrun.0.npy")), np.load(path("torchrun.1.npy"))),
      "torchrun-style ranks agree")


def rank_args(n, rank, x="x5.npy"):
    return [tp, f"--input=@{path(x)}"] + [a.replace("{rank}", str(rank)) for a in shard_inputs(n)] \
        + [f"--input=@{path('b2.npy')}"]


# A rank killed in the middle of a stream of collectives: the other fails (exit 1, not a signal)
# long before its timeout, naming the collective.
port = free_port()
procs = [subprocess.Popen([RAL_RUN] + rank_args(2, rank) + ["--benchmark=100000000"],
                          stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True,
                          env=clean_env(RAL_RANK=rank, RAL_WORLD_SIZE=2, RAL_MASTER_PORT=port,
                                        RAL_COLLECTIVE_TIMEOUT=60))
         for rank in range(2)]
time.sleep(2)  # both ranks are in their loop of collectives by now (a run takes milliseconds)
check(procs[0].poll() is None and procs[1].poll() is None, "both ranks are still running")
procs[1].send_signal(signal.SIGKILL)
start = time.monotonic()
try:
    out, err = procs[0].communicate(timeout=90)
except subprocess.TimeoutExpired:  # a hang: fail, and leave no process behind
    procs[0].kill()
    out, err = procs[0].communicate()
    check(False, "a killed peer: rank 0 still ran 90 s later")
waited = time.monotonic() - start
procs[1].wait()
check(procs[0].returncode == 1, f"a killed peer: rank 0 exits with 1, got {procs[0].returncode}")
check("rank 0 of 2" in err and "all_reduce" in err and "failed" in err,
      f"a killed peer: rank 0 names the collective: {err}")
print(f"rank 0 noticed the killed rank after {waited:.2f} s")

# A rank that never arrives: the rendezvous times out (RAL_COLLECTIVE_TIMEOUT=2).
r = run(rank_args(2, 0), RAL_RANK=0, RAL_WORLD_SIZE=2, RAL_MASTER_PORT=free_port(),
        RAL_COLLECTIVE_TIMEOUT=2)
check(r.returncode == 1 and "rendezvous of rank 0 of 2" in r.stderr and
      "RAL_COLLECTIVE_TIMEOUT" in r.stderr, f"a missing rank: {r.returncode} {r.stderr}")

# Ranks that disagree (different batches): every rank fails, none crashes, at least one names
# both calls.
x3 = rng.standard_normal((3, 128)).astype(np.float32)
np.save(path("xm.0.npy"), x3)
np.save(path("xm.1.npy"), np.concatenate([x3, x3]))
args = [tp, "--world-size=2", f"--input=@{path('xm.{rank}.npy')}"] + shard_inputs(2) + \
    [f"--input=@{path('b2.npy')}"]
r = run(args, RAL_COLLECTIVE_TIMEOUT=30)
check(r.returncode == 1, f"disagreeing ranks: exit {r.returncode}")
check("all_reduce of 30 f32 (sum) as collective #1" in r.stderr and
      "all_reduce of 60 f32 (sum) as collective #1" in r.stderr and "signal" not in r.stderr,
      f"disagreeing ranks name both calls and nobody crashes: {r.stderr}")

# A failure on one rank before any collective: the launcher stops the other (it would wait in the
# rendezvous until its timeout) and reports the first failing rank's code.
args = [tp, "--world-size=2", f"--input=@{path('missing.{rank}.npy')}"] + shard_inputs(2) + \
    [f"--input=@{path('b2.npy')}"]
r = run(args)
check(r.returncode == 2 and "missing.0.npy" in r.stderr, f"bad input on every rank: {r.stderr}")

# Without a world size a collective is an error naming the variables, not a one-rank guess.
r = run(rank_args(2, 0))
check(r.returncode == 1 and "RAL_WORLD_SIZE" in r.stderr, f"no world size: {r.stderr}")
r = run([tp, "--world-size=0"])
check(r.returncode == 2 and "--world-size" in r.stderr, f"--world-size=0: {r.stderr}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("tensor-parallel MLP: 1, 2 and 4 ranks match; failures reach every rank")
