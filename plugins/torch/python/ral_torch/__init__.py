"""ral_torch: run RAL modules (.ralm files) inside PyTorch.

    import ral_torch
    m = ral_torch.load("model.ralm")      # a torch.nn.Module
    y = m(x)                              # one tensor, or a tuple for several outputs
    scripted = torch.jit.script(m)        # also as a submodule of a scripted model

Modules are inference-only: call them under torch.no_grad() or torch.inference_mode() (an input
that requires grad is an error under grad mode). torch.fx traces them as leaf modules (a Tracer
whose is_leaf_module() returns True for ral_torch.RalModule instances).

Importing the package loads libral_torch.so (next to this file), which registers the TorchScript
custom class torch.classes.ral.Module. No pip install is needed: put the directory that holds this
package on sys.path (the build lays it out in <build>/python). A process that loads a saved
scripted model holding a RAL module must import ral_torch first.
"""

import os

import torch

_LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libral_torch.so")
torch.ops.load_library(_LIBRARY)

from ._module import RalModule, load, load_bytes  # noqa: E402  (needs the library)

__all__ = ["RalModule", "load", "load_bytes", "library_path"]


def library_path() -> str:
    """The path of libral_torch.so (for torch.ops.load_library in other processes)."""
    return _LIBRARY
