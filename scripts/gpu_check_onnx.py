#!/usr/bin/env python3
"""Packs ONNX models compiled for a GPU device, with their inputs and ONNX's reference outputs, so
that a GPU machine checks the importer's operators on the device with ral-run alone:

  gpu_check_onnx.py --ral-compile PATH --pack-dir DIR [--device cuda] [--filter REGEX]
  DIR/run.sh                       # there: RAL_RUN=path/to/ral-run (default ../bin/ral-run)

It compiles the node tests of Debian's libonnx-testdata whose names match --filter (recurrent
layers, sampling, quantized and unsigned operators by default) and a TopK with a constant K (the
node tests give K as an input, which a GPU module cannot read on the host); models the device
cannot compile are listed as skipped, with the compiler's reason. run.sh runs each packed model
with --expected_output (rtol 1e-3, atol 1e-6) and prints "onnx on <device>: N passed, M failed".
Needs /usr/bin/python3 with numpy and onnx (python3-onnx).
"""

import argparse
import glob
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DEFAULT_FILTER = (r"^test_(lstm|gru|simple_rnn|rnn_seq|gridsample|lrn|shrink|eyelike|celu|"
                  r"quantizelinear|dequantizelinear|dynamicquantizelinear|[a-z]+_uint8|"
                  r"bitshift_.*uint8|mvn|einsum|scan9_sum)")

RUN_SH = """#!/usr/bin/env bash
# Runs every packed ONNX model on the device with ral-run against ONNX's reference outputs.
cd "$(dirname "$0")"
RAL_RUN=${RAL_RUN:-../bin/ral-run}
pass=0; fail=0
while read -r name args; do
  if out=$("$RAL_RUN" "$name.ralm" --device=DEVICE $args --rtol=1e-3 --atol=1e-6 2>&1); then
    pass=$((pass+1))
  else
    fail=$((fail+1)); echo "FAIL $name: $(echo "$out" | tail -2)"
  fi
done < cases.txt
echo "onnx on DEVICE: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
"""


def constant_k_topk(work):
    """A TopK along a middle axis with K an initializer, its input and expected outputs."""
    graph = helper.make_graph(
        [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1, largest=0)], "topk",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 37, 3])],
        [helper.make_tensor_value_info("v", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("i", TensorProto.INT64, None)],
        initializer=[numpy_helper.from_array(np.array([5], np.int64), "k")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    path = os.path.join(work, "model.onnx")
    onnx.save(model, path)
    x = np.random.default_rng(0).standard_normal((4, 37, 3)).astype(np.float32)
    order = np.argsort(x, axis=1, kind="stable")[:, :5]
    return path, [x], [np.take_along_axis(x, order, 1), order.astype(np.int64)]


def node_test(directory):
    """(model, inputs, outputs), or None when an input or output is not a tensor (a sequence or
    an optional: ral-run reads and writes tensors only)."""
    def read(kind):
        files = sorted(glob.glob(os.path.join(directory, "test_data_set_0", kind + "_*.pb")))
        return [numpy_helper.to_array(onnx.load_tensor(f)) for f in files]
    try:
        return os.path.join(directory, "model.onnx"), read("input"), read("output")
    except (ValueError, TypeError):
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ral-compile", required=True)
    parser.add_argument("--pack-dir", required=True)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--filter", default=DEFAULT_FILTER)
    parser.add_argument("--data", default="/usr/share/libonnx-testdata/data/node")
    args = parser.parse_args()
    os.makedirs(args.pack_dir, exist_ok=True)
    cases = [(name, node_test(os.path.join(args.data, name)))
             for name in sorted(os.listdir(args.data)) if re.search(args.filter, name)]
    cases.append(("topk_constant_k", constant_k_topk(args.pack_dir)))
    lines, skipped = [], 0
    for name, case in cases:
        if case is None:
            skipped += 1
            print(f"gpu_check_onnx: skipped {name}: its inputs or outputs are not all tensors")
            continue
        model, inputs, outputs = case
        ralm = os.path.join(args.pack_dir, name + ".ralm")
        r = subprocess.run([args.ral_compile, model, f"--device={args.device}", "-o", ralm],
                           capture_output=True, text=True)
        if r.returncode != 0:
            skipped += 1
            print(f"gpu_check_onnx: skipped {name}: {r.stderr.strip().splitlines()[-1][:160]}")
            continue
        flags = []
        for kind, arrays in (("input", inputs), ("expected_output", outputs)):
            for i, a in enumerate(arrays):
                file = f"{name}.{kind}{i}.npy"
                np.save(os.path.join(args.pack_dir, file), a)
                flags.append(f"--{kind}=@{file}")
        lines.append(name + " " + " ".join(flags))
    if os.path.exists(os.path.join(args.pack_dir, "model.onnx")):
        os.remove(os.path.join(args.pack_dir, "model.onnx"))
    with open(os.path.join(args.pack_dir, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    run = os.path.join(args.pack_dir, "run.sh")
    with open(run, "w") as f:
        f.write(RUN_SH.replace("DEVICE", args.device))
    os.chmod(run, 0o755)
    print(f"packed {len(lines)} ONNX models for {args.device} into {args.pack_dir} "
          f"({skipped} the device cannot compile)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
