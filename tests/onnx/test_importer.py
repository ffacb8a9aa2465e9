"""ral-compile's ONNX importer on models built here with onnx.helper: what it refuses (and how it
names the culprit), and what it computes, against numpy in float64 on inputs with dynamic,
size-1 and empty dims, through ral_torch with non-contiguous torch views.

CTest runs it with RAL_COMPILE at ral-compile and PYTHONPATH at the built ral_torch package.
"""

import ctypes
import os
import re
import subprocess

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

import ral_torch
from onnx_graphs import (F, RAL_COMPILE, UNSUPPORTED, compile_model, load, model, tensor,
                         vulkan_ral_run)

# ---- what the importer refuses ----------------------------------------------------------------

def test_every_unsupported_operator_is_named(tmp_path):
    m = model([helper.make_node("Relu", ["x"], ["a"], name="ok"),
               helper.make_node("Det", ["a"], ["d"], name="det"),
               helper.make_node("Bernoulli", ["a"], ["nz"], name="coin")],
              [tensor("x", F, [3, 3])],
              [tensor("d", F, None), tensor("nz", F, None)])
    rc, err, out = compile_model(tmp_path, m)
    assert rc == UNSUPPORTED
    assert "node 'det' (Det): unsupported operator Det" in err
    assert "node 'coin' (Bernoulli): unsupported operator Bernoulli" in err
    assert not out.exists()


def test_unknown_attribute_is_named(tmp_path):
    m = model([helper.make_node("Relu", ["x"], ["y"], name="r", frobnicate=1)],
              [tensor("x", F, [2])], [tensor("y", F, [2])])
    rc, err, _ = compile_model(tmp_path, m)
    assert rc == UNSUPPORTED
    assert "node 'r' (Relu): unsupported attribute 'frobnicate'" in err


def test_unsupported_attribute_value_is_named(tmp_path):
    m = model([helper.make_node("Resize", ["x", "roi", "scales"], ["y"], name="crop",
                                coordinate_transformation_mode="tf_crop_and_resize")],
              [tensor("x", F, [1, 1, 4, 4])], [tensor("y", F, None)],
              [numpy_helper.from_array(np.array([0, 0, 0, 0, 1, 1, 1, 1], np.float32), "roi"),
               numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")], opset=13)
    rc, err, _ = compile_model(tmp_path, m)
    assert rc == UNSUPPORTED
    assert ("node 'crop' (Resize): unsupported coordinate_transformation_mode "
            "'tf_crop_and_resize'") in err


def test_unsupported_input_type_and_opset(tmp_path):
    m = model([helper.make_node("Identity", ["x"], ["y"])],
              [tensor("x", TensorProto.STRING, [2])], [tensor("y", TensorProto.STRING, [2])])
    rc, err, _ = compile_model(tmp_path, m)
    assert rc == UNSUPPORTED and "graph input 'x': unsupported element type STRING" in err
    m = model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", F, [2])],
              [tensor("y", F, [2])], opset=18)
    rc, err, _ = compile_model(tmp_path, m)
    assert rc == UNSUPPORTED and "unsupported opset 18" in err


def test_shape_from_tensor_data(tmp_path):
    # A shape known only at run time: ONNX's 0 and -1 resolved then, errors named.
    m = model([helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
              [tensor("x", F, ["a", 6]), tensor("s", TensorProto.INT64, [3])],
              [tensor("y", F, None)])
    mod = load(tmp_path, m)
    x = torch.arange(24.0).reshape(4, 6)
    for shape, expect in [([2, -1, 3], (2, 4, 3)), ([0, 3, 2], (4, 3, 2)), ([-1, 1, 1], (24, 1, 1))]:
        assert torch.equal(mod(x, torch.tensor(shape)), x.reshape(expect))
    for shape, message in [([-1, -1, 6], "more than one -1"), ([5, 5, 1], "element count"),
                           ([2, -3, 4], "below -1")]:
        with pytest.raises(RuntimeError, match=message):
            mod(x, torch.tensor(shape))
    assert torch.equal(mod(x, torch.tensor([3, 8, 1])), x.reshape(3, 8, 1))
    # A long shape tensor is not read element by element at run time.
    m = model([helper.make_node("Reshape", ["x", "s"], ["y"], name="long")],
              [tensor("x", F, [1] * 20), tensor("s", TensorProto.INT64, [20])],
              [tensor("y", F, None)])
    rc, err, _ = compile_model(tmp_path, m)
    assert rc == UNSUPPORTED and "node 'long' (Reshape): unsupported shape input of 20" in err


def test_external_data_is_refused(tmp_path):
    w = numpy_helper.from_array(np.ones((4,), np.float32), "w")
    w.data_location = TensorProto.EXTERNAL
    w.ClearField("raw_data")
    entry = w.external_data.add()
    entry.key, entry.value = "location", "weights.bin"
    m = model([helper.make_node("Add", ["x", "w"], ["y"])], [tensor("x", F, [4])],
              [tensor("y", F, [4])], [w])
    rc, err, _ = compile_model(tmp_path, m)
    assert rc == UNSUPPORTED and "initializer 'w': unsupported external data" in err


def test_corrupt_and_wrong_models(tmp_path):
    rc, err, _ = compile_model(tmp_path, b"\x08\x07\x12\xff\xff garbage")
    assert rc == 1 and "not a valid ONNX model" in err
    # A model whose graph is not in topological order.
    m = model([helper.make_node("Relu", ["a"], ["y"], name="late"),
               helper.make_node("Relu", ["x"], ["a"], name="early")],
              [tensor("x", F, [2])], [tensor("y", F, [2])])
    rc, err, _ = compile_model(tmp_path, m)
    assert rc == 1 and "node 'late' (Relu): input 'a' is not defined" in err
    # Static shapes that cannot multiply.
    m = model([helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
              [tensor("a", F, [2, 3]), tensor("b", F, [4, 5])], [tensor("y", F, None)])
    rc, err, _ = compile_model(tmp_path, m)
    assert rc == 1 and "node 'mm' (MatMul): contraction dims differ: 3 vs 4" in err
    m = model([helper.make_node("Add", ["a", "b"], ["y"], name="add")],
              [tensor("a", F, [2, 3]), tensor("b", F, [4])], [tensor("y", F, None)])
    rc, err, _ = compile_model(tmp_path, m)
    assert rc == 1 and "node 'add' (Add): shapes do not broadcast: 3 vs 4 in dim 1" in err


def test_nodes_that_break_their_schema_are_named(tmp_path):
    cases = [
        (helper.make_node("Add", ["x"], ["y"], name="n"),
         "node 'n' (Add): has 1 inputs and 1 outputs; opset 14's Add takes 2..2 inputs"),
        (helper.make_node("Concat", ["x", "x"], ["y"], name="n", axis=0.5),
         "node 'n' (Concat): attribute 'axis' has type FLOAT, the operator's is INT"),
        (helper.make_node("Cast", ["x"], ["y"], name="n"),
         "node 'n' (Cast): required attribute 'to' is missing"),
        (helper.make_node("Gemm", ["x", ""], ["y"], name="n"),
         "node 'n' (Gemm): required input 1 ('B') is missing"),
    ]
    for node, message in cases:
        m = model([node], [tensor("x", F, [2, 2])], [tensor("y", F, None)])
        rc, err, _ = compile_model(tmp_path, m)
        assert rc == 1 and message in err, err


def test_emit_import_writes_tensor_level_mlir(tmp_path):
    m = model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", F, ["n", 3])],
              [tensor("y", F, ["n", 3])])
    rc, err, out = compile_model(tmp_path, m, "--emit=import")
    assert rc == 0, err
    text = out.read_text()
    assert "func.func @main(%arg0: tensor<?x3xf32>" in text and "linalg.generic" in text


def test_compiler_library_in_process(tmp_path):
    lib = ctypes.CDLL(os.path.join(os.path.dirname(ral_torch.__file__), "libral_compiler.so"))
    lib.ral_compiler_compile.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                         ctypes.POINTER(ctypes.c_void_p)]
    lib.ral_compiler_free.argtypes = [ctypes.c_void_p]
    onnx.save(model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", F, [3])],
                    [tensor("y", F, [3])]), str(tmp_path / "m.onnx"))

    def compile_(options):
        diag = ctypes.c_void_p()
        rc = lib.ral_compiler_compile(str(tmp_path / "m.onnx").encode(),
                                      str(tmp_path / "m.ralm").encode(), options.encode(),
                                      ctypes.byref(diag))
        text = ctypes.string_at(diag.value).decode() if diag.value else ""
        lib.ral_compiler_free(diag)
        return rc, text

    assert compile_("--no-such-flag") == (2, "ral-compile: error: unknown option "
                                              "'--no-such-flag'\n")
    rc, text = compile_("--device=cpu --name=relu")
    assert rc == 0, text
    x = torch.tensor([-1.0, 0.0, 2.0])
    assert torch.equal(ral_torch.load(str(tmp_path / "m.ralm"))(x), torch.relu(x))


# ---- what the importer computes ---------------------------------------------------------------

def test_broadcasting_arithmetic_with_dynamic_dims(tmp_path):
    m = model([helper.make_node("Mul", ["x", "w"], ["a"]),
               helper.make_node("Add", ["a", "b"], ["c"]),
               helper.make_node("Sigmoid", ["c"], ["y"])],
              [tensor("x", F, ["n", "m", 3]), tensor("b", F, ["m", 1])],
              [tensor("y", F, None)],
              [numpy_helper.from_array(np.array([0.5, -2.0, 3.0], np.float32), "w")])
    mod = load(tmp_path, m)
    for n, k in [(2, 4), (1, 1), (0, 3), (3, 0)]:
        x = torch.randn(n, 3, k).transpose(1, 2)  # a non-contiguous view of [n, k, 3]
        b = torch.randn(1, k).t()  # [k, 1], strided
        ref = 1 / (1 + np.exp(-(x.double().numpy() * np.array([0.5, -2.0, 3.0]) +
                                 b.double().numpy())))
        got = mod(x, b)
        assert got.shape == (n, k, 3)
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-5, atol=1e-6)


def test_dynamic_size_one_broadcast_fails_cleanly(tmp_path):
    m = model([helper.make_node("Add", ["x", "y"], ["z"])],
              [tensor("x", F, ["a"]), tensor("y", F, ["b"])], [tensor("z", F, None)])
    mod = load(tmp_path, m)
    with pytest.raises(RuntimeError, match="do not broadcast"):
        mod(torch.ones(4), torch.ones(1))
    assert torch.equal(mod(torch.ones(4), torch.full((4,), 2.0)), torch.full((4,), 3.0))


def test_gather_index_out_of_range_fails_cleanly(tmp_path):
    m = model([helper.make_node("Gather", ["x", "i"], ["y"], axis=1)],
              [tensor("x", F, [2, 5]), tensor("i", TensorProto.INT64, ["k"])],
              [tensor("y", F, None)])
    mod = load(tmp_path, m)
    x = torch.arange(10.0).reshape(2, 5)
    with pytest.raises(RuntimeError, match="node .* \\(Gather\\): an index is out of range"):
        mod(x, torch.tensor([0, 5]))
    idx = torch.tensor([4, -1, 0, 2])
    assert torch.equal(mod(x, idx), torch.from_numpy(x.numpy()[:, idx.numpy()]))
    assert mod(x, torch.tensor([], dtype=torch.int64)).shape == (2, 0)


