#!/usr/bin/python3
"""Compiled kernels (ral-compile: loops fused and outlined, workgroups on the CPU driver's pool)
against PyTorch eager and memcpy, in one process, at 1 and 2 threads. RAL runs through its C
API (mlp_vs_torch.RalModel); modules are compiled for --mcpu=native. Reported per case: the
best latency of each side and baseline / RAL (> 1: RAL is faster).

  softmax     examples/softmax.mlir, 256x4096 f32         vs torch.softmax(x, -1)
  ln_gelu     examples/layernorm_gelu.mlir, 256x1024 f32  vs x + gelu(layer_norm(x))  (eager)
  elementwise y = 2x + 1 over 64 MiB of f32               vs memmove of the same 64 MiB
  launch      one tiny kernel vs the same loop compiled without kernels: the cost of a launch

  /usr/bin/python3 benchmarks/kernels_vs_torch.py [--build build] [--threads 1 2]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlp_vs_torch import RalModel, per_call_us  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ELEMENTWISE = """#id = affine_map<(i) -> (i)>
func.func @main(%x: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %two = arith.constant 2.0 : f32
  %one = arith.constant 1.0 : f32
  %n = memref.dim %x, %c0 : memref<?xf32>
  %y = memref.alloc(%n) : memref<?xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %two : f32
    %r = arith.addf %m, %one : f32
    linalg.yield %r : f32
  }
  return %y : memref<?xf32>
}
"""


def compile_module(build, source, out, *flags):
    subprocess.run([os.path.join(build, "compiler_passes", "ral-compile"), source, "-o", out,
                    "--mcpu=native", *flags], check=True)


def model(build, module, threads, inputs):
    os.environ["RAL_CPU_THREADS"] = str(threads)  # read when the context creates its driver
    m = RalModel(os.path.join(build, "libral.so"), module)
    m.bind(inputs)
    return m


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--repeats", type=int, default=7)
    args = p.parse_args()
    import torch
    import torch.nn.functional as F

    tmp = tempfile.mkdtemp(prefix="ral_kernels_bench_")
    src = os.path.join(tmp, "elementwise.mlir")
    with open(src, "w") as f:
        f.write(ELEMENTWISE)
    modules = {"softmax": os.path.join(tmp, "softmax.ralm"),
               "ln_gelu": os.path.join(tmp, "ln_gelu.ralm"),
               "elementwise": os.path.join(tmp, "elementwise.ralm"),
               "loop": os.path.join(tmp, "loop.ralm")}
    compile_module(args.build, os.path.join(ROOT, "examples", "softmax.mlir"), modules["softmax"])
    compile_module(args.build, os.path.join(ROOT, "examples", "layernorm_gelu.mlir"),
                   modules["ln_gelu"])
    compile_module(args.build, src, modules["elementwise"])
    compile_module(args.build, src, modules["loop"], "--kernels=false")

    rng = np.random.default_rng(1)
    x_sm = rng.standard_normal((256, 4096), dtype=np.float32)
    x_ln = rng.standard_normal((256, 1024), dtype=np.float32)
    gamma = rng.standard_normal(1024, dtype=np.float32)
    beta = rng.standard_normal(1024, dtype=np.float32)
    big = rng.standard_normal(16 << 20, dtype=np.float32)  # 64 MiB
    big_out = np.empty_like(big)
    tiny = rng.standard_normal(16, dtype=np.float32)
    t_sm, t_ln, t_g, t_b = (torch.from_numpy(a) for a in (x_sm, x_ln, gamma, beta))

    print("%-12s %7s %12s %12s %8s" % ("case", "threads", "RAL us", "base us", "ratio"))
    for threads in args.threads:
        torch.set_num_threads(threads)
        sm = model(args.build, modules["softmax"], threads, [x_sm])
        ln = model(args.build, modules["ln_gelu"], threads, [x_ln, gamma, beta])
        ew = model(args.build, modules["elementwise"], threads, [big])
        k = model(args.build, modules["elementwise"], threads, [tiny])
        loop = model(args.build, modules["loop"], threads, [tiny])
        with torch.inference_mode():
            ref = torch.softmax(t_sm.double(), -1).float().numpy()
            if not np.allclose(sm.run_copy(), ref, rtol=1e-5, atol=1e-7):
                sys.exit("softmax differs from torch")
            want = (t_ln + F.gelu(F.layer_norm(t_ln, (1024,), t_g, t_b, eps=1e-5))).numpy()
            if not np.allclose(ln.run_copy(), want, rtol=1e-4, atol=1e-4):
                sys.exit("layernorm+gelu differs from torch")
            cases = [
                ("softmax", sm.run, lambda: torch.softmax(t_sm, -1), 200),
                ("ln_gelu", ln.run,
                 lambda: t_ln + F.gelu(F.layer_norm(t_ln, (1024,), t_g, t_b, eps=1e-5)), 200),
                ("elementwise", ew.run,
                 lambda: np.copyto(big_out, big, casting="no"), 10),
                ("launch", k.run, loop.run, 20000),
            ]
            for name, ral_fn, base_fn, iterations in cases:
                ral_us, base_us = per_call_us([ral_fn, base_fn], iterations, args.repeats)
                print("%-12s %7d %12.2f %12.2f %7.2fx" % (name, threads, ral_us, base_us,
                                                          base_us / ral_us))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
