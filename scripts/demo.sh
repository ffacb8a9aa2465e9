#!/usr/bin/env bash
# The demo command: installs what RAL needs, builds it, compiles the two-layer MLP of
# examples/mlp.mlir with ral-compile, runs the module with ral-run on the CPU on a fixed input,
# prints the result and checks it against the expected output (computed with numpy).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# ccache keeps its default cache (~/.cache/ccache), shared by every checkout on the machine.
cmake -S . -B build -G Ninja > /dev/null
cmake --build build -j "$(nproc)" --target ral-compile ral-run ral-inspect

demo=build/demo
mkdir -p "$demo"
echo "==== ral-compile examples/mlp.mlir -o $demo/mlp.ralm"
./build/compiler_passes/ral-compile examples/mlp.mlir -o "$demo/mlp.ralm"
./build/plugins/standalone/ral-inspect "$demo/mlp.ralm"

echo "==== ral-run on a fixed 2x128 input"
/usr/bin/python3 examples/mlp_demo_data.py "$demo"
./build/plugins/standalone/ral-run "$demo/mlp.ralm" --device=cpu \
  --input=@"$demo/x.npy" --input=@"$demo/w1.npy" --input=@"$demo/b1.npy" \
  --input=@"$demo/w2.npy" --input=@"$demo/b2.npy" \
  --expected_output=@"$demo/expected.npy" --rtol=1e-4 --atol=1e-5
echo "==== the output matches the expected output"
