#!/usr/bin/env python3
"""The examples end to end on a real GPU, for scripts/gpu-check.sh: each example of
compiler_passes/test/e2e/run_example.py is compiled with ral-compile --device=cuda (PTX) or
--device=hsa (HSACO), in both calling modes (import table and --by-name), run by ral-run on the GPU
on random inputs of batch 0, 1, 3, 17 and 64, and compared with that file's numpy references
(the tolerance its Vulkan runs use); the two calling modes must agree exactly. The
tensor-parallel MLP (examples/tensor_parallel_mlp.mlir) runs too, as a job of one rank on the mlp
example's inputs: its all-reduce goes through NCCL on CUDA where libnccl loads
(RAL_CUDA_COLLECTIVES=nccl), through host staging elsewhere.

  gpu_check_e2e.py --device cuda --ral-compile B/compiler_passes/ral-compile \\
                   --ral-run B/plugins/standalone/ral-run --work-dir B/gpu-check-e2e/cuda

With --pack-dir DIR it runs nothing: it compiles the same modules into DIR and writes each
batch's inputs and references (.npy) and DIR/run.sh, which checks them with ral-run alone (its
--expected_output comparison, no Python or numpy needed) on a GPU machine without RAL's build
dependencies (scripts/gpu-pack.sh).
"""
import argparse
import ctypes
import importlib.util
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
E2E_DIR = os.path.join(ROOT, "compiler_passes", "test", "e2e")
EXAMPLES_DIR = os.path.join(ROOT, "examples")


def load_run_example():
    spec = importlib.util.spec_from_file_location("run_example",
                                                  os.path.join(E2E_DIR, "run_example.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Failure(Exception):
    pass


def nccl_loads():
    try:
        ctypes.CDLL(os.environ.get("RAL_NCCL_PATH") or "libnccl.so.2")
        return True
    except OSError:
        return False


def collectives_env(device, packing):
    """The tensor-parallel MLP's environment: one rank; on CUDA, NCCL where this machine has it
    (a packed run decides on the machine it runs on)."""
    transport = "host"
    if device == "cuda":
        transport = "auto" if packing else "nccl" if nccl_loads() else "host"
    return {"RAL_WORLD_SIZE": "1", "RAL_CUDA_COLLECTIVES": transport}


# Examples beyond run_example.py's, as (the example whose inputs and references they share,
# environment of their runs given the device and whether they are packed).
EXTRA = {"tensor_parallel_mlp": ("mlp", collectives_env)}


def spec_of(rx, example):
    """(inputs, reference) of `example`."""
    make_inputs, reference, _ = rx.EXAMPLES[EXTRA[example][0] if example in EXTRA else example]
    return make_inputs, reference


def env_of(example, device, packing=False):
    return EXTRA[example][1](device, packing) if example in EXTRA else {}


def run(cmd, env=None):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, **(env or {})))
    if result.returncode != 0:
        raise Failure("command failed (%d): %s\n%s" % (result.returncode, " ".join(cmd),
                                                       result.stdout.strip()))
    return result.stdout


def source_of(rx, example, work):
    if example == "mlp_weights":
        source = os.path.join(work, "mlp_weights.mlir")
        run([sys.executable, os.path.join(EXAMPLES_DIR, "mlp_weights.py"), source,
             "--weights-dir", work])
        for name in ("w1", "b1", "w2", "b2"):
            rx.MLP_WEIGHTS[name] = np.load(os.path.join(work, name + ".npy"))
        return source
    folder = E2E_DIR if example in ("gemm_accumulate", "pad_rows") else EXAMPLES_DIR
    return os.path.join(folder, example + ".mlir")


def check_example(rx, args, example):
    make_inputs, reference = spec_of(rx, example)
    work = os.path.join(args.work_dir, example)
    os.makedirs(work, exist_ok=True)
    source = source_of(rx, example, work)
    modules = {}
    for mode, flags in (("table", []), ("by_name", ["--by-name"])):
        modules[mode] = os.path.join(work, "%s.%s.%s.ralm" % (example, args.device, mode))
        run([args.ral_compile, source, "-o", modules[mode], "--device=" + args.device] + flags)
    rng = np.random.default_rng(20240229)
    worst = 0.0
    for batch in rx.BATCHES:
        inputs = make_inputs(rng, batch)
        expected = reference(*inputs)
        input_flags = []
        for i, a in enumerate(inputs):
            path = os.path.join(work, "b%d_in%d.npy" % (batch, i))
            np.save(path, a)
            input_flags.append("--input=@" + path)
        outputs = {}
        for mode, module in modules.items():
            paths = [os.path.join(work, "b%d_%s_out%d.npy" % (batch, mode, i))
                     for i in range(len(expected))]
            run([args.ral_run, module, "--device=" + args.device] + input_flags +
                ["--output=@" + p for p in paths], env_of(example, args.device))
            outputs[mode] = [np.load(p) for p in paths]
        for i, want in enumerate(expected):
            got = outputs["table"][i]
            where = "%s batch %d output %d" % (example, batch, i)
            if got.shape != want.shape:
                raise Failure("%s: shape %s, want %s" % (where, got.shape, want.shape))
            if got.size:
                worst = max(worst, float(np.abs(got - want).max()))
            if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
                raise Failure("%s differs from the numpy reference (max abs error %g)" %
                              (where, np.abs(got - want).max()))
            if not np.array_equal(got, outputs["by_name"][i], equal_nan=True):
                raise Failure("%s: the by-name module differs from the import-table one" % where)
    return worst


