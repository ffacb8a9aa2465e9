"""The torch.nn.Module over torch.classes.ral.Module.

Each loaded module gets a class of its own whose forward() takes exactly the module's inputs as
tensors and returns one tensor (or a tuple), with type annotations, so that TorchScript can compile
it: TorchScript has no *args. Its source is registered with linecache, as torch.fx does for its
generated code, so that torch.jit.script can read it.

Eager calls take a fast path: RalModule.__call__ passes the tensors straight to ral_torch._fast.run
(a CPython extension, fast_call.cc) with the C++ module's address from
torch.classes.ral.Module.handle(), skipping nn.Module.__call__ and the TorchScript method call,
which together cost several times a small module's execution. Calls with keyword arguments, a
wrong number of arguments, hooks (the module's or global ones) or under torch.jit.trace go through
nn.Module.__call__ unchanged, and so do calls with other arguments than tensors (torch.fx's
Proxies: FX patches nn.Module.__call__ to see leaf modules). TorchScript compiles forward(), never
__call__, so scripted models are unaffected. Without the extension every call uses the TorchScript
method.

RalModule.submit(*inputs) queues such a call on a worker thread of the module's own and returns a
torch.futures.Future of its result (see _submit.py); it is Python-only, like strict_zero_copy.

Modules with the same name and forward() share one generated class (classes and their linecache
entries would otherwise accumulate with every load); a class and its linecache entry go away with
its last module.
"""

import functools
import itertools
import keyword
import linecache
import sys
import weakref
from typing import List, Optional, Tuple

import torch
from torch import Tensor
from torch.nn.modules import module as _nn_module

try:
    from . import _fast
except ImportError:  # built without Python's headers: the TorchScript method serves every call
    _fast = None
from . import _collectives, _submit

if _fast is not None:
    # Modules' collectives go through torch.distributed (ral_torch._collectives).
    _fast.set_collectives(_collectives._handle)

_counter = itertools.count(1)
# (class name, forward source) -> the generated class, while a module of it lives.
_classes = weakref.WeakValueDictionary()
_tracing_state = torch._C._get_tracing_state
# The hook dicts nn.Module.__call__ consults (torch 2.x adds the backward pre-hooks). Torch mutates
# the global ones in place and never rebinds them, so holding the dicts is enough; a reassigned
# instance dict is picked up by RalModule.__setattr__.
_INSTANCE_HOOKS = tuple(
    name
    for name in ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks")
    if name in vars(torch.nn.Module())
)
_GLOBAL_HOOKS = tuple(
    hooks
    for hooks in (
        getattr(_nn_module, name, None)
        for name in (
            "_global_forward_pre_hooks",
            "_global_forward_hooks",
            "_global_backward_pre_hooks",
            "_global_backward_hooks",
        )
    )
    if hooks is not None
)
# Attributes whose (re)assignment changes whether a call may skip nn.Module.__call__.
_GUARDED_ATTRIBUTES = frozenset(_INSTANCE_HOOKS + ("_compiled_call_impl",))
# Names the generated forward() uses itself: never parameter names.
_RESERVED_NAMES = frozenset(("self", "out", "torch", "Tensor", "List", "Tuple"))


def _module_call(module, *args, **kwargs):
    # Looked up on every call, not at import: torch.fx patches nn.Module.__call__ while tracing.
    return torch.nn.Module.__call__(module, *args, **kwargs)


