#!/usr/bin/python3
"""Compiled kernels on the Vulkan device (ral-compile --device=vulkan) in one process, through
the C API (mlp_vs_torch.RalModel): CPU inputs are copied into device memory, the kernels run on
the device and the execution waits for it. On a machine without a GPU the device is Mesa's
software rasterizer (lavapipe), which runs shaders on the CPU cores.

  launch   the cost of one more kernel launch inside an execution: a module of 9 dependent
           one-element loops minus one of 1 loop, divided by 8, on vulkan and on the cpu
  softmax  examples/softmax.mlir, 256x4096 f32, vulkan vs the same module compiled for the cpu
           (ratio cpu time / vulkan time) and vs torch.softmax

  /usr/bin/python3 benchmarks/vulkan_kernels.py [--build build]
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


def chain(loops):
    """y = x + loops over one-element rows; loop k starts at k, so no two fuse: `loops` kernels."""
    body = []
    for k in range(loops):
        body.append("""  %%lb%d = arith.constant %d : index
  scf.parallel (%%i) = (%%lb%d) to (%%n) step (%%c1) {
    %%v = memref.load %%y[%%i] : memref<?xf32>
    %%w = arith.addf %%v, %%one : f32
    memref.store %%w, %%y[%%i] : memref<?xf32>
    scf.reduce
  }""" % (k, k, k))
    return """func.func @main(%%x: memref<?xf32>) -> memref<?xf32> {
  %%c0 = arith.constant 0 : index
  %%c1 = arith.constant 1 : index
  %%one = arith.constant 1.0 : f32
  %%n = memref.dim %%x, %%c0 : memref<?xf32>
  %%y = memref.alloc(%%n) : memref<?xf32>
  memref.copy %%x, %%y : memref<?xf32> to memref<?xf32>
%s
  return %%y : memref<?xf32>
}
""" % "\n".join(body)


def compile_module(build, source, out, *flags):
    subprocess.run([os.path.join(build, "compiler_passes", "ral-compile"), source, "-o", out,
                    "--mcpu=native", *flags], check=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = p.parse_args()
    lib = os.path.join(args.build, "libral.so")
    os.environ["RAL_VULKAN_PIPELINE_CACHE_DIR"] = "off"
    with tempfile.TemporaryDirectory() as tmp:
        print("RAL compiled kernels on Vulkan (device: see vulkaninfo; lavapipe without a GPU)")
        x = np.arange(16, dtype=np.float32)
        times = {}
        for device in ("vulkan", "cpu"):
            for loops in (1, 9):
                src = os.path.join(tmp, "chain%d.mlir" % loops)
                with open(src, "w") as f:
                    f.write(chain(loops))
                out = os.path.join(tmp, "chain%d_%s.ralm" % (loops, device))
                compile_module(args.build, src, out, "--device=" + device)
                m = RalModel(lib, out)
                m.bind([x])
                times[(device, loops)] = m
            one, nine = per_call_us([times[(device, 1)].run, times[(device, 9)].run], 200, 7)
            print("  launch   %-6s execution with 1 kernel %8.1f us, with 9 %8.1f us: %.2f us per "
                  "launch" % (device, one, nine, (nine - one) / 8))

        import torch
        torch.set_num_threads(os.cpu_count() or 1)
        src = os.path.join(ROOT, "examples", "softmax.mlir")
        xs = np.random.default_rng(0).standard_normal((256, 4096), dtype=np.float32)
        models = {}
        for device in ("vulkan", "cpu"):
            out = os.path.join(tmp, "softmax_%s.ralm" % device)
            compile_module(args.build, src, out, "--device=" + device)
            models[device] = RalModel(lib, out)
            models[device].bind([xs])
        got = models["vulkan"].run_copy()
        want = torch.softmax(torch.from_numpy(xs).double(), -1).numpy()
        if not np.allclose(got, want, rtol=1e-4, atol=1e-6):
            sys.exit("softmax on vulkan differs from torch (max abs error %g)" %
                     np.abs(got - want).max())
        xt = torch.from_numpy(xs)
        vk, cpu, tt = per_call_us([models["vulkan"].run, models["cpu"].run,
                                   lambda: torch.softmax(xt, -1)], 5, 5)
        print("  softmax  vulkan %.0f us, cpu kernels %.0f us (%d threads), torch %.0f us: "
              "cpu/vulkan %.2fx, torch/vulkan %.2fx" % (vk, cpu, torch.get_num_threads(), tt,
                                                        cpu / vk, tt / vk))


if __name__ == "__main__":
    main()
