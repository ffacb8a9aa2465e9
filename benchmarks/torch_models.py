#!/usr/bin/python3
"""PyTorch models compiled by ral_torch.compile against eager PyTorch and TorchScript on the CPU,
in one process: same modules, same inputs, same thread count (RAL_CPU_THREADS and
torch.set_num_threads). The models are those of tests/torch/test_compile_models.py: an MLP with
LayerNorm and GELU, a conv-bn-relu-maxpool CNN, nn.TransformerEncoderLayer(32, 4), and a model
with a cumulative sum the compiler leaves to PyTorch (ral_torch.compile(fallback=True)); each at
batch 1 and a large batch. TorchScript is torch.jit.optimize_for_inference(torch.jit.freeze(
torch.jit.script(model))). Every call runs under torch.inference_mode(). Times are the median
per-call time over interleaved blocks of calls (the candidates take turns block by block, so a
busy machine slows all alike); ratios above 1 mean RAL is faster.

  /usr/bin/python3 benchmarks/torch_models.py [--build build] [--threads 1] [--repeats 15]
                                              [--models mlp cnn transformer fallback] [--dynamic]
"""
import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time
import warnings


def build_models(torch, nn):
    """name -> (model factory, [input shapes]) for batch 1 and a large batch."""

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(256, 512)
            self.norm = nn.LayerNorm(512)
            self.act = nn.GELU()
            self.fc2 = nn.Linear(512, 64)

        def forward(self, x):
            return self.fc2(self.act(self.norm(self.fc1(x))))

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2))
            self.head = nn.Linear(32 * 8 * 8, 10)
            for m in self.features:
                if isinstance(m, nn.BatchNorm2d):
                    m.running_mean.uniform_(-0.5, 0.5)
                    m.running_var.uniform_(0.5, 2.0)

        def forward(self, x):
            return self.head(torch.flatten(self.features(x), 1))

    class DetNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(256, 512)
            self.fc2 = nn.Linear(128, 64)

        def forward(self, x):
            h = torch.relu(self.fc1(x)).reshape(-1, 128, 2, 2)
            return torch.tanh(self.fc2(torch.linalg.det(h)))

    return {
        "mlp": ("MLP 256-512(LN,GELU)-64", MLP, [(1, 256), (256, 256)]),
        "cnn": ("CNN 3x32x32, 2x conv-bn-relu-pool", CNN, [(1, 3, 32, 32), (64, 3, 32, 32)]),
        "transformer": ("TransformerEncoderLayer(32, 4)",
                        lambda: nn.TransformerEncoderLayer(32, 4, batch_first=True),
                        [(1, 128, 32), (32, 128, 32)]),
        "fallback": ("MLP + det (fallback)", DetNet, [(1, 256), (256, 256)]),
    }


_dynamic_modules = {}


def compile_for(ral_torch, model, key, x, dynamic, cache):
    """The model compiled for x's shape, or once for every batch (and sequence) size."""
    fallback = key == "fallback"
    if not dynamic:
        return ral_torch.compile(model, x, fallback=fallback, cache_dir=cache)
    if key not in _dynamic_modules:
        dims = [0, 1] if key == "transformer" else [0]
        _dynamic_modules[key] = ral_torch.compile(model, x, dynamic_dims={0: dims},
                                                  fallback=fallback, cache_dir=cache)
    return _dynamic_modules[key]


