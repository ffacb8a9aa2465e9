"""RalModule.submit: a module's calls on a worker thread of its own, as torch.futures.Futures.

Each RalModule that submits gets one Submitter (made on its first submit), which owns a queue and
one daemon thread that takes the queued calls in order: call k + 1 starts when call k has
completed its future. A queued call holds the RalModule and the inputs until it has run; neither
the thread nor its queue refers to the Submitter, so a module dropped with calls pending lives until
they have run, and when it (and so its Submitter) is collected a stop entry queued behind them ends
the thread.

The calls run as the submitting thread would have run them: in its grad and inference mode (both
thread-local), and, for CUDA inputs, on its current stream of each of their devices. The RAL
execution itself releases the GIL (ral_torch._fast.run, or torch's custom-class call), which is
what lets submitted work overlap with Python and with other modules' submissions.

At exit, before the interpreter tears down, the threads still running are told to stop behind
their pending calls and joined, so no execution is cut short; submissions after that point run in
the submitting thread and return a completed future. After os.fork() a module's Submitter belongs
to the parent: the child's first submit makes a new one.
"""

import atexit
import contextlib
import os
import queue
import threading
import weakref

import torch

_lock = threading.Lock()
# Serializes making a module's Submitter, so that all of its submissions share one queue.
_create_lock = threading.Lock()
# Worker thread -> its queue, while the thread runs.
_live = {}
_closing = False
_tracing_state = torch._C._get_tracing_state


def submit(module, inputs: tuple) -> torch.futures.Future:
    """RalModule.submit: queues module(*inputs) on the module's Submitter (made on first use)."""
    if _tracing_state() is not None:
        raise RuntimeError(
            "ral_torch: submit() cannot be traced by torch.jit.trace (the trace would hold the "
            "result as a constant); call the module instead"
        )
    submitter = module.__dict__.get("_submitter")
    if submitter is None or not submitter.usable():
        with _create_lock:
            submitter = module.__dict__.get("_submitter")
            if submitter is None or not submitter.usable():
                submitter = Submitter(module.module.name())
                # Past nn.Module.__setattr__, like the module's other Python-only state.
                object.__setattr__(module, "_submitter", submitter)
    return submitter.submit(module, inputs)


class Submitter:
    """One module's submission queue and the thread that serves it."""

    __slots__ = ("_queue", "_pid", "__weakref__")

    def __init__(self, name: str):
        self._queue = queue.SimpleQueue()
        self._pid = os.getpid()
        thread = threading.Thread(
            target=_serve, args=(self._queue,), name="ral_torch.submit " + name, daemon=True
        )
        with _lock:
            if _closing:  # submit() runs the calls in the submitting thread
                return
            _live[thread] = self._queue
        # Queued behind every call submitted through this object, which nothing can reach anymore.
        weakref.finalize(self, self._queue.put, None).atexit = False
        thread.start()

    def usable(self) -> bool:
        # A forked child has the object but not the thread.
        return self._pid == os.getpid()

    def submit(self, module, inputs: tuple) -> torch.futures.Future:
        future = torch.futures.Future()
        item = (future, module, inputs, _capture(inputs))
        with _lock:
            if not _closing:
                self._queue.put(item)
                return future
        # The interpreter is exiting and the worker threads are stopping: run it here.
        _complete(item)
        return future


def _capture(inputs: tuple):
    # The submitting thread's state a direct call would run in (see the module docstring).
    grad = torch.is_grad_enabled()
    inference = torch.is_inference_mode_enabled()
    streams = ()
    for x in inputs:
        if isinstance(x, torch.Tensor) and x.is_cuda:
            devices = {t.device for t in inputs if isinstance(t, torch.Tensor) and t.is_cuda}
            streams = tuple(torch.cuda.current_stream(d) for d in devices)
            break
    return grad, inference, streams


def _serve(work: queue.SimpleQueue):
    try:
        while True:
            item = work.get()
            if item is None:
                return
            _complete(item)
            # Nothing of a finished call stays referenced while the thread waits for the next.
            del item
    finally:
        with _lock:
            _live.pop(threading.current_thread(), None)


def _complete(item):
    future, module, inputs, state = item
    ok, value = _execute(module, inputs, state)
    # Callbacks (Future.then, add_done_callback) run here; their errors go to their own futures or
    # torch's log, not out of set_result.
    try:
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)
    except Exception as e:  # noqa: BLE001  (the worker must keep serving; the future must end)
        if not future.done():
            future.set_exception(e)


def _execute(module, inputs, state):
    # Returns (True, outputs) or (False, the exception), which the future raises from wait() and
    # value(): the same exception a direct call raises. The future is no local here, so the
    # exception's traceback cannot refer back to it.
    try:
        return True, _call(module, inputs, *state)
    except Exception as e:  # noqa: BLE001  (every error goes to the future)
        return False, e
    except BaseException as e:  # SystemExit from a hook: futures only hold Exceptions
        error = RuntimeError("ral_torch: the submitted call raised {!r}".format(e))
        error.__cause__ = e
        return False, error


def _call(module, inputs, grad: bool, inference: bool, streams: tuple):
    with contextlib.ExitStack() as stack:
        for stream in streams:
            stack.enter_context(torch.cuda.stream(stream))
        if inference:
            stack.enter_context(torch.inference_mode())
        elif not grad:
            stack.enter_context(torch.no_grad())
        return module(*inputs)


def _shutdown():
    global _closing
    with _lock:
        _closing = True
        live = list(_live.items())
    for _, work in live:
        work.put(None)
    for thread, _ in live:
        if thread is not threading.current_thread():
            thread.join()


def _after_fork_in_child():
    global _lock, _create_lock
    _lock = threading.Lock()
    _create_lock = threading.Lock()
    _live.clear()


atexit.register(_shutdown)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