def numpy_gather_nd(data, indices, batch_dims):
    lead = indices.shape[:-1]
    m = indices.shape[-1]
    out = np.zeros(lead + data.shape[batch_dims + m:], dtype=data.dtype)
    for pos in np.ndindex(*lead):
        where = tuple(pos[:batch_dims]) + tuple(indices[pos])
        out[pos] = data[where]
    return out


@pytest.mark.parametrize("batch_dims", [0, 1])
def test_gather_nd_against_numpy(tmp_path, batch_dims):
    m = model([helper.make_node("GatherND", ["x", "i"], ["y"], batch_dims=batch_dims)],
              [tensor("x", F, [3, 4, "k"]),
               tensor("i", TensorProto.INT64, [3, "n", 2 - batch_dims])],
              [tensor("y", F, None)])
    mod = load(tmp_path, m)
    for k, n in [(5, 4), (1, 1), (2, 0), (0, 2)]:
        x = torch.randn(k, 4, 3).permute(2, 1, 0)  # non-contiguous
        shape = x.shape[batch_dims:batch_dims + 2 - batch_dims]
        cols = [torch.randint(-s, s, (3, n, 1)) for s in shape]
        i = torch.cat(cols, dim=2)  # negative ones count from the end
        got = mod(x, i)
        np.testing.assert_array_equal(got.numpy(), numpy_gather_nd(x.numpy(), i.numpy(),
                                                                   batch_dims))
    bad = torch.zeros(3, 1, 2 - batch_dims, dtype=torch.int64)
    bad[1, 0, -1] = 4  # past dim 1 (size 4)
    with pytest.raises(RuntimeError, match=r"\(GatherND\): an index is out of range"):
        mod(torch.randn(3, 4, 2), bad)
    np.testing.assert_array_equal(mod(torch.ones(3, 4, 2), bad.clamp(max=3)).numpy(),
                                  np.ones((3, 1, 2)))


REDUCE = {"none": lambda o, u: u, "add": lambda o, u: o + u, "mul": lambda o, u: o * u,
          "min": min, "max": max}


# min and max are opset 18's; the importer takes them at any opset.
@pytest.mark.parametrize("reduction", ["none", "add", "mul", "min", "max"])
def test_scatter_elements_and_nd_against_numpy(tmp_path, reduction):
    # Duplicate and negative indices, applied in row-major order; data is an input the kernel
    # must not write.
    m = model([helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1,
                                reduction=reduction),
               helper.make_node("ScatterND", ["x", "j", "v"], ["z"], reduction=reduction)],
              [tensor("x", F, [3, 4]), tensor("i", TensorProto.INT64, [3, "k"]),
               tensor("u", F, [3, "k"]), tensor("j", TensorProto.INT64, ["q", 1]),
               tensor("v", F, ["q", 4])],
              [tensor("y", F, None), tensor("z", F, None)], opset=16)
    mod = load(tmp_path, m)
    f = REDUCE[reduction]
    for k, q in [(3, 2), (0, 0), (5, 3)]:
        x = torch.randn(4, 3).t()  # non-contiguous
        before = x.clone()
        i = torch.randint(-4, 4, (3, k))
        u = torch.randn(3, k)
        j = torch.randint(-3, 3, (q, 1))
        v = torch.randn(q, 4)
        y, z = mod(x, i, u, j, v)
        assert torch.equal(x, before)
        want_y, want_z = x.numpy().copy(), x.numpy().copy()
        for r in range(3):
            for c in range(k):
                t = i[r, c].item() % 4
                want_y[r, t] = f(want_y[r, t], u[r, c].item())
        for r in range(q):
            t = j[r, 0].item() % 3
            for c in range(4):
                want_z[t, c] = f(want_z[t, c], v[r, c].item())
        np.testing.assert_allclose(y.numpy(), want_y, rtol=1e-6)
        np.testing.assert_allclose(z.numpy(), want_z, rtol=1e-6)
    with pytest.raises(RuntimeError, match=r"\(ScatterElements\): an index is out of range"):
        mod(torch.zeros(3, 4), torch.full((3, 1), 4), torch.zeros(3, 1),
            torch.zeros(0, 1, dtype=torch.int64), torch.zeros(0, 4))
    with pytest.raises(RuntimeError, match=r"\(ScatterND\): an index is out of range"):
        mod(torch.zeros(3, 4), torch.zeros(3, 0, dtype=torch.int64), torch.zeros(3, 0),
            torch.tensor([[-4]]), torch.zeros(1, 4))
    y, z = mod(torch.ones(3, 4), torch.zeros(3, 0, dtype=torch.int64), torch.zeros(3, 0),
               torch.zeros(0, 1, dtype=torch.int64), torch.zeros(0, 4))
    assert torch.equal(y, torch.ones(3, 4)) and torch.equal(z, torch.ones(3, 4))


@pytest.mark.parametrize("equation,shapes", [
    ("bij, bjk -> bik", [["n", 2, 3], ["n", 3, 4]]),
    ("i,i", [["n"], ["n"]]),
    ("ij->ji", [["n", 4]]),
    ("...ii ->...i", [[2, "n", 3, 3]]),
    ("ij,jk", [[3, "n"], ["n", 2]]),
    ("b...d,d->b...", [[2, 1, "n", 4], [4]]),
    ("...j,...j->...", [[2, 1, 3], ["n", 3]]),
    ("ijk,ikl,k->jl", [[2, 3, "n"], [2, "n", 4], ["n"]]),
    # Matrix products of two inputs run as GEMMs (einsumAsGemm): batch, free and contracted
    # labels in any order, outer products, element-wise products, an ellipsis as batch dims.
    ("bhqd,bhkd->bhqk", [["n", 2, 5, 3], ["n", 2, 4, 3]]),
    ("ji,jk->ki", [["n", 3], ["n", 2]]),
    ("abc,cd->dba", [[2, "n", 3], [3, 4]]),
    ("i,j->ij", [["n"], [4]]),
    ("ij,ij->ij", [[3, "n"], [3, "n"]]),
    ("bik,bkj->", [[2, "n", 3], [2, 3, "n"]]),
    ("...ij,...jk->...ik", [[2, "n", 3], [2, 3, 4]]),
    ("kj,ik", [[4, 3], ["n", 4]]),
])
def test_einsum_against_torch(tmp_path, equation, shapes):
    names = [f"x{i}" for i in range(len(shapes))]
    m = model([helper.make_node("Einsum", names, ["y"], equation=equation)],
              [tensor(nm, TensorProto.DOUBLE, s) for nm, s in zip(names, shapes)],
              [tensor("y", TensorProto.DOUBLE, None)], opset=12)
    mod = load(tmp_path, m)
    for size in (3, 1, 0):
        xs = [torch.randn(*[size if d == "n" else d for d in s], dtype=torch.float64)
              for s in shapes]
        xs = [x.t().contiguous().t() if x.dim() == 2 else x for x in xs]  # 2-D: column-major
        want = torch.einsum(equation.replace(" ", ""), *xs)
        got = mod(*xs)
        assert got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


def test_einsum_matrix_products_are_gemms(tmp_path):
    def ops(equation, shapes):
        m = model([helper.make_node("Einsum", ["a", "b"], ["y"], equation=equation)],
                  [tensor(nm, F, s) for nm, s in zip("ab", shapes)], [tensor("y", F, None)],
                  opset=12)
        path = tmp_path / "e.onnx"
        onnx.save(m, str(path))
        r = subprocess.run([RAL_COMPILE, str(path), "--emit=import", "-o", "-"],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return r.stdout
    assert "linalg.batch_matmul" in ops("bhqd,bhkd->bhqk", [[1, 2, 5, 3], [1, 2, 4, 3]])
    assert "linalg.matmul" in ops("ji,jk->ki", [[4, 3], [4, 2]])
    # A diagonal is no matrix product: the contraction loop.
    assert "matmul" not in ops("ii,ij->j", [[3, 3], [3, 2]])


def test_einsum_errors_name_the_term(tmp_path):
    for equation, why in [("ij,jk->ik", "operand terms"), ("ij->k", "output label 'k'"),
                          ("i?->i", "malformed term"), ("...i->i", "no '...'"),
                          ("ijk->i", "does not fit input 0")]:
        m = model([helper.make_node("Einsum", ["x"], ["y"], equation=equation)],
                  [tensor("x", F, [2, 3])], [tensor("y", F, None)], opset=12)
        rc, err, _ = compile_model(tmp_path, m)
        assert rc != 0 and why in err, (equation, err)


def test_matmul_batched_broadcast_and_vectors(tmp_path):
    m = model([helper.make_node("MatMul", ["a", "b"], ["y"])],
              [tensor("a", F, ["p", 1, "m", 4]), tensor("b", F, [3, 4, "n"])],
              [tensor("y", F, None)])
    mod = load(tmp_path, m)
    for p, mm, n in [(2, 3, 5), (1, 1, 1), (2, 0, 3)]:
        a = torch.randn(p, 1, 4, mm).transpose(2, 3)
        b = torch.randn(3, 4, n)
        ref = np.matmul(a.double().numpy(), b.double().numpy())
        np.testing.assert_allclose(mod(a, b).numpy(), ref, rtol=1e-5, atol=1e-5)
    m = model([helper.make_node("MatMul", ["a", "b"], ["y"])],
              [tensor("a", F, [4]), tensor("b", F, ["k", 4, 2])], [tensor("y", F, None)])
    mod = load(tmp_path, m)
    a, b = torch.randn(4), torch.randn(3, 4, 2)
    np.testing.assert_allclose(mod(a, b).numpy(), np.matmul(a.double(), b.double()),
                               rtol=1e-5, atol=1e-5)


def attention_heads_model(s, heads, d):
    """Attention as exporters write it: q, k and v sliced from one [s, n, 3 * heads * d] input,
    split into n * heads heads by Reshape and Transpose (k to [., d, s]), the products, and the
    heads merged back by Transpose and Reshape. On the CPU the transposes around the products
    become strided views of their operands (transpose_views.h)."""
    w = heads * d
    ints = lambda name, v: numpy_helper.from_array(np.array(v, dtype=np.int64), name)
    inits = [ints("starts_q", [0]), ints("starts_k", [w]), ints("starts_v", [2 * w]),
             ints("ends_q", [w]), ints("ends_k", [2 * w]), ints("ends_v", [3 * w]),
             ints("axis", [2]), ints("heads_shape", [s, -1, d]), ints("merged_shape", [s, -1, w]),
             numpy_helper.from_array(np.array(2.0, dtype=np.float32), "two")]
    nodes = []
    for part in "qkv":
        nodes += [helper.make_node("Slice", ["x", f"starts_{part}", f"ends_{part}", "axis"],
                                   [f"{part}_flat"]),
                  helper.make_node("Reshape", [f"{part}_flat", "heads_shape"], [f"{part}_heads"])]
    nodes += [helper.make_node("Transpose", ["q_heads"], ["qt"], perm=[1, 0, 2]),
              helper.make_node("Div", ["qt", "two"], ["qs"]),
              helper.make_node("Transpose", ["k_heads"], ["kt"], perm=[1, 2, 0]),
              helper.make_node("MatMul", ["qs", "kt"], ["scores"]),
              helper.make_node("Softmax", ["scores"], ["p"], axis=-1),
              helper.make_node("Transpose", ["v_heads"], ["vt"], perm=[1, 0, 2]),
              helper.make_node("MatMul", ["p", "vt"], ["o"]),
              helper.make_node("Transpose", ["o"], ["ot"], perm=[1, 0, 2]),
              helper.make_node("Reshape", ["ot", "merged_shape"], ["y"])]
    return model(nodes, [tensor("x", F, [s, "n", 3 * w])], [tensor("y", F, None)], inits)


def numpy_attention_heads(x, heads, d):
    s, n, _ = x.shape
    w = heads * d
    split = lambda i: x[:, :, i * w:(i + 1) * w].reshape(s, n * heads, d)
    q = split(0).transpose(1, 0, 2) / 2.0
    k = split(1).transpose(1, 2, 0)
    v = split(2).transpose(1, 0, 2)
    scores = q @ k
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    return (p @ v).transpose(1, 0, 2).reshape(s, n, w)


@pytest.mark.parametrize("s, heads, d", [(7, 3, 5), (1, 2, 4), (6, 1, 1)])
def test_attention_heads_through_transposed_products(tmp_path, s, heads, d):
    mod = load(tmp_path, attention_heads_model(s, heads, d))
    for n in (2, 1, 0):
        # Non-contiguous: every other position of a wider tensor.
        x = torch.randn(s, n, 6 * heads * d)[:, :, ::2]
        want = numpy_attention_heads(x.double().numpy(), heads, d)
        got = mod(x)
        assert got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)
    # The next execution after a wrong input is still right.
    with pytest.raises(RuntimeError):
        mod(torch.randn(s + 1, 2, 3 * heads * d))
    x = torch.randn(s, 3, 3 * heads * d)
    np.testing.assert_allclose(mod(x).numpy(), numpy_attention_heads(x.double().numpy(), heads, d),
                               rtol=1e-5, atol=1e-5)


