#!/usr/bin/env python3
"""End-to-end test of one example model: compile it with ral-compile (import-table and by-name
modes), run it with ral-run on random inputs of several batch sizes, and compare the outputs
with a numpy reference computed here, independently of RAL. A tensor-level example (mlp_tensor,
mlp_tosa, ...) is also compared with its buffer-level twin (mlp, ...), compiled and run on the
same inputs: both must give the same results.

  run_example.py --example mlp --examples-dir examples --ral-compile ... --ral-run ... --work-dir D
"""
import argparse
import os
import subprocess
import sys

import numpy as np


# ---- references ------------------------------------------------------------------------------

def mlp_inputs(rng, batch):
    x = rng.standard_normal((batch, 128), dtype=np.float32)
    w1 = (rng.standard_normal((128, 256), dtype=np.float32) / np.sqrt(128)).astype(np.float32)
    b1 = rng.standard_normal(256, dtype=np.float32)
    w2 = (rng.standard_normal((256, 10), dtype=np.float32) / np.sqrt(256)).astype(np.float32)
    b2 = rng.standard_normal(10, dtype=np.float32)
    return [x, w1, b1, w2, b2]


def mlp_reference(x, w1, b1, w2, b2):
    x, w1, b1, w2, b2 = (a.astype(np.float64) for a in (x, w1, b1, w2, b2))
    h = np.maximum(x @ w1 + b1, 0.0)
    return [h @ w2 + b2]


def softmax_inputs(rng, batch):
    return [rng.standard_normal((batch, 37), dtype=np.float32) * 4]


def softmax_reference(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return [e / e.sum(axis=-1, keepdims=True)]


def attention_inputs(rng, batch):
    s, t = 1 + batch % 6, 2 + batch % 9
    return [rng.standard_normal((batch, s, 64), dtype=np.float32),
            rng.standard_normal((batch, t, 64), dtype=np.float32),
            rng.standard_normal((batch, t, 64), dtype=np.float32)]


def attention_reference(q, k, v):
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    scores = q @ np.swapaxes(k, 1, 2) / 8.0
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    return [p @ v]


def gemm_accumulate_inputs(rng, batch):
    k, n = 1 + batch % 13, 3 + batch % 5
    return [rng.standard_normal((batch, k)), rng.standard_normal((k, n)),
            rng.standard_normal((batch, n))]


def gemm_accumulate_reference(a, b, c):
    return [c + a @ b]


def pad_rows_inputs(rng, batch):
    return [rng.standard_normal((batch, 4), dtype=np.float32)]


def pad_rows_reference(x):
    padded = np.zeros((x.shape[0], 8), dtype=np.float64)
    padded[:, 2:6] = x
    return [padded, 2 * padded[:, :4]]


# name -> (inputs, reference, buffer-level twin or None)
EXAMPLES = {
    "mlp": (mlp_inputs, mlp_reference, None),
    "mlp_tensor": (mlp_inputs, mlp_reference, "mlp"),
    "mlp_tosa": (mlp_inputs, mlp_reference, "mlp"),
    "softmax": (softmax_inputs, softmax_reference, None),
    "softmax_tensor": (softmax_inputs, softmax_reference, "softmax"),
    "attention": (attention_inputs, attention_reference, None),
    "attention_tensor": (attention_inputs, attention_reference, "attention"),
    "gemm_accumulate": (gemm_accumulate_inputs, gemm_accumulate_reference, None),
    "pad_rows": (pad_rows_inputs, pad_rows_reference, None),
}
# Batch 0 gives empty tensors: every loop and kernel must cope with a zero-sized dimension.
BATCHES = [0, 1, 3, 17, 64]


# ---- driver ------------------------------------------------------------------------------------

def run(cmd):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        sys.exit("command failed (%d): %s\n%s" % (result.returncode, " ".join(cmd), result.stdout))
    return result.stdout


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--example", required=True, choices=sorted(EXAMPLES))
    p.add_argument("--examples-dir", required=True)
    p.add_argument("--ral-compile", required=True)
    p.add_argument("--ral-run", required=True)
    p.add_argument("--work-dir", required=True)
    args = p.parse_args()

    make_inputs, reference, twin = EXAMPLES[args.example]
    work = os.path.join(args.work_dir, args.example)
    os.makedirs(work, exist_ok=True)
    modules = {}
    for mode, flags in (("table", []), ("by_name", ["--by-name"])):
        modules[mode] = os.path.join(work, "%s.%s.ralm" % (args.example, mode))
        source = os.path.join(args.examples_dir, args.example + ".mlir")
        run([args.ral_compile, source, "-o", modules[mode]] + flags)
    if twin:
        modules["twin"] = os.path.join(work, "%s.twin.ralm" % twin)
        run([args.ral_compile, os.path.join(args.examples_dir, twin + ".mlir"), "-o",
             modules["twin"]])

    rng = np.random.default_rng(20240229)
    for batch in BATCHES:
        inputs = make_inputs(rng, batch)
        expected = reference(*inputs)
        input_flags = []
        for i, a in enumerate(inputs):
            path = os.path.join(work, "b%d_in%d.npy" % (batch, i))
            np.save(path, a)
            input_flags.append("--input=@" + path)
        outputs = {}
        for mode, module in modules.items():
            out_paths = [os.path.join(work, "b%d_%s_out%d.npy" % (batch, mode, i))
                         for i in range(len(expected))]
            run([args.ral_run, module] + input_flags + ["--output=@" + o for o in out_paths])
            outputs[mode] = [np.load(o) for o in out_paths]
        for i, want in enumerate(expected):
            got = outputs["table"][i]
            if got.shape != want.shape or got.dtype != inputs[0].dtype:
                sys.exit("%s batch %d output %d: got %s %s, want %s %s" %
                         (args.example, batch, i, got.shape, got.dtype, want.shape,
                          inputs[0].dtype))
            if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
                err = np.abs(got - want).max()
                sys.exit("%s batch %d output %d differs from the numpy reference (max abs error "
                         "%g)" % (args.example, batch, i, err))
            # Both calling conventions run the same code on the same inputs.
            if not np.array_equal(got, outputs["by_name"][i]):
                sys.exit("%s batch %d output %d: by-name module differs from import-table module"
                         % (args.example, batch, i))
            # The same computation at buffer level: the same kernels in the same order, so the
            # results agree to the last bits (fusion may only reorder independent elements).
            if twin and not np.allclose(got, outputs["twin"][i], rtol=1e-6, atol=1e-7):
                err = np.abs(got - outputs["twin"][i]).max()
                sys.exit("%s batch %d output %d differs from its buffer-level twin %s (max abs "
                         "error %g)" % (args.example, batch, i, twin, err))
        print("%s batch %d: %d output(s) match the reference (import table and by name%s)" %
              (args.example, batch, len(expected), ", and the buffer-level twin " + twin
               if twin else ""))


if __name__ == "__main__":
    main()
