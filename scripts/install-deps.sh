#!/usr/bin/env bash
# Installs every Debian package RAL needs. This file is the only place packages are listed.
# Idempotent and non-interactive; prints nothing when everything is already installed.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config git
  clang-14 libclang-rt-14-dev llvm-14-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev python3-numpy
  # module file, standalone context and CLI
  libflatbuffers-dev flatbuffers-compiler libdlpack-dev libcli11-dev
  # CPU kernels
  libopenblas-dev
  # compiler passes (MLIR 14) and ral-compile; PyTorch eager as the benchmark baseline
  libmlir-14-dev mlir-14-tools python3-torch
  # torch context, custom class and ral_torch (tests: pytest under /usr/bin/python3; Python.h
  # for its ral_torch._fast extension)
  libtorch-dev python3-pytest python3-dev
  # Vulkan driver: headers and glslc at build time; the loader and Mesa's CPU device (llvmpipe)
  # to run the tests
  libvulkan-dev glslc libvulkan1 mesa-vulkan-drivers
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