def test_shape_arithmetic_reaches_reshape(tmp_path):
    # y = reshape(x, [shape(x)[0] * shape(x)[1], -1]): what exporters emit for flatten(0, 1).
    consts = [numpy_helper.from_array(np.array(v, np.int64), name)
              for name, v in [("i0", 0), ("i1", 1), ("minus1", [-1])]]
    m = model([helper.make_node("Shape", ["x"], ["s"]),
               helper.make_node("Gather", ["s", "i0"], ["d0"]),
               helper.make_node("Gather", ["s", "i1"], ["d1"]),
               helper.make_node("Mul", ["d0", "d1"], ["rows"]),
               helper.make_node("Unsqueeze", ["rows", "axes"], ["rows1"]),
               helper.make_node("Concat", ["rows1", "minus1"], ["shape"], axis=0),
               helper.make_node("Reshape", ["x", "shape"], ["y"])],
              [tensor("x", F, ["a", "b", 6])], [tensor("y", F, None)],
              consts + [numpy_helper.from_array(np.array([0], np.int64), "axes")])
    mod = load(tmp_path, m)
    for a, b in [(2, 3), (1, 1)]:
        x = torch.randn(a, b, 6)
        assert torch.equal(mod(x), x.reshape(a * b, 6))
    # -1 next to a 0 is undefined (numpy refuses it too): an error, and the next call is right.
    with pytest.raises(RuntimeError, match="cannot infer -1"):
        mod(torch.randn(0, 4, 6))
    x = torch.randn(3, 2, 6)
    assert torch.equal(mod(x), x.reshape(6, 6))


def test_reductions_softmax_layernorm(tmp_path):
    scale = np.linspace(0.5, 1.5, 5).astype(np.float32)
    bias = np.linspace(-1, 1, 5).astype(np.float32)
    m = model([helper.make_node("ReduceMean", ["x"], ["mean"], axes=[0, 2], keepdims=0),
               helper.make_node("Softmax", ["x"], ["sm"], axis=1),
               helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["ln"],
                                axis=-1, epsilon=1e-5)],
              [tensor("x", F, ["n", 3, 5])],
              [tensor("mean", F, None), tensor("sm", F, None), tensor("ln", F, None)],
              [numpy_helper.from_array(scale, "scale"), numpy_helper.from_array(bias, "bias")],
              opset=17)
    mod = load(tmp_path, m)
    for n in [4, 1]:
        x = torch.randn(5, 3, n).permute(2, 1, 0)
        xd = x.double().numpy()
        mean, sm, ln = mod(x)
        np.testing.assert_allclose(mean.numpy(), xd.mean(axis=(0, 2)), rtol=1e-5, atol=1e-6)
        e = np.exp(xd - xd.max(axis=1, keepdims=True))
        np.testing.assert_allclose(sm.numpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-5,
                                   atol=1e-6)
        mu = xd.mean(axis=-1, keepdims=True)
        var = ((xd - mu) ** 2).mean(axis=-1, keepdims=True)
        np.testing.assert_allclose(ln.numpy(), (xd - mu) / np.sqrt(var + 1e-5) * scale + bias,
                                   rtol=1e-4, atol=1e-5)


def numpy_cumsum(x, axis, exclusive, reverse):
    x = np.flip(x, axis) if reverse else x
    c = np.cumsum(x, axis=axis, dtype=x.dtype)
    if exclusive and c.shape[axis]:
        c = np.concatenate([np.zeros_like(np.take(c, [0], axis=axis)),
                            np.take(c, range(c.shape[axis] - 1), axis=axis)], axis=axis)
    return np.flip(c, axis) if reverse else c


@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cumsum_constant_and_run_time_axis(tmp_path, exclusive, reverse):
    # Axis -2 as a constant, and as an input (one scan per possible axis, chosen at run time).
    m = model([helper.make_node("CumSum", ["x", "c"], ["y"], exclusive=exclusive,
                                reverse=reverse),
               helper.make_node("CumSum", ["i", "a"], ["z"], exclusive=exclusive,
                                reverse=reverse)],
              [tensor("x", F, ["n", 4, 3]), tensor("i", TensorProto.INT32, ["n", 5]),
               tensor("a", TensorProto.INT64, [])],
              [tensor("y", F, None), tensor("z", TensorProto.INT32, None)],
              [numpy_helper.from_array(np.array(-2, dtype=np.int64), "c")])
    mod = load(tmp_path, m)
    for n in [3, 1, 0]:
        x = torch.randn(3, 4, n).permute(2, 1, 0)  # non-contiguous
        i = torch.randint(-2**31, 2**31 - 1, (n, 5), dtype=torch.int32)  # sums wrap
        for axis in [0, 1, -1]:
            y, z = mod(x, i, torch.tensor(axis))
            np.testing.assert_allclose(
                y.double().numpy(), numpy_cumsum(x.double().numpy(), 1, exclusive, reverse),
                rtol=1e-5, atol=1e-5)
            np.testing.assert_array_equal(
                z.numpy(), numpy_cumsum(i.numpy(), axis % 2, exclusive, reverse))
    with pytest.raises(RuntimeError, match=r"\(CumSum\): axis is out of range for x.s rank 2"):
        mod(torch.zeros(2, 4, 3), torch.zeros(2, 5, dtype=torch.int32), torch.tensor(2))
    y, _ = mod(torch.ones(1, 4, 3), torch.ones(1, 5, dtype=torch.int32), torch.tensor(1))
    np.testing.assert_array_equal(y.numpy(), numpy_cumsum(np.ones((1, 4, 3), np.float32), 1,
                                                          exclusive, reverse))


def numpy_hardmax(x, axis):
    y = np.zeros_like(x)
    if x.shape[axis] == 0 or x.size == 0:
        return y
    np.put_along_axis(y, np.expand_dims(np.argmax(x, axis=axis), axis), 1, axis=axis)
    return y


@pytest.mark.parametrize("opset", [11, 13])
def test_hardmax_ties_and_empty_dims(tmp_path, opset):
    # Opset 13 on: along axis 1 alone; before: the dims from axis 1 on flattened into one.
    m = model([helper.make_node("Hardmax", ["x"], ["y"], axis=1)],
              [tensor("x", F, ["n", 3, "k"])], [tensor("y", F, None)], opset=opset)
    mod = load(tmp_path, m)
    for n, k in [(2, 4), (1, 1), (0, 3), (2, 0)]:
        x = torch.randint(-2, 3, (k, 3, n)).float().permute(2, 1, 0)  # ties, non-contiguous
        xd = x.numpy()
        if opset >= 13:
            want = numpy_hardmax(xd, 1)
        else:
            want = numpy_hardmax(xd.reshape(n, 3 * k), 1).reshape(n, 3, k)
        np.testing.assert_array_equal(mod(x).numpy(), want)


def numpy_topk(x, k, axis, largest):
    """The k best along `axis`, best first, ties by lower index, NaN above every number."""
    x = np.moveaxis(np.asarray(x, np.float64), axis, -1)
    rows = x.reshape(-1, x.shape[-1])
    order = np.empty((rows.shape[0], k), np.int64)
    for r, row in enumerate(rows):
        nan = np.isnan(row)
        value = np.where(nan, 0.0, row)
        index = np.arange(row.size)
        # np.lexsort: the last key sorts first.
        if largest:
            order[r] = np.lexsort((index, -value, ~nan))[:k]
        else:
            order[r] = np.lexsort((index, value, nan))[:k]
    order = order.reshape(x.shape[:-1] + (k,))
    values = np.take_along_axis(x, order, -1)
    return np.moveaxis(values, -1, axis), np.moveaxis(order, -1, axis)


@pytest.mark.parametrize("largest", [1, 0])
def test_topk_run_time_k_ties_nan_and_empty_dims(tmp_path, largest):
    # K an input known only at run time, along a middle axis (a transpose each way), next to a
    # constant K along the last axis.
    m = model([helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1, largest=largest),
               helper.make_node("TopK", ["x", "two"], ["v2", "i2"], largest=largest)],
              [tensor("x", F, ["n", 5, "m"]), tensor("k", TensorProto.INT64, [1])],
              [tensor("v", F, None), tensor("i", TensorProto.INT64, None),
               tensor("v2", F, None), tensor("i2", TensorProto.INT64, None)],
              [numpy_helper.from_array(np.array([2], np.int64), "two")])
    mod = load(tmp_path, m)
    for n, mm in [(3, 4), (1, 2), (0, 3), (2, 2)]:
        x = torch.randint(-2, 3, (mm, 5, n)).float().permute(2, 1, 0)  # ties, non-contiguous
        if x.numel():
            x[0, 1, 0] = float("nan")
            x[-1, 3, -1] = float("inf")
        for k in [0, 1, 3, 5]:
            v, i, v2, i2 = mod(x, torch.tensor([k]))
            want_v, want_i = numpy_topk(x.numpy(), k, 1, largest)
            np.testing.assert_array_equal(v.numpy(), want_v.astype(np.float32))
            np.testing.assert_array_equal(i.numpy(), want_i)
            want_v, want_i = numpy_topk(x.numpy(), 2, 2, largest)
            np.testing.assert_array_equal(v2.numpy(), want_v.astype(np.float32))
            np.testing.assert_array_equal(i2.numpy(), want_i)
    # K outside [0, 5] fails the execution, and the next one is right.
    for k in [6, -1]:
        with pytest.raises(RuntimeError, match=r"\(TopK\): K is not in \[0, n\]"):
            mod(torch.zeros(2, 5, 3), torch.tensor([k]))
    v, i, _, _ = mod(torch.arange(15.0).reshape(1, 5, 3), torch.tensor([1]))
    assert i.tolist() == ([[[4, 4, 4]]] if largest else [[[0, 0, 0]]])


@pytest.mark.parametrize("dtype,onnx_type", [(np.int8, TensorProto.INT8),
                                             (np.float16, TensorProto.FLOAT16),
                                             (np.int64, TensorProto.INT64),
                                             (np.float64, TensorProto.DOUBLE)])
