#!/usr/bin/python3
"""An LSTM and int8 CNNs through ral-compile against eager PyTorch (f32 and its int8 forms) and
ONNX Runtime on the CPU, in one run.

- lstm: a two-layer LSTM (input 256, hidden 512, batch_first, sequence 64) and a linear head.
  Candidates: RAL on its f32 ONNX export; eager f32; eager with torch's dynamic int8 quantization
  of the LSTM and Linear layers (quantize_dynamic); ONNX Runtime on the f32 export.
- int8_cnn: five 3x3 convolutions with ReLU (32 to 128 channels, two of stride 2), a global
  average pool and a linear head, at 3x112x112. Its QDQ form is built with onnx.helper (Debian has
  no quantization tool): uint8 activations (scales from the eager model's ranges on the input),
  int8 weights per output channel, int32 biases, as ONNX Runtime's quantizer writes it.
  Candidates: RAL on the QDQ model and on the f32 model; eager f32; eager int8 by
  torch.ao.quantization (static, fused conv+relu; fbgemm or, in Debian's torch, onednn); ONNX
  Runtime on both models.
- resnet18: torchvision's ResNet-18 (random weights, seed 0) at 3x224x224, its QDQ form built
  the same way (only Conv and Gemm inputs are quantized: the residual Adds stay f32); eager int8
  is torchvision's quantizable ResNet-18 with the same weights, fused and statically quantized.

Every candidate's output is compared with eager f32 (the `err` column: max abs difference over
max abs value; int8 candidates differ by their rounding). Times are medians of per-block means
(benchmarks/onnx_models.py's method); ratios are candidate time / RAL time of the same row's
reference (RAL f32 for f32 candidates, RAL's QDQ model for int8 ones; above 1: RAL is faster).

  /usr/bin/python3 benchmarks/quantized_models.py [--build build] [--batches 1 8]
      [--threads 1 2] [--ort node_modules/onnxruntime-node] [--work DIR]
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
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import onnx_models as common  # noqa: E402  (per_call_s, run_ort, deterministic_input)

FEATURES = {"lstm": (64, 256), "int8_cnn": (3, 112, 112), "resnet18": (3, 224, 224)}
QUANTIZED = ("int8_cnn", "resnet18")  # the models that also run in QDQ form


def make_lstm(torch):
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(256, 512, num_layers=2, batch_first=True)
            self.head = torch.nn.Linear(512, 64)

        def forward(self, x):
            return self.head(self.lstm(x)[0])

    torch.manual_seed(0)
    return Net().eval()


def make_cnn(torch, quantizable=False):
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            chans = [(3, 32, 2), (32, 64, 1), (64, 64, 2), (64, 128, 1), (128, 128, 1)]
            self.convs = nn.ModuleList(nn.Conv2d(i, o, 3, s, 1) for i, o, s in chans)
            self.relus = nn.ModuleList(nn.ReLU() for _ in chans)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.head = nn.Linear(128, 10)
            self.quant = torch.ao.quantization.QuantStub() if quantizable else nn.Identity()
            self.dequant = torch.ao.quantization.DeQuantStub() if quantizable else nn.Identity()

        def forward(self, x):
            x = self.quant(x)
            for conv, relu in zip(self.convs, self.relus):
                x = relu(conv(x))
            x = self.head(torch.flatten(self.pool(x), 1))
            return self.dequant(x)

    torch.manual_seed(0)
    return Net().eval()


def eager_int8_cnn(torch, f32_model, calibration):
    """torch.ao static quantization of the same weights, conv+relu fused, on the x86 engine this
    torch has (Debian's: onednn; fbgemm elsewhere)."""
    q = make_cnn(torch, quantizable=True)
    q.load_state_dict(f32_model.state_dict(), strict=False)
    q.eval()
    engines = torch.backends.quantized.supported_engines
    engine = next(e for e in ("fbgemm", "onednn", "x86", "qnnpack") if e in engines)
    torch.backends.quantized.engine = engine
    q.qconfig = torch.ao.quantization.get_default_qconfig(engine)
    for i in range(len(q.convs)):
        torch.ao.quantization.fuse_modules(q, [[f"convs.{i}", f"relus.{i}"]], inplace=True)
    torch.ao.quantization.prepare(q, inplace=True)
    with torch.no_grad():
        q(calibration)
    return torch.ao.quantization.convert(q)


def make_resnet18(torch):
    import torchvision
    torch.manual_seed(0)
    return torchvision.models.resnet18().eval()


def eager_int8_resnet18(torch, f32_model, calibration):
    """torchvision's quantizable ResNet-18 with the same weights, fused and statically quantized
    as eager_int8_cnn does."""
    import torchvision
    q = torchvision.models.quantization.resnet18(quantize=False)
    q.load_state_dict(f32_model.state_dict())
    q.eval()
    engines = torch.backends.quantized.supported_engines
    engine = next(e for e in ("fbgemm", "onednn", "x86", "qnnpack") if e in engines)
    torch.backends.quantized.engine = engine
    q.fuse_model()
    q.qconfig = torch.ao.quantization.get_default_qconfig(engine)
    torch.ao.quantization.prepare(q, inplace=True)
    with torch.no_grad():
        q(calibration)
    return torch.ao.quantization.convert(q)


def qdq_model(f32_path, out_path, ranges):
    """The f32 ONNX model with QuantizeLinear/DequantizeLinear around every Conv and Gemm:
    uint8 activations over `ranges` (tensor name -> (min, max)), int8 per-channel weights,
    int32 biases at x_scale * w_scale."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper
    m = onnx.load(f32_path)
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    nodes, done, new_inits = [], {}, []

    def activation(name):
        if name in done:
            return done[name]
        lo, hi = ranges[name]
        lo, hi = min(lo, 0.0), max(hi, 0.0)
        scale = max(hi - lo, 1e-8) / 255.0
        zp = int(np.clip(round(-lo / scale), 0, 255))
        new_inits.extend([numpy_helper.from_array(np.array(scale, np.float32), name + "_s"),
                          numpy_helper.from_array(np.array(zp, np.uint8), name + "_zp")])
        nodes.append(helper.make_node("QuantizeLinear", [name, name + "_s", name + "_zp"],
                                      [name + "_q"]))
        nodes.append(helper.make_node("DequantizeLinear", [name + "_q", name + "_s", name + "_zp"],
                                      [name + "_dq"]))
        done[name] = (name + "_dq", scale)
        return done[name]

    for node in g.node:
        if node.op_type in ("Conv", "Gemm") and node.input[1] in inits:
            x, x_scale = activation(node.input[0])
            w = numpy_helper.to_array(inits[node.input[1]]).astype(np.float64)
            w_scale = np.maximum(np.abs(w.reshape(w.shape[0], -1)).max(axis=1), 1e-8) / 127.0
            shape = (-1,) + (1,) * (w.ndim - 1)
            wq = np.clip(np.round(w / w_scale.reshape(shape)), -127, 127).astype(np.int8)
            wn = node.input[1]
            new_inits.extend([numpy_helper.from_array(wq, wn + "_q"),
                              numpy_helper.from_array(w_scale.astype(np.float32), wn + "_s"),
                              numpy_helper.from_array(np.zeros(len(w_scale), np.int8), wn + "_zp")])
            nodes.append(helper.make_node("DequantizeLinear", [wn + "_q", wn + "_s", wn + "_zp"],
                                          [wn + "_dq"], axis=0))
            inputs = [x, wn + "_dq"]
            if len(node.input) > 2 and node.input[2] in inits:
                bn = node.input[2]
                bias = numpy_helper.to_array(inits[bn]).astype(np.float64)
                b_scale = (x_scale * w_scale).astype(np.float32)
                bq = np.round(bias / b_scale).astype(np.int32)
                new_inits.extend([numpy_helper.from_array(bq, bn + "_q"),
                                  numpy_helper.from_array(b_scale, bn + "_s"),
                                  numpy_helper.from_array(np.zeros(len(bq), np.int32), bn + "_zp")])
                nodes.append(helper.make_node("DequantizeLinear",
                                              [bn + "_q", bn + "_s", bn + "_zp"], [bn + "_dq"],
                                              axis=0))
                inputs.append(bn + "_dq")
            node.input[:] = inputs
        nodes.append(node)
    used = {i for n in nodes for i in n.input}
    kept = [i for i in g.initializer if i.name in used]
    del g.node[:]
    g.node.extend(nodes)
    del g.initializer[:]
    g.initializer.extend(kept + new_inits)
    onnx.save(m, out_path)


def activation_ranges(torch, model, x, path):
    """Each Conv/Gemm input's (min, max) on x, by the ONNX tensor names of the export."""
    import onnx
    g = onnx.load(path).graph
    inputs = [n.input[0] for n in g.node if n.op_type in ("Conv", "Gemm")]
    seen = []
    hooks = [m.register_forward_pre_hook(lambda mod, a: seen.append(a[0]))
             for m in model.modules() if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]
    with torch.no_grad():
        model(x)
    for h in hooks:
        h.remove()
    assert len(seen) == len(inputs), (len(seen), inputs)
    return {name: (t.min().item(), t.max().item()) for name, t in zip(inputs, seen)}


def prepare(torch, work, ral_compile):
    """Exports and compiles every model once: {name: {kind: (onnx, ralm)}}."""
    files = {}
    models = {"lstm": make_lstm(torch), "int8_cnn": make_cnn(torch),
              "resnet18": make_resnet18(torch)}
    for name, model in models.items():
        path = os.path.join(work, name + ".onnx")
        x = common.deterministic_input(torch, (1,) + FEATURES[name])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"],
                              dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}},
                              opset_version=13)
        files[name] = {"f32": path}
    for name in QUANTIZED:
        qdq = os.path.join(work, name + ".qdq.onnx")
        x = common.deterministic_input(torch, (8,) + FEATURES[name])
        qdq_model(files[name]["f32"], qdq,
                  activation_ranges(torch, models[name], x, files[name]["f32"]))
        files[name]["int8"] = qdq
    for name, kinds in files.items():
        for kind, path in kinds.items():
            ralm = path[:-5] + ".ralm"
            start = time.perf_counter()
            done = subprocess.run([ral_compile, path, "-o", ralm], capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"ral-compile {path} failed:\n{done.stderr}")
            print(f"compiled {name} ({kind}) in {time.perf_counter() - start:.1f} s",
                  file=sys.stderr)
    return files


