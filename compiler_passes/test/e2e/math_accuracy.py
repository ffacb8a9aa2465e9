#!/usr/bin/env python3
"""Accuracy of compiled math ops, f16/bf16/f32/f64, against float64 references computed here.

For each float type T a module is generated and compiled with ral-compile: it takes x and y as
f64, rounds them to T (arith.truncf), applies each math op in T and widens each result to f64
(exact). ral-run runs it on a grid with 0, -0, the smallest subnormal and normal, the largest
finite value, +-inf, NaN, sweeps of both signs and 110,000 random values of each sign (random
f32 bit patterns, so every exponent, and dense samples of [0, 30]). The error of every result is measured in
units in the last place of T at the reference (numpy/math on the T-rounded inputs, in float64);
NaN must give NaN and a reference that rounds to +-inf must give exactly that. Bounds: 1 ulp for
f16/bf16 (computed in f32, rounded once), 2 ulp for f32, 4 ulp for f64 (whose float64 reference
carries its own rounding). Prints the worst error per op and type, once with the f32 ops that
can be inlined computed inline (--inline-f32-math=all) and once as ral-compile chooses by
default (auto: today the same six ops; checked separately so a change of the default is too).
(=none is not checked: glibc's tanhf is off by 2.04 ulp at 0.2343805.)

  math_accuracy.py --ral-compile ... --ral-run ... --work-dir D
"""
import argparse
import math
import os
import subprocess
import sys

import numpy as np

# name: (precision in bits including the implicit one, minimum normal exponent, max finite)
FORMATS = {
    "f16": (11, -14, 65504.0),
    "bf16": (8, -126, 3.3895313892515355e38),
    "f32": (24, -126, 3.4028234663852886e38),
    "f64": (53, -1022, sys.float_info.max),
}
BOUNDS = {"f16": 1.0, "bf16": 1.0, "f32": 2.0, "f64": 4.0}

erf = np.vectorize(math.erf, otypes=[np.float64])

# op: (MLIR op, arity, float64 reference)
OPS = {
    "exp": ("math.exp", 1, np.exp),
    "log": ("math.log", 1, np.log),
    "log1p": ("math.log1p", 1, np.log1p),
    "expm1": ("math.expm1", 1, np.expm1),
    "sqrt": ("math.sqrt", 1, np.sqrt),
    "rsqrt": ("math.rsqrt", 1, lambda x: 1.0 / np.sqrt(x)),
    "sin": ("math.sin", 1, np.sin),
    "cos": ("math.cos", 1, np.cos),
    "atan": ("math.atan", 1, np.arctan),
    "tanh": ("math.tanh", 1, np.tanh),
    "erf": ("math.erf", 1, erf),
    "abs": ("math.absf", 1, np.abs),
    "ceil": ("math.ceil", 1, np.ceil),
    "floor": ("math.floor", 1, np.floor),
    "pow": ("math.powf", 2, np.power),
}


def round_to(x, fmt):
    """x (float64) rounded to nearest-even in the format, as float64."""
    p, emin, largest = FORMATS[fmt]
    if fmt == "f64":
        return x.copy()
    out = np.array(x, dtype=np.float64)
    finite = np.isfinite(out) & (out != 0)
    _, e = np.frexp(out[finite])  # |x| = m * 2^e, m in [0.5, 1)
    scale = np.exp2(np.maximum(e - 1, emin) - (p - 1))
    r = np.round(out[finite] / scale) * scale  # np.round: half to even
    r[np.abs(r) > largest] = np.inf * np.sign(r[np.abs(r) > largest])
    out[finite] = r
    return out


def ulp(v, fmt):
    p, emin, _ = FORMATS[fmt]
    a = np.abs(v)
    e = np.full(a.shape, emin, dtype=np.int64)
    nz = (a != 0) & np.isfinite(a)
    e[nz] = np.maximum(np.frexp(a[nz])[1] - 1, emin)
    return np.exp2(e - (p - 1))


def grid(fmt):
    p, emin, largest = FORMATS[fmt]
    special = [0.0, -0.0, 2.0 ** (emin - p + 1), 2.0 ** emin, largest, np.inf, -np.inf, np.nan,
               1e-10, 1e-5, 0.5, 1.0, 2.0, 10.0, 100.0, 1e4, 1e10]
    sweep = np.concatenate([np.logspace(-8, 4, 400), np.linspace(0, 12, 241)])
    # Dense random samples: every exponent of the format (random bit patterns of f32, which
    # round to the narrower formats), and the range where the inlined ops do their work.
    rng = np.random.default_rng(12345)
    bits = rng.integers(0, 0x7F800000, size=60000, dtype=np.int64).astype(np.uint32)
    spread = bits.view(np.float32).astype(np.float64)
    dense = np.concatenate([spread, rng.uniform(0, 30, 30000), rng.uniform(0, 1, 10000),
                            np.exp(rng.uniform(-100, 88, 10000))])
    values = np.concatenate([special, sweep, dense])
    x = np.concatenate([values, -values])
    # The second operand of pow: small exponents of both signs, integers among them.
    y = np.resize(np.array([2.0, 0.5, -1.0, 3.0, -0.5, 1.5, 0.0, -2.5, 7.0, 1.0 / 3]), x.size)
    return round_to(x, fmt), round_to(y, fmt)