def test_topk_element_types_and_rank_5(tmp_path, dtype, onnx_type):
    # int8 and float16 go through the kernel widened, exactly; rank 5 folds its leading dims.
    m = model([helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=-3)],
              [tensor("x", onnx_type, [2, 1, 7, 3, 2])],
              [tensor("v", onnx_type, None), tensor("i", TensorProto.INT64, None)],
              [numpy_helper.from_array(np.array([4], np.int64), "k")])
    mod = load(tmp_path, m)
    rng = np.random.default_rng(1)
    x = rng.integers(-128, 127, (2, 1, 7, 3, 2)).astype(dtype)
    v, i = mod(torch.from_numpy(x))
    want_v, want_i = numpy_topk(x.astype(np.float64), 4, 2, 1)
    assert v.dtype == torch.from_numpy(x).dtype
    np.testing.assert_array_equal(v.numpy(), want_v.astype(dtype))
    np.testing.assert_array_equal(i.numpy(), want_i)


def test_topk_k_attribute_errors_and_devices(tmp_path):
    # Before opset 10, K is an attribute.
    m = model([helper.make_node("TopK", ["x"], ["v", "i"], k=2)],
              [tensor("x", F, [3, 4])], [tensor("v", F, None), tensor("i", TensorProto.INT64, None)],
              opset=9)
    x = torch.randn(3, 4)
    v, i = load(tmp_path, m)(x)
    ref = torch.topk(x, 2)
    assert torch.equal(v, ref.values) and torch.equal(i, ref.indices)
    # A constant K larger than the axis is the model's error, named.
    m = model([helper.make_node("TopK", ["x", "k"], ["v", "i"], name="big")],
              [tensor("x", F, [3, 4])], [tensor("v", F, None), tensor("i", TensorProto.INT64, None)],
              [numpy_helper.from_array(np.array([5], np.int64), "k")])
    rc, err, _ = compile_model(tmp_path, m)
    assert rc not in (0, UNSUPPORTED) and "node 'big' (TopK): K = 5 is not in [0, 4]" in err
    # Every device has the ral_topk kernel; on a GPU the host reads a run-time K back from the
    # device (ral_read_element); NonMaxSuppression, whose selection runs on the host, is refused
    # there by name.
    m = model([helper.make_node("TopK", ["x", "k"], ["v", "i"], name="top")],
              [tensor("x", F, [3, 4])], [tensor("v", F, None), tensor("i", TensorProto.INT64, None)],
              [numpy_helper.from_array(np.array([2], np.int64), "k")])
    for device in ["vulkan", "cuda", "hsa"]:
        rc, err, out = compile_model(tmp_path, m, f"--device={device}")
        assert rc == 0, err
        assert f"ral_topk___{device}___" in out.read_bytes().decode("latin-1")
    m = model([helper.make_node("TopK", ["x", "k"], ["v", "i"], name="top")],
              [tensor("x", F, [3, 4]), tensor("k", TensorProto.INT64, [1])],
              [tensor("v", F, None), tensor("i", TensorProto.INT64, None)])
    rc, err, out = compile_model(tmp_path, m, "--device=vulkan")
    assert rc == 0, err
    assert "ral_read_element___vulkan___pvoid_m0di64___i64" in out.read_bytes().decode("latin-1")
    m = model([helper.make_node("NonMaxSuppression", ["b", "s"], ["sel"], name="nms")],
              [tensor("b", F, [1, 4, 4]), tensor("s", F, [1, 1, 4])],
              [tensor("sel", TensorProto.INT64, None)], opset=11)
    rc, err, _ = compile_model(tmp_path, m, "--device=hsa")
    assert rc == UNSUPPORTED and "node 'nms' (NonMaxSuppression): unsupported" in err


@pytest.mark.parametrize("dtype,onnx_type", [(np.float32, F), (np.float64, TensorProto.DOUBLE),
                                             (np.int64, TensorProto.INT64),
                                             (np.int32, TensorProto.INT32),
                                             (np.float16, TensorProto.FLOAT16)])
def test_topk_on_vulkan_matches_numpy(tmp_path, dtype, onnx_type):
    # TopK compiled for Vulkan runs the ral_topk shader (Mesa's lavapipe in CI): along a middle
    # axis (transposes each way), largest and smallest, ties and NaN, a dynamic batch of 0, 1, 3.
    ral_run = vulkan_ral_run()
    nodes = [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1, largest=1),
             helper.make_node("TopK", ["x", "k"], ["vs", "is"], axis=-1, largest=0)]
    outs = [tensor(name, t, None) for name, t in [("v", onnx_type), ("i", TensorProto.INT64),
                                                   ("vs", onnx_type), ("is", TensorProto.INT64)]]
    m = model(nodes, [tensor("x", onnx_type, ["n", 37, 6])], outs,
              [numpy_helper.from_array(np.array([5], np.int64), "k")])
    rc, err, module = compile_model(tmp_path, m, "--device=vulkan")
    assert rc == 0, err
    rng = np.random.default_rng(3)
    for n in [3, 1, 0]:
        x = rng.integers(-4, 5, (n, 37, 6)).astype(dtype)
        if np.issubdtype(dtype, np.integer):
            x *= np.iinfo(dtype).max // 8  # values far apart in both words of an int64
        elif n:
            x[0, 2, 1] = np.nan
        np.save(tmp_path / "x.npy", x)
        files = [tmp_path / f"out{j}.npy" for j in range(4)]
        r = subprocess.run([ral_run, str(module), "--device=vulkan", f"--input=@{tmp_path / 'x.npy'}"]
                           + [f"--output=@{f}" for f in files], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        got = [np.load(f) for f in files]
        wide = x.astype(np.float64)
        for (v, i), (axis, largest) in zip([got[:2], got[2:]], [(1, 1), (2, 0)]):
            _, want_i = numpy_topk(wide, 5, axis, largest)
            np.testing.assert_array_equal(i, want_i)
            np.testing.assert_array_equal(v, np.take_along_axis(x, want_i, axis))


def test_topk_run_time_k_on_vulkan(tmp_path):
    # K an input: the host reads it back from the device, sizes the outputs and checks it; a K
    # out of range fails that execution by name and the next one is right.
    ral_run = vulkan_ral_run()
    m = model([helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=0, largest=0, name="top")],
              [tensor("x", F, [6, "n"]), tensor("k", TensorProto.INT64, [1])],
              [tensor("v", F, None), tensor("i", TensorProto.INT64, None)])
    rc, err, module = compile_model(tmp_path, m, "--device=vulkan")
    assert rc == 0, err
    x = np.random.default_rng(4).integers(-3, 4, (6, 5)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)

    def run(k):
        np.save(tmp_path / "k.npy", np.array([k], np.int64))
        return subprocess.run([ral_run, str(module), "--device=vulkan",
                               f"--input=@{tmp_path / 'x.npy'}", f"--input=@{tmp_path / 'k.npy'}",
                               f"--output=@{tmp_path / 'v.npy'}", f"--output=@{tmp_path / 'i.npy'}"],
                              capture_output=True, text=True)
    for k in [7, 0, 2, 6]:
        r = run(k)
        if k > 6:
            assert r.returncode != 0 and "K is not in [0, n]" in r.stderr, r.stderr
            continue
        assert r.returncode == 0, r.stderr
        want_v, want_i = numpy_topk(x.astype(np.float64), k, 0, 0)
        np.testing.assert_array_equal(np.load(tmp_path / "i.npy"), want_i)
        np.testing.assert_array_equal(np.load(tmp_path / "v.npy"), want_v.astype(np.float32))


def test_conv_groups_strides_dilations_and_pool(tmp_path):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((6, 2, 3, 2)).astype(np.float32)
    bias = rng.standard_normal(6).astype(np.float32)
    m = model([helper.make_node("Conv", ["x", "w", "b"], ["c"], group=2, strides=[2, 1],
                                dilations=[1, 2], pads=[1, 0, 2, 1]),
               helper.make_node("AveragePool", ["c"], ["y"], kernel_shape=[2, 2], pads=[1, 1, 0, 0],
                                count_include_pad=0)],
              [tensor("x", F, ["n", 4, 7, 6])], [tensor("y", F, None)],
              [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "b")])
    mod = load(tmp_path, m)
    conv = torch.nn.Conv2d(4, 6, (3, 2), stride=(2, 1), dilation=(1, 2), groups=2)
    conv.weight.data = torch.from_numpy(w).double()
    conv.bias.data = torch.from_numpy(bias).double()
    for n in [2, 1]:
        x = torch.randn(n, 6, 7, 4).permute(0, 3, 2, 1)  # channels-last storage
        with torch.no_grad():
            xp = torch.nn.functional.pad(x.double(), (0, 1, 1, 2))
            c = conv(xp)
            ref = torch.nn.functional.avg_pool2d(torch.nn.functional.pad(c, (1, 0, 1, 0)), 2,
                                                 stride=1)
            ones = torch.nn.functional.pad(torch.ones_like(c), (1, 0, 1, 0))
            ref = ref / torch.nn.functional.avg_pool2d(ones, 2, stride=1)
        np.testing.assert_allclose(mod(x).numpy(), ref.numpy(), rtol=1e-4, atol=1e-5)


def test_integer_division_never_traps(tmp_path):
    i32 = TensorProto.INT32
    m = model([helper.make_node("Div", ["x", "y"], ["q"]),
               helper.make_node("Mod", ["x", "y"], ["r"], fmod=1)],
              [tensor("x", i32, ["n"]), tensor("y", i32, ["n"])],
              [tensor("q", i32, None), tensor("r", i32, None)])
    mod = load(tmp_path, m)
    x = torch.tensor([7, -7, 5, -2**31, 9], dtype=torch.int32)
    y = torch.tensor([2, 2, 0, -1, -4], dtype=torch.int32)
    q, r = mod(x, y)
    # C division (truncation); 0 for a zero divisor and the wrapped MIN / -1, as numpy gives.
    assert q.tolist() == [3, -3, 0, -2**31, -2]
    assert r.tolist() == [1, -1, 0, 0, 1]