def per_call_ms(fns, repeats, block_s=0.05):
    """Median per-call time in ms of each function over `repeats` blocks, the functions taking
    turns block by block; each block lasts about block_s for the slowest."""
    for fn in fns:  # warmup: first calls allocate, JIT (TorchScript profiles its first runs)
        for _ in range(3):
            fn()
    single = []
    for fn in fns:
        start = time.perf_counter()
        fn()
        single.append(time.perf_counter() - start)
    iterations = [max(1, int(block_s / max(t, 1e-7))) for t in single]
    for fn, n in zip(fns, iterations):
        for _ in range(min(n, 200)):
            fn()
    samples = [[] for _ in fns]
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            n = iterations[i]
            start = time.perf_counter()
            for _ in range(n):
                fn()
            samples[i].append((time.perf_counter() - start) / n * 1e3)
    return [statistics.median(s) for s in samples]


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(root, "build"))
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--models", nargs="+", default=["mlp", "cnn", "transformer", "fallback"])
    p.add_argument("--dynamic", action="store_true",
                   help="compile each model once with a dynamic batch (and sequence) dim instead "
                        "of once per shape")
    p.add_argument("--cache-dir", help="module cache (default: a fresh temporary directory)")
    args = p.parse_args()

    # Both sides get the same number of threads (RAL reads this when its CPU driver starts).
    os.environ["RAL_CPU_THREADS"] = str(args.threads)
    # ral_torch from PYTHONPATH when it has one, else from the build.
    if importlib.util.find_spec("ral_torch") is None:
        sys.path.insert(0, os.path.join(args.build, "python"))
    import torch
    from torch import nn
    import ral_torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    cache = args.cache_dir or tempfile.mkdtemp(prefix="ral-bench-cache-")
    models = build_models(torch, nn)
    unknown = [m for m in args.models if m not in models]
    if unknown:
        sys.exit(f"unknown model(s) {unknown}; choose from {list(models)}")

    print(f"RAL (ral_torch.compile) vs eager PyTorch and TorchScript, CPU, {args.threads} "
          f"thread(s), torch {torch.__version__}; median ms per call of {args.repeats} blocks")
    header = (f"{'model':34s} {'input':>14s} {'RAL ms':>9s} {'eager ms':>9s} {'TS ms':>9s} "
              f"{'eager/RAL':>10s} {'TS/RAL':>8s}")
    print(header)
    print("-" * len(header))
    failed = False
    for key in args.models:
        title, factory, shapes = models[key]
        model = factory().eval()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # freeze's notes on constants it folds
            try:
                scripted = torch.jit.optimize_for_inference(
                    torch.jit.freeze(torch.jit.script(model)))
            except Exception as e:  # noqa: BLE001  (some torch versions cannot freeze a module)
                print(f"{title}: TorchScript failed ({type(e).__name__}: {e}); traced instead",
                      file=sys.stderr)
                scripted = torch.jit.optimize_for_inference(torch.jit.freeze(
                    torch.jit.trace(model, torch.randn(*shapes[0]))))
        compiled = None
        for shape in shapes:
            x = torch.randn(*shape)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ral_torch.FallbackWarning)
                try:
                    compiled = compile_for(ral_torch, model, key, x, args.dynamic, cache)
                except ral_torch.CompileError as e:
                    print(f"{title}: RAL cannot compile it: {str(e).splitlines()[0]}")
                    failed = True
                    break
            with torch.inference_mode():
                want = model(x)
                scale = want.abs().max().item()
                for who, got in (("RAL", compiled(x)), ("TorchScript", scripted(x))):
                    error = (got - want).abs().max().item()
                    if error > 1e-3 * max(1.0, scale):
                        print(f"{title} {tuple(shape)}: {who} and eager disagree (max abs diff "
                              f"{error:g})", file=sys.stderr)
                        failed = True
                t_ral, t_eager, t_ts = per_call_ms(
                    [lambda: compiled(x), lambda: model(x), lambda: scripted(x)], args.repeats)
            shape_text = "x".join(str(d) for d in shape)
            print(f"{title:34s} {shape_text:>14s} {t_ral:9.3f} {t_eager:9.3f} {t_ts:9.3f} "
                  f"{t_eager / t_ral:9.2f}x {t_ts / t_ral:7.2f}x", flush=True)
        if key == "fallback" and compiled is not None:
            print(f"  ({compiled.report.splitlines()[0]})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
