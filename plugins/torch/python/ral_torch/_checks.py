"""What ral_torch.compile checks so that a compiled module computes what the PyTorch module does.

torch.onnx.export traces one call: Python code runs once on the example inputs and only tensor
operations are recorded. A branch on a tensor's value or on a size, or a value read into Python
(.item(), int(), .tolist(), numpy), is fixed to what it was for the example, silently. Three
checks stand between that and a wrong answer:

- the tracer's own warnings (TracerWarning: "Converting a tensor to a Python boolean might cause
  the trace to be incorrect", ...) are collected during the export and refuse the model
  (tracer_warnings / TracingError);
- the compiled module is run on a second input made from the example inputs (same dtypes, other
  values for floating-point inputs, every dynamic dim one larger) and compared with eager PyTorch
  (SecondInput.verify);
- a module whose forward() changes its parameters, buffers or inputs cannot be a pure compiled
  function and is refused (Preserved.check_pure / MutationError).

Preserved also snapshots the module's state and the example inputs so that compile() leaves them
as it found them, whatever the export or the module do.
"""

import linecache
import logging
import os
import sys
import sysconfig
import traceback
import warnings
from typing import List, Optional, Sequence, Tuple

import torch
from torch import Tensor

from ._compiler import CompileError

_log = logging.getLogger("ral_torch")

# Tracer warnings that do not mean the trace is unfaithful by themselves: a tensor built from
# Python constants (torch.tensor([1.0, 2.0])) is one. When it is built from a tensor's value, the
# conversion to Python that precedes it warns; from a size, the second input catches it.
_BENIGN = ("results are registered as constants in the trace",)

LIKELY_CAUSES = (
    "Likely causes: Python control flow on a tensor's values or on a dynamic size (`if x.sum() > "
    "0:`, `if x.shape[0] > 4:`) or values read into Python (.item(), int(), float(), .tolist(), "
    ".numpy()), which tracing fixes to the example's, or code that runs differently while tracing "
    "(torch.jit.is_tracing()). Compute them with tensor operations (torch.where(cond, a, b) "
    "instead of `if`, tensors instead of Python numbers), or compile with fallback=True to keep "
    "those parts in PyTorch.")


class TracingError(CompileError):
    """Tracing the module cannot capture what it computes: the exporter warned that Python values
    were fixed to the example's (`warnings` lists them as (file, line, source, message)), or the
    compiled module differs from eager PyTorch on another input."""

    def __init__(self, message: str, warnings_seen: Sequence[Tuple[str, int, str, str]] = ()):
        super().__init__(message)
        self.warnings = list(warnings_seen)


class MutationError(CompileError):
    """The module's forward() changes its parameters, buffers or inputs (in place, or by
    reassigning a parameter or buffer); a compiled module is a pure function of its inputs and
    cannot do that."""


# The tracer's warnings.


class tracer_warnings:
    """Records the TracerWarnings raised inside the block by code outside torch's own library
    (torch ignores those from its modules, whose shape checks would all warn), as torch does by
    default. Other warnings are passed on when the block ends, unless `quiet`. `found` lists
    (file, line, source line, message), one per place and message; the place is the innermost
    caller outside torch, numpy and Python's own library (the model's line that called np.prod,
    not numpy's)."""

    def __init__(self, quiet: bool = False):
        self.quiet = quiet

    def __enter__(self):
        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning,
                                module=r"torch\.(?!jit)")
        warnings.showwarning = self._show
        self.found: List[Tuple[str, int, str, str]] = []
        self._others = []
        return self

    def _show(self, message, category, filename, lineno, file=None, line=None):
        if not issubclass(category, torch.jit.TracerWarning):
            self._others.append((message, category, filename, lineno))
            return
        text = str(message)
        if any(b in text for b in _BENIGN):
            return
        filename, lineno = _callers_place(filename, lineno)
        source = linecache.getline(filename, lineno).strip()
        entry = (filename, lineno, source, _first_sentence(text))
        if entry not in self.found:
            self.found.append(entry)

    def __exit__(self, *exc):
        self._catch.__exit__(*exc)
        if exc[0] is None and not self.quiet:
            for message, category, filename, lineno in self._others:
                warnings.warn_explicit(message, category, filename, lineno)
        return False


def _library_dirs() -> Tuple[str, ...]:
    dirs = [os.path.dirname(torch.__file__), os.path.dirname(os.path.abspath(__file__)),
            sysconfig.get_paths()["stdlib"]]
    numpy = sys.modules.get("numpy")
    if numpy is not None and getattr(numpy, "__file__", None):
        dirs.append(os.path.dirname(numpy.__file__))
    return tuple(os.path.join(d, "") for d in dirs)