@pytest.mark.parametrize("constant_weights", [True, False])
def test_conv_transpose_groups_strides_dilations_pads(tmp_path, constant_weights):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((4, 3, 3, 2)).astype(np.float32)  # [C, M / group, kH, kW]
    bias = rng.standard_normal(6).astype(np.float32)
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], group=2, strides=[2, 3],
                            dilations=[2, 1], pads=[1, 0, 0, 2], output_padding=[1, 0])
    inits = [numpy_helper.from_array(bias, "b")]
    inputs = [tensor("x", F, ["n", 4, 5, 4])]
    if constant_weights:
        inits.append(numpy_helper.from_array(w, "w"))
    else:
        inputs.append(tensor("w", F, [4, 3, 3, 2]))
    mod = load(tmp_path, model([node], inputs, [tensor("y", F, None)], inits))
    for n in [2, 1]:
        x = torch.randn(n, 4, 4, 5).transpose(2, 3)
        ref = torch.nn.functional.conv_transpose2d(
            x.double(), torch.from_numpy(w).double(), None, stride=(2, 3), padding=0,
            output_padding=0, groups=2, dilation=(2, 1))
        # ONNX pads [top, left, bottom, right] = [1, 0, 0, 2], output_padding [1, 0]: the full
        # transposed convolution, one more row at the bottom, the pads cropped, then the bias.
        ref = torch.nn.functional.pad(ref, (0, 0, 0, 1))[:, :, 1:, 0:ref.shape[3] - 2]
        ref = ref + torch.from_numpy(bias).double().reshape(1, 6, 1, 1)
        got = mod(x) if constant_weights else mod(x, torch.from_numpy(w))
        assert got.shape == ref.shape
        np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode, coord, torch_mode, align", [
    ("linear", "half_pixel", "bilinear", False),
    ("linear", "align_corners", "bilinear", True),
    ("nearest", "asymmetric", "nearest", None),
    ("cubic", "half_pixel", "bicubic", False),  # Keys' kernel with a = -0.75, edge taps
    ("cubic", "align_corners", "bicubic", True),
])
def test_resize_against_torch_interpolate(tmp_path, mode, coord, torch_mode, align):
    scales = numpy_helper.from_array(np.array([1, 1, 2.0, 1.5], np.float32), "scales")
    roi = numpy_helper.from_array(np.array([], np.float32), "roi")
    node = helper.make_node("Resize", ["x", "roi", "scales"], ["y"], mode=mode,
                            coordinate_transformation_mode=coord, nearest_mode="floor")
    mod = load(tmp_path, model([node], [tensor("x", F, ["n", 3, 5, 4])], [tensor("y", F, None)],
                               [roi, scales], opset=13))
    for n in [2, 1]:
        x = torch.randn(n, 3, 4, 5).transpose(2, 3)
        kwargs = {} if align is None else {"align_corners": align}
        ref = torch.nn.functional.interpolate(x.double(), size=(10, 6), mode=torch_mode, **kwargs)
        got = mod(x)
        assert got.shape == (n, 3, 10, 6)
        np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample_against_torch(tmp_path, mode, padding, align):
    node = helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode=padding,
                            align_corners=align)
    mod = load(tmp_path, model([node], [tensor("x", F, ["n", 3, "h", "w"]),
                                        tensor("g", F, ["n", "ho", "wo", 2])],
                               [tensor("y", F, None)], opset=16))
    torch.manual_seed(7)
    for n, h, w, ho, wo in [(2, 4, 5, 3, 6), (1, 1, 1, 2, 2), (1, 3, 2, 0, 4)]:
        x = torch.randn(n, 3, w, h).transpose(2, 3)  # non-contiguous
        g = torch.rand(n, ho, wo, 2) * 3.2 - 1.6  # inside and outside [-1, 1]
        if g.numel():
            g[0, 0, 0] = torch.tensor([1.0, -1.0])  # exactly on the corners
        ref = torch.nn.functional.grid_sample(x.double(), g.double(), mode=mode,
                                              padding_mode=padding, align_corners=bool(align))
        got = mod(x, g)
        assert got.shape == ref.shape
        np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match=r"\(GridSample\): an empty image cannot be sampled"):
        mod(torch.zeros(1, 3, 0, 4), torch.zeros(1, 2, 2, 2))
    assert mod(torch.ones(1, 3, 2, 2), torch.zeros(1, 1, 1, 2)).shape == (1, 3, 1, 1)


def torchvision_nms(boxes, scores, max_out, iou, score_threshold, center):
    """(batch, class, box) rows by torchvision.ops.nms per batch and class (an independent
    implementation of the same greedy selection); boxes converted to corners first."""
    import torchvision
    b = boxes.double()
    if center:
        b = torch.stack([b[..., 1] - b[..., 3] / 2, b[..., 0] - b[..., 2] / 2,
                         b[..., 1] + b[..., 3] / 2, b[..., 0] + b[..., 2] / 2], -1)
    corners = torch.stack([torch.minimum(b[..., 1], b[..., 3]), torch.minimum(b[..., 0], b[..., 2]),
                           torch.maximum(b[..., 1], b[..., 3]), torch.maximum(b[..., 0], b[..., 2])], -1)
    rows = []
    for n in range(scores.shape[0]):
        for c in range(scores.shape[1]):
            s = scores[n, c].double()
            keep = (s > score_threshold).nonzero().flatten()
            kept = keep[torchvision.ops.nms(corners[n, keep], s[keep], iou)][:max_out]
            rows += [[n, c, int(i)] for i in kept]
    return torch.tensor(rows, dtype=torch.int64).reshape(-1, 3)


@pytest.mark.parametrize("center", [0, 1])
def test_non_max_suppression_against_torchvision(tmp_path, center):
    node = helper.make_node("NonMaxSuppression", ["boxes", "scores", "max", "iou", "score"],
                            ["sel"], center_point_box=center)
    mod = load(tmp_path, model(
        [node], [tensor("boxes", F, ["n", "k", 4]), tensor("scores", F, ["n", "c", "k"]),
                 tensor("max", TensorProto.INT64, [1]), tensor("iou", F, [1]),
                 tensor("score", F, [1])],
        [tensor("sel", TensorProto.INT64, None)], opset=11))
    torch.manual_seed(3)
    for n, c, k in [(2, 3, 40), (1, 1, 1), (1, 2, 0), (1, 4, 300)]:
        xy = torch.rand(n, k, 2) * 10
        wh = torch.rand(n, k, 2) * 4
        if center:
            boxes = torch.cat([xy, wh], -1)
        else:  # [y1, x1, y2, x2] with corners in either order
            boxes = torch.cat([xy, xy + wh], -1)[..., [1, 0, 3, 2]]
            boxes[:, ::2] = boxes[:, ::2][..., [2, 3, 0, 1]]
        scores = torch.rand(n, c, k)
        for max_out, iou, thr in [(5, 0.5, 0.2), (1000, 0.3, -1.0), (0, 0.5, 0.0), (3, 0.0, 0.5)]:
            got = mod(boxes, scores, torch.tensor([max_out]), torch.tensor([iou]),
                      torch.tensor([thr]))
            want = torchvision_nms(boxes, scores, max_out, iou, thr, center)
            assert torch.equal(got, want), (n, c, k, max_out, iou, thr)
    with pytest.raises(RuntimeError, match=r"iou_threshold must be in \[0, 1\]"):
        mod(boxes, scores, torch.tensor([5]), torch.tensor([1.5]), torch.tensor([0.0]))


@pytest.mark.parametrize("size", [3, 4, 1])
def test_lrn_shrink_and_eye_like(tmp_path, size):
    m = model([helper.make_node("LRN", ["x"], ["y"], size=size, alpha=0.02, beta=0.6, bias=1.5),
               helper.make_node("Shrink", ["x"], ["s"], lambd=0.7, bias=0.2),
               helper.make_node("EyeLike", ["e"], ["i"], k=-1, dtype=TensorProto.INT32)],
              [tensor("x", F, ["n", "c", 3, "w"]), tensor("e", F, ["r", 4])],
              [tensor("y", F, None), tensor("s", F, None), tensor("i", TensorProto.INT32, None)])
    mod = load(tmp_path, m)
    for n, c, w in [(2, 5, 4), (1, 1, 1), (1, 2, 0)]:
        x = torch.randn(n, w, 3, c).permute(0, 3, 2, 1)  # non-contiguous
        y, sh, eye = mod(x, torch.zeros(c, 4))
        xd = x.double().numpy()
        before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
        sq = np.pad(xd ** 2, [(0, 0), (before, after), (0, 0), (0, 0)])
        window = sum(sq[:, i:i + c] for i in range(size))
        np.testing.assert_allclose(y.numpy(), xd / (1.5 + 0.02 / size * window) ** 0.6,
                                   rtol=1e-5, atol=1e-6)
        if size % 2:  # PyTorch centers even windows the other way
            ref = torch.nn.functional.local_response_norm(x.double(), size, 0.02, 0.6, 1.5)
            np.testing.assert_allclose(y.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)
        want = np.where(xd < -0.7, xd + 0.2, np.where(xd > 0.7, xd - 0.2, 0))
        np.testing.assert_allclose(sh.numpy(), want, rtol=1e-6, atol=1e-7)
        assert np.array_equal(eye.numpy(), np.eye(c, 4, k=-1, dtype=np.int32))


