#!/usr/bin/env python3
"""Checks the GPU kernels ral-compile emits for one example, without a GPU.

--device=cuda: every executable is PTX with one variant per --gpu-arch architecture; the CUDA
toolkit's ptxas must accept each with the matching -arch=sm_XX (skipped, with the reason, when
ptxas is absent). --device=hsa: every executable is HSACO with one variant per architecture; each
is an AMDGPU ELF shared object for that processor (e_flags EF_AMDGPU_MACH_*) whose AMDHSA
metadata note (llvm-readelf --notes) lists exactly the executable's entry points, each with its
.kd descriptor symbol, .kernarg_segment_size and .args layout (pointer arguments as
global_buffer, scalars by value).

  gpu_binaries.py --example softmax.mlir --ral-compile ... --ral-inspect ... --readelf ...
                  [--ptxas /usr/local/cuda/bin/ptxas] --work-dir D
Exit status 0: all checks pass; 77: ptxas is absent (the HSA checks passed); else failure.
"""
import argparse
import os
import re
import subprocess
import sys

CUDA_ARCHS = ["sm_75", "sm_80", "sm_90"]
HSA_ARCHS = ["gfx90a", "gfx942", "gfx1100"]
# EF_AMDGPU_MACH_AMDGCN_* of llvm/BinaryFormat/ELF.h.
EF_AMDGPU_MACH = {"gfx90a": 0x3F, "gfx942": 0x4C, "gfx1100": 0x41}
SKIP = 77


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"FAILED: {' '.join(cmd)}\n{r.stdout}{r.stderr}")
    return r.stdout


def executables(inspect, ralm):
    """{name: (format, [entry names], [targets])} from ral-inspect's listing."""
    out = run([inspect, ralm])
    result, current = {}, None
    section = None
    for line in out.splitlines():
        if not line.startswith(" "):
            section = line.split(" ")[0]
            continue
        if section != "executables":
            continue
        m = re.match(r"  (\S+): (\S+), \d+ bytes(?:, entries: (.*))?$", line)
        if m:
            entries = [e.split(" (")[0].strip() for e in (m.group(3) or "").split(",") if e]
            current = m.group(1)
            result[current] = (m.group(2), entries, [])
            continue
        m = re.match(r"    target (\S+): \d+ bytes$", line)
        if m and current:
            result[current][2].append(m.group(1))
    return result


def compile_for(args, device, archs, stem):
    ralm = os.path.join(args.work_dir, f"{stem}.{device}.ralm")
    run([args.ral_compile, args.example, f"--device={device}", f"--gpu-arch={','.join(archs)}",
         "-o", ralm])
    exes = executables(args.ral_inspect, ralm)
    if not exes:
        sys.exit(f"FAILED: {ralm} has no executables")
    fmt = "ptx" if device == "cuda" else "hsaco"
    for name, (format_, entries, targets) in exes.items():
        if format_ != fmt or targets != archs or entries != [name]:
            sys.exit(f"FAILED: {ralm}: executable {name} is {format_} for {targets} with entries "
                     f"{entries}; expected {fmt} for {archs} with entry {name}")
    return ralm, exes


def extract(args, ralm, name, arch, suffix):
    path = os.path.join(args.work_dir, f"{os.path.basename(ralm)}.{name}.{arch}.{suffix}")
    run([args.ral_inspect, ralm, "--extract", name, "--target", arch, "-o", path])
    return path


