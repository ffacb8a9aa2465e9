"""The layout contract in the torch host: every view gives the module's answer.

Each module records the layout its inputs were compiled for. A view that layout accepts is bound
as it is (checked by pointer); any other (.t(), slices, expand()ed zero strides, as_strided) is
copied into it first, or refused in strict zero-copy mode. Results are compared with torch in
float64.
"""

import pickle

import pytest
import torch

from conftest import module_path
import ral_torch


def compiled(name, **kwargs):
    try:
        return ral_torch.load(module_path(name), **kwargs)
    except FileNotFoundError:
        pytest.skip("built without the MLIR compiler")


def views():
    """2-D float32 views of every kind, (name, tensor, row_major, dense_rows)."""
    base = torch.randn(9, 13)
    flat = torch.randn(64)
    return [
        ("contiguous", torch.randn(4, 6), True, True),
        ("row slice", base[2:6], True, True),  # storage offset, row-major
        ("column slice", base[:, 3:9], False, True),  # rows 13 apart
        ("transposed", torch.randn(6, 4).t(), False, False),
        ("stepped", base[::2, ::3], False, False),
        ("expanded rows", torch.randn(1, 6).expand(4, 6), False, True),  # row stride 0
        ("expanded columns", torch.randn(4, 1).expand(4, 6), False, False),  # column stride 0
        ("as_strided", flat.as_strided((4, 6), (1, 5), 3), False, False),
        ("one row", base[3:4, 2:11], True, True),
        ("one column", base[:, 5:6], False, True),  # rows 13 apart, one element each
        ("one row, stepped", base[3:4, ::2], False, False),
        ("scalar-like", base[4:5, 7:8], True, True),
        ("empty rows", torch.randn(0, 5), True, True),
        ("empty columns", base[:, 0:0], True, True),
        ("empty transposed", torch.randn(3, 0).t(), True, True),
    ]


def softmax64(x):
    return torch.softmax(x.double(), dim=-1)


@pytest.mark.parametrize("strict", [False, True])
def test_row_major_module_gives_correct_results_for_every_view(strict):
    m = compiled("compiled_softmax", strict_zero_copy=strict)
    for name, x, row_major, _ in views():
        if strict and not row_major:
            with pytest.raises(RuntimeError, match="compiled for layout row-major"):
                m(x)
            continue
        y = m(x)
        assert y.shape == x.shape, name
        torch.testing.assert_close(y.double(), softmax64(x), rtol=1e-5, atol=1e-6, msg=name)


def test_each_layout_binds_what_it_accepts_without_a_copy():
    # passthrough returns its input: the output shares the memory the module was given.
    modules = {
        "row-major": compiled("passthrough"),
        "any": compiled("passthrough_any"),
    }
    for name, x, row_major, _ in views():
        for layout, m in modules.items():
            overlapping = any(st == 0 and sz > 1 for st, sz in zip(x.stride(), x.shape))
            if layout == "any" and overlapping:
                # Bound as it is, an expand()ed input would come back as an output aliasing memory
                # its elements share: refused, as torch refuses in-place results on such views.
                with pytest.raises(RuntimeError, match="whose elements share memory"):
                    m(x)
                continue
            y = m(x)
            assert torch.equal(y, x), (name, layout)
            zero_copy = layout == "any" or row_major
            if x.numel() > 0:
                assert (y.data_ptr() == x.data_ptr()) == zero_copy, (name, layout)
            if layout == "any" and x.numel() > 1:
                # Outputs describe their true strides (the input's, here).
                assert y.stride() == x.stride(), name


def test_dense_rows_layout():
    # x + x compiled for strided<[?, 1]>: any row stride, unit column stride.
    m = compiled("compiled_rows")
    strict = compiled("compiled_rows", strict_zero_copy=True)
    assert m.input_signature() == ["?x?xf32,strided<[?,1]>"]
    for name, x, _, dense_rows in views():
        torch.testing.assert_close(m(x).double(), 2 * x.double(), msg=name)
        if dense_rows:
            torch.testing.assert_close(strict(x).double(), 2 * x.double(), msg=name)
        else:
            with pytest.raises(RuntimeError, match=r"compiled for layout strided<\[\?,1\]>"):
                strict(x)
    # Any strides: nothing is refused.
    any_strides = compiled("compiled_any", strict_zero_copy=True)
    for name, x, _, _ in views():
        torch.testing.assert_close(any_strides(x).double(), 2 * x.double(), msg=name)


def test_attention_with_permuted_inputs():
    # Row-major 3-D inputs given as permutes and slices of bigger tensors.
    m = compiled("compiled_attention")
    torch.manual_seed(1)
    q = torch.randn(3, 64, 5).permute(0, 2, 1)  # [3, 5, 64], last dim strided
    k = torch.randn(7, 3, 64).transpose(0, 1)  # [3, 7, 64]
    v = torch.randn(3, 7, 128)[:, :, ::2]  # every second feature
    out = m(q, k, v)
    scores = q.double() @ k.double().transpose(1, 2) / 8.0
    expected = torch.softmax(scores, dim=-1) @ v.double()
    torch.testing.assert_close(out.double(), expected, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(m(q.contiguous(), k.contiguous(), v.contiguous()), out)


def test_hand_written_module_pointer_checks():
    # torch_ptr_rowmajor returns the address it was given.
    m = ral_torch.load(module_path("torch_ptr_rowmajor"))
    for name, x, row_major, _ in views():
        if x.numel() == 0:
            continue
        assert (m(x).item() == x.data_ptr()) == row_major, name
    m.strict_zero_copy = True
    with pytest.raises(RuntimeError, match=r"input 0 \(4x6xf32\) has strides \[1,4\]"):
        m(torch.randn(6, 4).t())


def test_strict_zero_copy_survives_pickling():
    m = compiled("passthrough", strict_zero_copy=True)
    again = pickle.loads(pickle.dumps(m))
    assert again.strict_zero_copy
    with pytest.raises(RuntimeError, match="strict zero-copy"):
        again(torch.randn(3, 2).t())
    again.strict_zero_copy = False
    x = torch.randn(3, 2).t()
    assert torch.equal(again(x), x)


def test_in_place_module_writes_its_input_only_without_a_copy():
    # A module that writes into its input sees the caller's tensor when it is bound as it is,
    # and a private copy otherwise: the result is right either way.
    m = ral_torch.load(module_path("torch_inplace"))
    x = torch.arange(6.0)
    assert torch.equal(m(x), torch.arange(6.0) * 2) and torch.equal(x, torch.arange(6.0) * 2)


def test_bad_inputs_after_copies_leave_the_module_usable():
    m = compiled("compiled_softmax")
    x = torch.randn(5, 3).t()
    with pytest.raises(RuntimeError, match="expected element type f32"):
        m(x.double())
    with pytest.raises(RuntimeError, match="expected rank 2"):
        m(torch.randn(2, 3, 4).transpose(0, 2))
    torch.testing.assert_close(m(x).double(), softmax64(x))


def test_a_copy_is_not_mistaken_for_a_later_input():
    # passthrough returns its input: after a run that copied its input, a run that binds the
    # caller's tensor as it is must return a view of that tensor, not of the earlier copy.
    m = compiled("passthrough")
    for _ in range(3):
        y = m(torch.randn(3, 2).t())
        x = torch.randn(2, 3)
        out = m(x)
        assert out.data_ptr() == x.data_ptr() and torch.equal(out, x)
        assert torch.equal(m(y.t().contiguous().t()), y)
