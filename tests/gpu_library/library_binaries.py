#!/usr/bin/env python3
"""Checks the GPU library's binaries (kernels/gpu, built by ral-gpu-kernels from one MLIR source)
without a GPU, against the argument structs of kernels/gpu/device_args.h:
- an HSA code object (<prefix>.ral_gpu_kernels.<gfx..>.hsaco) is an AMDGPU code object for its
  processor whose metadata (llvm-readelf --notes) lists exactly the library's kernels, each with
  its .kd symbol, its struct's kernarg layout (pointers first, then 8-byte scalars, packed at
  8-byte offsets) and, for GEMM, the workgroup memory of two 16x16 tiles;
- PTX (<prefix>.ral_gpu_kernels.<sm_..>.ptx) targets its architecture and declares exactly the
  library's kernels, each with its struct's fields as 8-byte parameters, GEMM's tiles as shared
  memory;
- a cubin (<prefix>.ral_gpu_kernels.<sm_..>.cubin) is a CUDA ELF whose symbols include every
  kernel as a function.

  library_binaries.py --readelf llvm-readelf-19 --gpu-binaries DIR BINARY...
"""
import argparse
import re
import subprocess
import sys

# name: (kernarg bytes, pointer arguments, workgroup bytes)
KERNELS = {}
for size in (1, 2, 4, 8):
    KERNELS[f"ral_strided_copy_{size}"] = (176, 2, 0)  # CopyArgs
    KERNELS[f"ral_strided_fill_{size}"] = (128, 1, 0)  # FillArgs
for kind in ("f32", "f64", "f16", "bf16"):
    KERNELS[f"ral_rng_uniform_{kind}"] = (152, 1, 0)  # RngArgs
    KERNELS[f"ral_gemm_{kind}"] = (96, 3, 2 * 256 * (8 if kind == "f64" else 4))  # GemmArgs
for kind in ("f32", "f64", "i32", "i64"):
    KERNELS[f"ral_order_rows_{kind}"] = (312, 5, 0)  # OrderArgs


def kernel_entries(notes):
    """The amdhsa.kernels list: one text chunk per kernel."""
    section = notes.split("amdhsa.kernels:", 1)[1].split("amdhsa.target:", 1)[0]
    return [c for c in re.split(r"\n  - ", "\n" + section) if c.strip()]


def check(readelf, path, arch, check_code_object):
    notes = check_code_object(readelf, path, arch)
    seen = {}
    for chunk in kernel_entries(notes):
        name = re.search(r"\n    \.name:\s+(\S+)", "\n    " + chunk.lstrip()).group(1)
        seen[name] = chunk
    if sorted(seen) != sorted(KERNELS):
        sys.exit(f"FAILED: {path}: kernels {sorted(seen)}; expected {sorted(KERNELS)}")
    for name, (kernarg, pointers, group) in KERNELS.items():
        chunk = seen[name]
        symbol = re.search(r"\.symbol:\s+(\S+)", chunk).group(1)
        size = int(re.search(r"\.kernarg_segment_size:\s+(\d+)", chunk).group(1))
        lds = int(re.search(r"\.group_segment_fixed_size:\s+(\d+)", chunk).group(1))
        offsets = [int(o) for o in re.findall(r"\.offset:\s+(\d+)", chunk)]
        sizes = [int(z) for z in re.findall(r"\s\.size:\s+(\d+)", chunk)]
        kinds = re.findall(r"\.value_kind:\s+(\S+)", chunk)
        want_kinds = ["global_buffer"] * pointers + ["by_value"] * (kernarg // 8 - pointers)
        if (symbol != name + ".kd" or size != kernarg or offsets != list(range(0, kernarg, 8))
                or sizes != [8] * (kernarg // 8) or kinds != want_kinds or lds != group):
            sys.exit(f"FAILED: {path}: {name}: symbol {symbol}, kernarg {size} bytes, offsets "
                     f"{offsets}, sizes {sizes}, kinds {kinds}, workgroup memory {lds}; expected "
                     f"{name}.kd, {kernarg} bytes of 8-byte arguments ({pointers} pointers), "
                     f"{group} bytes of workgroup memory")


def check_ptx(path, sm):
    text = open(path).read()
    if not re.search(rf"^\.target {sm}\b", text, re.M):
        sys.exit(f"FAILED: {path}: no .target {sm}")
    seen = {}
    for m in re.finditer(r"\.entry (\w+)\(([^)]*)\)", text):
        seen[m.group(1)] = re.findall(r"\.param\s+(\.\w+)", m.group(2))
    if sorted(seen) != sorted(KERNELS):
        sys.exit(f"FAILED: {path}: kernels {sorted(seen)}; expected {sorted(KERNELS)}")
    for name, (kernarg, _, group) in KERNELS.items():
        if seen[name] != [".u64"] * (kernarg // 8):
            sys.exit(f"FAILED: {path}: {name}: parameters {seen[name]}; expected "
                     f"{kernarg // 8} x .u64")
        body = text.split(f".entry {name}(", 1)[1].split(".entry ", 1)[0]
        shared = sum(int(n) for n in re.findall(r"\.shared \.align \d+ \.b8 \w+\[(\d+)\]", body))
        if name.startswith("ral_gemm") and shared < group:
            sys.exit(f"FAILED: {path}: {name}: {shared} bytes of shared memory; expected {group}")


def check_cubin(readelf, path):
    out = subprocess.run([readelf, "--symbols", "--wide", path], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"FAILED: {readelf} {path}: {out.stderr}")
    # "83: 0 7552 FUNC GLOBAL DEFAULT [<other: 0x10>] 70 ral_strided_copy_1"
    functions = set(re.findall(r"\sFUNC\s+GLOBAL\s.*\s(\w+)$", out.stdout, re.M))
    missing = sorted(set(KERNELS) - functions)
    if missing:
        sys.exit(f"FAILED: {path}: no function symbol for {missing}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--readelf", required=True)
    p.add_argument("--gpu-binaries", required=True, help="compiler_passes/test/e2e")
    p.add_argument("binaries", nargs="+")
    args = p.parse_args()
    sys.path.insert(0, args.gpu_binaries)
    from gpu_binaries import check_code_object  # noqa: E402
    for path in args.binaries:
        m = re.search(r"\.ral_gpu_kernels\.(\w+)\.(hsaco|ptx|cubin)$", path)
        if not m:
            sys.exit(f"FAILED: {path}: not <prefix>.ral_gpu_kernels.<target>.<hsaco|ptx|cubin>")
        target, kind = m.groups()
        if kind == "hsaco":
            check(args.readelf, path, target, check_code_object)
        elif kind == "ptx":
            check_ptx(path, target)
        else:
            check_cubin(args.readelf, path)
    print(f"{len(args.binaries)} binaries x {len(KERNELS)} kernels: layouts as device_args.h")
    return 0


if __name__ == "__main__":
    sys.exit(main())
