"""Outputs equal eager torch: contiguous and strided inputs, every rank, several element types,
dynamic sizes, and a module that runs a RAL kernel (ral_gemm) under the torch context."""

import pytest
import torch

from conftest import module_path
import ral_torch


@pytest.mark.parametrize("rank", [0, 1, 2, 3, 4, 8])
def test_add_every_rank(load, rank):
    m = load("add_r{}".format(rank))
    shape = [2, 3, 1, 4, 2, 1, 2, 3][:rank]
    a, b = torch.randn(shape), torch.randn(shape)
    out = m(a, b)
    assert isinstance(out, torch.Tensor)
    assert out.shape == a.shape and out.dtype == torch.float32
    assert torch.equal(out, a + b)


def test_add_non_contiguous_inputs(load):
    m = load("add_r2")
    base = torch.randn(6, 10)
    cases = [
        (base.t(), torch.randn(10, 6)),  # transposed
        (base[1:5, 2:9], base[0:4, 1:8]),  # sliced (storage offsets, row stride 10)
        (base[::2, ::3], torch.randn(3, 4)),  # stepped
        (torch.randn(1, 7).expand(5, 7), torch.randn(5, 7)),  # stride 0
    ]
    for a, b in cases:
        assert not a.is_contiguous()
        assert torch.equal(m(a, b), a + b)


def test_dynamic_batch(load):
    m = load("add_r3")
    for batch in [1, 2, 7, 64, 0]:
        a, b = torch.randn(batch, 3, 5), torch.randn(batch, 3, 5)
        assert torch.equal(m(a, b), a + b)


@pytest.mark.parametrize(
    "code,dtype",
    [
        ("i8", torch.int8),
        ("i16", torch.int16),
        ("i32", torch.int32),
        ("i64", torch.int64),
        ("ui8", torch.uint8),
        ("f32", torch.float32),
        ("f64", torch.float64),
    ],
)
def test_add_dtypes(load, code, dtype):
    m = load("torch_add_" + code)
    if dtype.is_floating_point:
        a, b = torch.randn(4, 5, dtype=dtype), torch.randn(5, 4, dtype=dtype).t()
    else:
        a = torch.randint(-50 if dtype != torch.uint8 else 0, 100, (4, 5), dtype=dtype)
        b = torch.randint(0, 100, (5, 4), dtype=dtype).t()
    out = m(a, b)
    assert out.dtype == dtype
    assert torch.equal(out, a + b)


@pytest.mark.parametrize(
    "code,dtype", [("f16", torch.float16), ("bf16", torch.bfloat16), ("i1", torch.bool)]
)
def test_copy_dtypes(load, code, dtype):
    m = load("torch_copy_" + code)
    a = (torch.randn(3, 6) > 0) if dtype == torch.bool else torch.randn(3, 6).to(dtype)
    a = a[:, ::2]
    out = m(a, torch.zeros(3, 3, dtype=dtype))
    assert out.dtype == dtype and out.is_contiguous()
    assert torch.equal(out, a)


def test_static_identity(load):
    m = load("identity")
    x = torch.randn(3, 2).t()
    assert torch.equal(m(x), x)


def test_kernel_under_torch_context(load):
    m = load("torch_matmul")
    for n, k, p in [(3, 4, 5), (16, 8, 1), (33, 17, 9)]:
        a, b = torch.randn(n, k), torch.randn(k, p)
        torch.testing.assert_close(m(a, b), a @ b, rtol=1e-5, atol=1e-5)
    a = torch.randn(6, 4).t()  # a transposed operand goes to BLAS as it is
    b = torch.randn(6, 3)
    torch.testing.assert_close(m(a, b), a @ b, rtol=1e-5, atol=1e-5)


def test_several_outputs_are_a_tuple(load):
    m = load("alias")
    x = torch.arange(7.0)
    out = m(x)
    assert isinstance(out, tuple) and len(out) == 2
    assert torch.equal(out[0], x) and torch.equal(out[1], x[::2])


def test_custom_class_directly():
    m = torch.classes.ral.Module(module_path("add_r1"))
    assert m.name() == "add_r1"
    assert m.input_signature() == ["a:?xf32,strided<[?]>", "b:?xf32,strided<[?]>"]
    assert m.output_signature() == ["sum:?xf32"]
    a, b = torch.randn(5), torch.randn(5)
    (out,) = m.forward([a, b])
    assert torch.equal(out, a + b)


def test_from_bytes():
    with open(module_path("add_r2"), "rb") as f:
        data = f.read()
    m = torch.classes.ral.Module.from_bytes(data)
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    assert torch.equal(m.forward([a, b])[0], a + b)
    wrapped = ral_torch.load_bytes(data)
    assert torch.equal(wrapped(a, b), a + b)
    assert torch.equal(ral_torch.load_bytes(torch.frombuffer(bytearray(data), dtype=torch.uint8))(a, b), a + b)


def test_outputs_outlive_the_module(load):
    m = load("add_r1")
    a, b = torch.randn(100), torch.randn(100)
    out = m(a, b)
    del m
    import gc

    gc.collect()
    assert torch.equal(out, a + b)
    out.resize_(1000)  # torch's own allocator owns the storage: it can grow it
    assert torch.equal(out[:100], a + b)
