"""One compile of a PyTorch module (_CompileJob): torch.onnx.export to memory (TorchScript-based),
the compiler library on the ONNX bytes, the result cached (_cache.py) and loaded; and the helpers
that name inputs, parameters, dynamic dims and errors on the way."""

import contextlib
import inspect
import io
import keyword
import logging
import os
import re
import sys
import tempfile
import threading
import warnings
from typing import Dict, List, Optional, Tuple

import torch
from torch import Tensor

from . import _cache, _checks, _compiler
from ._cache import CacheError
from ._checks import TracingError
from ._compiler import CompileError, UnsupportedOperatorError
from ._module import load_bytes
from ._compiled import CompiledModule, _Spec, _cpu_fingerprint, _make

_log = logging.getLogger("ral_torch")


# Operators the ONNX exporter itself cannot export, e.g. "Exporting the operator 'aten::foo' to
# ONNX opset version 14 is not supported" (torch 2.x quotes the name, 1.13 does not).
_EXPORTER_UNSUPPORTED = re.compile(r"Exporting the operator '?([\w:.]+)'? to ONNX")
# The fused kernels nn.TransformerEncoderLayer and nn.MultiheadAttention take in eval mode under
# no_grad (their "fast path"), which the exporter cannot export.
_FASTPATH_OPS = ("aten::_transformer_encoder_layer_fwd", "aten::_native_multi_head_attention")
# Names the generated forward() uses itself: never parameter names.
_RESERVED_NAMES = frozenset(("self", "out", "torch", "Tensor", "List", "Tuple"))
# torch.onnx.export runs one at a time: the warning filters it is watched with and the attention
# fast-path switch are process-wide.
_export_lock = threading.RLock()


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