def pack_example(rx, args, example, script):
    """Compiles `example` into args.pack_dir and appends its ral-run checks to `script`."""
    make_inputs, reference = spec_of(rx, example)
    env = env_of(example, args.device, packing=True)
    script += ["export %s=%s" % item for item in sorted(env.items())]
    out = args.pack_dir
    source = source_of(rx, example, out)
    modules = {}
    for mode, flags in (("table", []), ("by_name", ["--by-name"])):
        modules[mode] = "%s.%s.ralm" % (example, mode)
        run([args.ral_compile, source, "-o", os.path.join(out, modules[mode]),
             "--device=" + args.device] + flags)
    rng = np.random.default_rng(20240229)
    for batch in rx.BATCHES:
        inputs = make_inputs(rng, batch)
        expected = reference(*inputs)
        flags = []
        for i, a in enumerate(inputs):
            name = "%s_b%d_in%d.npy" % (example, batch, i)
            np.save(os.path.join(out, name), a)
            flags.append("--input=@" + name)
        for i, want in enumerate(expected):
            # The references compute in f64; the module's outputs have its inputs' type.
            want = np.asarray(want)
            if want.dtype.kind == "f" and inputs[0].dtype.kind == "f":
                want = want.astype(inputs[0].dtype)
            name = "%s_b%d_want%d.npy" % (example, batch, i)
            np.save(os.path.join(out, name), want)
            flags.append("--expected_output=@" + name)
        for mode, module in modules.items():
            script.append("check %s_%s_b%d %s --device=%s %s --rtol=1e-4 --atol=1e-5" %
                          (example, mode, batch, module, args.device, " ".join(flags)))
    script += ["unset %s" % name for name in sorted(env)]


def pack(rx, args, examples):
    os.makedirs(args.pack_dir, exist_ok=True)
    script = [
        "#!/usr/bin/env bash",
        "# Written by scripts/gpu_check_e2e.py --pack-dir: the examples compiled for %s, each"
        % args.device,
        "# batch checked by ral-run against its reference. RAL_RUN: the ral-run to use.",
        "cd \"$(dirname \"$0\")\"",
        "RAL_RUN=${RAL_RUN:-../bin/ral-run}",
        "pass=0; fail=0",
        "check() {",
        "  local name=$1; shift",
        "  if \"$RAL_RUN\" \"$@\" > \"log_$name.txt\" 2>&1; then pass=$((pass + 1))",
        "  else fail=$((fail + 1)); echo \"FAIL $name: $(grep -m1 error \"log_$name.txt\" | cut -c1-300)\"; fi",
        "}",
    ]
    for example in examples:
        pack_example(rx, args, example, script)
    script += ["echo \"$pass of $((pass + fail)) example runs matched their references\"",
               "[ \"$fail\" = 0 ]", ""]
    path = os.path.join(args.pack_dir, "run.sh")
    with open(path, "w") as f:
        f.write("\n".join(script))
    os.chmod(path, 0o755)
    print("packed %d examples for %s into %s" % (len(examples), args.device, args.pack_dir))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    # vulkan: the same check on any Vulkan device (Mesa's CPU device too), to try this script
    # on a machine without a GPU.
    p.add_argument("--device", required=True, choices=["cuda", "hsa", "vulkan"])
    p.add_argument("--ral-compile", required=True)
    p.add_argument("--ral-run")
    p.add_argument("--work-dir")
    p.add_argument("--pack-dir", help="compile and write the checks here instead of running")
    p.add_argument("--example", action="append", help="only these examples (default: all)")
    args = p.parse_args()

    rx = load_run_example()
    examples = args.example or sorted(rx.EXAMPLES) + sorted(EXTRA)
    if args.pack_dir:
        return pack(rx, args, examples)
    if not args.ral_run or not args.work_dir:
        p.error("--ral-run and --work-dir are needed unless --pack-dir is given")
    failed = []
    for example in examples:
        start = time.monotonic()
        try:
            worst = check_example(rx, args, example)
            env = env_of(example, args.device)
            print("PASS %-16s %5.1fs  batches %s, both calling modes, max abs error %.2g%s" %
                  (example, time.monotonic() - start, rx.BATCHES, worst,
                   "".join(" %s=%s" % item for item in sorted(env.items()))), flush=True)
        except Failure as e:
            failed.append(example)
            print("FAIL %-16s %5.1fs  %s" % (example, time.monotonic() - start, e), flush=True)
    # The last line is the summary gpu-check.sh shows.
    if failed:
        print("%d of %d examples failed on %s: %s" % (len(failed), len(examples), args.device,
                                                      " ".join(failed)))
        return 1
    print("%d examples compiled for %s and matched the references" % (len(examples), args.device))
    return 0


if __name__ == "__main__":
    sys.exit(main())
