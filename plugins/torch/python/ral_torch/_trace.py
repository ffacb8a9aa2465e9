"""ral_torch.trace: record a Chrome/Perfetto trace of RAL's work (<ral/trace.h>)."""
import contextlib

import torch


@contextlib.contextmanager
def trace(path: str):
    """Records every RAL execution in the block, its RAL calls and the drivers' copies, fills
    and waits, and writes the trace-event JSON to `path` when the block ends (open it at
    https://ui.perfetto.dev). RAL_TRACE=path records from the start of the process instead.

    RuntimeError when a trace is already recording or when `path` cannot be written."""
    torch.ops.ral.trace_start(str(path))
    try:
        yield
    finally:
        torch.ops.ral.trace_stop()