def test_axes_and_steps_given_at_run_time(tmp_path):
    # Slice, Squeeze, Unsqueeze and ReduceSum with their axes (and Slice's steps) as graph
    # inputs: which dims they touch is decided when the module runs.
    I64 = TensorProto.INT64
    m = model([helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["s"]),
               helper.make_node("Unsqueeze", ["x", "ua"], ["u"]),
               helper.make_node("Squeeze", ["u", "ua"], ["q"]),
               helper.make_node("ReduceSum", ["x", "ra"], ["r"], keepdims=1),
               helper.make_node("ReduceSum", ["x", "ra"], ["r0"], keepdims=0)],
              [tensor("x", F, ["a", 5, "c"]), tensor("st", I64, [2]), tensor("en", I64, [2]),
               tensor("ax", I64, [2]), tensor("sp", I64, [2]), tensor("ua", I64, [2]),
               tensor("ra", I64, [2])],
              [tensor(o, F, None) for o in ["s", "u", "q", "r", "r0"]], opset=13)
    mod = load(tmp_path, m)
    big = 2**63 - 1
    x = torch.randn(6, 5, 4).permute(2, 1, 0)  # [4, 5, 6], non-contiguous
    xd = x.numpy()
    for st, en, ax, sp, ua, ra in [
            ([1, -1], [3, -big - 1], [0, 2], [1, -2], [0, 4], [0, 2]),
            ([big, 0], [-big - 1, 10], [-1, 1], [-1, 3], [-1, 1], [-1, 1]),
            ([0, 2], [big, 2], [1, 0], [2, 1], [2, 0], [1, 0])]:
        s, u, q, r, r0 = mod(x, *[torch.tensor(v) for v in (st, en, ax, sp, ua, ra)])
        index = [slice(None)] * 3
        for a, b_, e, p in zip(ax, st, en, sp):
            index[a] = slice(b_, None if e == -big - 1 else e, p)
        np.testing.assert_array_equal(s.numpy(), xd[tuple(index)])
        np.testing.assert_array_equal(u.numpy(), np.expand_dims(xd, [a % 5 for a in ua]))
        np.testing.assert_array_equal(q.numpy(), xd)
        np.testing.assert_allclose(r.numpy(), xd.astype(np.float64).sum(tuple(ra), keepdims=True),
                                   rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(r0.numpy(), xd.astype(np.float64).sum(tuple(ra)),
                                   rtol=1e-5, atol=1e-5)
    ok = [torch.tensor(v) for v in ([0, 0], [1, 1], [0, 1], [1, 1], [0, 1], [0, 1])]
    for i, bad, message in [(2, [0, 0], "repeated axis"), (2, [0, 3], "an axis is out of range"),
                            (3, [0, 0], "step is 0"), (4, [0, 5], "an axis is out of range"),
                            (5, [2, -1], "repeated axis")]:
        args = list(ok)
        args[i] = torch.tensor(bad)
        with pytest.raises(RuntimeError, match=message):
            mod(x, *args)
    assert mod(x, *ok)[0].shape == (1, 1, 6)


def test_unsigned_integers_end_to_end(tmp_path):
    # uint8 in and out: wrapping arithmetic, unsigned division, comparison and max, shifts,
    # casts both ways, a uint8 constant; the signature says uint8 and torch gets uint8 back.
    U8 = TensorProto.UINT8
    shift = numpy_helper.from_array(np.array([1, 7, 8, 200], np.uint8), "shift")
    m = model([helper.make_node("Add", ["a", "b"], ["sum"]),
               helper.make_node("Div", ["a", "b"], ["quot"]),
               helper.make_node("Mod", ["a", "b"], ["rem"]),
               helper.make_node("Less", ["a", "b"], ["less"]),
               helper.make_node("Max", ["a", "b"], ["max"]),
               helper.make_node("BitShift", ["a", "shift"], ["left"], direction="LEFT"),
               helper.make_node("BitShift", ["a", "shift"], ["right"], direction="RIGHT"),
               helper.make_node("Cast", ["a"], ["wide"], to=TensorProto.FLOAT),
               helper.make_node("Cast", ["f"], ["narrow"], to=U8)],
              [tensor("a", U8, ["n", 4]), tensor("b", U8, ["n", 4]), tensor("f", F, ["n", 4])],
              [tensor("sum", U8, None), tensor("quot", U8, None), tensor("rem", U8, None),
               tensor("less", TensorProto.BOOL, None), tensor("max", U8, None),
               tensor("left", U8, None), tensor("right", U8, None), tensor("wide", F, None),
               tensor("narrow", U8, None)],
              [shift])
    mod = load(tmp_path, m)
    a = np.array([[200, 3, 255, 128], [0, 255, 17, 90]], np.uint8)
    b = np.array([[100, 0, 2, 129], [5, 255, 0, 91]], np.uint8)
    f = np.array([[1.7, 255.0, -1.0, 300.0], [0.0, 128.5, 7.0, 65.0]], np.float32)
    got = mod(torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(f))
    assert all(g.dtype == torch.uint8 for i, g in enumerate(got) if i not in (3, 7))
    s = np.array([1, 7, 8, 200], np.uint8)
    with np.errstate(divide="ignore"):
        want = [a + b, np.where(b == 0, 0, a // np.where(b == 0, 1, b)),
                np.where(b == 0, 0, a % np.where(b == 0, 1, b)), a < b, np.maximum(a, b),
                np.where(s >= 8, 0, (a.astype(np.int64) << s) & 255),
                np.where(s >= 8, 0, a >> np.minimum(s, 7)), a.astype(np.float32),
                f.astype(np.int64).astype(np.uint8)]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w)
    # A uint8 input where the operator's converter would read it as signed: refused by name.
    m = model([helper.make_node("ReduceMax", ["a"], ["r"], name="rmax")],
              [tensor("a", U8, [2, 3])], [tensor("r", U8, None)], opset=13)
    rc, err, _ = compile_model(tmp_path, m)
    assert rc == UNSUPPORTED
    assert "node 'rmax' (ReduceMax): unsupported uint8 input 0 (ReduceMax of unsigned" in err
    # A module whose signature says uint8 takes only uint8 tensors.
    with pytest.raises(RuntimeError, match="expected element type ui8"):
        mod(torch.from_numpy(a.astype(np.int8)), torch.from_numpy(b), torch.from_numpy(f))


def test_unsigned_npy_through_ral_run(tmp_path):
    ral_run = os.environ.get("RAL_RUN")
    if not ral_run:
        pytest.skip("RAL_RUN is not set")
    U16 = TensorProto.UINT16
    m = model([helper.make_node("Div", ["a", "b"], ["q"]),
               helper.make_node("Greater", ["a", "b"], ["g"])],
              [tensor("a", U16, [3]), tensor("b", U16, [3])],
              [tensor("q", U16, None), tensor("g", TensorProto.BOOL, None)])
    rc, err, out = compile_model(tmp_path, m)
    assert rc == 0, err
    a = np.array([65535, 40000, 7], np.uint16)
    b = np.array([2, 50000, 0], np.uint16)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    np.save(tmp_path / "q.npy", np.array([32767, 0, 0], np.uint16))
    np.save(tmp_path / "g.npy", a > b)
    r = subprocess.run([ral_run, str(out), f"--input=@{tmp_path / 'a.npy'}",
                        f"--input=@{tmp_path / 'b.npy'}",
                        f"--expected_output=@{tmp_path / 'q.npy'}",
                        f"--expected_output=@{tmp_path / 'g.npy'}"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def numpy_quantize(x, scale, zp, lo, hi):
    return np.clip(np.rint(x / scale) + zp, lo, hi)


def test_quantize_dequantize_per_axis_ties_and_saturation(tmp_path):
    I8, U8 = TensorProto.INT8, TensorProto.UINT8
    scale = np.array([0.5, 0.25, 2.0], np.float32)
    zp_i8 = np.array([0, -3, 10], np.int8)
    zp_u8 = np.array([128, 0, 255], np.uint8)
    m = model([helper.make_node("QuantizeLinear", ["x", "s", "zi"], ["qi"], axis=1),
               helper.make_node("QuantizeLinear", ["x", "s", "zu"], ["qu"], axis=-2),
               helper.make_node("QuantizeLinear", ["x", "one"], ["qd"]),
               helper.make_node("DequantizeLinear", ["qi", "s", "zi"], ["di"], axis=1),
               helper.make_node("DequantizeLinear", ["qu", "s", "zu"], ["du"], axis=1)],
              [tensor("x", F, ["n", 3, 2])],
              [tensor("qi", I8, None), tensor("qu", U8, None), tensor("qd", U8, None),
               tensor("di", F, None), tensor("du", F, None)],
              [numpy_helper.from_array(scale, "s"), numpy_helper.from_array(zp_i8, "zi"),
               numpy_helper.from_array(zp_u8, "zu"),
               numpy_helper.from_array(np.array(0.5, np.float32), "one")], opset=13)
    mod = load(tmp_path, m)
    # Halfway cases (x / scale = k + 0.5 round to even), saturation both ways.
    x = np.array([[[1.25, -1.25], [0.625, -0.375], [3.0, 5.0]],
                  [[100.0, -100.0], [0.0, 1e9], [-1e9, 257.0]]], np.float32)
    qi, qu, qd, di, du = mod(torch.from_numpy(x.transpose(0, 2, 1).copy()).transpose(1, 2))
    s3, zi3, zu3 = scale.reshape(1, 3, 1), zp_i8.reshape(1, 3, 1), zp_u8.reshape(1, 3, 1)
    want_i = numpy_quantize(x, s3, zi3, -128, 127)
    want_u = numpy_quantize(x, s3, zu3, 0, 255)
    assert qi.dtype == torch.int8 and qu.dtype == torch.uint8 and qd.dtype == torch.uint8
    np.testing.assert_array_equal(qi.numpy(), want_i)
    np.testing.assert_array_equal(qu.numpy(), want_u)
    np.testing.assert_array_equal(qd.numpy(), numpy_quantize(x, np.float32(0.5), 0, 0, 255))
    np.testing.assert_array_equal(di.numpy(), ((want_i - zi3) * s3).astype(np.float32))
    np.testing.assert_array_equal(du.numpy(), ((want_u - zu3) * s3).astype(np.float32))


def test_integer_matmul_and_quantized_conv(tmp_path):
    I8, U8 = TensorProto.INT8, TensorProto.UINT8
    rng = np.random.default_rng(9)
    w = rng.integers(-128, 128, (4, 3, 3, 3)).astype(np.int8)
    w_scale = np.array([0.01, 0.02, 0.005, 0.03], np.float32)
    bias = rng.integers(-1000, 1000, 4).astype(np.int32)
    m = model([helper.make_node("MatMulInteger", ["a", "b", "azp", "bzp"], ["mm"]),
               helper.make_node("QLinearConv", ["x", "xs", "xzp", "w", "ws", "wzp", "ys", "yzp",
                                                "bias"], ["y"], pads=[1, 1, 1, 1], strides=[2, 1])],
              [tensor("a", U8, ["m", 5]), tensor("b", I8, [5, 3]), tensor("azp", U8, ["m"]),
               tensor("x", U8, ["n", 3, 6, 5])],
              [tensor("mm", TensorProto.INT32, None), tensor("y", U8, None)],
              [numpy_helper.from_array(np.array([1, -2, 0], np.int8), "bzp"),
               numpy_helper.from_array(w, "w"), numpy_helper.from_array(w_scale, "ws"),
               numpy_helper.from_array(np.array(0.05, np.float32), "xs"),
               numpy_helper.from_array(np.array(100, np.uint8), "xzp"),
               numpy_helper.from_array(np.zeros(4, np.int8), "wzp"),
               numpy_helper.from_array(np.array(0.2, np.float32), "ys"),
               numpy_helper.from_array(np.array(120, np.uint8), "yzp"),
               numpy_helper.from_array(bias, "bias")])
    mod = load(tmp_path, m)
    for rows, n in [(4, 2), (1, 1)]:
        a = rng.integers(0, 256, (rows, 5)).astype(np.uint8)
        b = rng.integers(-128, 128, (5, 3)).astype(np.int8)
        azp = rng.integers(0, 256, rows).astype(np.uint8)
        x = rng.integers(0, 256, (n, 3, 6, 5)).astype(np.uint8)
        mm, y = mod(*[torch.from_numpy(v) for v in (a, b, azp, x)])
        want = (a.astype(np.int64) - azp[:, None]) @ (b.astype(np.int64) - np.array([1, -2, 0]))
        np.testing.assert_array_equal(mm.numpy(), want)
        acc = torch.nn.functional.conv2d(torch.from_numpy(x.astype(np.float64) - 100),
                                         torch.from_numpy(w.astype(np.float64)),
                                         torch.from_numpy(bias.astype(np.float64)),
                                         stride=(2, 1), padding=1).numpy()
        mult = (np.float32(0.05) * w_scale / np.float32(0.2)).reshape(1, 4, 1, 1)
        want_y = np.clip(np.rint((acc.astype(np.float32) * mult)) + 120, 0, 255)
        np.testing.assert_array_equal(y.numpy(), want_y)


def test_batch_norm_training_and_dropout_at_run_time(tmp_path):
    rng = np.random.default_rng(4)
    scale, bias = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    mean, var = rng.standard_normal(3).astype(np.float32), rng.random(3).astype(np.float32) + 0.5
    m = model([helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"],
                                ["y", "rm", "rv"], training_mode=1, momentum=0.8, epsilon=1e-3),
               helper.make_node("Dropout", ["x", "r", "t"], ["d", "mask"])],
              [tensor("x", F, ["n", 3, "h"]), tensor("r", F, []),
               tensor("t", TensorProto.BOOL, [])],
              [tensor(o, F, None) for o in ["y", "rm", "rv", "d"]] +
              [tensor("mask", TensorProto.BOOL, None)],
              [numpy_helper.from_array(v, k) for k, v in
               [("s", scale), ("b", bias), ("m", mean), ("v", var)]], opset=15)
    mod = load(tmp_path, m)
    x = torch.randn(5, 4, 3).transpose(1, 2)  # [5, 3, 4], non-contiguous
    y, rm, rv, d, mask = mod(x, torch.tensor(0.0), torch.tensor(True))
    ref = torch.nn.functional.batch_norm(x.double(), None, None, torch.from_numpy(scale).double(),
                                         torch.from_numpy(bias).double(), training=True, eps=1e-3)
    np.testing.assert_allclose(y.numpy(), ref.numpy(), rtol=1e-4, atol=1e-5)
    xd = x.double().numpy()
    np.testing.assert_allclose(rm.numpy(), mean * 0.8 + xd.mean((0, 2)) * 0.2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv.numpy(), var * 0.8 + xd.var((0, 2)) * 0.2, rtol=1e-5, atol=1e-6)
    assert torch.equal(d, x) and bool(mask.all())
    assert torch.equal(mod(x, torch.tensor(0.5), torch.tensor(False))[3], x)
    with pytest.raises(RuntimeError, match="training_mode with a ratio other than 0"):
        mod(x, torch.tensor(0.5), torch.tensor(True))


def test_batch_norm_with_parameters_of_other_float_types(tmp_path):
    # Opset 15 types X (T), scale and B (T1), mean and var (T2) apart: a double X with float
    # parameters given at run time, in inference and in training (whose running statistics
    # keep T2).
    rng = np.random.default_rng(5)
    D, H = TensorProto.DOUBLE, TensorProto.FLOAT16
    x = torch.from_numpy(rng.standard_normal((2, 3, 4)))
    s, b = torch.from_numpy(rng.standard_normal(3).astype(np.float32)), torch.ones(3)
    mean = torch.from_numpy(rng.standard_normal(3).astype(np.float16))
    var = torch.from_numpy((rng.random(3) + 0.5).astype(np.float16))
    for train in (0, 1):
        outs = ["y"] + (["rm", "rv"] if train else [])
        m = model([helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], outs,
                                    training_mode=train, momentum=0.5)],
                  [tensor("x", D, [2, 3, 4]), tensor("s", F, [3]), tensor("b", F, [3]),
                   tensor("m", H, [3]), tensor("v", H, [3])],
                  [tensor("y", D, None)] + [tensor(o, H, None) for o in outs[1:]], opset=15)
        got = load(tmp_path, m)(x, s, b, mean, var)
        got = got if isinstance(got, (list, tuple)) else [got]
        ref = torch.nn.functional.batch_norm(x, mean.double(), var.double(), s.double(),
                                             b.double(), training=bool(train), eps=1e-5)
        np.testing.assert_allclose(got[0].numpy(), ref.numpy(), rtol=1e-6, atol=1e-6)
        if train:
            assert got[1].dtype == torch.float16 and got[2].dtype == torch.float16
            want = mean.double() * 0.5 + x.mean((0, 2)) * 0.5
            np.testing.assert_allclose(got[1].double().numpy(), want.numpy(), rtol=2e-3, atol=2e-3)