def _callers_place(filename: str, lineno: int) -> Tuple[str, int]:
    libraries = _library_dirs()
    for frame in reversed(traceback.extract_stack()):
        if (frame.filename.startswith("<frozen")
                or os.path.abspath(frame.filename).startswith(libraries)):
            continue
        return frame.filename, frame.lineno
    return filename, lineno


def tracing_refusal(name: str, found) -> TracingError:
    lines = [f"ral_torch.compile: {name} cannot be compiled faithfully: tracing it "
             f"(torch.onnx.export) fixed Python values to the example inputs' values:"]
    for filename, lineno, source, message in found[:8]:
        where = f"{filename}:{lineno}"
        lines.append(f"  {where}: {source}" if source else f"  {where}")
        lines.append(f"    {message}")
    if len(found) > 8:
        lines.append(f"  ... and {len(found) - 8} more")
    lines.append(
        "The compiled module would take the example's path and values for every input. Compute "
        "them with tensor operations (torch.where(cond, a, b) instead of `if`, tensors instead of "
        ".item()/int()/.tolist()/numpy), skip checks that only read sizes that never change while "
        "tracing (`if not torch.jit.is_tracing():`), or compile with fallback=True to keep these "
        "parts in PyTorch.")
    return TracingError("\n".join(lines), found)


def _first_sentence(message: str) -> str:
    end = message.find(". ")
    return message[:end + 1] if end >= 0 else message.strip()


# The module's state and the example inputs.


class Preserved:
    """The module's training flags, parameters and buffers and the example inputs as they were
    (values cloned); restore() puts back whatever changed, rebound attributes included."""

    def __init__(self, module: torch.nn.Module, inputs: Sequence[Tensor]):
        self.training = [(m, m.training) for m in module.modules()]
        self.tensors = []  # (qualified name, owner, dict name, key, tensor, clone)
        with torch.no_grad():
            for prefix, m in module.named_modules():
                for kind in ("_parameters", "_buffers"):
                    for key, t in getattr(m, kind).items():
                        if isinstance(t, Tensor):
                            name = f"{prefix}.{key}" if prefix else key
                            self.tensors.append((name, m, kind, key, t, _clone(t)))
            self.inputs = [(x, _clone(x)) for x in inputs]

    def changes(self) -> List[str]:
        """What differs from the snapshot, as phrases naming each parameter, buffer or input."""
        found = []
        for name, owner, kind, key, t, saved in self.tensors:
            what = "parameter" if kind == "_parameters" else "buffer"
            current = getattr(owner, kind).get(key)
            if current is not t:
                found.append(f"{what} '{name}' (reassigned)")
            elif not same_bits(t, saved):
                found.append(f"{what} '{name}' (in place)")
        return found

    def check_pure(self, module, inputs, name: str, params: Sequence[str]):
        """Runs module once on copies of the inputs and raises MutationError when that changed a
        parameter, a buffer or an input; returns the outputs. The state is restored either way."""
        copies = [_clone(x) for x in inputs]
        try:
            with torch.no_grad():
                outputs = module(*copies)
            changed = self.changes()
            for i, (x, c) in enumerate(zip(inputs, copies)):
                if not same_bits(x, c):
                    changed.append(f"input {i} ('{params[i]}') (in place)")
        finally:
            self.restore(flags=False)
        if changed:
            raise MutationError(
                f"ral_torch.compile: {name}.forward() changes {', '.join(changed)}; a compiled "
                f"module is a pure function of its inputs and cannot change state. Move the update "
                f"out of forward() (return the new value instead), or keep {name} in PyTorch "
                f"(fallback=True cannot keep a state update either).")
        return outputs

    def restore(self, flags: bool = True):
        """Puts back the tensors and inputs, and with `flags` each module's training flag."""
        with torch.no_grad():
            for _, owner, kind, key, t, saved in self.tensors:
                if getattr(owner, kind).get(key) is not t:
                    getattr(owner, kind)[key] = t
                if not same_bits(t, saved):
                    _put_back(t, saved)
            for x, saved in self.inputs:
                if not same_bits(x, saved):
                    _put_back(x, saved)
        if flags:
            for m, flag in self.training:
                m.training = flag


def _clone(t: Tensor) -> Tensor:
    return t.detach().clone()


