#!/usr/bin/env bash
# The demo command: installs what RAL needs, builds it, and measures the cost of a RAL function
# call (direct, through an import slot, by name, and a string-map baseline) in one process.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# ccache keeps its default cache (~/.cache/ccache), shared by every checkout on the machine.
cmake -S . -B build -G Ninja > /dev/null
cmake --build build -j "$(nproc)" --target api_call_benchmark
./build/benchmarks/api_call_benchmark --benchmark_min_time=0.2