def test_non_zero_compress_and_max_unpool(tmp_path):
    I64 = TensorProto.INT64
    m = model([helper.make_node("NonZero", ["x"], ["nz"]),
               helper.make_node("Compress", ["x", "c"], ["c1"], axis=1),
               helper.make_node("Compress", ["x", "c"], ["cf"]),
               helper.make_node("MaxUnpool", ["p", "i"], ["up"], kernel_shape=[2, 2],
                                strides=[2, 2]),
               helper.make_node("MaxUnpool", ["p", "i", "shape"], ["big"], kernel_shape=[2, 2],
                                strides=[2, 2])],
              [tensor("x", F, ["a", "b"]), tensor("c", TensorProto.BOOL, ["k"]),
               tensor("p", F, ["n", 1, 2, 2]), tensor("i", I64, ["n", 1, 2, 2])],
              [tensor("nz", I64, None), tensor("c1", F, None), tensor("cf", F, None),
               tensor("up", F, None), tensor("big", F, None)],
              [numpy_helper.from_array(np.array([2, 1, 5, 6], np.int64), "shape")], opset=13)
    mod = load(tmp_path, m)
    rng = np.random.default_rng(2)
    p = np.arange(8, dtype=np.float32).reshape(2, 1, 2, 2) + 1
    # Indices into the whole unpooled [2, 1, 4, 4] output (MaxPool's flattened indices).
    i = np.array([[[[0, 3], [9, 15]]], [[[16, 18], [29, 30]]]], np.int64)
    for a, b_, k in [(3, 4, 3), (1, 1, 1), (2, 5, 0)]:
        x = rng.integers(-1, 2, (b_, a)).astype(np.float32).T  # zeros, non-contiguous
        x[0, 0] = np.nan
        c = rng.random(k) < 0.5
        nz, c1, cf, up, big = mod(torch.from_numpy(x), torch.from_numpy(c), torch.from_numpy(p),
                                  torch.from_numpy(i))
        np.testing.assert_array_equal(nz.numpy(), np.array(np.nonzero(x)).reshape(2, -1))
        np.testing.assert_array_equal(c1.numpy(), np.compress(c, x, axis=1))
        np.testing.assert_array_equal(cf.numpy(), np.compress(c, x))
    want = np.zeros(32, np.float32)
    want[i.ravel()] = p.ravel()
    want = want.reshape(2, 1, 4, 4)
    np.testing.assert_array_equal(up.numpy(), want)
    wide = np.zeros((2, 1, 5, 6), np.float32)
    wide[:, :, :4, :4] = want  # the same coordinates in a larger output
    np.testing.assert_array_equal(big.numpy(), wide)
    args = [torch.zeros(2, 2), torch.ones(3, dtype=torch.bool), torch.from_numpy(p),
            torch.from_numpy(i)]
    with pytest.raises(RuntimeError, match="the condition is longer than the axis"):
        mod(*args)
    args[1] = torch.ones(2, dtype=torch.bool)
    args[3] = torch.from_numpy(i + 32)
    with pytest.raises(RuntimeError, match=r"\(MaxUnpool\): an index is outside the output"):
        mod(*args)


def test_max_pool_indices_and_uint8(tmp_path):
    I64, U8 = TensorProto.INT64, TensorProto.UINT8
    m = model([helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[3, 2], strides=[2, 1],
                                pads=[1, 0, 1, 1], dilations=[1, 2]),
               helper.make_node("MaxPool", ["u"], ["uy"], kernel_shape=[2, 2])],
              [tensor("x", F, ["n", 2, 5, 6]), tensor("u", U8, [1, 1, 3, 3])],
              [tensor("y", F, None), tensor("i", I64, None), tensor("uy", U8, None)], opset=12)
    mod = load(tmp_path, m)
    for n in [2, 1]:
        x = torch.randn(n, 2, 6, 5).transpose(2, 3)  # non-contiguous
        u = torch.tensor([[[[200, 3, 255], [128, 7, 0], [1, 129, 90]]]], dtype=torch.uint8)
        y, i, uy = mod(x, u)
        xp = torch.nn.functional.pad(x.double(), (0, 1, 1, 1), value=-float("inf"))
        ref, ref_i = torch.nn.functional.max_pool2d(xp, (3, 2), stride=(2, 1), dilation=(1, 2),
                                                    return_indices=True)
        np.testing.assert_array_equal(y.numpy(), ref.float().numpy())
        # torch's indices count in each padded plane; ONNX's over the whole unpadded input.
        h, w = ref_i // 7 - 1, ref_i % 7  # the padded planes are 7 wide
        planes = torch.arange(n * 2).reshape(n, 2, 1, 1) * 30
        np.testing.assert_array_equal(i.numpy(), (planes + h * 6 + w).numpy())
        np.testing.assert_array_equal(uy.numpy(), [[[[200, 255], [129, 129]]]])


@pytest.mark.parametrize("time_axis", [0, 1])
def test_reverse_sequence(tmp_path, time_axis):
    m = model([helper.make_node("ReverseSequence", ["x", "lens"], ["y"], time_axis=time_axis,
                                batch_axis=1 - time_axis)],
              [tensor("x", F, ["a", "b", 2]), tensor("lens", TensorProto.INT64, ["n"])],
              [tensor("y", F, None)])
    mod = load(tmp_path, m)
    x = torch.randn(2, 4, 3).permute(1, 2, 0)  # [4, 3, 2], non-contiguous
    batch = x.shape[1 - time_axis]
    lens = [4, 0, 1][:batch] if time_axis == 0 else [3, 2, 0, 1]
    want = x.numpy().copy()
    for bi, length in enumerate(lens):
        index = [slice(None)] * 3
        index[1 - time_axis] = bi
        index[time_axis] = slice(0, length)
        want[tuple(index)] = x.numpy()[tuple(index)][::-1]
    np.testing.assert_array_equal(mod(x, torch.tensor(lens)).numpy(), want)
    bad = list(lens)
    bad[0] = x.shape[time_axis] + 1
    with pytest.raises(RuntimeError, match="a length is outside"):
        mod(x, torch.tensor(bad))