def _put_back(t: Tensor, saved: Tensor):
    if t.shape == saved.shape and t.dtype == saved.dtype:
        t.copy_(saved)
    else:
        t.set_(saved.clone())


def same_bits(a: Tensor, b: Tensor) -> bool:
    """Equal shapes, dtypes and bytes (NaNs compare by their bits)."""
    if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
        return False
    if a.layout != torch.strided or b.layout != torch.strided or a.is_quantized:
        try:
            return bool(torch.equal(a, b))
        except RuntimeError:  # layouts torch.equal does not take (sparse, ...)
            return bool(torch.equal(a.to_dense(), b.to_dense()))
    if a.numel() == 0:
        return True
    return bool(torch.equal(_bytes_of(a), _bytes_of(b)))


def _bytes_of(t: Tensor) -> Tensor:
    t = t.detach().contiguous().reshape(-1)
    if t.dtype == torch.bool:
        return t.view(torch.uint8)
    if t.is_complex():
        t = torch.view_as_real(t).reshape(-1)
    return t.view(torch.uint8)


# The second input.


def as_list(outputs) -> List[Tensor]:
    if isinstance(outputs, Tensor):
        return [outputs]
    return list(outputs)


def _tolerance(dtype) -> Optional[Tuple[float, float]]:
    """(rtol, atol relative to the output's largest magnitude), None for exact comparison."""
    if dtype == torch.float16:
        return 1e-2, 1e-2
    if dtype == torch.bfloat16:
        return 5e-2, 5e-2
    if dtype in (torch.float32, torch.complex64):
        return 1e-3, 1e-4
    if dtype in (torch.float64, torch.complex128):
        return 1e-7, 1e-9
    return None


def compare(want: Sequence[Tensor], got: Sequence[Tensor]) -> Optional[str]:
    """None when got matches want within the dtype's tolerance, else what differs."""
    if len(want) != len(got):
        return f"{len(got)} outputs, eager PyTorch {len(want)}"
    for k, (w, g) in enumerate(zip(want, got)):
        if not isinstance(g, Tensor):
            return f"output {k} is a {type(g).__name__}, not a tensor"
        if w.shape != g.shape:
            return (f"output {k} has shape {tuple(g.shape)}, eager PyTorch "
                    f"{tuple(w.shape)}")
        if w.dtype != g.dtype:
            return f"output {k} has dtype {g.dtype}, eager PyTorch {w.dtype}"
        w, g = w.detach().cpu(), g.detach().cpu()
        if w.numel() == 0:
            continue
        tol = _tolerance(w.dtype)
        if tol is None:
            bad = w != g
            if bool(bad.any()):
                index = _index(bad, w.shape)
                return (f"output {k} differs at {int(bad.sum())} of {w.numel()} elements, first "
                        f"at {index}: eager {w[index].item()}, compiled {g[index].item()}")
            continue
        rtol, atol = tol
        w64, g64 = w.to(torch.complex128 if w.is_complex() else torch.float64), \
            g.to(torch.complex128 if g.is_complex() else torch.float64)
        finite = torch.isfinite(w64)
        scale = max(1.0, float(w64[finite].abs().max())) if bool(finite.any()) else 1.0
        close = torch.isclose(g64, w64, rtol=rtol, atol=atol * scale, equal_nan=True)
        if not bool(close.all()):
            bad = ~close
            diff = (g64 - w64).abs()
            diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)
            worst = float(diff[bad].max())
            index = _index(bad & (diff == worst), w.shape)
            return (f"output {k}: max error {worst:.4g} at {index} (eager {w[index].item():.6g}, "
                    f"compiled {g[index].item():.6g}; tolerance rtol={rtol:g}, "
                    f"atol={atol * scale:.3g}); {int(bad.sum())} of {w.numel()} elements differ")
    return None


def _index(mask: Tensor, shape) -> tuple:
    flat = int(mask.reshape(-1).nonzero()[0])
    index = []
    for size in reversed(shape):
        index.append(flat % size)
        flat //= size
    return tuple(reversed(index))


