"""The torch.nn.Module over torch.classes.ral.Module.

Each loaded module gets a class of its own whose forward() takes exactly the module's inputs as
tensors and returns one tensor (or a tuple), with type annotations, so that TorchScript can compile
it: TorchScript has no *args. Its source is registered with linecache, as torch.fx does for its
generated code, so that torch.jit.script can read it.
"""

import keyword
import linecache
from typing import List, Tuple

import torch
from torch import Tensor

_counter = 0


class RalModule(torch.nn.Module):
    """A RAL module as a torch.nn.Module. `module` is the torch.classes.ral.Module it runs."""

    def __init__(self, module):
        super().__init__()
        self.module = module
        # Eager calls go straight to the bound method (TorchScript uses self.module instead).
        self._run = module.forward

    def input_signature(self) -> List[str]:
        return self.module.input_signature()

    def output_signature(self) -> List[str]:
        return self.module.output_signature()

    def extra_repr(self) -> str:
        return "{}: ({}) -> ({})".format(
            self.module.name(),
            ", ".join(self.input_signature()),
            ", ".join(self.output_signature()),
        )

    def __reduce__(self):
        # Generated classes cannot be found by name: rebuild from the module file's bytes.
        return (_from_state, (self.module.state(),))


def _parameter_names(signatures: List[str]) -> List[str]:
    names = []
    for i, sig in enumerate(signatures):
        name = sig.split(":", 1)[0] if ":" in sig else ""
        if not name.isidentifier() or keyword.iskeyword(name) or name in names or name == "self":
            name = "x{}".format(i)
        names.append(name)
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
        "    out = self._run({call})\n"
        "    return {ret}\n"
    ).format(args=args, result=result, call=call, ret=ret)


def _specialize(module) -> RalModule:
    global _counter
    _counter += 1
    inputs = _parameter_names(module.input_signature())
    source = _forward_source(inputs, len(module.output_signature()))
    filename = "<ral_torch generated forward {}>".format(_counter)
    # linecache entries with a None mtime are never checked against (or dropped for) a file.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"torch": torch, "Tensor": Tensor, "List": List, "Tuple": Tuple}
    exec(compile(source, filename, "exec"), namespace)
    forward = namespace["forward"]
    forward.__module__ = __name__
    cls = type("RalModule_" + _class_suffix(module.name()), (RalModule,), {"forward": forward})
    cls.__module__ = __name__
    cls.__qualname__ = cls.__name__
    return cls(module)


def _class_suffix(name: str) -> str:
    cleaned = "".join(c if c.isalnum() else "_" for c in name)
    return cleaned or "module"


def load(path) -> RalModule:
    """Loads a .ralm file as a torch.nn.Module. Errors are RuntimeErrors with RAL's message."""
    return _specialize(torch.classes.ral.Module(str(path)))


def load_bytes(data) -> RalModule:
    """Loads a module from the bytes of a .ralm file (bytes, bytearray or a uint8 tensor)."""
    if isinstance(data, torch.Tensor):
        return _specialize(torch.classes.ral.Module.from_bytes(data.cpu().numpy().tobytes()))
    return _specialize(torch.classes.ral.Module.from_bytes(bytes(data)))


def _from_state(state: Tensor) -> RalModule:
    return load_bytes(state)