def test_dequantize_of_constants_folds_exactly(tmp_path):
    # uint8 per axis 1 with zero points, int8 per tensor, int32 (a bias): computed at import,
    # each element the f32 rounding of (x - zp) * scale as ONNX's reference gives it.
    rng = np.random.default_rng(5)
    a = rng.integers(0, 256, (2, 3, 4)).astype(np.uint8)
    a_s, a_z = rng.uniform(1e-3, 1, 3).astype(np.float32), np.array([0, 128, 255], np.uint8)
    c = rng.integers(-128, 128, (5,)).astype(np.int8)
    d = rng.integers(-2**31, 2**31 - 1, (6,)).astype(np.int32)
    inits = {"a": a, "a_s": a_s, "a_z": a_z, "c": c, "c_s": np.array(0.37, np.float32),
             "d": d, "d_s": np.float32(rng.uniform(1e-6, 1e-3, 6)).astype(np.float32)}
    N = helper.make_node
    m = model([N("DequantizeLinear", ["a", "a_s", "a_z"], ["ya"], axis=1),
               N("DequantizeLinear", ["c", "c_s"], ["yc"]),
               N("DequantizeLinear", ["d", "d_s"], ["yd"], axis=0)], [],
              [tensor("ya", F, None), tensor("yc", F, None), tensor("yd", F, None)],
              [numpy_helper.from_array(v, k) for k, v in inits.items()], opset=13)
    path = tmp_path / "dq.onnx"
    onnx.save(m, str(path))
    r = subprocess.run([RAL_COMPILE, str(path), "--emit=import", "-o", "-"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert re.search(r"return %cst\w*, %cst\w*, %cst\w* :", r.stdout), r.stdout
    got = [t.numpy() for t in load(tmp_path, m)()]
    want = [(a.astype(np.float32) - a_z.astype(np.float32).reshape(1, 3, 1)) * a_s.reshape(1, 3, 1),
            c.astype(np.float32) * np.float32(0.37),
            (d.astype(np.float64) * inits["d_s"].astype(np.float64)).astype(np.float32)]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_qdq_cnn_against_torch(tmp_path):
    # A small CNN in ONNX's QDQ form (what quantization tools write): uint8 activations, int8
    # per-channel weights, each float op between a DequantizeLinear and a QuantizeLinear.
    rng = np.random.default_rng(11)
    w1 = rng.integers(-127, 128, (8, 3, 3, 3)).astype(np.int8)
    w2 = rng.integers(-127, 128, (4, 8, 1, 1)).astype(np.int8)
    s1, s2 = rng.uniform(0.002, 0.01, 8).astype(np.float32), rng.uniform(0.005, 0.02, 4).astype(np.float32)
    b1, b2 = rng.standard_normal(8).astype(np.float32) * 0.1, rng.standard_normal(4).astype(np.float32) * 0.1
    inits = {"xs": np.array(0.02, np.float32), "xz": np.array(128, np.uint8),
             "w1": w1, "s1": s1, "z1": np.zeros(8, np.int8), "b1": b1,
             "hs": np.array(0.03, np.float32), "hz": np.array(0, np.uint8),
             "w2": w2, "s2": s2, "z2": np.zeros(4, np.int8), "b2": b2,
             "ys": np.array(0.05, np.float32), "yz": np.array(100, np.uint8)}
    N = helper.make_node
    nodes = [N("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             N("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             N("DequantizeLinear", ["w1", "s1", "z1"], ["w1d"], axis=0),
             N("Conv", ["xd", "w1d", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             N("Relu", ["c1"], ["r1"]),
             N("QuantizeLinear", ["r1", "hs", "hz"], ["hq"]),
             N("DequantizeLinear", ["hq", "hs", "hz"], ["hd"]),
             N("DequantizeLinear", ["w2", "s2", "z2"], ["w2d"], axis=0),
             N("Conv", ["hd", "w2d", "b2"], ["c2"]),
             N("QuantizeLinear", ["c2", "ys", "yz"], ["yq"]),
             N("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    m = model(nodes, [tensor("x", F, ["n", 3, 8, 8])], [tensor("y", F, None)],
              [numpy_helper.from_array(v, k) for k, v in inits.items()], opset=13)
    mod = load(tmp_path, m)

    def qdq(v, scale, zp, lo=0, hi=255):
        return (np.clip(np.rint(v / scale) + zp, lo, hi) - zp) * scale

    for n in [2, 1]:
        x = rng.standard_normal((n, 3, 8, 8)).astype(np.float32)
        xd = qdq(x.astype(np.float64), 0.02, 128)
        w1d = torch.from_numpy(w1.astype(np.float64) * s1.reshape(8, 1, 1, 1).astype(np.float64))
        w2d = torch.from_numpy(w2.astype(np.float64) * s2.reshape(4, 1, 1, 1).astype(np.float64))
        c1 = torch.nn.functional.conv2d(torch.from_numpy(xd), w1d, torch.from_numpy(b1).double(), padding=1)
        hd = qdq(torch.relu(c1).numpy(), 0.03, 0)
        c2 = torch.nn.functional.conv2d(torch.from_numpy(hd), w2d, torch.from_numpy(b2).double())
        want = qdq(c2.numpy(), 0.05, 100)
        got = mod(torch.from_numpy(x)).double().numpy()
        # f32 against f64 may round a value at a step's midpoint the other way: one step at most,
        # and rarely.
        diff = np.abs(got - want)
        assert diff.max() <= 0.05 * 1.001, diff.max()
        assert (diff > 1e-6).mean() < 0.02


def test_instance_norm_and_one_hot(tmp_path):
    scale = np.array([0.5, 2.0, -1.0], np.float32)
    bias = np.array([0.1, 0.0, 3.0], np.float32)
    m = model([helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=1e-5),
               helper.make_node("OneHot", ["i", "depth", "values"], ["h"], axis=0)],
              [tensor("x", F, ["n", 3, 4, "w"]), tensor("i", TensorProto.INT64, ["k"])],
              [tensor("y", F, None), tensor("h", F, None)],
              [numpy_helper.from_array(scale, "s"), numpy_helper.from_array(bias, "b"),
               numpy_helper.from_array(np.array(4, np.int64), "depth"),
               numpy_helper.from_array(np.array([-1.0, 7.0], np.float32), "values")])
    mod = load(tmp_path, m)
    x = torch.randn(2, 3, 5, 4).transpose(2, 3)
    y, h = mod(x, torch.tensor([0, 3, -1, 2]))
    ref = torch.nn.functional.instance_norm(x.double(), weight=torch.from_numpy(scale).double(),
                                            bias=torch.from_numpy(bias).double(), eps=1e-5)
    np.testing.assert_allclose(y.numpy(), ref.numpy(), rtol=1e-4, atol=1e-5)
    want = np.full((4, 4), -1.0, np.float32)
    for j, i in enumerate([0, 3, 3, 2]):
        want[i, j] = 7.0
    assert np.array_equal(h.numpy(), want)


def test_cross_entropy_loss_ignore_index_and_bad_targets(tmp_path):
    w = np.array([1.0, 0.5, 2.0], np.float32)
    m = model([helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t", "w"], ["loss"],
                                reduction="mean", ignore_index=-100)],
              [tensor("x", F, ["n", 3]), tensor("t", TensorProto.INT64, ["n"])],
              [tensor("loss", F, None)], [numpy_helper.from_array(w, "w")], opset=13)
    mod = load(tmp_path, m)
    x = torch.randn(5, 3)
    t = torch.tensor([0, 2, -100, 1, 2])
    ref = torch.nn.functional.cross_entropy(x.double(), t, weight=torch.from_numpy(w).double(),
                                            ignore_index=-100)
    np.testing.assert_allclose(mod(x, t).item(), ref.item(), rtol=1e-5)
    with pytest.raises(RuntimeError, match="a target is outside"):
        mod(x, torch.tensor([0, 3, 1, 1, 1]))
    np.testing.assert_allclose(mod(x, t).item(), ref.item(), rtol=1e-5)


def test_onnx_model_on_vulkan_matches_cpu(tmp_path):
    # An MLP with LayerNorm and GELU (one dynamic dim) compiled for Vulkan: every loop a SPIR-V
    # kernel, the GEMMs RAL's; run by ral-run on the first Vulkan device (Mesa's lavapipe in CI).
    ral_run = vulkan_ral_run()
    rng = np.random.default_rng(2)
    w1 = rng.standard_normal((16, 32)).astype(np.float32)
    w2 = rng.standard_normal((32, 8)).astype(np.float32)
    g = np.linspace(0.5, 1.5, 32).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]),
             helper.make_node("LayerNormalization", ["h", "g"], ["n"], axis=-1),
             helper.make_node("Div", ["n", "sqrt2"], ["d"]),
             helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["e1"]),
             helper.make_node("Mul", ["n", "e1"], ["m"]),
             helper.make_node("Mul", ["m", "half"], ["gelu"]),
             helper.make_node("MatMul", ["gelu", "w2"], ["y"])]
    consts = [numpy_helper.from_array(v, k) for k, v in [
        ("w1", w1), ("w2", w2), ("g", g), ("sqrt2", np.array(np.sqrt(2), np.float32)),
        ("one", np.array(1, np.float32)), ("half", np.array(0.5, np.float32))]]
    m = model(nodes, [tensor("x", F, ["b", 16])], [tensor("y", F, None)], consts, opset=17)
    x = rng.standard_normal((5, 16)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    outputs = {}
    for device in ["cpu", "vulkan"]:
        rc, err, out = compile_model(tmp_path, m, f"--device={device}")
        assert rc == 0, err
        y = tmp_path / f"y_{device}.npy"
        r = subprocess.run([ral_run, str(out), f"--device={device}", f"--input=@{tmp_path / 'x.npy'}",
                            f"--output=@{y}"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        outputs[device] = np.load(y)
    h = x.astype(np.float64) @ w1
    n = (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + 1e-5) * g
    from math import erf
    gelu = n * 0.5 * (1 + np.vectorize(erf)(n / np.sqrt(2)))
    for device, y in outputs.items():
        np.testing.assert_allclose(y, gelu @ w2, rtol=1e-4, atol=1e-4, err_msg=device)



def test_dynamic_transformer_layer_on_vulkan_matches_cpu(tmp_path):
    # torch's export of nn.TransformerEncoderLayer with dynamic batch and sequence: reshapes to
    # two dynamic dims (batch, heads) that must be views on a GPU device.
    ral_run = vulkan_ral_run()
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True).eval()
    # Inputs that require grad keep torch 1.13 off its fused inference kernel, which does not
    # export.
    example = torch.randn(2, 3, 16, requires_grad=True)
    torch.onnx.export(layer, (example,), str(tmp_path / "m.onnx"), input_names=["x"],
                      output_names=["y"], dynamic_axes={"x": {0: "b", 1: "s"}}, opset_version=14)
    x = np.random.default_rng(4).standard_normal((3, 5, 16)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    with torch.no_grad():
        want = layer(torch.from_numpy(x)).numpy()
    for device in ["cpu", "vulkan"]:
        out = tmp_path / f"m_{device}.ralm"
        r = subprocess.run([RAL_COMPILE, str(tmp_path / "m.onnx"), "-o", str(out),
                            f"--device={device}"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        y = tmp_path / f"y_{device}.npy"
        r = subprocess.run([ral_run, str(out), f"--device={device}",
                            f"--input=@{tmp_path / 'x.npy'}", f"--output=@{y}"],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        np.testing.assert_allclose(np.load(y), want, rtol=1e-4, atol=1e-4, err_msg=device)


def unique_reference(x, axis, sorted_):
    y, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True,
                                 axis=axis)
    if not sorted_:  # ONNX's reference: the groups in order of first occurrence
        order = np.argsort(idx, kind="stable")
        y = np.take(y, order, axis=0 if axis is None else axis)
        place = np.empty_like(order)
        place[order] = np.arange(len(order))
        idx, cnt, inv = idx[order], cnt[order], place[inv]
    return y, idx, inv.reshape(-1), cnt


@pytest.mark.parametrize("dtype,onnx_type", [(np.float32, F), (np.int64, TensorProto.INT64),
                                              (np.int8, TensorProto.INT8),
                                              (np.float16, TensorProto.FLOAT16)])
@pytest.mark.parametrize("sorted_", [1, 0])
def test_unique_flat_against_numpy(tmp_path, dtype, onnx_type, sorted_):
    m = model([helper.make_node("Unique", ["x"], ["y", "i", "inv", "c"], sorted=sorted_)],
              [tensor("x", onnx_type, ["a", "b"])],
              [tensor(nm, t, None) for nm, t in [("y", onnx_type), ("i", TensorProto.INT64),
                                                 ("inv", TensorProto.INT64),
                                                 ("c", TensorProto.INT64)]], opset=11)
    mod = load(tmp_path, m)
    rng = np.random.default_rng(0)
    for shape in [(4, 6), (1, 1), (0, 3), (3, 0), (7, 5)]:
        x = rng.integers(-3, 4, size=shape).astype(dtype)
        if dtype in (np.float32, np.float16) and x.size > 2:
            x.flat[1] = np.nan  # NaNs are one group, after every number
            x.flat[-1] = np.nan
        xt = torch.from_numpy(np.ascontiguousarray(x.T)).t() if x.ndim == 2 else torch.from_numpy(x)
        got = [g.numpy() for g in mod(xt)]
        want = unique_reference(x, None, sorted_)
        for g, w in zip(got, want):
            assert g.shape == w.shape, (shape, g, w)
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("sorted_", [1, 0])
def test_unique_slices_against_numpy(tmp_path, axis, sorted_):
    m = model([helper.make_node("Unique", ["x"], ["y", "i", "inv", "c"], axis=axis,
                                sorted=sorted_)],
              [tensor("x", F, ["a", "b", 2])],
              [tensor("y", F, None), tensor("i", TensorProto.INT64, None),
               tensor("inv", TensorProto.INT64, None), tensor("c", TensorProto.INT64, None)],
              opset=11)
    mod = load(tmp_path, m)
    rng = np.random.default_rng(1)
    for shape in [(5, 3, 2), (1, 1, 2), (6, 2, 2)]:
        x = rng.integers(0, 2, size=shape).astype(np.float32)
        got = [g.numpy() for g in mod(torch.from_numpy(x))]
        for g, w in zip(got, unique_reference(x, axis % 3, sorted_)):
            assert g.shape == w.shape
            np.testing.assert_array_equal(g, w)
    # An empty slice: every slice alike, one group.
    x = np.zeros((3, 0, 2), np.float32)
    if axis != 1:
        got = [g.numpy() for g in mod(torch.from_numpy(x))]
        for g, w in zip(got, unique_reference(x, axis % 3, sorted_)):
            assert g.shape == w.shape
            np.testing.assert_array_equal(g, w)


def test_torch_unique_exported(tmp_path):
    class Labels(torch.nn.Module):
        def forward(self, x):
            values, inverse, counts = torch.unique(x, sorted=True, return_inverse=True,
                                                   return_counts=True)
            return values, inverse, counts

    path = tmp_path / "u.onnx"
    torch.onnx.export(Labels(), (torch.tensor([3, 1, 3, 2]),), str(path), input_names=["x"],
                      dynamic_axes={"x": {0: "n"}}, opset_version=11)
    out = tmp_path / "u.ralm"
    r = subprocess.run([RAL_COMPILE, str(path), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    mod = ral_torch.load(str(out))
    for x in [torch.tensor([5, 5, -1, 7, -1, 0]), torch.tensor([2]), torch.arange(40) % 7]:
        got = mod(x)
        want = torch.unique(x, sorted=True, return_inverse=True, return_counts=True)
        for g, w in zip(got, want):
            assert torch.equal(g, w)
