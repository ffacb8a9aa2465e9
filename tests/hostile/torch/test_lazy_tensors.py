"""Tensors whose memory does not hold their values as plain strided elements: lazy negation and
conjugation bits, non-strided layouts, quantized, meta and nested tensors, overlapping views that
come back as aliasing outputs. Each is a correct result or a clear error, on every call path."""

import pytest
import torch

from conftest import check_recovers


def neg_views():
    """(name, tensor with the negative bit, its values)."""
    x = torch.arange(6.0).reshape(2, 3)
    z = torch.complex(torch.arange(6.0), torch.arange(6.0) + 10).reshape(2, 3)
    return [
        ("_neg_view", x._neg_view(), -x),
        ("conj().imag", z.conj().imag, -(torch.arange(6.0) + 10).reshape(2, 3)),
        ("_neg_view().t()", x.t()._neg_view(), -x.t()),
    ]


@pytest.mark.parametrize("case", neg_views(), ids=lambda c: c[0])
def test_negative_bit_is_resolved(load, case):
    _, x, values = case
    assert x.is_neg()
    m = load("add_r2")
    b = torch.ones_like(values)
    expected = values + b
    assert torch.equal(m(x, b), expected)
    assert torch.equal(m(b, x), expected)
    assert torch.equal(m.module.forward([x, b])[0], expected)
    assert torch.equal(torch.jit.script(m)(x, b), expected)
    assert x.is_neg()  # the caller's tensor is untouched


def test_negative_bit_in_a_row_major_module(load):
    m = load("add_r2_rowmajor")
    x = torch.arange(6.0).reshape(3, 2).t()._neg_view()  # resolved, then laid out row-major
    assert torch.equal(m(x, torch.zeros(2, 3)), -torch.arange(6.0).reshape(3, 2).t())


def test_negative_bit_under_strict_zero_copy_is_an_error(load):
    m = load("add_r2", strict_zero_copy=True)
    x = torch.arange(6.0).reshape(2, 3)._neg_view()
    with pytest.raises(RuntimeError, match=r"input 0 \(2x3xFloat on cpu\) has the negative bit set "
                       r".*strict zero-copy.*resolve_neg\(\)"):
        m(x, torch.zeros(2, 3))
    with pytest.raises(RuntimeError, match="input 1 .*negative bit"):
        torch.jit.script(m)(torch.zeros(2, 3), x)
    resolved = x.resolve_neg()
    assert torch.equal(m(resolved, torch.zeros(2, 3)), resolved)


def test_aliasing_output_of_a_negative_view_is_an_error(load):
    # The module writes its input in place and returns it: the result must share the caller's
    # memory, which the resolved copy it read does not.
    m = load("torch_inplace")
    base = torch.arange(4.0)
    x = base._neg_view()
    with pytest.raises(RuntimeError, match=r"output 0 is a view of input 0, which has the negative "
                       r"bit set .*resolve_neg\(\)"):
        m(x)
    assert torch.equal(base, torch.arange(4.0))  # written nowhere but in the copy
    y = x.resolve_neg()
    assert torch.equal(m(y), -2 * torch.arange(4.0)) and torch.equal(y, -2 * torch.arange(4.0))
    alias = load("alias")
    with pytest.raises(RuntimeError, match="negative bit"):
        alias(torch.arange(5.0)._neg_view())


def test_conjugate_bit(load):
    # RAL has no complex element type: a conjugated complex tensor is refused by type, before
    # anything reads it.
    m = load("add_r1")
    z = torch.complex(torch.arange(3.0), torch.ones(3)).conj()
    assert z.is_conj()
    with pytest.raises(RuntimeError, match="expected element type f32 .*got ComplexFloat"):
        m(z, torch.zeros(3))
    with pytest.raises(RuntimeError, match="expected element type f32 .*got ComplexFloat"):
        m.module.forward([torch.zeros(3), z])
    # conj() of a real tensor sets no bit: read as it is.
    x = torch.arange(3.0)
    assert torch.equal(m(x.conj(), x), 2 * x)


@pytest.mark.parametrize(
    "kind, make, message",
    [
        ("sparse COO", lambda: torch.eye(2, 3).to_sparse(), "got layout Sparse; pass x.to_dense()"),
        ("sparse CSR", lambda: torch.eye(2, 3).to_sparse_csr(), "got layout SparseCsr"),
        ("sparse CSC", lambda: torch.eye(2, 3).to_sparse_csc(), "got layout SparseCsc"),
        ("mkldnn", lambda: torch.eye(2, 3).to_mkldnn(), "got layout Mkldnn"),
        (
            "quantized",
            lambda: torch.quantize_per_tensor(torch.eye(2, 3), 0.1, 0, torch.quint8),
            "got a quantized QUInt8 tensor; pass x.dequantize",
        ),
        (
            "meta",
            lambda: torch.empty(2, 3, device="meta"),
            "expected a tensor on cpu .*got one on meta",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_tensors_without_plain_memory_are_clear_errors(load, kind, make, message):
    try:
        x = make()
    except (RuntimeError, AttributeError) as e:
        pytest.skip("this torch cannot make a {} tensor: {}".format(kind, e))
    m = load("add_r2")
    scripted = torch.jit.script(m)
    for call in (lambda: m(x, torch.zeros(2, 3)), lambda: m.module.forward([torch.zeros(2, 3), x]),
                 lambda: scripted(x, torch.zeros(2, 3))):
        with pytest.raises(RuntimeError, match="input [01]: .*" + message):
            call()
    check_recovers(m)


def test_nested_tensor_is_a_clear_error(load):
    try:
        x = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])
    except (RuntimeError, AttributeError) as e:
        pytest.skip("no nested tensors: {}".format(e))
    m = load("add_r1")
    with pytest.raises(RuntimeError, match="input 0: expected a dense tensor .*a nested tensor"):
        m(x, torch.zeros(2))
    with pytest.raises(RuntimeError, match="input 1: .*nested tensor"):
        m.module.forward([torch.zeros(2), x])
    assert torch.equal(m(torch.ones(2), torch.ones(2)), 2 * torch.ones(2))


def test_overlapping_inputs_are_read_as_they_are(load):
    # Broadcast views (stride 0) are bound without a copy and read correctly.
    m = load("add_r2")
    row, col = torch.randn(1, 5), torch.randn(4, 1)
    assert torch.equal(m(row.expand(4, 5), col.expand(4, 5)), row + col)


@pytest.mark.parametrize("name", ["torch_inplace", "alias"])
def test_aliasing_output_of_an_overlapping_view_is_an_error(load, name):
    # As torch refuses in-place results on memory whose elements overlap, an output that is a view
    # of such an input is refused: the module may have written the same element several times.
    m = load(name)
    for x in [torch.ones(1).expand(4), torch.arange(4.0).as_strided((3,), (0,))]:
        with pytest.raises(RuntimeError, match=r"output 0 is a view of input 0 \(.*strides "
                           r"\[0\]\), whose elements share memory .*x.contiguous\(\)"):
            m(x)
    x = torch.ones(1).expand(4).contiguous()
    out = m(x)
    assert torch.equal(out if name == "torch_inplace" else out[0], x)


def test_overlapping_input_copied_into_the_module_layout_is_fine(load):
    # A row-major module reads a copy: its outputs never alias the caller's overlapping memory.
    m = load("add_r2_rowmajor")
    x = torch.randn(1, 3).expand(2, 3)
    assert torch.equal(m(x, x), x + x)
