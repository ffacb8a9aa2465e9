"""ral_torch.compile: a PyTorch module exported to ONNX, compiled by RAL's compiler in process, and
run as a RAL module.

    compiled = ral_torch.compile(model, (x,), dynamic_dims={0: [0]})
    y = compiled(x)

The parts: torch.onnx.export (TorchScript-based) writes the module's ONNX graph to memory; the
compiler library (_compiler.py, libral_compiler.so) turns it into a .ralm file kept in a module
cache (_cache.py); ral_torch.load_bytes runs it. CompiledModule wraps the result so that it has the
original module's calling convention, scripts with torch.jit.script and pickles. _checks.py holds
what makes sure the result computes what the module does: the tracer's warnings, a comparison with
eager PyTorch on a second input, and the refusal of modules that change their state.

With fallback=True, a module the compiler cannot take whole is traced with torch.fx, and the
maximal runs of nodes the compiler handles are compiled, each as a module of its own, while the
rest stays in PyTorch (_Fallback).
"""

import builtins
import contextlib
import copy
import hashlib
import inspect
import io
import itertools
import keyword
import linecache
import logging
import operator
import os
import re
import sys
import tempfile
import threading
import warnings
import weakref
from typing import Dict, List, Optional, Tuple

import torch
from torch import Tensor

from . import _cache, _checks, _compiler
from ._cache import CacheError
from ._checks import TracingError
from ._compiler import CompileError, UnsupportedOperatorError
from ._module import _GLOBAL_HOOKS, _INSTANCE_HOOKS, _tracing_state, load_bytes

__all__ = ["compile", "CompiledModule", "FallbackWarning", "cache_dir"]

# Operators the ONNX exporter itself cannot export, e.g. "Exporting the operator 'aten::foo' to
# ONNX opset version 14 is not supported" (torch 2.x quotes the name, 1.13 does not).
_EXPORTER_UNSUPPORTED = re.compile(r"Exporting the operator '?([\w:.]+)'? to ONNX")
# The fused kernels nn.TransformerEncoderLayer and nn.MultiheadAttention take in eval mode under
# no_grad (their "fast path"), which the exporter cannot export.
_FASTPATH_OPS = ("aten::_transformer_encoder_layer_fwd", "aten::_native_multi_head_attention")
# Names the generated forward() uses itself: never parameter names.
_RESERVED_NAMES = frozenset(("self", "out", "torch", "Tensor", "List", "Tuple"))
_COMPUTE_OPS = ("call_module", "call_function", "call_method")
_log = logging.getLogger("ral_torch")
# torch.onnx.export runs one at a time: the warning filters it is watched with and the attention
# fast-path switch are process-wide.
_export_lock = threading.RLock()
# How many times fallback halves a run of nodes that failed as one part (each costs a compile).
_MAX_SPLITS = 16


class FallbackWarning(UserWarning):
    """Issued by ral_torch.compile(fallback=True) when part of a module stays in PyTorch."""


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


def compile(module: torch.nn.Module, example_inputs, dynamic_dims=None, fallback: bool = False,
            device: str = "cpu", opset: Optional[int] = None, cache_dir=None,
            max_memory=None) -> "CompiledModule":
    """Compiles `module` for `device` with RAL and returns a CompiledModule computing the same.

    example_inputs: a tensor or a tuple of tensors, the leading positional arguments of forward()
        (later parameters keep their defaults). Shapes are static except for
    dynamic_dims: {input index or parameter name: [dim, ...]} (or {dim: symbol name}; inputs whose
        dims share a symbol have equal sizes); those dims may change size from call to call.
    fallback: without it, a module using an operator the compiler does not support raises
        UnsupportedOperatorError naming each one, and one tracing cannot capture raises
        TracingError (below); with it, those parts stay in PyTorch, and .coverage says how much
        of the graph was compiled. The module is traced with torch.fx; submodules it cannot
        trace (Python control flow on tensors) are kept whole as single nodes, and when forward()
        itself cannot be traced the whole module stays in PyTorch (coverage 0).
    opset: the ONNX opset to export with (None: torch's default).
    cache_dir: where compiled modules are kept (None: $RAL_CACHE_DIR, else ~/.cache/ral); a module
        exported to the same ONNX bytes for the same device and compiler is not compiled again.
    max_memory: bounds what the compiler (which runs in this process) may use: bytes (an int) or
        ral-compile's --max-memory text ("512M", "4G"); None for no limit. Constants beyond it
        are refused by size before they are copied, and the process's resident memory growth is
        checked after every pass (a coarse bound: other threads' allocations count too). Going
        over it is a CompileError; the process goes on.

    What tracing cannot capture is refused, never compiled into a module that is right for the
    example only: torch.onnx.export runs forward() once and records tensor operations, so Python
    branches on a tensor's value or on a size and values read into Python (.item(), int(),
    .tolist(), numpy) would be fixed to the example's. The exporter's TracerWarnings about them
    raise TracingError (quoting each warning and its source line), and so does a compiled module
    that differs from eager PyTorch on a second input built from the example inputs (other
    floating-point values, every dynamic dim one larger; skipped with a logged note when eager
    PyTorch fails on it or is not deterministic). A forward() that changes the module's
    parameters or buffers (in place or by reassigning them) or its inputs raises MutationError,
    even with fallback.

    The module is exported and compiled in eval mode; its parameters, buffers and training flags
    and the example inputs are left as they were. The result is inference-only and does not follow
    later changes to the module's parameters.

    The cache keeps beside each module what it was compiled from (the ONNX graph's SHA-256, the
    device, the compiler's options and version, the CPU) and the module's SHA-256; an entry that
    does not match the request or its hash is compiled again and replaced (logged). Entries are
    written atomically, so processes and threads may share a cache. A cache directory that cannot
    be created or written raises CacheError (a RuntimeError naming the path) when it was chosen
    (cache_dir= or $RAL_CACHE_DIR); the default ~/.cache/ral being unusable only warns
    (RuntimeWarning), and the module is compiled without being cached.
    """
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"ral_torch.compile: expected a torch.nn.Module, got "
                        f"{type(module).__name__}")
    inputs = _example_inputs(example_inputs)
    name = _symbol(type(module).__name__)
    params = _parameter_names(module, len(inputs))
    dynamic = _dynamic_dims(dynamic_dims, inputs, params, name)
    job = _CompileJob(device, opset, cache_dir, max_memory)
    with _module_lock(module):
        return _compile_locked(module, inputs, name, params, dynamic, job, fallback)