def worker(args):
    os.environ["RAL_CPU_THREADS"] = str(args.worker)
    import torch
    import ral_torch
    torch.set_num_threads(args.worker)
    models = {"lstm": make_lstm(torch), "int8_cnn": make_cnn(torch),
              "resnet18": make_resnet18(torch)}

    def calibration(name):
        return common.deterministic_input(torch, (8,) + FEATURES[name])
    eager_int8 = {
        "lstm": torch.ao.quantization.quantize_dynamic(models["lstm"],
                                                       {torch.nn.LSTM, torch.nn.Linear},
                                                       dtype=torch.qint8),
        "int8_cnn": eager_int8_cnn(torch, models["int8_cnn"], calibration("int8_cnn")),
        "resnet18": eager_int8_resnet18(torch, models["resnet18"], calibration("resnet18")),
    }
    for name, model in models.items():
        work = os.path.join(args.work, name)
        kinds = {"f32": work + ".onnx"}
        if name in QUANTIZED:
            kinds["int8"] = work + ".qdq.onnx"
        compiled = {k: ral_torch.load(p[:-5] + ".ralm") for k, p in kinds.items()}
        for batch in args.batches:
            shape = (batch,) + FEATURES[name]
            x = common.deterministic_input(torch, shape)
            with torch.inference_mode():
                want = model(x)
                fns = {"RAL f32": lambda: compiled["f32"](x), "eager f32": lambda: model(x),
                       "eager int8": lambda: eager_int8[name](x)}
                if "int8" in compiled:
                    fns["RAL int8"] = lambda: compiled["int8"](x)
                errors = {}
                for k, fn in fns.items():
                    got = fn()
                    got = got[0] if isinstance(got, (tuple, list)) else got
                    errors[k] = ((got - want).abs().max() / want.abs().max()).item()
                samples = common.per_call_s(list(fns.values()), args.blocks)
            times = {k: statistics.median(s) for k, s in zip(fns, samples)}
            if args.ort and os.path.isdir(args.ort):
                for k, path in kinds.items():
                    got, why = common.run_ort(args.ort, path, shape, args.worker, args.blocks)
                    label = f"ORT {k}"
                    if got:
                        times[label] = got["median_s"]
                        want8 = want.flatten()[:8].tolist()
                        errors[label] = max(abs(a - b) for a, b in zip(got["output"], want8)) / \
                            max(1e-30, max(abs(v) for v in want8))
                    else:
                        print(f"ONNX Runtime on {name} ({k}): {why}", file=sys.stderr)
            print(json.dumps({"model": name, "batch": batch, "threads": args.worker,
                              "times": times, "errors": errors}), flush=True)


