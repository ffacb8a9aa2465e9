#!/usr/bin/python3
"""f32 math computed inline (ral-compile --inline-f32-math) against libm calls.

For exp, log, tanh and erf over 2^20 floats (one elementwise loop each) and the softmax example over
256x4096, each module is compiled twice for the same target — every candidate op inline, and
every one by libm (expf, logf, tanhf, erff) — and both run with ral-run --benchmark, alternately, in
the same script. Reported: the best latency of each and libm / inline (> 1: inline is faster),
for --mcpu=generic (SSE2 only, the default target) and --mcpu=native.

  /usr/bin/python3 benchmarks/inline_math.py [--build build] [--runs 3] [--iterations 100]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ELEMENTWISE = """#id = affine_map<(i) -> (i)>
func.func @main(%x: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %y = memref.alloc(%n) : memref<?xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = math.OP %a : f32
    linalg.yield %r : f32
  }
  return %y : memref<?xf32>
}
"""


def best_latency(ral_run, module, inputs, iterations):
    out = subprocess.run([ral_run, module] + ["--input=@" + i for i in inputs] +
                         ["--benchmark=%d" % iterations], check=True, capture_output=True,
                         text=True).stdout
    return float(re.search(r"min ([0-9.]+)", out).group(1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--iterations", type=int, default=100)
    args = p.parse_args()
    ral_compile = os.path.join(args.build, "compiler_passes", "ral-compile")
    ral_run = os.path.join(args.build, "plugins", "standalone", "ral-run")
    if not os.path.exists(ral_compile):
        sys.exit("no %s: build with the MLIR compiler first" % ral_compile)
    work = tempfile.mkdtemp(prefix="ral_inline_math_")
    rng = np.random.default_rng(0)
    vector = os.path.join(work, "x.npy")
    np.save(vector, rng.uniform(0.01, 8, 1 << 20).astype(np.float32))
    matrix = os.path.join(work, "m.npy")
    np.save(matrix, rng.standard_normal((256, 4096)).astype(np.float32))
    cases = []
    for op in ("exp", "log", "tanh", "erf"):
        source = os.path.join(work, op + ".mlir")
        with open(source, "w") as f:
            f.write(ELEMENTWISE.replace("OP", op))
        cases.append(("%s 2^20" % op, source, [vector]))
    cases.append(("softmax 256x4096", os.path.join(ROOT, "examples", "softmax.mlir"), [matrix]))

    print("%-18s %-8s %12s %12s %8s" % ("case", "mcpu", "libm (us)", "inline (us)", "ratio"))
    for name, source, inputs in cases:
        for cpu in ("generic", "native"):
            modules = {}
            for mode in ("none", "all"):
                modules[mode] = os.path.join(work, "%s_%s_%s.ralm" % (
                    os.path.basename(source), cpu, mode))
                subprocess.run([ral_compile, source, "--mcpu=" + cpu,
                                "--inline-f32-math=" + mode, "-o", modules[mode]], check=True)
            best = {"none": float("inf"), "all": float("inf")}
            for _ in range(args.runs):
                for mode in ("none", "all"):
                    best[mode] = min(best[mode], best_latency(ral_run, modules[mode], inputs,
                                                              args.iterations))
            print("%-18s %-8s %12.1f %12.1f %7.2fx" % (name, cpu, best["none"], best["all"],
                                                       best["none"] / best["all"]))


if __name__ == "__main__":
    main()