def _compile_locked(module, inputs, name, params, dynamic, job, fallback) -> "CompiledModule":
    preserved = _checks.Preserved(module, inputs)
    try:
        module.eval()
        outputs = preserved.check_pure(module, inputs, name, params)
        structure = _structure(outputs, name)
        second = _checks.SecondInput(module, inputs, dynamic, name)
        try:
            compiled = job.compile_whole(module, inputs, dynamic, name, structure, params)
            second.verify(compiled)
        except CompileError as e:
            if not fallback:
                if isinstance(e, UnsupportedOperatorError):
                    raise UnsupportedOperatorError(
                        f"{e}\nCompile with fallback=True to keep these operators in PyTorch "
                        f"and compile the rest.", e.operators, e.diagnostics) from None
                raise
            # Whatever failed (an operator, tracing, or the compiler on the whole graph) is
            # narrowed down node by node, and the report says what stayed in PyTorch.
            return _Fallback(job, module, inputs, dynamic, name, structure, params, e,
                             second).run()
        compiled.report = (f"ral_torch.compile: {name}: all of it compiled for {job.device} "
                           f"(module {compiled.source})")
        _log.info("%s", compiled.report)
        return compiled
    finally:
        preserved.restore()


_module_locks = weakref.WeakKeyDictionary()  # module -> the lock its compiles hold
_module_locks_guard = threading.Lock()


def _module_lock(module) -> threading.RLock:
    """One compile of a module object at a time: each switches it to eval mode and puts its
    training flags and state back at the end, which concurrent compiles would interleave."""
    with _module_locks_guard:
        lock = _module_locks.get(module)
        if lock is None:
            lock = _module_locks[module] = threading.RLock()
        return lock


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


