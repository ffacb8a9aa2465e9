"""RalModule.submit: a torch.futures.Future of what the direct call returns, computed on the
module's worker thread in submission order; errors come through the future; a module dropped with
submissions pending finishes them and its thread ends; process exit does not hang."""

import copy
import gc
import io
import os
import pickle
import signal
import subprocess
import sys
import threading
import weakref

import pytest
import torch

from conftest import MODULE_DIR, module_path, run_threads
from conftest import assert_same as _assert_same
import ral_torch


def assert_same(got, expected):
    _assert_same(got, expected, inference=True)


def submit_threads():
    return {t for t in threading.enumerate() if t.name.startswith("ral_torch.submit ")}


def join(worker):
    # The thread ends once its module is collected; a bound on the wait, not a timing check.
    for _ in range(600):
        gc.collect()
        worker.join(timeout=0.1)
        if not worker.is_alive():
            return
    raise AssertionError("{} still runs".format(worker.name))


def raised(fn):
    try:
        fn()
    except Exception as e:  # the exception is the result
        return type(e), str(e)
    raise AssertionError("no exception")


def cases():
    base = torch.randn(6, 8)
    yield "add_r2", (torch.randn(3, 4), torch.randn(3, 4))
    yield "add_r2", (torch.randn(4, 3).t(), base[1:4, 2:6])  # transposed, column slice
    yield "add_r2", (torch.randn(0, 5), torch.randn(0, 5))  # empty
    yield "add_r2_rowmajor", (torch.randn(4, 3).t(), torch.randn(3, 4))  # copied first
    yield "add_r0", (torch.tensor(1.5), torch.tensor(-2.0))
    yield "add_r1", (torch.randn(0), torch.randn(0))
    yield "add_r1", (torch.randn(10)[::2], torch.randn(5))
    yield "add_r3", (torch.randn(2, 3, 4).permute(2, 0, 1), torch.randn(4, 2, 3))
    yield "torch_add_i32", (torch.randint(-9, 9, (3, 5), dtype=torch.int32),) * 2
    yield "torch_add_f64", (torch.randn(3, 5, dtype=torch.float64), torch.randn(5, 3).double().t())
    yield "torch_copy_bf16", (torch.randn(2, 3).bfloat16(), torch.randn(2, 3).bfloat16())
    yield "torch_matmul", (torch.randn(5, 7), torch.randn(9, 7).t())
    yield "alias", (torch.arange(7.0),)  # two outputs, viewing the input


CASE_IDS = ["{}-{}".format(i, name) for i, (name, _) in enumerate(cases())]


@pytest.mark.parametrize("case", range(len(CASE_IDS)), ids=CASE_IDS)
def test_result_equals_the_direct_call(case):
    name, inputs = list(cases())[case]
    m = ral_torch.load(module_path(name))
    expected = m(*inputs)
    fut = m.submit(*inputs)
    assert isinstance(fut, torch.futures.Future)
    assert_same(fut.wait(), expected)
    assert fut.done()
    assert_same(fut.value(), expected)
    with torch.no_grad():
        assert_same(m.submit(*inputs).wait(), expected)
    with torch.inference_mode():
        assert_same(m.submit(*inputs).wait(), m(*inputs))


def test_outputs_alias_the_inputs_as_a_direct_call_does(load):
    m = load("alias")
    x = torch.arange(9.0)
    same, every_second = m.submit(x).wait()
    assert same.data_ptr() == x.data_ptr()
    assert torch.equal(every_second, x[::2])
    m = load("torch_inplace")
    y = torch.arange(4.0)
    out = m.submit(y).wait()
    assert out.data_ptr() == y.data_ptr() and torch.equal(y, torch.arange(4.0) * 2)


def test_futures_complete_in_submission_order(load):
    m = load("add_r1")
    order = []
    futures = []
    inputs = [(torch.randn(1 + i % 17), torch.randn(1 + i % 17)) for i in range(300)]
    for i, (a, b) in enumerate(inputs):
        fut = m.submit(a, b)
        # then(): a future that completes once the callback has run (wait() may return before).
        futures.append((fut, fut.then(lambda f, i=i: order.append(i))))
    for (fut, recorded), (a, b) in zip(futures, inputs):
        assert torch.equal(fut.wait(), a + b)
        recorded.wait()
    assert order == list(range(300))


def test_pending_submissions_keep_their_inputs(load):
    # Each input is referenced only by its pending submission; inplace doubles it where it is.
    m = load("torch_inplace")
    futures = [m.submit(torch.full((1000,), float(i))) for i in range(50)]
    gc.collect()
    for i, fut in enumerate(futures):
        assert torch.equal(fut.wait(), torch.full((1000,), 2.0 * i))
    x = torch.ones(5)
    futures = [m.submit(x) for _ in range(20)]
    futures[-1].wait()
    assert all(f.done() for f in futures)
    assert torch.equal(x, torch.full((5,), 2.0**20))


