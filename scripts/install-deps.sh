#!/usr/bin/env bash
# Installs every Debian package RAL needs. This file is the only place packages are listed.
# Idempotent and non-interactive; prints nothing when everything is already installed.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config git
  # LLVM 19: clang links ral-compile's output and builds the fuzzer (libFuzzer from
  # libclang-rt); llvm-19-dev brings lit and FileCheck for the compiler tests
  clang-19 libclang-rt-19-dev llvm-19-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev python3-numpy
  # module file, standalone context and CLI
  libflatbuffers-dev flatbuffers-compiler libdlpack-dev libcli11-dev
  # CPU kernels: OpenBLAS for GEMM, oneDNN for convolutions; Gloo carries collectives between
  # standalone processes
  libopenblas-dev libdnnl-dev libgloo-dev
  # compiler passes (MLIR 19: libraries, headers, mlir-tblgen) and ral-compile; PyTorch eager
  # as the benchmark baseline
  libmlir-19-dev mlir-19-tools python3-torch
  # GPU kernels from ral-compile: ld.lld-19 links HSACO code objects (lld-19); the tests read
  # them with llvm-readelf-19 (llvm-19)
  lld-19 llvm-19
  # torch context, custom class and ral_torch (tests: pytest under /usr/bin/python3; Python.h
  # for its ral_torch._fast extension)
  libtorch-dev python3-pytest python3-dev
  # Vulkan driver: headers and glslc at build time; the loader and Mesa's CPU device (llvmpipe)
  # to run the tests
  libvulkan-dev glslc libvulkan1 mesa-vulkan-drivers
  # HSA driver: the HSA headers at build time; the runtime (libhsa-runtime64-1) for the test of
  # its error on machines without an AMD GPU
  libhsa-runtime-dev
  # ONNX import in ral-compile (libonnx-dev: the ModelProto classes); the ONNX conformance runner
  # reads the backend test data (libonnx-testdata) with python3-onnx; torchvision's models are
  # compiled in a test and benchmarks/onnx_models.py
  libonnx-dev python3-onnx libonnx-testdata python3-torchvision
)

# Debian's MLIR packages of different versions conflict with one another. A machine set up for an
# older RAL has MLIR 14: remove it first, so the install below never stops on the conflict.
OLD_MLIR=(libmlir-14-dev mlir-14-tools libmlir-14)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

old=()
for p in "${OLD_MLIR[@]}"; do
  if installed "$p"; then old+=("$p"); fi
done
if [ ${#old[@]} -gt 0 ]; then
  echo "install-deps: removing ${old[*]} (RAL builds against MLIR 19; the versions conflict)"
  $SUDO apt-get remove -y -qq "${old[@]}" >/dev/null
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! installed "$p"; then missing+=("$p"); fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
