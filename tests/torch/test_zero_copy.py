"""Inputs are bound without a copy, and outputs that live in an input's memory share it."""

import torch


def test_input_data_pointer_reaches_module(load):
    m = load("torch_ptr")
    base = torch.randn(8, 9)
    for x in [base, base.t(), base[2:6, 3:7], base[1::2, ::3], torch.randn(0, 4)]:
        if x.numel() == 0:
            continue
        assert m(x).item() == x.data_ptr()


def test_alias_outputs_share_input_storage(load):
    m = load("alias")
    x = torch.arange(9.0)
    same, every_second = m(x)
    assert same.data_ptr() == x.data_ptr()
    assert every_second.data_ptr() == x.data_ptr()
    assert every_second.stride() == (2,)
    x[0] = 100.0  # a view, not a copy
    assert same[0].item() == 100.0 and every_second[0].item() == 100.0


def test_alias_of_a_strided_input(load):
    m = load("alias")
    base = torch.arange(20.0)
    x = base[3::2]
    same, every_second = m(x)
    assert same.data_ptr() == x.data_ptr() and same.stride() == x.stride()
    assert torch.equal(every_second, x[::2])
    assert every_second.storage_offset() == x.storage_offset()


def test_in_place_output_shares_storage(load):
    m = load("torch_inplace")
    x = torch.arange(6.0)
    expected = x * 2
    out = m(x)
    assert torch.equal(x, expected)  # written in place
    assert out.data_ptr() == x.data_ptr()
    assert torch.equal(out, expected)
    y = torch.arange(12.0)[1::3]  # strided, offset
    out = m(y)
    assert out.data_ptr() == y.data_ptr() and torch.equal(out, torch.tensor([2.0, 8.0, 14.0, 20.0]))


def test_allocated_output_is_a_fresh_tensor(load):
    m = load("add_r2")
    a, b = torch.randn(3, 4), torch.randn(3, 4)
    out = m(a, b)
    assert out.is_contiguous()
    assert out.data_ptr() not in (a.data_ptr(), b.data_ptr())
    assert out.data_ptr() % 64 == 0