def program(fmt):
    names = list(OPS)
    n = len(names)
    memref = "memref<?xf64>"
    maps = ", ".join(["affine_map<(i) -> (i)>"] * (n + 2))
    args = ", ".join(["%%o%d: f64" % k for k in range(n)])
    lines = ["func.func @main(%%x: %s, %%y: %s) -> (%s) {" % (memref, memref,
                                                              ", ".join([memref] * n)),
             "  %c0 = arith.constant 0 : index",
             "  %%n = memref.dim %%x, %%c0 : %s" % memref]
    for k in range(n):
        lines.append("  %%r%d = memref.alloc(%%n) : %s" % (k, memref))
    outs = ", ".join("%%r%d" % k for k in range(n))
    lines.append("  linalg.generic {indexing_maps = [%s], iterator_types = [\"parallel\"]}" % maps)
    lines.append("      ins(%%x, %%y : %s, %s) outs(%s : %s) {" % (memref, memref, outs,
                                                             ", ".join([memref] * n)))
    lines.append("  ^bb0(%%a: f64, %%b: f64, %s):" % args)
    xa, xb = "%a", "%b"
    if fmt != "f64":
        lines += ["    %%xa = arith.truncf %%a : f64 to %s" % fmt,
                  "    %%xb = arith.truncf %%b : f64 to %s" % fmt]
        xa, xb = "%xa", "%xb"
    results = []
    for k, name in enumerate(names):
        op, arity, _ = OPS[name]
        operands = "%s, %s" % (xa, xb) if arity == 2 else xa
        lines.append("    %%v%d = %s %s : %s" % (k, op, operands, fmt))
        if fmt == "f64":
            results.append("%%v%d" % k)
        else:
            lines.append("    %%w%d = arith.extf %%v%d : %s to f64" % (k, k, fmt))
            results.append("%%w%d" % k)
    lines.append("    linalg.yield %s : %s" % (", ".join(results), ", ".join(["f64"] * n)))
    lines.append("  }")
    lines.append("  return %s : %s" % (outs, ", ".join([memref] * n)))
    lines.append("}")
    return "\n".join(lines) + "\n"


def run(cmd):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        sys.exit("command failed (%d): %s\n%s" % (result.returncode, " ".join(cmd), result.stdout))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ral-compile", required=True)
    p.add_argument("--ral-run", required=True)
    p.add_argument("--work-dir", required=True)
    args = p.parse_args()
    work = os.path.join(args.work_dir, "math_accuracy")
    os.makedirs(work, exist_ok=True)

    failures = []
    for mode in ("all", "auto"):
        failures += check(args, work, mode)
    if failures:
        sys.exit("\n".join(["math results outside their bounds:"] + failures))
    print("every result within its bound (%s)" %
          ", ".join("%s %g ulp" % (f, b) for f, b in BOUNDS.items()))


def check(args, work, mode):
    """Compiles with --inline-f32-math=mode, prints the worst errors, returns the failures."""
    failures = []
    print("--inline-f32-math=%s" % mode)
    print("%-6s %s" % ("op", " ".join("%10s" % f for f in FORMATS)) + "   (max error, ulp)")
    worst = {name: {} for name in OPS}
    for fmt in FORMATS:
        source = os.path.join(work, "math_%s.mlir" % fmt)
        with open(source, "w") as f:
            f.write(program(fmt))
        module = os.path.join(work, "math_%s_%s.ralm" % (fmt, mode))
        run([args.ral_compile, source, "--inline-f32-math=" + mode, "-o", module])
        x, y = grid(fmt)
        np.save(os.path.join(work, "x.npy"), x)
        np.save(os.path.join(work, "y.npy"), y)
        outs = [os.path.join(work, "out_%s_%s.npy" % (fmt, name)) for name in OPS]
        run([args.ral_run, module, "--input=@" + os.path.join(work, "x.npy"),
             "--input=@" + os.path.join(work, "y.npy")] + ["--output=@" + o for o in outs])
        with np.errstate(all="ignore"):
            for name, out in zip(OPS, outs):
                _, arity, reference = OPS[name]
                got = np.load(out)
                want = reference(x, y) if arity == 2 else reference(x)
                rounded = round_to(want, fmt)
                bad = np.isnan(want) != np.isnan(got)
                inf = ~np.isnan(want) & np.isinf(rounded)
                bad |= inf & (got != rounded)
                finite = ~np.isnan(want) & ~inf
                bad |= finite & ~np.isfinite(got)
                ok = finite & np.isfinite(got)
                err = np.zeros_like(want)
                err[ok] = np.abs(got[ok] - want[ok]) / ulp(want[ok], fmt)
                bad |= err > BOUNDS[fmt]
                worst[name][fmt] = err.max() if err.size else 0.0
                for i in np.flatnonzero(bad)[:3]:
                    failures.append("%s %s %s: %s(%r%s) = %r, want %r (%.2f ulp, bound %g)" % (
                        mode, fmt, name, name, x[i], ", %r" % y[i] if arity == 2 else "",
                        got[i], want[i], err[i], BOUNDS[fmt]))
    for name in OPS:
        print("%-6s %s" % (name, " ".join("%10.3f" % worst[name][f] for f in FORMATS)))
    return failures


if __name__ == "__main__":
    main()