def test_errors_come_through_the_future_and_the_next_submission_works(load):
    add = load("add_r2")
    error = load("error")
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    bad_calls = [
        (add, (torch.randn(2, 3), torch.randn(2, 3, dtype=torch.float64))),  # dtype
        (add, (torch.randn(2, 3, 4), torch.randn(2, 3))),  # rank
        (load("identity"), (torch.randn(2, 4),)),  # static dim
        (add, (torch.randn(2, 3),)),  # too few
        (add, (a, b, a)),  # too many
        (add, (a, 1.0)),  # not a tensor
        (error, (torch.tensor(-3),)),  # fails while running
    ]
    for m, inputs in bad_calls:
        expected = raised(lambda: m(*inputs))
        fut = m.submit(*inputs)
        assert raised(fut.wait) == expected
        assert raised(fut.value) == expected
        assert fut.done()
        assert torch.equal(add.submit(a, b).wait(), a + b)
        assert error.submit(torch.tensor(4)).wait().item() == 5


def test_errors_between_pending_submissions(load):
    m = load("error")
    futures = [m.submit(torch.tensor(v)) for v in range(-50, 50)]
    for v, fut in zip(range(-50, 50), futures):
        if v < 0:
            with pytest.raises(RuntimeError, match="error module: the input is negative"):
                fut.wait()
        else:
            assert fut.wait().item() == v + 1


def test_grad_mode_is_the_submitting_threads(load):
    m = load("add_r1")
    a, b = torch.randn(3, requires_grad=True), torch.randn(3)
    expected = raised(lambda: m(a, b))
    assert raised(m.submit(a, b).wait) == expected
    with torch.no_grad():
        assert torch.equal(m.submit(a, b).wait(), (a + b).detach())


def test_hooks_run_as_in_a_direct_call(load):
    m = load("add_r1")
    m.register_forward_hook(lambda module, args, out: out * 10)
    a, b = torch.randn(4), torch.randn(4)
    assert torch.equal(m.submit(a, b).wait(), m(a, b))
    assert torch.equal(m.submit(a, b).wait(), (a + b) * 10)


def test_many_threads_submit_to_one_module(load):
    m = load("add_r2")
    errors = []

    def worker(t):
        try:
            g = torch.Generator().manual_seed(t)
            order = []
            futures = []
            for i in range(200):
                rows = 1 + (i + t) % 5
                a, b = torch.randn(rows, 8, generator=g), torch.randn(8, rows, generator=g).t()
                fut = m.submit(a, b)
                futures.append((fut, a + b, fut.then(lambda f, i=i: order.append(i))))
                if i % 50 == 49:
                    futures[-1][0].wait()
            for i, (fut, expected, recorded) in enumerate(futures):
                if not torch.equal(fut.wait(), expected):
                    errors.append("thread {} submission {}: wrong result".format(t, i))
                recorded.wait()
            if order != list(range(200)):
                errors.append("thread {}: completed out of order".format(t))
        except Exception as e:  # reported below, with the thread
            errors.append("thread {}: {!r}".format(t, e))

    run_threads(worker)
    assert not errors, errors[:5]


