#!/usr/bin/python3
"""Real models through ral-compile against ONNX Runtime, TorchScript and eager PyTorch on the CPU.

torchvision's resnet18, mobilenet_v2, efficientnet_b0 and vit_b_16 (random weights, no download)
and nn.TransformerEncoder at BERT-base shape (12 layers, d=768, 12 heads, sequence 128) are
exported once to ONNX with a dynamic batch dim and compiled once by ral-compile with the flags a
user types (none; --ral-flags adds some). Each runs at every batch and thread count:
- RAL: the .ralm through ral_torch.load, RAL_CPU_THREADS=n;
- eager PyTorch and TorchScript (optimize_for_inference(freeze(script))), torch.set_num_threads(n);
- ONNX Runtime 1.x CPU EP from the npm package onnxruntime-node on the same .onnx file
  (benchmarks/ort_runner.js; intraOpNumThreads=n, graphOptimizationLevel 'all'); beside it, its
  per-call cost on an Identity model of the same input (binding overhead, not subtracted).
Every candidate's output is checked against eager before it is timed. Times are medians of
per-block means; ratios are candidate time / RAL time (above 1: RAL is faster). GFLOP/s counts
the Conv/MatMul/Gemm multiply-adds of the ONNX graph; the peak is threads x clock x FP32 FLOPs per
cycle from the CPU's vector width (an estimate, printed with the table).

  /usr/bin/python3 benchmarks/onnx_models.py [--build build] [--models resnet18 ...]
      [--batches 1 8] [--threads 1 2] [--ort node_modules/onnxruntime-node] [--work DIR]

ONNX Runtime: `npm install --ignore-scripts onnxruntime-node` (in the repository root or
--ort's parent); without it the ORT columns are blank.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = ["resnet18", "mobilenet_v2", "efficientnet_b0", "vit_b_16", "bert_encoder"]


def make_model(torch, name):
    """(module in eval mode, input shape without the batch dim)."""
    torch.manual_seed(0)
    if name == "bert_encoder":
        layer = torch.nn.TransformerEncoderLayer(768, 12, 3072, dropout=0.0, batch_first=True)
        return torch.nn.TransformerEncoder(layer, 12, enable_nested_tensor=False).eval(), \
            (128, 768)
    import torchvision
    return getattr(torchvision.models, name)(weights=None).eval(), (3, 224, 224)


def deterministic_input(torch, shape):
    """The values ort_runner.js feeds: ((i * 7919) % 1000) / 1000 - 0.5."""
    n = 1
    for d in shape:
        n *= d
    i = torch.arange(n, dtype=torch.int64)
    return (((i * 7919) % 1000).to(torch.float32) / 1000 - 0.5).reshape(shape)


def export(torch, model, feature_shape, path):
    x = deterministic_input(torch, (1,) + tuple(feature_shape))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=14)


def graph_flops(path, batch):
    """2 x multiply-adds of Conv, ConvTranspose, MatMul and Gemm at this batch."""
    import onnx
    from onnx import shape_inference
    model = onnx.load(path)
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = batch
    for out in model.graph.output:
        out.type.tensor_type.shape.dim[0].dim_value = batch
    model = shape_inference.infer_shapes(model)
    shapes = {}
    for v in list(model.graph.value_info) + list(model.graph.input) + list(model.graph.output):
        dims = [d.dim_value for d in v.type.tensor_type.shape.dim]
        shapes[v.name] = dims
    for t in model.graph.initializer:
        shapes[t.name] = list(t.dims)
    flops = 0
    for node in model.graph.node:
        if node.op_type in ("Conv", "ConvTranspose"):
            w, y = shapes.get(node.input[1]), shapes.get(node.output[0])
            if w and y:
                window = 1
                for k in w[1:]:
                    window *= k
                out = 1
                for d in y:
                    out *= d
                flops += 2 * out * window
        elif node.op_type in ("MatMul", "Gemm"):
            a, y = shapes.get(node.input[0]), shapes.get(node.output[0])
            if a and y:
                k = a[0] if node.op_type == "Gemm" and any(
                    at.name == "transA" and at.i for at in node.attribute) else a[-1]
                out = 1
                for d in y:
                    out *= d
                flops += 2 * out * k
    return flops


def peak_gflops(threads):
    """threads x clock x FP32 FLOPs per cycle (2 FMA pipes of the widest vector; AMD's AVX-512
    issues as two 256-bit halves)."""
    mhz, flags, vendor = 0.0, "", ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            key, _, value = line.partition(":")
            key = key.strip()
            if key == "cpu MHz" and not mhz:
                mhz = float(value)
            elif key == "flags" and not flags:
                flags = value
            elif key == "vendor_id" and not vendor:
                vendor = value.strip()
    lanes = 16 if "avx512f" in flags and vendor == "GenuineIntel" else 8 if "avx2" in flags else 4
    per_cycle = 2 * 2 * lanes  # two pipes, FMA = 2 FLOPs
    return threads * mhz / 1e3 * per_cycle, f"{mhz:.0f} MHz x {per_cycle} FLOP/cycle"


def per_call_s(fns, blocks, block_s=0.5):
    """Median over `blocks` of the mean per-call time; candidates take turns block by block."""
    iterations = []
    for fn in fns:
        fn()
        start = time.perf_counter()
        fn()
        iterations.append(max(1, int(block_s / max(time.perf_counter() - start, 1e-7))))
    samples = [[] for _ in fns]
    for _ in range(blocks):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            for _ in range(iterations[i]):
                fn()
            samples[i].append((time.perf_counter() - start) / iterations[i])
    return [statistics.median(s) for s in samples]


def run_ort(ort, model_path, shape, threads, blocks):
    """ONNX Runtime's median per-call seconds and first outputs, or (None, reason)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"module": ort, "model": model_path, "threads": threads,
                   "inputs": {"x": list(shape)}, "warmup": 3, "blocks": blocks,
                   "calls": 0}, f)
        request = f.name
    try:
        # Calls per block from one timed call: about 0.5 s per block, like per_call_s.
        probe = dict(json.load(open(request)), warmup=1, blocks=1, calls=1)
        json.dump(probe, open(request, "w"))
        done = subprocess.run(["node", os.path.join(ROOT, "benchmarks", "ort_runner.js"), request],
                              capture_output=True, text=True)
        if done.returncode != 0:
            return None, done.stderr.strip().splitlines()[-1:] or ["node failed"]
        one = json.loads(done.stdout)["median_s"]
        req = dict(probe, warmup=3, blocks=blocks, calls=max(1, int(0.5 / max(one, 1e-7))))
        json.dump(req, open(request, "w"))
        done = subprocess.run(["node", os.path.join(ROOT, "benchmarks", "ort_runner.js"), request],
                              capture_output=True, text=True)
        if done.returncode != 0:
            return None, done.stderr.strip().splitlines()[-1:] or ["node failed"]
        return json.loads(done.stdout), None
    finally:
        os.unlink(request)


