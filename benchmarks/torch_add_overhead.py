"""Per-call cost of a tiny RAL module through ral_torch, against torch.add and a scripted function
doing the same add, on the same two 1x8 float tensors, in one process.

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/torch_add_overhead.py \
        build/tests/modules/add_r2.ralm

Prints microseconds per call (the best of several repetitions, each timing many calls; the cases
take turns within each repetition, so that all see the same load) and the ratios against
torch.add and against the scripted function. An nn.Module that only calls torch.add is measured
too: the cost of nn.Module.__call__ itself. `ral(a, b)` takes the eager fast path (ral_torch._fast,
no nn.Module.__call__, no TorchScript method call); the module's path through nn.Module.__call__
(what a call with hooks takes), the extension's runner alone, the scripted module and the
custom-class method are listed for comparison.
"""

import argparse
import timeit

import torch

import ral_torch

try:
    from ral_torch import _fast as fast
except ImportError:
    fast = None


def per_call_us(cases, number, repeat):
    """{name: best us/call}; each repetition times every case once, in turn."""
    for _, fn in cases:
        for _ in range(100):
            fn()
    best = {name: float("inf") for name, _ in cases}
    for _ in range(repeat):
        for name, fn in cases:
            best[name] = min(best[name], timeit.timeit(fn, number=number) / number * 1e6)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("module", help="the add module (?x?xf32, ?x?xf32 -> ?x?xf32)")
    parser.add_argument("--number", type=int, default=20000, help="calls per repetition")
    parser.add_argument("--repeat", type=int, default=7, help="repetitions (the best is kept)")
    args = parser.parse_args()

    a, b = torch.randn(1, 8), torch.randn(1, 8)

    @torch.jit.script
    def scripted_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.add(x, y)

    class TorchAddModule(torch.nn.Module):
        def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            return torch.add(x, y)

    add_module = TorchAddModule()
    ral = ral_torch.load(args.module)
    ral_scripted = torch.jit.script(ral)
    custom_class = ral.module
    assert torch.equal(ral(a, b), a + b) and torch.equal(ral_scripted(a, b), a + b)

    module_call = torch.nn.Module.__call__
    cases = [
        ("torch.add (baseline)", lambda: torch.add(a, b)),
        ("scripted torch.add", lambda: scripted_add(a, b)),
        ("nn.Module calling torch.add", lambda: add_module(a, b)),
        ("ral_torch module", lambda: ral(a, b)),
        ("ral_torch module, nn.Module.__call__", lambda: module_call(ral, a, b)),
        ("ral_torch module, scripted", lambda: ral_scripted(a, b)),
        ("torch.classes.ral.Module.forward", lambda: custom_class.forward([a, b])),
    ]
    if fast is not None:
        handle = custom_class.handle()
        cases.append(("ral_torch._fast.run", lambda: fast.run(handle, a, b)))
        assert torch.equal(fast.run(handle, a, b), a + b)
    else:
        print("ral_torch._fast is not built: ral_torch modules use the TorchScript method")
    times = per_call_us(cases, args.number, args.repeat)
    base = times["torch.add (baseline)"]
    scripted = times["scripted torch.add"]
    print("torch {}, {} thread(s); 1x8 float tensors".format(torch.__version__, torch.get_num_threads()))
    print("{:40s} {:>10s} {:>12s} {:>14s}".format("", "us/call", "/ torch.add", "/ scripted fn"))
    for name, _ in cases:
        t = times[name]
        print("{:40s} {:10.2f} {:12.2f} {:14.2f}".format(name, t, t / base, t / scripted))


if __name__ == "__main__":
    main()