class _CompileJob:
    """One compile() call's settings: exports modules to ONNX, compiles them through the module
    cache, and answers whether single nodes are supported (for fallback)."""

    # (device, opset, compiler version, node key) -> None when supported, else the reason.
    _support: Dict[tuple, Optional[str]] = {}
    _support_lock = threading.Lock()

    def __init__(self, device: str, opset: Optional[int], cache_dir_arg, max_memory=None):
        if not isinstance(device, str) or not device or any(c.isspace() for c in device):
            raise ValueError(f"ral_torch.compile: device must be a device kind such as 'cpu', "
                             f"not {device!r}")
        # The torch context binds torch tensors on the CPU and on CUDA devices only.
        if device not in ("cpu", "cuda"):
            raise ValueError(f"ral_torch.compile: device {device!r} is not one PyTorch tensors "
                             f"live on for RAL: use 'cpu' or 'cuda' (ral-compile "
                             f"--device={device} builds modules for ral-run and the C API)")
        if opset is not None:
            constants = getattr(torch.onnx, "_constants", None)
            low = getattr(constants, "ONNX_MIN_OPSET", 1)
            high = getattr(constants, "ONNX_MAX_OPSET", 10**6)
            if isinstance(opset, bool) or not isinstance(opset, int) or not low <= opset <= high:
                raise ValueError(f"ral_torch.compile: opset must be None or an ONNX opset "
                                 f"torch.onnx.export writes ({low}..{high}), not {opset!r}")
        if max_memory is not None:
            text = str(max_memory) if isinstance(max_memory, (int, str)) else None
            if (isinstance(max_memory, bool) or text is None or not text.strip()
                    or any(c.isspace() for c in text) or text.startswith("-")):
                raise ValueError(f"ral_torch.compile: max_memory must be None, a number of "
                                 f"bytes or a size such as '4G', not {max_memory!r}")
            max_memory = text  # the compiler checks its value (a CompileError if it refuses it)
        self.max_memory = max_memory
        self.device = device
        self.opset = opset
        self.cache = _cache.Cache(*_cache.resolve_dir(cache_dir_arg))
        self.cache_dir = self.cache.dir
        from . import __version__
        self.version = f"ral_torch {__version__}; {_compiler.version()}"

    # Export.

    def export(self, module, inputs, dynamic, n_outputs, what: str, quiet=False) -> bytes:
        """The ONNX bytes of `module` called on copies of `inputs` (named input_0...; outputs
        output_0...), with the dims of `dynamic` ({index: {dim: symbol}}) symbolic. Raises
        TracingError when the tracer warned that it fixed Python values; `quiet` drops the
        exporter's other warnings."""
        names = [f"input_{i}" for i in range(len(inputs))]
        kwargs = dict(input_names=names, output_names=[f"output_{i}" for i in range(n_outputs)],
                      do_constant_folding=True)
        if dynamic:
            kwargs["dynamic_axes"] = {names[i]: dict(dims) for i, dims in dynamic.items()}
        if self.opset is not None:
            kwargs["opset_version"] = self.opset
        accepted = inspect.signature(torch.onnx.export).parameters
        if "training" in accepted:
            kwargs["training"] = torch.onnx.TrainingMode.EVAL
        if "dynamo" in accepted:
            kwargs["dynamo"] = False  # torch 2.x: the TorchScript-based exporter
        try:
            return self._export(module, inputs, kwargs, what, quiet, grad=False)
        except Exception as e:  # noqa: BLE001  (the exporter raises many kinds)
            if not any(op in str(e) for op in _FASTPATH_OPS):
                raise
        # The fused fast path is only taken under no_grad (or with inputs and weights that do
        # not require grad): export again with grad-requiring inputs, which rules it out.
        return self._export(module, inputs, kwargs, what, quiet, grad=True)

    def _export(self, module, inputs, kwargs, what, quiet, grad) -> bytes:
        f = io.BytesIO()
        # Copies: whatever the trace does to its arguments stays away from the caller's tensors.
        args = tuple(x.detach().clone().requires_grad_(grad and x.is_floating_point())
                     for x in inputs)
        with _export_lock, _checks.tracer_warnings(quiet) as seen:
            with torch.set_grad_enabled(grad), _mha_fastpath_disabled():
                torch.onnx.export(module, args, f, **kwargs)
        if seen.found:
            raise _checks.tracing_refusal(what, seen.found)
        return f.getvalue()

    def export_or_raise(self, module, inputs, dynamic, n_outputs, what) -> bytes:
        """export(), with the exporter's failures as CompileError (UnsupportedOperatorError when
        it names an operator it cannot export)."""
        try:
            return self.export(module, inputs, dynamic, n_outputs, what)
        except CompileError:
            raise
        except Exception as e:  # noqa: BLE001
            raise _export_error(e, what) from e

    # Compile.

    def options(self, name: Optional[str] = None, emit: Optional[str] = None) -> str:
        parts = [f"--device={self.device}"]
        # Compiled in this process for this machine: the host code may use every instruction
        # this CPU has (AVX2, AVX-512, ...); the cache key names the CPU (_cpu_fingerprint).
        if self.device == "cpu" and emit is None:
            parts.append("--mcpu=native")
        if name:
            parts.append(f"--name={name}")
        if emit:
            parts.append(f"--emit={emit}")
        if self.max_memory is not None:
            parts.append(f"--max-memory={self.max_memory}")
        return " ".join(parts)

    def compile_onnx(self, onnx: bytes, name: str, what: str):
        """(the loaded RalModule, where it is cached, whether it was a cache hit) for these ONNX
        bytes, compiled on a miss. The cache checks what it hands back (_cache.py)."""
        options = self.options(name)
        request = _cache.Request(onnx, self.device, options, self.version, _cpu_fingerprint())
        path = self.cache.paths(request)[0]
        data = self.cache.lookup(request)
        if data is not None:
            try:
                return load_bytes(data), path, True
            except RuntimeError as e:
                _log.warning("ral_torch.compile: the cached module %s does not load (%s); "
                             "compiling again", path, _first_line(str(e)))
        data = self._compile_bytes(onnx, name, options, what)
        try:
            ral = load_bytes(data)
        except RuntimeError as e:
            raise CompileError(f"ral_torch: the module compiled from {what} does not load: "
                               f"{_first_line(str(e))}") from e
        try:
            path = self.cache.store(request, data)
        except CacheError as e:
            if self.cache.chosen:
                raise
            _warn(f"{e}. The module is compiled without being cached.", RuntimeWarning)
            path = "(not cached)"
        return ral, path, False

    def _compile_bytes(self, onnx: bytes, name: str, options: str, what: str) -> bytes:
        with _private_dir("ral-compile-") as work:
            model = os.path.join(work, name + ".onnx")
            out = os.path.join(work, name + ".ralm")
            _write_private(model, onnx)
            _compiler.compile_or_raise(model, out, options, what)
            try:
                with open(out, "rb") as f:
                    return f.read()
            except OSError as e:
                raise CompileError(f"ral_torch: the compiler wrote no readable module for {what} "
                                   f"({out}: {e.strerror or e})") from e

    def compile_whole(self, module, inputs, dynamic, name, structure, params) -> CompiledModule:
        """`module` exported and compiled as one RAL module (no fallback)."""
        kind, count = structure
        what = f"{name}"
        onnx = self.export_or_raise(module, inputs, dynamic, count, what)
        ral, path, hit = self.compile_onnx(onnx, name, what)
        uses = _used_inputs(ral, len(inputs), what)
        outputs = len(ral.output_signature())
        if outputs != count:
            raise CompileError(f"ral_torch: {what} returns {count} tensor(s) but its compiled "
                               f"module {path} has {outputs} output(s)")
        compiled = _make(ral, _Spec(params, uses, "ral", kind, count))
        object.__setattr__(compiled, "source", f"{path}, cache {'hit' if hit else 'miss'}")
        return compiled

    def node_supported(self, key, module, inputs, dynamic) -> Optional[str]:
        """None when the compiler imports `module` (one graph node) exported on `inputs`, else
        why not. Answers are kept per `key` for the process's life."""
        full_key = (self.device, self.opset, self.version, key)
        with self._support_lock:
            if full_key in self._support:
                return self._support[full_key]
        try:
            onnx = self.export(module, inputs, dynamic, 1, "the node", quiet=True)
        except TracingError as e:
            where = e.warnings[0] if e.warnings else None
            reason = ("tracing it fixes Python values to the example's"
                      + (f" ({where[3]} at {where[0]}:{where[1]})" if where else ""))
        except Exception as e:  # noqa: BLE001
            reason = _first_line(str(_export_error(e, "the node")))
        else:
            with _private_dir("ral-node-") as work:
                model = os.path.join(work, "node.onnx")
                _write_private(model, onnx)
                rc, diagnostics = _compiler.compile_file(
                    model, os.path.join(work, "node.mlir"), self.options(emit="import"))
            if rc == _compiler.OK:
                reason = None
            elif rc == _compiler.UNSUPPORTED:
                found = _compiler.parse_unsupported(diagnostics)
                reason = "; ".join(f"ONNX {op}: {why}" for _, op, why in found) or \
                    _first_line(diagnostics)
            else:
                reason = f"the compiler failed (exit code {rc}): {_first_line(diagnostics)}"
        with self._support_lock:
            self._support[full_key] = reason
        return reason


