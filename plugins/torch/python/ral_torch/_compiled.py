"""What ral_torch.compile returns: CompiledModule, which runs a compiled RAL module with the
original module's calling convention, scripts with torch.jit.script and pickles; the spec it is
rebuilt from; and the module cache's location and CPU fingerprint."""

import builtins
import hashlib
import itertools
import linecache
import threading
import weakref
from typing import List, Tuple

import torch
from torch import Tensor

from . import _cache
from ._module import _GLOBAL_HOOKS, _INSTANCE_HOOKS, _tracing_state


def cache_dir(path=None) -> str:
    """The module cache directory: `path`, else $RAL_CACHE_DIR, else ~/.cache/ral."""
    return _cache.resolve_dir(path)[0]


def _cpu_fingerprint() -> str:
    """What --mcpu=native compiles for: the CPU's model and feature flags (a module cached on one
    machine of a shared cache directory is not reused on a machine without its instructions)."""
    fields = []
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key = line.split(":", 1)[0].strip()
                if key in ("vendor_id", "model name", "flags", "Features", "CPU part"):
                    fields.append(line.strip())
                    if len(fields) >= 3:
                        break
    except OSError:
        import platform
        fields.append(platform.machine() + " " + platform.processor())
    return hashlib.sha256("\n".join(fields).encode()).hexdigest()


class CompiledModule(torch.nn.Module):
    """What ral_torch.compile returns: `inner` (a RalModule, or with fallback a torch.fx
    GraphModule mixing RalModules and PyTorch code) behind a forward() with the original module's
    leading parameters and output structure (a tensor, a tuple or a list of tensors).

    coverage: the fraction of the module's graph nodes RAL runs (1.0 without fallback).
    report: what was compiled and what stayed in PyTorch, and why.

    Each instance belongs to a generated subclass whose forward() has the right parameters, so that
    torch.jit.script can compile it (TorchScript has no *args); pickling rebuilds it from its
    parts. Eager calls with tensors only skip nn.Module.__call__ when nothing needs it (no hooks,
    no tracing), as RalModule does.
    """

    def __init__(self, inner: torch.nn.Module, spec: "_Spec", coverage: float = 1.0,
                 report: str = ""):
        super().__init__()
        self.inner = inner
        self.coverage = float(coverage)
        self.report = str(report)
        object.__setattr__(self, "_spec", spec)
        # The RalModule's own __call__ serves eager calls when forward() would only pass the
        # arguments through and return its result unchanged.
        direct = (spec.kind == "ral" and spec.uses == tuple(range(len(spec.params)))
                  and (spec.structure == "tensor"
                       or (spec.structure == "tuple" and spec.count > 1)))
        object.__setattr__(self, "_direct", inner if direct else None)
        object.__setattr__(self, "source", "")

    def __call__(self, *args, **kwargs):
        direct = self._direct
        if (direct is None or kwargs or len(args) != len(self._spec.params)
                or not all(isinstance(a, Tensor) for a in args)
                or any(getattr(self, h) for h in _INSTANCE_HOOKS) or any(_GLOBAL_HOOKS)
                or _tracing_state() is not None):
            return torch.nn.Module.__call__(self, *args, **kwargs)
        return direct(*args)

    def extra_repr(self) -> str:
        return f"coverage={self.coverage:.3f}"

    def __reduce__(self):
        return (_rebuild, (self.inner, self._spec, self.coverage, self.report))


class _Spec:
    """How a CompiledModule's forward() calls `inner`: the parameter names, which of them inner
    takes (an export drops inputs the graph does not use), what inner returns (kind "ral": a
    tensor for one output, else a tuple; kind "graph": the original structure) and the structure
    forward() returns with its number of tensors."""

    __slots__ = ("params", "uses", "kind", "structure", "count")

    def __init__(self, params, uses, kind, structure, count):
        self.params, self.uses, self.kind = tuple(params), tuple(uses), kind
        self.structure, self.count = structure, count

    def __getstate__(self):
        return (self.params, self.uses, self.kind, self.structure, self.count)

    def __setstate__(self, state):
        self.params, self.uses, self.kind, self.structure, self.count = state

    def forward_source(self) -> str:
        args = "".join(f", {p}: Tensor" for p in self.params)
        call = "self.inner({})".format(", ".join(self.params[i] for i in self.uses))
        n = self.count
        if self.structure == "tensor":
            result, body = "Tensor", f"return {call}"
        elif self.structure == "tuple":
            result = "Tuple[{}]".format(", ".join(["Tensor"] * n))
            single = self.kind == "ral" and n == 1
            body = f"return ({call},)" if single else f"return {call}"
        else:
            result = "List[Tensor]"
            if self.kind == "graph":
                body = f"return {call}"
            elif n == 1:
                body = f"return [{call}]"
            else:
                items = ", ".join(f"out[{i}]" for i in range(n))
                body = f"out = {call}\n    return [{items}]"
        return f"def forward(self{args}) -> {result}:\n    {body}\n"


_counter = itertools.count(1)
_classes = weakref.WeakValueDictionary()  # forward source -> generated class, while one lives
_classes_lock = threading.Lock()


def _make(inner, spec: _Spec, coverage: float = 1.0, report: str = "") -> CompiledModule:
    source = spec.forward_source()
    with _classes_lock:
        cls = _classes.get(source)
        if cls is None:
            filename = f"<ral_torch compiled forward {next(_counter)}>"
            # As in _module.py: torch.jit.script reads the source through linecache.
            linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
            namespace = {"torch": torch, "Tensor": Tensor, "List": List, "Tuple": Tuple}
            exec(builtins.compile(source, filename, "exec"), namespace)
            forward = namespace["forward"]
            forward.__module__ = __name__
            cls = type("CompiledModule", (CompiledModule,),
                       {"forward": forward, "__module__": __name__,
                        "__qualname__": "CompiledModule"})
            weakref.finalize(cls, linecache.cache.pop, filename, None).atexit = False
            _classes[source] = cls
    return cls(inner, spec, coverage, report)


def _rebuild(inner, spec, coverage, report):
    return _make(inner, spec, coverage, report)
