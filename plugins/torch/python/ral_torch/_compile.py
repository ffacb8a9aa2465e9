"""ral_torch.compile: a PyTorch module exported to ONNX, compiled by RAL's compiler in process, and
run as a RAL module.

    compiled = ral_torch.compile(model, (x,), dynamic_dims={0: [0]})
    y = compiled(x)

The parts: torch.onnx.export (TorchScript-based) writes the module's ONNX graph to memory; the
compiler library (_compiler.py, libral_compiler.so) turns it into a .ralm file kept in a module
cache (_cache.py), one compile being _export.py's _CompileJob; ral_torch.load_bytes runs it.
CompiledModule (_compiled.py) wraps the result so that it has the
original module's calling convention, scripts with torch.jit.script and pickles. _checks.py holds
what makes sure the result computes what the module does: the tracer's warnings, a comparison with
eager PyTorch on a second input, and the refusal of modules that change their state.

With fallback=True, a module the compiler cannot take whole is traced with torch.fx, and the
maximal runs of nodes the compiler handles are compiled, each as a module of its own, while the
rest stays in PyTorch (_fallback.py).
"""

import logging
import threading
import weakref
from typing import Optional

import torch

from . import _checks
from ._compiler import CompileError, UnsupportedOperatorError
# CompiledModule and cache_dir are public (ral_torch/__init__.py); _rebuild stays importable here
# for pickles made when it lived in this file.
from ._compiled import CompiledModule, _rebuild, cache_dir  # noqa: F401
from ._export import (_CompileJob, _dynamic_dims, _example_inputs, _parameter_names, _structure,
                      _symbol)
from ._fallback import FallbackWarning, _Fallback

_log = logging.getLogger("ral_torch")

__all__ = ["compile", "CompiledModule", "FallbackWarning", "cache_dir"]


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