def identity_model(path, feature_shape):
    import onnx
    from onnx import TensorProto, helper
    dims = ["batch"] + list(feature_shape)
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "identity",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), path)


def worker(args):
    """One thread count: RAL, eager and TorchScript for every model and batch, as JSON lines."""
    os.environ["RAL_CPU_THREADS"] = str(args.worker)
    import torch
    import ral_torch
    torch.set_num_threads(args.worker)
    for name in args.models:
        model, feature = make_model(torch, name)
        onnx_path = os.path.join(args.work, name + ".onnx")
        ralm = os.path.join(args.work, name + ".ralm")
        compiled = ral_torch.load(ralm)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x1 = deterministic_input(torch, (1,) + feature)
            scripted = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.script(model)))
        for batch in args.batches:
            x = deterministic_input(torch, (batch,) + feature)
            with torch.inference_mode():
                want = model(x)
                got = compiled(x)
                got = got[0] if isinstance(got, (tuple, list)) else got
                error = ((got - want).abs().max() / want.abs().max().clamp(min=1e-30)).item()
                t_ral, t_eager, t_ts = per_call_s(
                    [lambda: compiled(x), lambda: model(x), lambda: scripted(x)], args.blocks)
            print(json.dumps({"model": name, "batch": batch, "threads": args.worker,
                              "ral": t_ral, "eager": t_eager, "ts": t_ts, "error": error,
                              "want": want.flatten()[:8].tolist()}), flush=True)
        del x1, onnx_path


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--models", nargs="+", default=MODELS, choices=MODELS)
    p.add_argument("--batches", nargs="+", type=int, default=[1, 8])
    p.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    p.add_argument("--blocks", type=int, default=7)
    p.add_argument("--ort", default=os.path.join(ROOT, "node_modules", "onnxruntime-node"))
    p.add_argument("--ral-flags", default="", help="extra ral-compile flags (default: none)")
    p.add_argument("--work", help="exported and compiled models (default: a temporary dir)")
    p.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    python_dir = os.path.join(args.build, "python")
    if python_dir not in sys.path:
        sys.path.insert(0, python_dir)
    if args.worker:
        return worker(args)

    import torch
    args.work = args.work or tempfile.mkdtemp(prefix="ral-onnx-models-")
    ral_compile = os.path.join(args.build, "compiler_passes", "ral-compile")
    features = {}
    for name in args.models:
        model, feature = make_model(torch, name)
        features[name] = feature
        onnx_path = os.path.join(args.work, name + ".onnx")
        ralm = os.path.join(args.work, name + ".ralm")
        if not os.path.exists(onnx_path):
            export(torch, model, feature, onnx_path)
        if not os.path.exists(ralm):
            start = time.perf_counter()
            done = subprocess.run([ral_compile, onnx_path, "-o", ralm] + args.ral_flags.split(),
                                  capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"ral-compile {name} failed:\n{done.stderr}")
            print(f"compiled {name} in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        identity_model(os.path.join(args.work, name + ".identity.onnx"), feature)

    ort = os.path.abspath(args.ort)
    env = dict(os.environ, PYTHONPATH=python_dir + os.pathsep + os.environ.get("PYTHONPATH", ""))
    rows = []
    for threads in args.threads:
        command = [sys.executable, os.path.abspath(__file__), "--worker", str(threads),
                   "--build", args.build, "--work", args.work, "--blocks", str(args.blocks),
                   "--models", *args.models, "--batches", *map(str, args.batches)]
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            sys.exit(f"worker ({threads} threads) failed:\n{done.stderr}")
        for line in done.stdout.splitlines():
            row = json.loads(line)
            shape = (row["batch"],) + tuple(features[row["model"]])
            row["ort"] = row["ort_identity"] = None
            if os.path.isdir(ort):
                got, why = run_ort(ort, os.path.join(args.work, row["model"] + ".onnx"), shape,
                                   threads, args.blocks)
                if got:
                    row["ort"] = got["median_s"]
                    ort_error = max(abs(a - b) for a, b in zip(got["output"], row["want"]))
                    row["ort_error"] = ort_error / max(1e-30, max(abs(v) for v in row["want"]))
                else:
                    print(f"ONNX Runtime on {row['model']}: {why}", file=sys.stderr)
                ident, _ = run_ort(ort, os.path.join(args.work, row["model"] + ".identity.onnx"),
                                   shape, threads, args.blocks)
                row["ort_identity"] = ident["median_s"] if ident else None
            row["gflop"] = graph_flops(os.path.join(args.work, row["model"] + ".onnx"),
                                       row["batch"]) / 1e9
            rows.append(row)
            report_row(row)
    summary(rows)
    return 0


HEADER = (f"{'model':16s} {'batch':>5s} {'thr':>3s} {'RAL ms':>9s} {'ORT ms':>9s} "
          f"{'ORT id ms':>9s} {'TS ms':>9s} {'eager ms':>9s} {'ORT/RAL':>8s} {'TS/RAL':>7s} "
          f"{'eager/RAL':>9s} {'GFLOP/s':>8s} {'%peak':>6s} {'err':>8s}")
_printed_header = False


def report_row(row):
    global _printed_header
    if not _printed_header:
        print(HEADER)
        print("-" * len(HEADER))
        _printed_header = True
    ms = lambda v: f"{v * 1e3:9.2f}" if v else f"{'-':>9s}"  # noqa: E731
    ratio = lambda v, w: f"{v / row['ral']:{w - 1}.2f}x" if v else f"{'-':>{w}s}"  # noqa: E731
    gflops = row["gflop"] / row["ral"]
    peak, _ = peak_gflops(row["threads"])
    print(f"{row['model']:16s} {row['batch']:5d} {row['threads']:3d} {ms(row['ral'])} "
          f"{ms(row['ort'])} {ms(row['ort_identity'])} {ms(row['ts'])} {ms(row['eager'])} "
          f"{ratio(row['ort'], 8)} {ratio(row['ts'], 7)} {ratio(row['eager'], 9)} "
          f"{gflops:8.1f} {100 * gflops / peak:5.1f}% {row['error']:8.1e}", flush=True)


def summary(rows):
    _, how = peak_gflops(1)
    print(f"\nratios: candidate time / RAL time (above 1: RAL faster); peak per thread: {how}")
    with_ort = [r for r in rows if r["ort"]]
    if with_ort:
        ratios = [r["ort"] / r["ral"] for r in with_ort]
        print(f"ORT/RAL: min {min(ratios):.2f}x, median {statistics.median(ratios):.2f}x, "
              f"{sum(x >= 1.2 for x in ratios)}/{len(ratios)} at >= 1.2x, "
              f"{sum(x >= 1.0 for x in ratios)}/{len(ratios)} at >= 1.0x")


if __name__ == "__main__":
    sys.exit(main())
