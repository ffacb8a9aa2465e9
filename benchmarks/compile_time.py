#!/usr/bin/python3
"""Wall time of ral-compile for each example, import-table and by-name modes, and how it splits
between the MLIR pipeline (--emit=mlir: parse, RAL passes, lowering to the LLVM dialect) and the
rest (translation, LLVM O3, object emission, link). Medians of --runs runs after one warm-up.

  /usr/bin/python3 benchmarks/compile_time.py [--build build] [--runs 7] [--json out.json]
                                              [--baseline earlier.json]

With --baseline (a --json file written by another build, e.g. before a compiler upgrade), each
row also prints the ratio baseline / this build (> 1: this build compiles faster).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = ["examples/mlp.mlir", "examples/softmax.mlir", "examples/attention.mlir",
            "compiler_passes/test/e2e/gemm_accumulate.mlir", "examples/mlp_tensor.mlir",
            "examples/softmax_tensor.mlir", "examples/attention_tensor.mlir",
            "examples/mlp_tosa.mlir"]


def timed(cmd, runs):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)  # warm-up: page cache, ld.so
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--json")
    p.add_argument("--baseline")
    args = p.parse_args()
    compiler = os.path.join(args.build, "compiler_passes", "ral-compile")
    baseline = {}
    if args.baseline:
        with open(args.baseline) as f:
            baseline = json.load(f)

    results = {}
    header = "%-32s %-8s %10s %12s %8s" % ("example", "mode", "total (s)", "MLIR part (s)",
                                            "size")
    if baseline:
        header += " %18s" % "baseline / this"
    print(header)
    with tempfile.TemporaryDirectory() as tmp:
        for example in EXAMPLES:
            source = os.path.join(ROOT, example)
            if not os.path.exists(source):
                continue
            for mode, flags in (("table", []), ("by-name", ["--by-name"])):
                out = os.path.join(tmp, "m.ralm")
                total = timed([compiler, source, "-o", out] + flags, args.runs)
                size = os.path.getsize(out)
                mlir = timed([compiler, source, "--emit=mlir", "-o", os.path.join(tmp, "m.mlir")]
                             + flags, args.runs)
                key = "%s %s" % (os.path.basename(example), mode)
                results[key] = total
                line = "%-32s %-8s %10.3f %12.3f %8d" % (os.path.basename(example), mode, total,
                                                         mlir, size)
                if key in baseline:
                    line += " %17.2fx" % (baseline[key] / total)
                print(line, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