def check_code_object(readelf, path, arch):
    """An AMDGPU HSA shared object for processor `arch`, code object v4 or v5, with AMDHSA
    metadata; returns the metadata note's text."""
    header = run([readelf, "--file-header", path])
    flags = re.search(r"Flags:\s+0x([0-9A-Fa-f]+), (\w+)", header)
    abi = re.search(r"ABI Version:\s+(\d+)", header)
    if ("EM_AMDGPU" not in header or "AMDGPU - HSA" not in header
            or "DYN (Shared object file)" not in header or not flags or not abi):
        sys.exit(f"FAILED: {path} is not an AMDGPU HSA shared object:\n{header}")
    # e_flags & EF_AMDGPU_MACH is the processor (llvm/BinaryFormat/ELF.h), and readelf names it.
    mach = int(flags.group(1), 16) & 0xFF
    if flags.group(2) != arch or mach != EF_AMDGPU_MACH[arch]:
        sys.exit(f"FAILED: {path}: e_flags 0x{flags.group(1)} ({flags.group(2)}) is not {arch} "
                 f"(EF_AMDGPU_MACH 0x{EF_AMDGPU_MACH[arch]:02x})")
    if int(abi.group(1)) not in (2, 3):  # ELFABIVERSION_AMDGPU_HSA_V4, _V5
        sys.exit(f"FAILED: {path}: ABI version {abi.group(1)} is not code object v4 or v5")
    notes = run([readelf, "--notes", path])
    if "NT_AMDGPU_METADATA" not in notes or "amdhsa.kernels" not in notes:
        sys.exit(f"FAILED: {path} has no AMDHSA metadata note:\n{notes}")
    if "amdhsa.version" not in notes:
        sys.exit(f"FAILED: {path}: no code object version in the metadata")
    return notes


def check_hsaco(args, path, arch, kernel):
    notes = check_code_object(args.readelf, path, arch)
    names = re.findall(r"\.name:\s+(\S+)\n", notes)
    kernels = [n for n in names if n.startswith("ral_kernel")]
    symbols = re.findall(r"\.symbol:\s+(\S+)", notes)
    if kernels != [kernel] or symbols != [kernel + ".kd"]:
        sys.exit(f"FAILED: {path}: kernels {kernels}, symbols {symbols}; expected {kernel}")
    size = re.search(r"\.kernarg_segment_size:\s+(\d+)", notes)
    kinds = re.findall(r"\.value_kind:\s+(\S+)", notes)
    offsets = [int(o) for o in re.findall(r"\.offset:\s+(\d+)", notes)]
    sizes = [int(z) for z in re.findall(r"\s\.size:\s+(\d+)", notes)]
    if (not size or not kinds or not offsets or offsets != sorted(offsets)
            or len(sizes) != len(offsets) or int(size.group(1)) < offsets[-1] + sizes[-1]):
        sys.exit(f"FAILED: {path}: no kernarg layout (.args, .kernarg_segment_size):\n{notes}")
    if kinds[0] != "global_buffer" or "by_value" not in kinds:
        sys.exit(f"FAILED: {path}: arguments {kinds}: pointers first, then scalars by value")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--example", required=True)
    p.add_argument("--ral-compile", required=True)
    p.add_argument("--ral-inspect", required=True)
    p.add_argument("--readelf", required=True)
    p.add_argument("--ptxas", default="/usr/local/cuda/bin/ptxas")
    p.add_argument("--work-dir", required=True)
    args = p.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    stem = os.path.splitext(os.path.basename(args.example))[0]

    ralm, exes = compile_for(args, "hsa", HSA_ARCHS, stem)
    for name in exes:
        for arch in HSA_ARCHS:
            check_hsaco(args, extract(args, ralm, name, arch, "hsaco"), arch, name)
    print(f"{stem}: {len(exes)} HSACO kernels x {HSA_ARCHS}: AMDGPU code objects with metadata")

    ralm, exes = compile_for(args, "cuda", CUDA_ARCHS, stem)
    if not os.access(args.ptxas, os.X_OK):
        print(f"SKIPPED the ptxas check: {args.ptxas} is absent (the CUDA toolkit is not "
              f"installed); {len(exes)} PTX kernels x {CUDA_ARCHS} were emitted")
        return SKIP
    for name in exes:
        for arch in CUDA_ARCHS:
            ptx = extract(args, ralm, name, arch, "ptx")
            cubin = ptx + ".cubin"
            run([args.ptxas, f"-arch={arch}", ptx, "-o", cubin])
            if os.path.getsize(cubin) == 0:
                sys.exit(f"FAILED: ptxas made an empty cubin of {ptx}")
    print(f"{stem}: {len(exes)} PTX kernels x {CUDA_ARCHS}: accepted by {args.ptxas}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
