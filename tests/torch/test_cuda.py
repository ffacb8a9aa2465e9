"""CUDA: tensors on the GPU are bound zero-copy and outputs stay on the device; the execution
runs on torch's current stream. Skipped where torch has no GPU."""

import pytest
import torch

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="torch has no CUDA device on this machine"
)


def test_cuda_alias_outputs_are_views(load):
    m = load("torch_cuda_alias")
    x = torch.arange(9.0, device="cuda")
    same, every_second = m(x)
    assert same.is_cuda and same.data_ptr() == x.data_ptr()
    assert torch.equal(every_second, x[::2])


def test_cuda_alias_on_a_side_stream(load):
    m = load("torch_cuda_alias")
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        x = torch.arange(5.0, device="cuda") * 3
        same, _ = m(x)
        y = same + 1
    stream.synchronize()
    assert torch.equal(y.cpu(), torch.arange(5.0) * 3 + 1)


def test_cpu_module_rejects_cuda_tensor(load):
    m = load("add_r1")
    with pytest.raises(RuntimeError, match="expected a tensor on cpu .*got one on cuda"):
        m(torch.randn(3, device="cuda"), torch.randn(3))
    a, b = torch.randn(3), torch.randn(3)
    assert torch.equal(m(a, b), a + b)


def test_cuda_view_is_copied_on_the_device_for_a_row_major_module(load):
    m = load("torch_cuda_alias_rowmajor")
    base = torch.arange(12.0, device="cuda")
    x = base[1::3]  # stride 3: not row-major, copied on the GPU
    same, every_second = m(x)
    assert same.is_cuda and same.data_ptr() != x.data_ptr()
    assert torch.equal(same, x) and torch.equal(every_second, x[::2])
    y = base[2:7]  # contiguous: bound as it is
    same, _ = m(y)
    assert same.data_ptr() == y.data_ptr()
    m.strict_zero_copy = True
    with pytest.raises(RuntimeError, match=r"strides \[3\] .*row-major"):
        m(x)


def test_cuda_calls_queue_work_without_waiting_for_the_stream(load):
    """Executions are ordered on torch's current stream with no host synchronization: with a long
    kernel queued ahead of them, three calls (each copying its strided input on the device) return
    while the stream is still busy, which a synchronizing call would have drained."""
    m = load("torch_cuda_alias_rowmajor")
    base = torch.arange(12.0, device="cuda")
    x = base[1::3]
    m(x)  # first call: loads the module and warms the allocator
    torch.cuda.synchronize()
    torch.cuda._sleep(500_000_000)  # a few hundred milliseconds of GPU clock cycles
    outputs = [m(x) for _ in range(3)]
    busy = not torch.cuda.current_stream().query()
    torch.cuda.synchronize()
    assert busy, "a call waited for the work queued on torch's stream"
    for same, every_second in outputs:
        assert torch.equal(same, x) and torch.equal(every_second, x[::2])
