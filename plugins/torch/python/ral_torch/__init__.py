"""ral_torch: run RAL modules (.ralm files) inside PyTorch.

    import ral_torch
    m = ral_torch.load("model.ralm")      # a torch.nn.Module
    y = m(x)                              # one tensor, or a tuple for several outputs
    fut = m.submit(x)                     # a torch.futures.Future of m(x), run on m's thread
    scripted = torch.jit.script(m)        # also as a submodule of a scripted model

    c = ral_torch.compile(model, (x,))    # a PyTorch nn.Module compiled by RAL (via ONNX)

Modules are inference-only: call them under torch.no_grad() or torch.inference_mode() (an input
that requires grad is an error under grad mode). torch.fx traces them as leaf modules (a Tracer
whose is_leaf_module() returns True for ral_torch.RalModule instances).

Importing the package loads libral_torch.so (next to this file), which registers the TorchScript
custom class torch.classes.ral.Module. No pip install is needed: put the directory that holds this
package on sys.path (the build lays it out in <build>/python). A process that loads a saved
scripted model holding a RAL module must import ral_torch first. ral_torch.compile runs the
compiler in process from libral_compiler.so (next to this file, or $RAL_COMPILER_LIBRARY), loaded
on its first use; see _compile.py.
"""

import os

import torch

_LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libral_torch.so")
torch.ops.load_library(_LIBRARY)

__version__ = "0.1.0"

from ._module import RalModule, load, load_bytes  # noqa: E402  (needs the library)
from ._compiler import CompileError, UnsupportedOperatorError  # noqa: E402
from ._cache import CacheError  # noqa: E402
from ._checks import MutationError, TracingError  # noqa: E402
from ._compile import CompiledModule, FallbackWarning, compile  # noqa: E402
from ._trace import trace  # noqa: E402
from ._collectives import set_process_group  # noqa: E402

__all__ = ["RalModule", "load", "load_bytes", "library_path", "compile", "CompiledModule",
           "CompileError", "UnsupportedOperatorError", "TracingError", "MutationError",
           "CacheError", "FallbackWarning", "trace", "set_process_group"]


def library_path() -> str:
    """The path of libral_torch.so (for torch.ops.load_library in other processes)."""
    return _LIBRARY
