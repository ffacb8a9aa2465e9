"""Bad inputs give a Python exception with a clear message; the process stays alive and the next
call is correct."""

import pytest
import torch

from conftest import module_path
import ral_torch


def check_recovers(m):
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    assert torch.equal(m(a, b), a + b)


@pytest.fixture
def add(load):
    return load("add_r2")


def test_wrong_number_of_tensors(add):
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        add(torch.randn(2, 3))
    with pytest.raises(TypeError, match="positional arguments"):
        add(torch.randn(2, 3), torch.randn(2, 3), torch.randn(2, 3))
    with pytest.raises(RuntimeError, match=r"module 'add_r2' takes 2 input\(s\) .*got 1"):
        add.module.forward([torch.randn(2, 3)])
    with pytest.raises(RuntimeError, match=r"takes 2 input\(s\) .*got 3"):
        add.module.forward([torch.randn(2, 3)] * 3)
    check_recovers(add)


def test_wrong_dtype(add):
    with pytest.raises(RuntimeError, match="input 1: expected element type f32 .*got Double"):
        add(torch.randn(2, 3), torch.randn(2, 3, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="input 0: expected element type f32 .*got Int"):
        add(torch.ones(2, 3, dtype=torch.int32), torch.randn(2, 3))
    check_recovers(add)


def test_wrong_rank(add):
    with pytest.raises(RuntimeError, match=r"input 0: expected rank 2 \(\?x\?xf32\), got rank 3"):
        add(torch.randn(2, 3, 4), torch.randn(2, 3))
    with pytest.raises(RuntimeError, match="input 1: expected rank 2 .*got rank 0"):
        add(torch.randn(2, 3), torch.tensor(1.0))
    check_recovers(add)


def test_wrong_static_dim(load):
    m = load("identity")
    with pytest.raises(RuntimeError, match=r"input 0: dimension 1 must be 3 \(2x3xf32\), got 4"):
        m(torch.randn(2, 4))
    with pytest.raises(RuntimeError, match="dimension 0 must be 2"):
        m(torch.randn(3, 3))
    x = torch.randn(2, 3)
    assert torch.equal(m(x), x)


def test_module_signalled_error(load, add):
    m = load("error")
    with pytest.raises(RuntimeError, match="error module: the input is negative"):
        m(torch.tensor(-3))
    assert m(torch.tensor(41)).item() == 42
    with pytest.raises(RuntimeError, match="add: the inputs have different shapes"):
        add(torch.randn(2, 3), torch.randn(3, 2))
    check_recovers(add)


def test_cuda_tensor_without_cuda(add):
    if torch.cuda.is_available():
        x = torch.randn(2, 3, device="cuda")
        with pytest.raises(RuntimeError, match="input 0: expected a tensor on cpu .*got one on cuda"):
            add(x, torch.randn(2, 3))
    else:
        # Torch itself refuses to make the tensor; the module stays usable.
        with pytest.raises((RuntimeError, AssertionError), match="CUDA"):
            add(torch.randn(2, 3, device="cuda"), torch.randn(2, 3))
    check_recovers(add)


def test_tensor_on_another_device(add):
    # A tensor the module cannot read (no data): rejected by device, before any access.
    with pytest.raises(RuntimeError, match="input 0: expected a tensor on cpu .*got one on meta"):
        add(torch.empty(2, 3, device="meta"), torch.randn(2, 3))
    check_recovers(add)


def test_cpu_tensor_for_a_cuda_module(load):
    m = load("torch_cuda_alias")
    with pytest.raises(RuntimeError, match="input 0: expected a tensor on cuda .*got one on cpu"):
        m(torch.randn(4))


def test_sparse_and_undefined_inputs(add):
    with pytest.raises(RuntimeError, match="expected a dense tensor"):
        add(torch.randn(2, 3).to_sparse(), torch.randn(2, 3))
    check_recovers(add)


def test_bad_files(tmp_path):
    with pytest.raises(RuntimeError, match="cannot open module file"):
        ral_torch.load(str(tmp_path / "missing.ralm"))
    bad = tmp_path / "bad.ralm"
    bad.write_bytes(b"not a module at all" * 10)
    with pytest.raises(RuntimeError):
        ral_torch.load(str(bad))
    with pytest.raises(RuntimeError):
        ral_torch.load_bytes(b"\x00\x01garbage")
    with open(module_path("add_r1"), "rb") as f:
        truncated = f.read()[:200]
    with pytest.raises(RuntimeError):
        ral_torch.load_bytes(truncated)


def test_missing_import_lists_the_name():
    with pytest.raises(RuntimeError, match="ral_no_such_function|missing|not registered|NOT_FOUND"):
        ral_torch.load(module_path("missing_import"))


def test_compiled_assert_fails_the_call_and_the_next_call_is_correct():
    # compiler_passes/test/tools/assert.mlir, compiled by ral-compile: a + b after cf.assert that the
    # lengths agree. A failed assertion must raise, never abort the process.
    try:
        m = ral_torch.load(module_path("compiled_assert"))
    except FileNotFoundError:
        pytest.skip("built without the MLIR compiler")
    a, b = torch.arange(3.0), torch.arange(3.0) * 10
    with pytest.raises(RuntimeError, match="a and b must have the same length"):
        m(a, torch.ones(2))
    assert torch.equal(m(a, b), a + b)
    with pytest.raises(RuntimeError, match="FAILED_PRECONDITION"):
        m(torch.ones(0), torch.ones(1))
    assert torch.equal(m(torch.ones(0), torch.ones(0)), torch.ones(0))


def test_compiled_module_copies_a_view_it_was_not_compiled_for():
    # The compiled module's inputs are row-major memref<?xf32>: a strided view (every second
    # element) is copied into row-major order, never read as if contiguous; in strict zero-copy
    # mode it is an error naming the input and both layouts.
    try:
        m = ral_torch.load(module_path("compiled_assert"))
    except FileNotFoundError:
        pytest.skip("built without the MLIR compiler")
    a = torch.arange(8.0)
    assert torch.equal(m(a[::2], torch.ones(4)), a[::2] + 1)
    assert torch.equal(m(torch.ones(4), a[1::2]), a[1::2] + 1)
    m.strict_zero_copy = True
    with pytest.raises(RuntimeError, match=r"input 0 \(4xf32\) has strides \[2\] but the module "
                       r"was compiled for layout row-major"):
        m(a[::2], torch.ones(4))
    with pytest.raises(RuntimeError, match="input 1 .*strict zero-copy is on"):
        m(torch.ones(4), a[1::2])
    # Contiguous slices (an offset into the storage) and size-1 views need no copy.
    assert torch.equal(m(a[2:6], a[4:8]), a[2:6] + a[4:8])
    assert torch.equal(m(a[::8], a[1::8]), a[:1] + a[1:2])
    assert torch.equal(m(a[::2].contiguous(), a[1::2].contiguous()), a[::2] + a[1::2])


def test_device_uris():
    # The module's own device by URI runs; a device that does not exist, a URI of another kind
    # and a malformed one raise with RAL's message (listing the devices), and nothing is loaded.
    m = ral_torch.load(module_path("add_r2"), device="cpu:0")
    check_recovers(m)
    with pytest.raises(RuntimeError, match=r"(?s)no cpu device matches 'cpu:3'; the devices are:.*cpu:0"):
        ral_torch.load(module_path("add_r2"), device="cpu:3")
    with pytest.raises(RuntimeError, match=r"runs on cpu, not on device 'vulkan:0'"):
        ral_torch.load(module_path("add_r2"), device="vulkan:0")
    with pytest.raises(RuntimeError, match=r"bad device 'gpu0'"):
        ral_torch.load(module_path("add_r2"), device="gpu0")
    with pytest.raises(TypeError, match="device URI string"):
        ral_torch.load(module_path("add_r2"), device=0)
    with open(module_path("add_r2"), "rb") as f:
        check_recovers(ral_torch.load_bytes(f.read(), device="cpu"))