class RalModule(torch.nn.Module):
    """A RAL module as a torch.nn.Module. `module` is the torch.classes.ral.Module it runs.

    Assigning `module` another torch.classes.ral.Module with as many inputs and outputs makes every
    call (eager, and what torch.jit.script compiles from now on) run that one; anything else is
    refused.
    """

    # Python-only: TorchScript does not compile them (scripted code calls forward()).
    __jit_unused_properties__ = ["strict_zero_copy"]
    __jit_ignored_attributes__ = ["_submitter"]

    def __init__(self, module):
        super().__init__()
        _check_custom_class(module)
        super().__setattr__("module", module)
        self._bind(module)

    def _bind(self, module):
        # The eager paths over `module`: forward()'s (calls through nn.Module.__call__) and
        # __call__'s fast path.
        outputs = len(module.output_signature())
        if _fast is not None:
            fast_run = functools.partial(_fast.run, module.handle())
            arity = len(module.input_signature())
        else:
            fast_run = None
            arity = -1  # no fast path: every call goes through nn.Module.__call__
        object.__setattr__(
            self, "_run", functools.partial(_eager_forward, fast_run, module.forward, outputs)
        )
        object.__setattr__(self, "_fast_path", (fast_run, arity, (), module))
        self._update_fast_path()

    def _update_fast_path(self):
        # (runner, arity, guards, pin): one attribute for __call__ to read; a call may skip
        # nn.Module.__call__ while every guard is empty (no hooks, not compiled). The pin keeps the
        # C++ module whose address the runner holds alive as long as the runner (a call in flight
        # while `module` is replaced holds the old tuple); in a tuple, TorchScript does not take
        # it for an attribute to save.
        run, arity, _, pin = self._fast_path
        guards = tuple(getattr(self, name) for name in _INSTANCE_HOOKS) + _GLOBAL_HOOKS
        if getattr(self, "_compiled_call_impl", None) is not None:  # torch 2.x Module.compile()
            guards += ((True,),)
        object.__setattr__(self, "_fast_path", (run, arity, guards, pin))

    def __setattr__(self, name, value):
        if name == "module" and "_fast_path" in self.__dict__:
            self._rebind(value)
            return
        super().__setattr__(name, value)
        if name in _GUARDED_ATTRIBUTES and "_fast_path" in self.__dict__:
            self._update_fast_path()

    def __delattr__(self, name):
        if name == "module":
            raise AttributeError("ral_torch: a RAL module's `module` cannot be deleted")
        super().__delattr__(name)

    def _rebind(self, module):
        # Eager and scripted calls both run the new module. forward() was generated for this
        # many inputs and outputs, so the new module must have as many.
        _check_custom_class(module)
        old = self.module
        if _arity(module) != _arity(old):
            raise ValueError(
                "ral_torch: cannot replace module '{}' ({} inputs, {} outputs) with '{}' ({} "
                "inputs, {} outputs): forward() takes the first one's inputs; load the new module "
                "with ral_torch.load() instead".format(
                    old.name(), *_arity(old), module.name(), *_arity(module)
                )
            )
        super().__setattr__("module", module)
        self._bind(module)

    def __call__(self, *args, **kwargs):
        run, arity, guards, _ = self._fast_path
        if kwargs or len(args) != arity or any(guards) or _tracing_state() is not None:
            return _module_call(self, *args, **kwargs)
        try:
            return run(*args)
        except TypeError:
            # Not all tensors: torch.fx's Proxies, or a mistake that forward() reports.
            return _module_call(self, *args)

    @torch.jit.unused
    def submit(self, *inputs) -> torch.futures.Future:
        """Runs `self(*inputs)` on this module's worker thread; returns a torch.futures.Future
        whose value is what the call returns (one tensor, or a tuple for several outputs).

        A module's submissions run one at a time in submission order, so their futures complete
        in that order; other modules' submissions, and Python, run meanwhile: the RAL execution
        releases the GIL. The worker thread is started by the first submit and ends after the
        module is collected, once the calls still pending have run (they keep it alive until
        then). Errors do not escape submit(): fut.wait() and fut.value() raise the exception a
        direct call would raise (hooks included), and the next submission runs normally. Only
        under torch.jit.trace does submit() itself raise: a trace cannot record it.

        The call runs in the submitting thread's grad and inference mode and, for CUDA inputs,
        on its current CUDA stream of each input's device (the outputs are ordered on that
        stream, as a direct call's are). Callbacks added with fut.then() or add_done_callback()
        run on the worker thread (or in the adding thread once the future is done), and wait()
        may return before they have run; they must not wait for a later submission of this
        module.

        The inputs are referenced until the future completes; do not modify them (or their
        storage, through other views) until then.
        """
        return _submit.submit(self, inputs)

    def input_signature(self) -> List[str]:
        return self.module.input_signature()

    def output_signature(self) -> List[str]:
        return self.module.output_signature()

    @property
    def strict_zero_copy(self) -> bool:
        """Whether inputs in a layout the module was not compiled for raise instead of being copied."""
        return self.module.strict_zero_copy()

    @strict_zero_copy.setter
    def strict_zero_copy(self, strict: bool) -> None:
        self.module.set_strict_zero_copy(bool(strict))

    def extra_repr(self) -> str:
        return "{}: ({}) -> ({})".format(
            self.module.name(),
            ", ".join(self.input_signature()),
            ", ".join(self.output_signature()),
        )

    def __reduce__(self):
        # Generated classes cannot be found by name: rebuild from the module file's bytes.
        return (_from_state, (self.module.state(), self.strict_zero_copy))


def _parameter_names(signatures: List[str]) -> List[str]:
    # Signature names come from the module file: only plain, unambiguous identifiers become
    # parameter names (compile() folds non-ASCII ones by NFKC, so two may meet); the rest are
    # positional names that avoid every name taken.
    names = []
    for sig in signatures:
        name = sig.split(":", 1)[0] if ":" in sig else ""
        usable = (
            name.isascii()
            and name.isidentifier()
            and not keyword.iskeyword(name)
            and not name.startswith("__")
            and name not in _RESERVED_NAMES
            and name not in names
        )
        names.append(name if usable else None)
    taken = set(names)
    for i, name in enumerate(names):
        if name is None:
            name = "x{}".format(i)
            while name in taken:
                name = "_" + name
            names[i] = name
            taken.add(name)
    return names


