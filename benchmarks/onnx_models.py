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
the model's convolution, linear and attention multiply-adds (forward hooks); %peak is against
the best 2048^3 oneDNN sgemm at the same thread count, measured in the same run.

  /usr/bin/python3 benchmarks/onnx_models.py [--build build] [--models resnet18 ...]
      [--batches 1 8] [--threads 1 2] [--ort node_modules/onnxruntime-node] [--work DIR]

ONNX Runtime: `npm install --ignore-scripts onnxruntime-node` (in the repository root or
--ort's parent); without it the ORT columns are blank. --work keeps the exported and compiled
models; a compiled one is reused only while ral-compile, the .onnx and --ral-flags are unchanged.
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
    model = getattr(torchvision.models, name)(weights=None).eval()
    if name == "vit_b_16":
        torch.nn.init.normal_(model.heads.head.weight, std=0.02)  # zeros by default
    return model, (3, 224, 224)


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


def model_flops(torch, model, x):
    """2 x the multiply-adds of the model's convolutions, linear layers and attention at this
    input, counted with forward hooks (nn.MultiheadAttention's projections and products are
    counted by formula: it calls its weights functionally)."""
    total = [0]

    def conv(m, inputs, out):
        window = 1
        for k in m.kernel_size:
            window *= k
        total[0] += 2 * out.numel() * (m.in_channels // m.groups) * window

    def linear(m, inputs, out):
        total[0] += 2 * out.numel() * m.in_features

    def attention(m, inputs, out):
        q = out[0]  # the query's shape (the module is often called with keywords only)
        e = m.embed_dim
        tokens = q.numel() // e
        length = q.shape[1] if m.batch_first else q.shape[0]
        total[0] += 2 * tokens * e * 4 * e + 2 * 2 * tokens * length * e

    if any(isinstance(m, torch.nn.TransformerEncoderLayer) for m in model.modules()):
        # In eval mode the encoder takes a fused path that calls no submodule; counting runs a
        # training-mode copy (dropout is 0, shapes are the same).
        import copy
        model = copy.deepcopy(model).train()
    counted_by_attention = {id(m.out_proj) for m in model.modules()
                            if isinstance(m, torch.nn.MultiheadAttention)}
    hooks = []
    for m in model.modules():
        if isinstance(m, (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d)):
            hooks.append(m.register_forward_hook(conv))
        elif isinstance(m, torch.nn.MultiheadAttention):
            hooks.append(m.register_forward_hook(attention))
        elif isinstance(m, torch.nn.Linear) and id(m) not in counted_by_attention:
            hooks.append(m.register_forward_hook(linear))
    with torch.no_grad():
        model(x)
    for h in hooks:
        h.remove()
    return total[0]


def sgemm_peak_gflops(threads):
    """The best of a few 2048^3 oneDNN sgemm calls at this thread count: what the machine's FP32
    FMA units sustain on the best-tuned kernel at hand (RAL's convolutions and GEMMs use it)."""
    import ctypes
    import numpy as np
    try:
        dnnl = ctypes.CDLL("libdnnl.so.2")
        omp = ctypes.CDLL("libgomp.so.1")
    except OSError:
        return None
    omp.omp_set_num_threads(threads)
    n = 2048
    a = np.full((n, n), 0.5, np.float32)
    b = np.full((n, n), 0.25, np.float32)
    c = np.zeros((n, n), np.float32)
    f = dnnl.dnnl_sgemm
    f.argtypes = [ctypes.c_char, ctypes.c_char] + [ctypes.c_int64] * 3 + [
        ctypes.c_float, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
        ctypes.c_float, ctypes.c_void_p, ctypes.c_int64]
    best = float("inf")
    for _ in range(4):
        start = time.perf_counter()
        f(b"N", b"N", n, n, n, 1.0, a.ctypes.data, n, b.ctypes.data, n, 0.0, c.ctypes.data, n)
        best = min(best, time.perf_counter() - start)
    return 2 * n ** 3 / best / 1e9


def per_call_s(fns, blocks, block_s=0.5):
    """Per-block mean per-call times (`blocks` of them per candidate); candidates take turns block
    by block, so a busy machine slows all alike."""
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
    return samples


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
    peak = sgemm_peak_gflops(args.worker)
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
                ral, eager, ts = per_call_s(
                    [lambda: compiled(x), lambda: model(x), lambda: scripted(x)], args.blocks)
                # ONNX Runtime runs in another process, right after, then RAL once more: RAL's
                # figure brackets ORT's in time.
                row = {"model": name, "batch": batch, "threads": args.worker, "error": error,
                       "ort": None, "ort_identity": None}
                if args.ort and os.path.isdir(args.ort):
                    shape = (batch,) + tuple(feature)
                    got_ort, why = run_ort(args.ort, onnx_path, shape, args.worker, args.blocks)
                    if got_ort:
                        row["ort"] = got_ort["median_s"]
                        want8 = want.flatten()[:8].tolist()
                        row["ort_error"] = max(abs(a - b) for a, b in zip(
                            got_ort["output"], want8)) / max(1e-30, max(abs(v) for v in want8))
                    else:
                        print(f"ONNX Runtime on {name}: {why}", file=sys.stderr)
                    ident, _ = run_ort(args.ort, os.path.join(args.work, name + ".identity.onnx"),
                                       shape, args.worker, args.blocks)
                    row["ort_identity"] = ident["median_s"] if ident else None
                    ral += per_call_s([lambda: compiled(x)], args.blocks)[0]
            row.update(ral=statistics.median(ral), eager=statistics.median(eager),
                       ts=statistics.median(ts), gflop=model_flops(torch, model, x) / 1e9,
                       peak=peak)
            print(json.dumps(row), flush=True)
        del x1


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
    os.makedirs(args.work, exist_ok=True)
    ral_compile = os.path.join(args.build, "compiler_passes", "ral-compile")
    features = {}
    for name in args.models:
        model, feature = make_model(torch, name)
        features[name] = feature
        onnx_path = os.path.join(args.work, name + ".onnx")
        ralm = os.path.join(args.work, name + ".ralm")
        if not os.path.exists(onnx_path):
            export(torch, model, feature, onnx_path)
        # A module in --work is reused only if this ral-compile made it with these flags from
        # this .onnx: a rebuilt compiler or other flags compile it again.
        stamp_path = ralm + ".stamp"
        stamp = f"{os.stat(ral_compile).st_mtime_ns} {os.stat(onnx_path).st_mtime_ns} " \
                f"{args.ral_flags}"
        current = os.path.exists(ralm) and os.path.exists(stamp_path) and \
            open(stamp_path).read() == stamp
        if not current:
            start = time.perf_counter()
            done = subprocess.run([ral_compile, onnx_path, "-o", ralm] + args.ral_flags.split(),
                                  capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"ral-compile {name} failed:\n{done.stderr}")
            with open(stamp_path, "w") as f:
                f.write(stamp)
            print(f"compiled {name} in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        identity_model(os.path.join(args.work, name + ".identity.onnx"), feature)

    rows = run_workers(__file__, args, ["--models", *args.models], report_row)
    summary(rows)
    return 0


def run_workers(script, args, extra, on_row):
    """Runs `script --worker N` once per thread count of args.threads (a fresh process each, so
    the thread settings take), passing on --build, --work, --blocks, --ort, --batches and `extra`;
    each JSON line it prints goes to on_row. The rows, in order."""
    python_dir = os.path.join(args.build, "python")
    env = dict(os.environ, PYTHONPATH=python_dir + os.pathsep + os.environ.get("PYTHONPATH", ""))
    rows = []
    for threads in args.threads:
        command = [sys.executable, os.path.abspath(script), "--worker", str(threads),
                   "--build", args.build, "--work", args.work, "--blocks", str(args.blocks),
                   "--ort", os.path.abspath(args.ort), *extra,
                   "--batches", *map(str, args.batches)]
        worker_process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
        for line in worker_process.stdout:
            row = json.loads(line)
            rows.append(row)
            on_row(row)
        if worker_process.wait() != 0:
            sys.exit(f"worker ({threads} threads) failed")
    return rows


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
    peak = row["peak"] or float("nan")
    print(f"{row['model']:16s} {row['batch']:5d} {row['threads']:3d} {ms(row['ral'])} "
          f"{ms(row['ort'])} {ms(row['ort_identity'])} {ms(row['ts'])} {ms(row['eager'])} "
          f"{ratio(row['ort'], 8)} {ratio(row['ts'], 7)} {ratio(row['eager'], 9)} "
          f"{gflops:8.1f} {100 * gflops / peak:5.1f}% {row['error']:8.1e}", flush=True)


def summary(rows):
    peaks = sorted({(r["threads"], round(r["peak"] or 0)) for r in rows})
    print("\nratios: candidate time / RAL time (above 1: RAL faster); %peak: of oneDNN's 2048^3 "
          "sgemm at the same thread count (" +
          ", ".join(f"{t} thread(s): {p} GFLOP/s" for t, p in peaks) + ")")
    with_ort = [r for r in rows if r["ort"]]
    if with_ort:
        ratios = [r["ort"] / r["ral"] for r in with_ort]
        print(f"ORT/RAL: min {min(ratios):.2f}x, median {statistics.median(ratios):.2f}x, "
              f"{sum(x >= 1.2 for x in ratios)}/{len(ratios)} at >= 1.2x, "
              f"{sum(x >= 1.0 for x in ratios)}/{len(ratios)} at >= 1.0x")


if __name__ == "__main__":
    sys.exit(main())
