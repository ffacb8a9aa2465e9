#!/usr/bin/env python3
"""Packs torchvision CNNs compiled for a GPU device, with inputs and eager PyTorch's float64
outputs, so that a GPU machine checks real models on the device with ral-run alone:

  gpu_check_models.py --ral-compile PATH --pack-dir DIR [--device cuda] [--models M ...]
  DIR/run.sh                       # there: RAL_RUN=path/to/ral-run (default ../bin/ral-run)

Each model (random weights, no download) is exported to ONNX with a dynamic batch, compiled with
`ral-compile --device=<device>` and its defaults, and packed with inputs at batch 1 and 3 and the
outputs of the same model in float64 on this machine's CPU. Weights are rounded to 31 levels per
tensor (the outputs are computed from the rounded weights) so the pack compresses about fivefold.
run.sh runs each with --expected_output (rtol 1e-3, atol 1e-4), then times it at batch 1
(`ral-run --benchmark 20`, median), and prints "models on <device>: N passed, M failed" and one
line of timings. These are the paths the small examples miss: every layer of a CNN on the device,
with its convolutions on the vendor library. Needs /usr/bin/python3 with torch, torchvision and
onnx (Debian's python3-torch, python3-torchvision, python3-onnx).
"""

import argparse
import os
import subprocess
import sys
import warnings

import numpy as np

DEFAULT_MODELS = ["resnet18", "mobilenet_v2", "efficientnet_b0"]

RUN_SH = """#!/usr/bin/env bash
# Runs every packed model on the device with ral-run against eager PyTorch's outputs, then times
# each at batch 1.
cd "$(dirname "$0")"
RAL_RUN=${RAL_RUN:-../bin/ral-run}
pass=0; fail=0; times=""
while read -r name; do
  ok=1
  for b in 1 3; do
    if ! out=$("$RAL_RUN" "$name.ralm" --device=DEVICE --input=@"$name.x$b.npy" \\
        --expected_output=@"$name.y$b.npy" --output=@out.npy --rtol=1e-3 --atol=1e-4 2>&1); then
      ok=0; echo "FAIL $name batch $b: $(echo "$out" | grep -m1 -iE 'error|differ' | cut -c1-300)"
    fi
  done
  if [ "$ok" = 1 ]; then pass=$((pass+1)); else fail=$((fail+1)); fi
  p50=$("$RAL_RUN" "$name.ralm" --device=DEVICE --input=@"$name.x1.npy" --benchmark 20 2>&1 \\
        | grep -oE 'p50 [0-9.]+' | awk '{printf "%.2f ms", $2 / 1000}')
  times="$times $name ${p50:-?};"
done < models.txt
echo "batch 1 on DEVICE:$times"
echo "models on DEVICE: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
"""


def deterministic_input(shape):
    """Values in [-0.5, 0.5) from the element index: compresses, unlike random data."""
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    return (((i * 7919) % 1000).astype(np.float32) / 1000 - 0.5).reshape(shape)


def rounded_model(torch, torchvision, name):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):  # non-trivial statistics, as trained ones
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
        tensors = list(model.parameters()) + [b for b in model.buffers() if b.is_floating_point()]
        for t in tensors:
            scale = t.abs().max() / 15
            if scale > 0:
                t.copy_(torch.round(t / scale) * scale)
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ral-compile", required=True)
    parser.add_argument("--pack-dir", required=True)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--models", nargs="+", default=DEFAULT_MODELS)
    args = parser.parse_args()
    import torch
    import torchvision
    os.makedirs(args.pack_dir, exist_ok=True)
    packed = []
    for name in args.models:
        model = rounded_model(torch, torchvision, name)
        onnx_path = os.path.join(args.pack_dir, name + ".onnx")
        x1 = deterministic_input((1, 3, 224, 224))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, (torch.from_numpy(x1),), onnx_path, input_names=["x"],
                              output_names=["y"], opset_version=14,
                              dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
        ralm = os.path.join(args.pack_dir, name + ".ralm")
        r = subprocess.run([args.ral_compile, onnx_path, f"--device={args.device}", "-o", ralm],
                           capture_output=True, text=True)
        os.remove(onnx_path)
        if r.returncode != 0:
            print(f"gpu_check_models: {name} does not compile for {args.device}: "
                  f"{r.stderr.strip().splitlines()[-1][:200]}", file=sys.stderr)
            return 1
        reference = model.double()
        for batch in (1, 3):
            x = deterministic_input((batch, 3, 224, 224))
            with torch.no_grad():
                y = reference(torch.from_numpy(x).double()).numpy().astype(np.float32)
            np.save(os.path.join(args.pack_dir, f"{name}.x{batch}.npy"), x)
            np.save(os.path.join(args.pack_dir, f"{name}.y{batch}.npy"), y)
        packed.append(name)
    with open(os.path.join(args.pack_dir, "models.txt"), "w") as f:
        f.write("\n".join(packed) + "\n")
    run = os.path.join(args.pack_dir, "run.sh")
    with open(run, "w") as f:
        f.write(RUN_SH.replace("DEVICE", args.device))
    os.chmod(run, 0o755)
    print(f"packed {len(packed)} models for {args.device} into {args.pack_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