def report(row):
    times, errors = row["times"], row["errors"]
    print(f"\n{row['model']} batch {row['batch']}, {row['threads']} thread(s)")
    for k in sorted(times, key=lambda k: (k.split()[1], k)):
        ref = times["RAL int8"] if k.endswith("int8") and "RAL int8" in times else times["RAL f32"]
        ref_name = "RAL int8" if k.endswith("int8") and "RAL int8" in times else "RAL f32"
        print(f"  {k:11s} {times[k] * 1e3:9.2f} ms   {times[k] / ref:6.2f}x of {ref_name:8s}"
              f"   err {errors.get(k, float('nan')):8.1e}")
    if "RAL int8" in times:
        print(f"  RAL int8 / RAL f32 time: {times['RAL int8'] / times['RAL f32']:.2f} "
              "(below 1: the int8 model is faster)")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--batches", nargs="+", type=int, default=[1, 8])
    p.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    p.add_argument("--blocks", type=int, default=5)
    p.add_argument("--ort", default=os.path.join(ROOT, "node_modules", "onnxruntime-node"))
    p.add_argument("--work", help="exported and compiled models (default: a temporary dir)")
    p.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    python_dir = os.path.join(args.build, "python")
    if python_dir not in sys.path:
        sys.path.insert(0, python_dir)
    if args.worker:
        return worker(args)
    import torch
    args.work = args.work or tempfile.mkdtemp(prefix="ral-quantized-models-")
    prepare(torch, args.work, os.path.join(args.build, "compiler_passes", "ral-compile"))
    common.run_workers(__file__, args, [], report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