@contextlib.contextmanager
def _private_dir(prefix: str):
    """A temporary directory for the compiler's input and output, removed afterwards."""
    try:
        work = tempfile.TemporaryDirectory(prefix=prefix)
    except OSError as e:
        raise RuntimeError(f"ral_torch.compile: cannot create a temporary directory in "
                           f"{tempfile.gettempdir()} ({e.strerror or e}); set TMPDIR to a "
                           f"writable directory") from None
    with work as path:
        yield path


def _write_private(path: str, data: bytes):
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        raise RuntimeError(f"ral_torch.compile: cannot write {path} ({e.strerror or e}); set "
                           f"TMPDIR to a directory with space") from None


class _Fallback:
    """Compiles the parts of a module the compiler supports and keeps the rest in PyTorch.

    torch.fx traces the module; running the traced graph on the example inputs gives every node's
    value (and, with dynamic dims, running it again with those dims grown by one tells which dims
    of each value follow them). A node is compiled when its value and inputs are tensors and the
    compiler imports it exported alone, without a TracerWarning; maximal runs of such nodes in the
    graph's order become parts, each compiled as one module and called from the traced graph in
    place of its nodes. Runs are contiguous in a topological order, so the result stays acyclic.

    An fx graph has no Python control flow, but a part's ONNX export may still fix what its
    example fixes (a size read by an operator's symbolic function, say), so each compiled part is
    also run on the values the graph computes from the second input (_checks.SecondInput) and
    compared with them; a part that differs stays in PyTorch. The assembled module is compared
    once more as a whole, and when even that differs (torch.fx fixed something itself), or
    forward() cannot be traced, the whole module stays in PyTorch.
    """

    def __init__(self, job, module, inputs, dynamic, name, structure, params, whole_error,
                 second):
        self.job, self.inputs, self.dynamic = job, inputs, dynamic
        self.name, self.structure, self.params = name, structure, params
        self.whole_error = whole_error
        self.second = second
        self._part_count = 0
        self._splits_left = _MAX_SPLITS
        try:
            self.model = copy.deepcopy(module).eval()
        except Exception as e:  # noqa: BLE001  (whatever the module's __deepcopy__ raises)
            raise self._failure(f"fallback=True works on a copy of {name}, and copy.deepcopy "
                                f"failed: {type(e).__name__}: {_first_line(str(e))}") from e

    def run(self) -> CompiledModule:
        gm, opaque = self._trace()
        if gm is None:
            return self._keep_all(opaque)
        try:
            values = _record(gm, self.inputs)
        except Exception as e:  # noqa: BLE001  (the traced graph raised where eager did not)
            return self._keep_all(f"its torch.fx graph fails on the example inputs: "
                                  f"{type(e).__name__}: {_first_line(str(e))}")
        grown = _record(gm, self._grown_inputs(), self._growth_failed) if self.dynamic else None
        check = None
        if self.second.inputs is not None:
            check = _record(gm, self.second.inputs, lambda e: None) or None
        compute = [n for n in gm.graph.nodes if _is_compute(n)]
        kept = {}  # node -> why it stays in PyTorch
        for n in compute:
            reason = self._unsupported_reason(gm, n, values, grown)
            if reason is not None:
                kept[n] = reason
        parts = []
        current = None
        for n in gm.graph.nodes:
            if not _is_compute(n):
                continue
            if n in kept:
                current = None
            else:
                if current is None:
                    current = []
                    parts.append(current)
                current.append(n)
        done_parts = []  # (nodes, compiled part)
        self._splits_left = _MAX_SPLITS
        for nodes in parts:
            self._compile_run(gm, nodes, values, grown, check, kept, done_parts)
        parts = [nodes for nodes, _ in done_parts]
        compiled_parts = {k: part for k, (_, part) in enumerate(done_parts)}
        result = self._assemble(gm, parts, compiled_parts)
        done = sum(len(parts[k]) for k in compiled_parts)
        coverage = done / len(compute) if compute else 1.0
        report = self._report(compute, kept, len(compiled_parts), coverage, opaque)
        spec = _Spec(self.params, range(len(self.params)), "graph", *self.structure)
        compiled = _make(result, spec, coverage, report)
        why = self.second.mismatch(compiled)
        if why is not None:
            return self._keep_all(f"its compiled parts together differ from eager PyTorch on "
                                  f"another input: {why}")
        _log.info("%s", report)
        if kept:
            _warn(report, FallbackWarning)
        return compiled

    def _keep_all(self, why: str) -> CompiledModule:
        report = (f"ral_torch.compile: {self.name}: nothing compiled for {self.job.device}; the "
                  f"whole module stays in PyTorch: {why}\n(the whole module did not compile: "
                  f"{_summary(self.whole_error)})")
        _log.info("%s", report)
        _warn(report, FallbackWarning)
        spec = _Spec(self.params, range(len(self.params)), "graph", *self.structure)
        return _make(self.model, spec, 0.0, report)

    def _failure(self, message: str) -> CompileError:
        whole = self.whole_error
        text = f"{whole}\n{message}"
        if isinstance(whole, UnsupportedOperatorError):
            return UnsupportedOperatorError(text, whole.operators, whole.diagnostics)
        if isinstance(whole, TracingError):
            return TracingError(text, whole.warnings)
        return CompileError(text, whole.returncode, whole.diagnostics)

    def _trace(self):
        """(the GraphModule, {submodule: why torch.fx traced it as one node}), or (None, why
        forward() cannot be traced)."""
        try:
            sig = inspect.signature(self.model.forward)
            later = list(sig.parameters.values())[len(self.inputs):]
            concrete = {p.name: p.default for p in later
                        if p.default is not inspect.Parameter.empty
                        and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        except (TypeError, ValueError):
            concrete = {}
        tracer = _OpaqueOnFailureTracer()
        try:
            graph = tracer.trace(self.model, concrete_args=concrete or None)
        except Exception as e:  # noqa: BLE001  (tracing raises whatever the module does)
            return None, (f"torch.fx cannot trace its forward(): {type(e).__name__}: "
                          f"{_first_line(str(e))}")
        targets = {n.target for n in graph.nodes if n.op == "call_module"}
        opaque = {p: why for p, why in tracer.opaque.items() if p in targets}
        return torch.fx.GraphModule(tracer.root, graph, self.name), opaque

    def _grown_inputs(self):
        grown = []
        for i, x in enumerate(self.inputs):
            for d in sorted(self.dynamic.get(i, {})):
                if x.shape[d] > 0:
                    x = torch.cat([x, x.narrow(d, 0, 1)], d)  # values stay valid (indices)
                else:
                    shape = list(x.shape)
                    shape[d] = 1
                    x = torch.zeros(shape, dtype=x.dtype, device=x.device)
            grown.append(x)
        return grown

    def _growth_failed(self, e):
        dims = ", ".join(f"input {i} dims {sorted(d)}" for i, d in self.dynamic.items())
        raise ValueError(f"ral_torch.compile: {self.name} fails when its dynamic dims ({dims}) "
                         f"change size, so they cannot be dynamic: {type(e).__name__}: {e}") from e

    def _dynamic_of(self, node, values, grown) -> List[int]:
        """The dims of node's value that changed size with the dynamic dims of the inputs."""
        if grown is None:
            return []
        a, b = values[node], grown.get(node)
        if not isinstance(b, Tensor):
            return []
        if a.dim() != b.dim():
            return list(range(a.dim()))
        return [d for d in range(a.dim()) if a.shape[d] != b.shape[d]]

    def _dynamic_inputs(self, nodes, values, grown) -> Dict[int, Dict[int, str]]:
        # Symbols of their own per input: equal sizes are not promised across inputs.
        dynamic = {}
        for i, a in enumerate(nodes):
            dims = self._dynamic_of(a, values, grown)
            if dims:
                dynamic[i] = {d: f"input_{i}_dim{d}" for d in dims}
        return dynamic

    def _unsupported_reason(self, gm, n, values, grown) -> Optional[str]:
        value = values[n]
        if not isinstance(value, Tensor):
            return f"returns {type(value).__name__}, not a tensor"
        args = [a for a in n.all_input_nodes if a.op != "get_attr"]
        for a in args:
            if not isinstance(values[a], Tensor):
                return f"takes {type(values[a]).__name__} '{a.name}', computed in the graph"
        g = torch.fx.Graph()
        env = {a: g.placeholder(f"input_{i}") for i, a in enumerate(args)}
        for a in n.all_input_nodes:
            if a.op == "get_attr":
                env[a] = g.node_copy(a)
        g.output(g.node_copy(n, lambda a: env[a]))
        tiny = torch.fx.GraphModule(gm, g)
        inputs = [values[a] for a in args]
        dynamic = self._dynamic_inputs(args, values, grown)
        key = (_node_target_key(gm, n), _args_key(n, values),
               tuple((x.dtype, tuple(x.shape), tuple(sorted(dynamic.get(i, {}))))
                     for i, x in enumerate(inputs)))
        return self.job.node_supported(key, tiny, inputs, dynamic)

    def _compile_run(self, gm, nodes, values, grown, check, kept, done):
        """Compiles the run of nodes as one part, or, when it does not compile or differs from
        eager PyTorch, each half of it (while the split budget lasts), down to single nodes that
        stay in PyTorch."""
        part = self._compile_part(gm, self._part_count, nodes, values, grown, check)
        self._part_count += 1
        if not isinstance(part, str):
            done.append((nodes, part))
            return
        if len(nodes) == 1 or self._splits_left <= 0:
            for n in nodes:
                kept[n] = part
            return
        self._splits_left -= 1
        half = len(nodes) // 2
        self._compile_run(gm, nodes[:half], values, grown, check, kept, done)
        self._compile_run(gm, nodes[half:], values, grown, check, kept, done)

    def _compile_part(self, gm, k, nodes, values, grown, check):
        """The part's CompiledModule, or why it stays in PyTorch."""
        inside = set(nodes)
        inputs, outputs = [], []
        for n in nodes:
            for a in n.all_input_nodes:
                if a not in inside and a.op != "get_attr" and a not in inputs:
                    inputs.append(a)
            if any(u not in inside for u in n.users):
                outputs.append(n)
        g = torch.fx.Graph()
        env = {a: g.placeholder(f"input_{i}") for i, a in enumerate(inputs)}
        for n in nodes:
            for a in n.all_input_nodes:
                if a.op == "get_attr" and a not in env:
                    env[a] = g.node_copy(a)
            env[n] = g.node_copy(n, lambda a: env[a])
        g.output(env[outputs[0]] if len(outputs) == 1 else tuple(env[o] for o in outputs))
        part = torch.fx.GraphModule(gm, g, class_name=f"{self.name}_part{k}")
        example = [values[a] for a in inputs]
        dynamic = self._dynamic_inputs(inputs, values, grown)
        structure = ("tensor", 1) if len(outputs) == 1 else ("tuple", len(outputs))
        params = [f"input_{i}" for i in range(len(inputs))]
        size = "1 node" if len(nodes) == 1 else f"{len(nodes)} nodes"
        try:
            compiled = self.job.compile_whole(part, example, dynamic, f"{self.name}_part{k}",
                                                  structure, params)
        except CompileError as e:
            return f"its part ({size}) did not compile: {_first_line(str(e))}"
        why = _part_mismatch(compiled, inputs, outputs, check)
        if why is not None:
            return (f"its part ({size}) compiled, but differs from eager PyTorch on another "
                    f"input: {why}")
        object.__setattr__(compiled, "_fx_io", (inputs, outputs))
        return compiled

    def _assemble(self, gm, parts, compiled_parts):
        owner = {}
        for k in compiled_parts:
            for n in parts[k]:
                owner[n] = k
        g = torch.fx.Graph()
        env = {}
        for n in gm.graph.nodes:
            k = owner.get(n)
            if n.op == "call_function" and not _is_compute(n):
                continue  # _assert_is_none: the parameter it checks is dropped below
            if k is None:
                env[n] = g.node_copy(n, lambda a: env[a])
                continue
            if n is not parts[k][0]:
                continue  # emitted with the part's first node
            part = compiled_parts[k]
            inputs, outputs = part._fx_io
            target = f"ral_part{k}"
            gm.add_submodule(target, part)
            call = g.call_module(target, tuple(env[a] for a in inputs))
            if len(outputs) == 1:
                env[outputs[0]] = call
            else:
                for j, o in enumerate(outputs):
                    env[o] = g.call_function(operator.getitem, (call, j))
        for k in compiled_parts:
            object.__delattr__(compiled_parts[k], "_fx_io")
        # Attributes only the compiled parts read (they hold their own copies), and the
        # parameters fixed to their defaults when tracing, so that forward() takes the example
        # inputs only (TorchScript would type a None default as a tensor that cannot be None).
        placeholders = [n for n in g.nodes if n.op == "placeholder"]
        for n in reversed(list(g.nodes)):
            if n.op == "get_attr" and not n.users:
                g.erase_node(n)
        for n in placeholders[len(self.inputs):]:
            if not n.users:
                g.erase_node(n)
        g.lint()
        return torch.fx.GraphModule(gm, g, class_name=self.name)

    def _report(self, compute, kept, n_parts, coverage, opaque) -> str:
        done = len(compute) - len(kept)
        lines = [f"ral_torch.compile: {self.name}: {done} of {len(compute)} graph nodes compiled "
                 f"({coverage:.1%}) in {n_parts} part(s) for {self.job.device}"]
        if kept:
            lines.append("kept in PyTorch:")
            for n, why in kept.items():
                lines.append(f"  {n.name} ({_describe_target(n)}): {why}")
        if opaque:
            lines.append("traced as one node each (torch.fx cannot trace into them):")
            for path, why in opaque.items():
                lines.append(f"  module {path}: {why}")
        lines.append(f"(the whole module did not compile: {_summary(self.whole_error)})")
        return "\n".join(lines)


class _OpaqueOnFailureTracer(torch.fx.Tracer):
    """torch.fx's tracer, but a submodule it cannot trace into (Python control flow on a
    tensor, len() of a proxy, ...) becomes one call_module node instead of failing the trace;
    `opaque` says which and why. The nodes the failed attempt recorded are removed."""

    def __init__(self):
        super().__init__()
        self.opaque: Dict[str, str] = {}

    def call_module(self, m, forward, args, kwargs):
        path = self.path_of_module(m)
        if self.is_leaf_module(m, path) or path in self.opaque:
            return self.create_proxy("call_module", path, args, kwargs)
        before = set(self.graph.nodes)
        try:
            return super().call_module(m, forward, args, kwargs)
        except Exception as e:  # noqa: BLE001  (whatever tracing into it raised)
            for n in reversed(list(self.graph.nodes)):
                # get_attr nodes may be cached by the tracer for later uses: left, and removed
                # with the other unused ones when the graph is assembled.
                if n not in before and n.op != "get_attr" and not n.users:
                    self.graph.erase_node(n)
            self.opaque[path] = f"{type(e).__name__}: {_first_line(str(e))}"
            return self.create_proxy("call_module", path, args, kwargs)


def _part_mismatch(compiled, inputs, outputs, check) -> Optional[str]:
    """What differs between a compiled part and eager PyTorch's values for its nodes on the
    second input (None: nothing, or nothing to compare with)."""
    if check is None:
        return None
    args = [check.get(a) for a in inputs]
    want = [check.get(o) for o in outputs]
    if not all(isinstance(v, Tensor) for v in args + want):
        return None
    try:
        with torch.no_grad():
            got = _checks.as_list(compiled(*[a.detach().clone() for a in args]))
    except Exception as e:  # noqa: BLE001
        return f"it fails where eager PyTorch does not: {_first_line(str(e))}"
    return _checks.compare([w.detach() for w in want], got)


# Helpers.


def _example_inputs(example_inputs) -> List[Tensor]:
    if isinstance(example_inputs, Tensor):
        example_inputs = (example_inputs,)
    if not isinstance(example_inputs, (tuple, list)):
        raise TypeError(f"ral_torch.compile: example_inputs must be a tensor or a tuple of "
                        f"tensors, not {type(example_inputs).__name__}")
    for i, x in enumerate(example_inputs):
        if not isinstance(x, Tensor):
            raise TypeError(f"ral_torch.compile: example input {i} is a {type(x).__name__}; "
                            f"compiled modules take tensors only")
    return [x.detach() for x in example_inputs]


def _symbol(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_]", "_", name)[:64]
    return cleaned or "module"


def _parameter_names(module, n: int) -> List[str]:
    """forward()'s first n parameter names where usable as generated parameters, else input_K."""
    try:
        names = [p.name for p in inspect.signature(module.forward).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][:n]
    except (TypeError, ValueError):
        names = []
    names += [""] * (n - len(names))
    result = []
    for i, name in enumerate(names):
        usable = (name.isascii() and name.isidentifier() and not keyword.iskeyword(name)
                  and not name.startswith("_") and name not in _RESERVED_NAMES
                  and not re.fullmatch(r"input_\d+", name) and name not in result)
        result.append(name if usable else f"input_{i}")
    return result


def _dynamic_dims(spec, inputs, params, name) -> Dict[int, Dict[int, str]]:
    """{input index: {dim: symbol}} from compile()'s dynamic_dims."""
    if not spec:
        return {}
    if not isinstance(spec, dict):
        raise TypeError("ral_torch.compile: dynamic_dims must be a dict {input index or name: "
                        f"[dim, ...]}}, not {type(spec).__name__}")
    result = {}
    for key, dims in spec.items():
        if isinstance(key, int) and not isinstance(key, bool):
            index = key
        elif isinstance(key, str) and key in params:
            index = params.index(key)
        elif isinstance(key, str) and re.fullmatch(r"input_\d+", key):
            index = int(key[6:])
        else:
            raise ValueError(f"ral_torch.compile: dynamic_dims key {key!r} is neither an input "
                             f"index nor one of {name}'s input names {params}")
        if not 0 <= index < len(inputs):
            raise ValueError(f"ral_torch.compile: dynamic_dims names input {key!r}, but there "
                             f"are {len(inputs)} example input(s)")
        rank = inputs[index].dim()
        if isinstance(dims, int):
            dims = [dims]
        named = dict(dims) if isinstance(dims, dict) else {d: None for d in dims}
        entry = {}
        for d, symbol in named.items():
            if not isinstance(d, int) or not -rank <= d < rank:
                raise ValueError(f"ral_torch.compile: dynamic_dims[{key!r}] has dim {d!r}, but "
                                 f"input {index} has rank {rank}")
            d %= rank
            entry[d] = str(symbol) if symbol is not None else f"input_{index}_dim{d}"
        result[index] = entry
    return result


def _structure(outputs, name) -> Tuple[str, int]:
    if isinstance(outputs, Tensor):
        return "tensor", 1
    if (isinstance(outputs, (tuple, list)) and outputs
            and all(isinstance(o, Tensor) for o in outputs)):
        return ("list" if isinstance(outputs, list) else "tuple"), len(outputs)
    raise TypeError(f"ral_torch.compile: {name} returns {_describe_value(outputs)}; compiled "
                    f"modules return a tensor or a non-empty tuple or list of tensors")


def _describe_value(v) -> str:
    if isinstance(v, (tuple, list)):
        return "{} of ({})".format(type(v).__name__, ", ".join(type(x).__name__ for x in v))
    return f"a {type(v).__name__}"


def _used_inputs(ral, n: int, what: str) -> Tuple[int, ...]:
    names = [s.split(":", 1)[0] for s in ral.input_signature()]
    if all(re.fullmatch(r"input_\d+", s) for s in names):
        uses = tuple(int(s[6:]) for s in names)
        if all(0 <= i < n for i in uses):
            return uses
    if len(names) == n:
        return tuple(range(n))
    raise CompileError(f"ral_torch: the compiled module of {what} takes inputs {names}, which do "
                       f"not match its {n} example inputs input_0..input_{n - 1}")


def _export_error(e: Exception, what: str) -> CompileError:
    text = str(e)
    ops = list(dict.fromkeys(_EXPORTER_UNSUPPORTED.findall(text)))
    if ops:
        return UnsupportedOperatorError(
            f"ral_torch: torch.onnx.export cannot export {what}: {_first_line(text)}",
            [("", op, "the ONNX exporter does not support it") for op in ops])
    return CompileError(f"ral_torch: torch.onnx.export failed on {what}: {type(e).__name__}: "
                        f"{_first_line(text)}")


def _warn(message: str, category):
    """warnings.warn, attributed to the first caller outside this package."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "")
    level, frame = 2, sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(here):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


def _summary(e: Exception) -> str:
    """The first line of e's message, with the first place a TracingError quotes."""
    text = _first_line(str(e))
    if isinstance(e, TracingError) and e.warnings:
        filename, lineno, source, _ = e.warnings[0]
        text = f"{text} {filename}:{lineno}: {source}"
    return text


def _first_line(text: str) -> str:
    for line in str(text).splitlines():
        if line.strip():
            return line.strip()
    return ""


class _mha_fastpath_disabled:
    """torch >= 2.1 lets the fused attention fast path be switched off; elsewhere a no-op."""

    def __enter__(self):
        mha = getattr(getattr(torch.backends, "mha", None), "set_fastpath_enabled", None)
        self.previous = None
        if mha is not None:
            self.previous = torch.backends.mha.get_fastpath_enabled()
            mha(False)

    def __exit__(self, *exc):
        if self.previous is not None:
            torch.backends.mha.set_fastpath_enabled(self.previous)


def _is_compute(n) -> bool:
    # torch.fx adds _assert_is_none for parameters fixed to None: bookkeeping, not computation.
    return n.op in _COMPUTE_OPS and n.target is not getattr(
        torch.fx._symbolic_trace, "_assert_is_none", None)


def _record(gm, inputs, on_error=None) -> dict:
    """Every node's value from running gm on inputs (copies of tensors: a later in-place node,
    such as nn.ReLU(inplace=True), would change the recorded value)."""
    values = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            v = super().run_node(n)
            values[n] = v.detach().clone() if isinstance(v, Tensor) else v
            return v

    try:
        with torch.no_grad():
            Recorder(gm).run(*inputs)
    except Exception as e:  # noqa: BLE001
        if on_error is None:
            raise
        on_error(e)
    return values


def _node_target_key(gm, n) -> tuple:
    if n.op == "call_module":
        sub = gm.get_submodule(n.target)
        return (n.op, type(sub).__module__, type(sub).__qualname__, sub.extra_repr())
    if n.op == "call_function":
        return (n.op, getattr(n.target, "__module__", ""),
                getattr(n.target, "__qualname__", repr(n.target)))
    return (n.op, str(n.target))


def _args_key(n, values) -> str:
    """The node's arguments with graph values replaced by their type, as text."""
    def describe(a):
        v = values.get(a)
        if a.op == "get_attr" and isinstance(v, Tensor):
            return f"<attr {v.dtype} {tuple(v.shape)}>"
        return "<input>"
    return repr(torch.fx.node.map_arg((n.args, n.kwargs), describe))


def _describe_target(n) -> str:
    if n.op == "call_module":
        return f"module {n.target}"
    if n.op == "call_method":
        return f"Tensor.{n.target}"
    try:
        return torch.fx.node._get_qualified_name(n.target)
    except Exception:  # noqa: BLE001  (a callable without a qualified name)
        return repr(n.target)
