"""Overflowing shapes and strides, and views reaching past their storage: a clear error from every
call path (eager fast path, nn.Module.__call__, the TorchScript method, a scripted model), never a
crash, and the next call is correct."""

import pytest
import torch

from conftest import check_recovers


def call_paths(m):
    """Every way a RalModule is called, each as f(*tensors) -> output(s)."""
    scripted = torch.jit.script(m)
    return [
        ("eager", lambda *xs: m(*xs)),
        ("nn.Module.__call__", lambda *xs: torch.nn.Module.__call__(m, *xs)),
        ("method", lambda *xs: m.module.forward(list(xs))),
        ("scripted", lambda *xs: scripted(*xs)),
    ]


def huge(*sizes):
    """A zero-strided view of one element with `sizes`, or None where torch refuses it itself."""
    try:
        return torch.zeros([1] * len(sizes)).expand(*sizes)
    except RuntimeError:
        return None


@pytest.mark.parametrize(
    "sizes",
    [(2**62,), (2**48 + 1,), (2**62, 1), (2**31, 2**31), (2**40, 2**40), (2**17,) * 3],
    ids=str,
)
def test_overflowing_shapes_are_errors_on_every_path(load, sizes):
    rank = len(sizes)
    m = load("add_r{}".format(rank))
    x = huge(*sizes)
    if x is None:
        pytest.skip("torch refuses to make this tensor itself")
    for name, call in call_paths(m):
        with pytest.raises(RuntimeError, match=r"input 0 .*invalid shape.*2\^48 elements"):
            call(x, x)
    small = torch.randn([2] * rank)
    assert torch.equal(m(small, small), small + small)


def test_large_but_valid_zero_strided_views_are_read_as_they_are(load):
    # 2^24 elements over one float: bound without a copy (the module's layout takes any stride).
    m = load("torch_ptr")
    x = torch.zeros(1, 1).expand(2**12, 2**12)
    assert m(x).item() == x.data_ptr()


def resize_storage(x, nbytes):
    """Resizes x's storage under it (torch 2.x: untyped_storage in bytes; 1.13: in elements)."""
    if hasattr(x, "untyped_storage"):
        x.untyped_storage().resize_(nbytes)
    else:
        x.storage().resize_(nbytes // x.element_size())


def test_storage_resized_to_nothing(load):
    m = load("add_r2")
    x = torch.randn(2, 3)
    resize_storage(x, 0)  # as FSDP frees parameters: the view keeps its sizes
    for name, call in call_paths(m):
        with pytest.raises(RuntimeError, match=r"input 0 .*reaches past the end of its storage, "
                           r"which holds 0 bytes"):
            call(x, torch.randn(2, 3))
    check_recovers(m)


def test_storage_shrunk_under_a_view(load):
    m = load("add_r1")
    base = torch.randn(1000)
    view = base[10:]
    resize_storage(base, 8)  # the view now reaches 4 KB past its 8 bytes
    with pytest.raises(RuntimeError, match="holds 8 bytes"):
        m(view, torch.randn(990))
    with pytest.raises(RuntimeError, match="holds 8 bytes"):
        m.module.forward([torch.randn(990), view])


def test_empty_views_of_an_empty_storage_are_fine(load):
    m = load("add_r2")
    x = torch.empty(0).as_strided((0, 5), (5, 1))
    assert m(x, x).shape == (0, 5)


def test_outputs_with_overflowing_strides_or_sizes_are_refused(load):
    m = load("hostile_torch_wild_output")
    cases = [
        (1.0, r"output 0 \(2xf32\) has strides \[4611686018427387904\] that reach more than 2\^48"),
        (2.0, r"output 0 \(4611686018427387904xf32\) has an invalid shape"),
        (3.0, "negative stride"),
    ]
    for mode, message in cases:
        x = torch.tensor([mode, 7.0, 8.0])
        with pytest.raises(RuntimeError, match=message):
            m(x)
        with pytest.raises(RuntimeError, match=message):
            torch.jit.script(m)(x)
    x = torch.tensor([0.0, 7.0])
    y = m(x)
    assert torch.equal(y, x) and y.data_ptr() == x.data_ptr()