class SecondInput:
    """A second input made from the example inputs, eager PyTorch's outputs on it, and the check
    of a compiled module against them.

    Floating-point inputs get random values spread over the example's finite range (non-finite
    elements, such as -inf in an attention mask, stay); integer and bool inputs keep their values
    (they are often indices, counts or masks a random value would make invalid). Every dynamic dim
    grows by one (by two when eager PyTorch refuses one more, e.g. a size that must be even; by
    none when it refuses that too), repeating the existing elements so that integers stay valid.
    When eager PyTorch fails on every such input, or gives different results for the same input
    twice (randomness in forward(), state outside its parameters and buffers), there is nothing to
    compare with: `skipped` says why, logged, and verify() accepts. An error the compiled module
    raises where eager PyTorch does not is a difference like any other.
    """

    def __init__(self, module, inputs: Sequence[Tensor], dynamic, name: str):
        self.name = name
        self.inputs: Optional[List[Tensor]] = None
        self.outputs: Optional[List[Tensor]] = None
        self.skipped = ""
        self.grown = ""
        errors = []
        # Sizes one larger, two larger (a size that must be even), then the example's sizes, so
        # that other values are compared even when the model refuses other sizes.
        for delta in (1, 2, 0) if dynamic else (0,):
            candidate = make_second_inputs(inputs, dynamic, delta)
            try:
                first = _eager(module, candidate)
            except Exception as e:  # noqa: BLE001  (whatever the model raises)
                errors.append(f"{type(e).__name__}: {_one_line(e)}")
                continue
            try:
                again = compare(first, _eager(module, candidate))
            except Exception as e:  # noqa: BLE001
                again = f"{type(e).__name__}: {_one_line(e)}"
            if again is not None:
                self.skipped = ("eager PyTorch gives different results for the same input twice "
                                "(randomness or state in forward())")
                break
            self.inputs, self.outputs = candidate, first
            self.grown = f" and every dynamic dim {delta} larger" if delta else ""
            break
        else:
            self.skipped = f"eager PyTorch fails on it ({errors[-1]})"
        if self.skipped:
            _log.warning("ral_torch.compile: %s is not compared with eager PyTorch on a second "
                         "input: %s", name, self.skipped)

    def mismatch(self, compiled) -> Optional[str]:
        """None when `compiled` matches eager PyTorch on the second input (or nothing can be
        compared), else what differs."""
        if self.inputs is None:
            return None
        try:
            with torch.no_grad():
                got = as_list(compiled(*[_clone(x) for x in self.inputs]))
        except Exception as e:  # noqa: BLE001  (the compiled module's errors are RuntimeErrors)
            return f"the compiled module fails where eager PyTorch does not: {_one_line(e)}"
        return compare(self.outputs, got)

    def verify(self, compiled, name: Optional[str] = None):
        """Raises TracingError when `compiled` differs from eager PyTorch on the second input."""
        why = self.mismatch(compiled)
        if why is not None:
            raise TracingError(
                f"ral_torch.compile: the module compiled from {name or self.name} differs from "
                f"eager PyTorch on another input (the example inputs with other floating-point "
                f"values{self.grown}): {why}.\n{LIKELY_CAUSES}")


def make_second_inputs(inputs: Sequence[Tensor], dynamic, delta: int) -> List[Tensor]:
    g = torch.Generator().manual_seed(0x5EC0)
    result = []
    for i, x in enumerate(inputs):
        y = x.detach()
        for d in sorted(dynamic.get(i, {})):
            y = _grow(y, d, delta)
        if y.is_floating_point() or y.is_complex():
            y = _other_values(x, y, g)
        else:
            y = y.clone()
        result.append(y)
    return result


def _grow(x: Tensor, d: int, delta: int) -> Tensor:
    n = x.shape[d]
    if n == 0:
        shape = list(x.shape)
        shape[d] = delta
        return torch.zeros(shape, dtype=x.dtype, device=x.device)
    index = torch.arange(n + delta, device=x.device) % n
    return x.index_select(d, index)


def _other_values(example: Tensor, shaped: Tensor, g: torch.Generator) -> Tensor:
    real = torch.view_as_real(example) if example.is_complex() else example
    real = real.detach().to("cpu", torch.float64)
    finite = real[torch.isfinite(real)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.numel() else (-1.0, 1.0)
    if lo == hi:
        lo, hi = (-1.0, 1.0) if lo == 0 else sorted((lo * 0.5, lo * 1.5))
    shape = tuple(shaped.shape) + ((2,) if shaped.is_complex() else ())
    values = torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo
    if shaped.is_complex():
        values = torch.view_as_complex(values)
    values = values.to(shaped.dtype).to(shaped.device)
    return torch.where(torch.isfinite(shaped), values, shaped)


def _eager(module, inputs) -> List[Tensor]:
    with torch.no_grad():
        out = module(*[_clone(x) for x in inputs])
    return [o.detach().clone() for o in as_list(out)]


def _one_line(e: Exception) -> str:
    for line in str(e).splitlines():
        if line.strip():
            return line.strip()
    return type(e).__name__
