// Times ONNX Runtime (npm onnxruntime-node, its CPU execution provider) on one .onnx model for
// benchmarks/onnx_models.py: reads a JSON request on argv[2], prints one JSON line per request.
//   {"module": path to node_modules/onnxruntime-node, "model": path, "threads": n,
//    "inputs": {name: [shape...]}, "warmup": n, "blocks": n, "calls": n}
// Prints {"median_s": per-call median over blocks, "output": first 8 values of output 0}.
'use strict';
const fs = require('fs');

async function main() {
  const req = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const ort = require(req.module);
  const model = await ort.InferenceSession.create(req.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: req.threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
  });
  const feeds = {};
  for (const [name, shape] of Object.entries(req.inputs)) {
    const n = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    // The same deterministic values the Python side feeds RAL and torch.
    for (let i = 0; i < n; ++i) data[i] = ((i * 7919) % 1000) / 1000 - 0.5;
    feeds[name] = new ort.Tensor('float32', data, shape);
  }
  let out;
  for (let i = 0; i < req.warmup; ++i) out = await model.run(feeds);
  const times = [];
  for (let b = 0; b < req.blocks; ++b) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < req.calls; ++i) out = await model.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e9 / req.calls);
  }
  times.sort((a, b) => a - b);
  const first = out[model.outputNames[0]].data;
  console.log(JSON.stringify({
    median_s: times[Math.floor(times.length / 2)],
    output: Array.from(first.slice(0, 8)),
  }));
}

main().catch((e) => {
  console.error(String(e && e.stack || e));
  process.exit(1);
});