def _forward_source(inputs: List[str], outputs: int) -> str:
    args = "".join(", {}: Tensor".format(n) for n in inputs)
    call = "[{}]".format(", ".join(inputs))
    if outputs == 1:
        result, ret = "Tensor", "out[0]"
    else:
        result = "Tuple[{}]".format(", ".join(["Tensor"] * outputs) if outputs else "()")
        ret = "({})".format(", ".join("out[{}]".format(i) for i in range(outputs)))
    return (
        "def forward(self{args}) -> {result}:\n"
        "    if torch.jit.is_scripting():\n"
        "        out = self.module.forward({call})\n"
        "        return {ret}\n"
        "    return self._run({eager})\n"
    ).format(args=args, result=result, call=call, ret=ret, eager=", ".join(inputs))


def _eager_forward(fast_run, method, outputs: int, *inputs):
    try:
        # torch.jit.trace records the TorchScript method, not the extension's call.
        if fast_run is None or _tracing_state() is not None:
            out = method(list(inputs))
            return out[0] if outputs == 1 else tuple(out)
        return fast_run(*inputs)
    except (TypeError, RuntimeError):
        _refuse_fx_proxies(inputs)
        raise


def _refuse_fx_proxies(inputs):
    fx = sys.modules.get("torch.fx")
    if fx is not None and any(isinstance(x, fx.Proxy) for x in inputs):
        error = getattr(fx.proxy, "TraceError", RuntimeError)
        raise error(
            "ral_torch: torch.fx traced into a RAL module, whose compiled code it cannot see "
            "through; trace it as a leaf: a torch.fx.Tracer whose is_leaf_module(m, name) returns "
            "True for isinstance(m, ral_torch.RalModule)"
        )


def _arity(module) -> Tuple[int, int]:
    return len(module.input_signature()), len(module.output_signature())


def _check_custom_class(module):
    if not (
        isinstance(module, torch._C.ScriptObject)
        and module._has_method("handle")
        and module._has_method("input_signature")
    ):
        raise TypeError(
            "ral_torch: a RAL module's `module` is a torch.classes.ral.Module (e.g. "
            "ral_torch.load(path).module), not {}".format(type(module).__name__)
        )


def _specialize(module) -> RalModule:
    inputs = _parameter_names(module.input_signature())
    source = _forward_source(inputs, len(module.output_signature()))
    name = "RalModule_" + _class_suffix(module.name())
    cls = _classes.get((name, source))
    if cls is None:
        cls = _generate_class(name, source)
        _classes[(name, source)] = cls
    return cls(module)


def _generate_class(name: str, source: str) -> type:
    filename = "<ral_torch generated forward {}>".format(next(_counter))
    # linecache entries with a None mtime are never checked against (or dropped for) a file.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"torch": torch, "Tensor": Tensor, "List": List, "Tuple": Tuple}
    exec(compile(source, filename, "exec"), namespace)
    forward = namespace["forward"]
    forward.__module__ = __name__
    attributes = {"forward": forward, "__module__": __name__, "__qualname__": name}
    cls = type(name, (RalModule,), attributes)
    # torch.jit.script reads the source through linecache: it lives as long as the class.
    weakref.finalize(cls, linecache.cache.pop, filename, None).atexit = False
    return cls


def _class_suffix(name: str) -> str:
    cleaned = "".join(c if c.isascii() and c.isalnum() else "_" for c in name[:64])
    return cleaned or "module"


def _select_device(module, device: Optional[str]) -> None:
    if device is None:
        return
    if not isinstance(device, str):
        raise TypeError(f"device must be a device URI string such as 'vulkan:0', not "
                        f"{type(device).__name__}")
    module.select_device(device)


def load(path, strict_zero_copy: bool = False, device: Optional[str] = None) -> RalModule:
    """Loads a .ralm file as a torch.nn.Module. Errors are RuntimeErrors with RAL's message.

    Inputs whose strides the module's compiled layout does not accept (x.t(), a column slice, an
    expand()) are copied into that layout; with strict_zero_copy they raise instead.
    `device` is a device URI ('vulkan:1', 'hsa://GPU-<uuid>', 'cuda://name=H100'; see
    `ral-run --list-devices`) of the kind the module was compiled for; None: that kind's default.
    """
    module = torch.classes.ral.Module(str(path))
    module.set_strict_zero_copy(bool(strict_zero_copy))
    _select_device(module, device)
    return _specialize(module)


def load_bytes(data, strict_zero_copy: bool = False, device: Optional[str] = None) -> RalModule:
    """Loads a module from the bytes of a .ralm file (bytes, bytearray or a uint8 tensor)."""
    if isinstance(data, torch.Tensor):
        data = data.cpu().numpy().tobytes()
    module = torch.classes.ral.Module.from_bytes(bytes(data))
    module.set_strict_zero_copy(bool(strict_zero_copy))
    _select_device(module, device)
    return _specialize(module)


def _from_state(state: Tensor, strict_zero_copy: bool = False) -> RalModule:
    return load_bytes(state, strict_zero_copy)