def test_two_modules_and_python_work_overlap(load):
    # Both modules run on their own threads while this one works; only the results are checked.
    m1, m2 = load("torch_matmul"), load("torch_matmul")
    a, b = torch.randn(384, 384), torch.randn(384, 384)
    c = torch.randn(384, 384).t()
    f1, f2, f3 = m1.submit(a, b), m2.submit(b, c), m1.submit(c, a)
    busy = sum(i * i for i in range(200000))
    assert busy == sum(i * i for i in range(200000))
    torch.testing.assert_close(f1.wait(), a @ b, rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(f2.wait(), b @ c, rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(f3.wait(), c @ a, rtol=1e-4, atol=1e-3)


def test_a_dropped_module_finishes_its_submissions_and_its_thread_ends(load):
    before = submit_threads()
    m = load("torch_matmul")
    a, b = torch.randn(128, 128), torch.randn(128, 128)
    futures = [m.submit(a, b) for _ in range(30)]
    (worker,) = submit_threads() - before
    alive = weakref.ref(m)
    del m
    gc.collect()
    for fut in futures:
        torch.testing.assert_close(fut.wait(), a @ b, rtol=1e-4, atol=1e-3)
    join(worker)
    assert alive() is None


def test_an_idle_module_is_collected_with_its_thread(load):
    before = submit_threads()
    m = load("add_r1")
    assert torch.equal(m.submit(torch.ones(2), torch.ones(2)).wait(), torch.full((2,), 2.0))
    (worker,) = submit_threads() - before
    alive = weakref.ref(m)
    del m
    gc.collect()
    assert alive() is None
    join(worker)


def test_one_thread_per_module(load):
    before = submit_threads()
    m = load("add_r1")
    a = torch.ones(3)
    for _ in range(10):
        m.submit(a, a)
    assert m.submit(a, a).wait().sum().item() == 6
    assert len(submit_threads() - before) == 1


def test_script_pickle_and_copy_after_submit(load):
    m = load("add_r2")
    a, b = torch.randn(2, 3), torch.randn(3, 2).t()
    assert torch.equal(m.submit(a, b).wait(), a + b)

    scripted = torch.jit.script(m)
    assert torch.equal(scripted(a, b), a + b)
    buffer = io.BytesIO()
    torch.jit.save(scripted, buffer)
    buffer.seek(0)
    assert torch.equal(torch.jit.load(buffer)(a, b), a + b)

    class Parent(torch.nn.Module):
        def __init__(self, child):
            super().__init__()
            self.child = child

        def forward(self, x, y):
            return self.child(x, y) * 2

    assert torch.equal(torch.jit.script(Parent(m))(a, b), (a + b) * 2)
    # torch.jit.script keeps Python-only methods on the scripted module: submit works there too.
    assert torch.equal(scripted.submit(a, b).wait(), a + b)

    for other in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
        assert torch.equal(other.submit(a, b).wait(), a + b)
    assert torch.equal(m.submit(a, b).wait(), a + b)


def test_torch_jit_trace_refuses_submit(load):
    m = load("add_r1")

    def fn(x):
        return m.submit(x, x).wait()

    with pytest.raises(RuntimeError, match="submit\\(\\) cannot be traced"):
        torch.jit.trace(fn, (torch.ones(3),))
    assert torch.equal(fn(torch.ones(3)), torch.full((3,), 2.0))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork")
def test_a_forked_child_submits_on_a_thread_of_its_own(load):
    m = load("add_r1")
    a = torch.ones(4)
    assert torch.equal(m.submit(a, a).wait(), a * 2)
    pid = os.fork()
    if pid == 0:  # the child: exit status 0 when its submission worked
        status = 1
        try:
            signal.alarm(60)
            status = 0 if torch.equal(m.submit(a, a).wait(), a * 2) else 2
        finally:
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert torch.equal(m.submit(a, a).wait(), a * 2)


EXIT_SCRIPT = """
import atexit, os, sys, torch
late = []
# Registered before ral_torch's handler, so it runs after it: the workers are stopped by then.
atexit.register(lambda: print("late", late[0].submit(torch.ones(2), torch.ones(2)).wait().tolist()))
import ral_torch
directory = os.environ["RAL_TEST_MODULE_DIR"]
idle = ral_torch.load(os.path.join(directory, "add_r1.ralm"))
assert idle.submit(torch.ones(2), torch.ones(2)).wait().tolist() == [2.0, 2.0]
late.append(idle)
busy = ral_torch.load(os.path.join(directory, "torch_matmul.ralm"))
a = torch.randn(256, 256)
futures = [busy.submit(a, a) for _ in range(20)]
futures[-1].add_done_callback(lambda f: print("last pending call done", flush=True))
print("exiting", flush=True)
"""


def test_process_exit_with_idle_and_pending_workers():
    env = dict(os.environ, RAL_TEST_MODULE_DIR=MODULE_DIR)
    done = subprocess.run(
        [sys.executable, "-c", EXIT_SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # The pending calls run before the late handler, which runs its submission in place.
    assert sorted(lines) == ["exiting", "last pending call done", "late [2.0, 2.0]"], lines
    assert lines[-1] == "late [2.0, 2.0]", lines


@pytest.mark.skipif(not torch.cuda.is_available(), reason="torch has no CUDA device")
def test_cuda_submission_runs_on_the_submitting_stream(load):
    m = load("torch_cuda_alias")
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        x = torch.arange(5.0, device="cuda") * 3
        fut = m.submit(x)
        same, every_second = fut.wait()
        y = same + 1
    stream.synchronize()
    assert same.data_ptr() == x.data_ptr()
    assert torch.equal(y.cpu(), torch.arange(5.0) * 3 + 1)
    assert torch.equal(every_second.cpu(), (torch.arange(5.0) * 3)[::2])
    with pytest.raises(RuntimeError, match="expected a tensor on cpu"):
        load("add_r1").submit(torch.randn(3, device="cuda"), torch.randn(3)).wait()
