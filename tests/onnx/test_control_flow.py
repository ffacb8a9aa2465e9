"""ONNX If, Loop and Scan through ral-compile: models scripted in torch (data-dependent `if`,
`for` and `while`) exported as If/Loop against eager PyTorch in float64 at several sizes, and
graphs built with onnx.helper against numpy: branches of different shapes, carried values that
grow, scan outputs, zero iterations, nested control flow, reversed scans, and what is refused.

CTest runs it with RAL_COMPILE at ral-compile and PYTHONPATH at the built ral_torch package.
"""

import io
import subprocess
import textwrap

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

import ral_torch
from onnx_graphs import F, UNSUPPORTED, compile_model, load, model, tensor, vulkan_ral_run

I64 = TensorProto.INT64
B = TensorProto.BOOL


def outputs(result):
    return list(result) if isinstance(result, (list, tuple)) else [result]


def const(name, value):
    return helper.make_node("Constant", [], [name],
                            value=numpy_helper.from_array(np.asarray(value), name))


# ---- torch models ------------------------------------------------------------------------------
# torch.jit.script needs the module's source in a file; these are defined by exec of their text.

MODELS = textwrap.dedent("""
    import torch
    from torch import nn

    class RecurrentGate(nn.Module):
        '''A cell run over the sequence by a scripted for-loop, with an if on the state.'''

        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(8, 8)

        def forward(self, x):
            h = torch.zeros(x.size(0), 8)
            for t in range(x.size(1)):
                h = torch.tanh(self.lin(x[:, t]) + h)
                if bool(h.sum() > 0):
                    h = h * 0.5
                else:
                    h = h - 1.0
            return h

    class Halve(nn.Module):
        '''A while loop whose trip count depends on the data; a running total as a scan.'''

        def forward(self, x):
            steps = 0
            while bool(x.abs().max() > 1.0) and steps < 30:
                x = x * 0.5
                steps += 1
            return x, torch.full([1], steps, dtype=torch.long)
""")


def scripted(name, tmp_path):
    path = tmp_path / "models_src.py"
    path.write_text(MODELS)
    namespace = {}
    exec(compile(MODELS, str(path), "exec"), namespace)
    import linecache
    linecache.cache[str(path)] = (len(MODELS), None, MODELS.splitlines(True), str(path))
    torch.manual_seed(0)
    return namespace[name]()


def export(module, args, names, dynamic):
    f = io.BytesIO()
    torch.onnx.export(torch.jit.script(module), args, f, input_names=names,
                      dynamic_axes=dynamic, opset_version=13)
    return f.getvalue()


def op_types(data):
    found = set()

    def walk(g):
        for node in g.node:
            found.add(node.op_type)
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
    walk(onnx.load_from_string(data).graph)
    return found


def test_scripted_for_and_if_against_eager(tmp_path):
    net = scripted("RecurrentGate", tmp_path).eval()
    data = export(net, (torch.randn(2, 5, 8),), ["x"], {"x": {0: "b", 1: "s"}})
    assert {"Loop", "If"} <= op_types(data)
    rc, err, out = compile_model(tmp_path, data)
    assert rc == 0, err
    mod = ral_torch.load(str(out))
    ref = net.double()
    for b, s in [(2, 5), (1, 1), (3, 9), (4, 0), (0, 3)]:
        x = torch.randn(b, s, 8)
        got = outputs(mod(x))[0]
        with torch.no_grad():
            want = ref(x.double())
        assert got.shape == want.shape
        torch.testing.assert_close(got.double(), want.double(), rtol=1e-5, atol=1e-5)


def test_scripted_while_against_eager(tmp_path):
    net = scripted("Halve", tmp_path)
    data = export(net, (torch.randn(3, 4),), ["x"], {"x": {0: "b", 1: "c"}})
    assert "Loop" in op_types(data)
    mod = load(tmp_path, data)
    for scale in [0.5, 3.0, 1e3, 1e12]:
        x = torch.randn(3, 4) * scale
        got = outputs(mod(x))
        want = net(x.clone())
        torch.testing.assert_close(got[0], want[0])
        assert int(got[1].reshape(-1)[0]) == int(want[1][0])


# ---- If ----------------------------------------------------------------------------------------

def if_model(then_nodes, then_out, else_nodes, else_out, inputs, out_shape=None):
    then_g = helper.make_graph(then_nodes, "then", [], [tensor(then_out, F, None)])
    else_g = helper.make_graph(else_nodes, "else", [], [tensor(else_out, F, None)])
    return model([helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
                  const("zero", np.float32(0)),
                  helper.make_node("Greater", ["s", "zero"], ["c"]),
                  helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
                 inputs, [tensor("y", F, out_shape)])


def test_if_branches_of_different_shapes(tmp_path):
    # then: x * 2 ([n, 3]); else: x's first row ([3]) broadcast-added ... different static dims.
    m = if_model([const("two", np.float32(2)), helper.make_node("Mul", ["x", "two"], ["t"])],
                 "t",
                 [const("starts", np.array([0], np.int64)), const("ends", np.array([1], np.int64)),
                  helper.make_node("Slice", ["x", "starts", "ends"], ["e"])],
                 "e", [tensor("x", F, [4, 3])])
    mod = load(tmp_path, m)
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(outputs(mod(torch.from_numpy(x)))[0].numpy(), x * 2)
    np.testing.assert_array_equal(outputs(mod(torch.from_numpy(-x)))[0].numpy(), -x[:1])


def test_if_constant_condition_keeps_its_branch_only(tmp_path):
    then_g = helper.make_graph([helper.make_node("Neg", ["x"], ["t"])], "then", [],
                               [tensor("t", F, None)])
    # Only the then branch is converted: the module holds no scf.if.
    else_g = helper.make_graph([helper.make_node("Relu", ["x"], ["e"])], "else", [],
                               [tensor("e", F, None)])
    m = model([const("c", np.array(True)),
               helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
              [tensor("x", F, [2, 2])], [tensor("y", F, None)])
    mod = load(tmp_path, m)
    x = torch.tensor([[1.0, -2.0], [3.0, -4.0]])
    assert torch.equal(outputs(mod(x))[0], -x)


def test_if_branch_ranks_differ_is_unsupported(tmp_path):
    m = if_model([helper.make_node("Identity", ["x"], ["t"])], "t",
                 [helper.make_node("ReduceSum", ["x"], ["e"], keepdims=0)], "e",
                 [tensor("x", F, [2, 3])])
    rc, err, _ = compile_model(tmp_path, m)
    assert rc == UNSUPPORTED, err
    assert "If whose branches give output 0 different ranks" in err


def test_if_branch_types_differ_is_an_error(tmp_path):
    then_g = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "then", [],
                               [tensor("t", F, None)])
    else_g = helper.make_graph([helper.make_node("Shape", ["x"], ["e"])], "else", [],
                               [tensor("e", I64, None)])
    m = model([helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
              [tensor("c", B, []), tensor("x", F, [2])], [tensor("y", F, None)])
    rc, err, _ = compile_model(tmp_path, m)
    assert rc not in (0, UNSUPPORTED)
    assert "output 0 is f32 in then_branch and i64 in else_branch" in err


def test_unsupported_operator_inside_a_branch_is_named(tmp_path):
    then_g = helper.make_graph([helper.make_node("Det", ["x"], ["t"], name="det")], "then", [],
                               [tensor("t", F, None)])
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["e"])], "else", [],
                               [tensor("e", F, None)])
    m = model([helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g,
                                name="choose")],
              [tensor("c", B, []), tensor("x", F, [2, 2])], [tensor("y", F, None)])
    rc, err, _ = compile_model(tmp_path, m)
    assert rc == UNSUPPORTED, err
    assert "node 'choose' (If) then_branch: node 'det' (Det): unsupported operator Det" in err


# ---- Loop --------------------------------------------------------------------------------------

def loop_body(nodes, inputs, outputs_):
    return helper.make_graph(nodes, "body", inputs, outputs_)


def test_loop_grows_a_carried_value_and_stacks_scans(tmp_path):
    # acc = concat(acc, [i * x]) each step; scans: the step's x * i (shape [n]) and i.
    body = loop_body(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Mul", ["x", "fi"], ["xi"]),
         helper.make_node("Concat", ["acc", "xi"], ["acc_out"], axis=0),
         helper.make_node("Identity", ["i"], ["i_out"])],
        [tensor("i", I64, []), tensor("cond_in", B, []), tensor("acc", F, [None])],
        [tensor("cond_out", B, []), tensor("acc_out", F, [None]), tensor("xi", F, None),
         tensor("i_out", I64, [])])
    m = model([helper.make_node("Loop", ["m", "", "acc0"], ["acc", "xs", "is"], body=body)],
              [tensor("m", I64, []), tensor("acc0", F, [2]), tensor("x", F, ["n"])],
              [tensor("acc", F, None), tensor("xs", F, None), tensor("is", I64, None)])
    mod = load(tmp_path, m)
    for steps, n in [(3, 4), (1, 1), (0, 2), (7, 0), (-2, 3)]:
        x = np.random.randn(n).astype(np.float32)
        acc0 = np.array([5.0, -5.0], np.float32)
        got = outputs(mod(torch.tensor(steps), torch.from_numpy(acc0), torch.from_numpy(x)))
        k = max(steps, 0)
        want_xs = np.stack([x * i for i in range(k)]) if k else np.zeros((0, n), np.float32)
        want_acc = np.concatenate([acc0] + [x * i for i in range(k)])
        np.testing.assert_allclose(got[0].numpy(), want_acc, rtol=1e-6)
        assert got[1].shape == (k, n) or (k == 0 and got[1].shape[0] == 0)
        if k:
            np.testing.assert_allclose(got[1].numpy(), want_xs, rtol=1e-6)
        np.testing.assert_array_equal(got[2].numpy(), np.arange(k))


def test_loop_stops_on_its_condition(tmp_path):
    # while (sum(y) < limit) y = y * 2 + 1, at most m times; the steps' sums as a scan.
    body = loop_body(
        [const("two", np.float32(2)), const("one", np.float32(1)),
         helper.make_node("Mul", ["y", "two"], ["y2"]),
         helper.make_node("Add", ["y2", "one"], ["y_out"]),
         helper.make_node("ReduceSum", ["y_out"], ["s"], keepdims=0),
         helper.make_node("Less", ["s", "limit"], ["cond_out"])],
        [tensor("i", I64, []), tensor("c", B, []), tensor("y", F, [None, 2])],
        [tensor("cond_out", B, []), tensor("y_out", F, None), tensor("s", F, None)])
    m = model([helper.make_node("ReduceSum", ["y0"], ["s0"], keepdims=0),
               helper.make_node("Less", ["s0", "limit"], ["c0"]),
               helper.make_node("Loop", ["m", "c0", "y0"], ["y", "sums"], body=body)],
              [tensor("m", I64, [1]), tensor("y0", F, ["r", 2]), tensor("limit", F, [])],
              [tensor("y", F, None), tensor("sums", F, None)])
    mod = load(tmp_path, m)
    for m_, rows, limit in [(100, 3, 1000.0), (2, 3, 1000.0), (100, 1, -1.0), (100, 0, 5.0)]:
        y = np.ones((rows, 2), np.float32)
        got = outputs(mod(torch.tensor([m_]), torch.from_numpy(y), torch.tensor(limit)))
        sums, steps = [], 0
        c = y.sum() < limit
        while steps < m_ and c:
            y = y * 2 + 1
            sums.append(y.sum())
            c = y.sum() < limit
            steps += 1
        np.testing.assert_array_equal(got[0].numpy(), y)
        np.testing.assert_array_equal(got[1].numpy(), np.array(sums, np.float32))


def test_loop_scan_of_changing_shape_fails_cleanly(tmp_path):
    # Step i scans the first i + 1 elements of x: ONNX stacks scans, so shapes must agree.
    body = loop_body(
        [helper.make_node("Identity", ["c"], ["c_out"]),
         const("zero", np.array([0], np.int64)), const("one", np.array([1], np.int64)),
         helper.make_node("Unsqueeze", ["i", "zero"], ["i1"]),
         helper.make_node("Add", ["i1", "one"], ["end"]),
         helper.make_node("Mul", ["end", "grow"], ["end2"]),
         helper.make_node("Slice", ["x", "zero", "end2"], ["part"])],
        [tensor("i", I64, []), tensor("c", B, [])],
        [tensor("c_out", B, []), tensor("part", F, None)])
    m = model([helper.make_node("Loop", ["m", ""], ["parts"], body=body)],
              [tensor("m", I64, []), tensor("x", F, [6]), tensor("grow", I64, [1])],
              [tensor("parts", F, None)])
    mod = load(tmp_path, m)
    x = torch.arange(6.0)
    with pytest.raises(RuntimeError, match=r"\(Loop\): scan output 0 changes shape"):
        mod(torch.tensor(3), x, torch.tensor([1]))
    got = outputs(mod(torch.tensor(3), x, torch.tensor([0])))[0]
    assert got.shape == (3, 0)


def test_loop_nested_if_reads_outer_values(tmp_path):
    # for i < m: y = i % 2 == 0 ? y + x : y - x (the branches read x, y and i from outside).
    then_g = helper.make_graph([helper.make_node("Add", ["y", "x"], ["t"])], "then", [],
                               [tensor("t", F, None)])
    else_g = helper.make_graph([helper.make_node("Sub", ["y", "x"], ["e"])], "else", [],
                               [tensor("e", F, None)])
    body = loop_body(
        [helper.make_node("Identity", ["c"], ["c_out"]),
         const("two", np.int64(2)), const("zero", np.int64(0)),
         helper.make_node("Mod", ["i", "two"], ["r"]),
         helper.make_node("Equal", ["r", "zero"], ["even"]),
         helper.make_node("If", ["even"], ["y_out"], then_branch=then_g, else_branch=else_g)],
        [tensor("i", I64, []), tensor("c", B, []), tensor("y", F, [3])],
        [tensor("c_out", B, []), tensor("y_out", F, [3])])
    m = model([helper.make_node("Loop", ["m", "", "y0"], ["y"], body=body)],
              [tensor("m", I64, []), tensor("y0", F, [3]), tensor("x", F, [3])],
              [tensor("y", F, None)])
    mod = load(tmp_path, m)
    x = np.array([1.0, 2.0, 3.0], np.float32)
    for steps in [0, 1, 2, 5]:
        y = np.zeros(3, np.float32)
        got = outputs(mod(torch.tensor(steps), torch.from_numpy(y), torch.from_numpy(x)))[0]
        for i in range(steps):
            y = y + x if i % 2 == 0 else y - x
        np.testing.assert_array_equal(got.numpy(), y)


def test_loop_that_never_ends_is_refused(tmp_path):
    body = loop_body([helper.make_node("Identity", ["c"], ["c_out"]),
                      helper.make_node("Neg", ["v"], ["v_out"])],
                     [tensor("i", I64, []), tensor("c", B, []), tensor("v", F, [1])],
                     [tensor("c_out", B, []), tensor("v_out", F, [1])])
    m = model([helper.make_node("Loop", ["", "", "x"], ["y"], body=body)],
              [tensor("x", F, [1])], [tensor("y", F, None)])
    rc, err, _ = compile_model(tmp_path, m)
    assert rc not in (0, UNSUPPORTED)
    assert "neither a trip count M nor a condition" in err


def test_loop_wrong_body_arity_is_an_error(tmp_path):
    # Two outputs (the condition and the carried value) but no input for the carried value.
    body = loop_body([helper.make_node("Identity", ["c"], ["c_out"]),
                      helper.make_node("Cast", ["c"], ["y_out"], to=F)],
                     [tensor("i", I64, []), tensor("c", B, [])],
                     [tensor("c_out", B, []), tensor("y_out", F, [])])
    m = model([helper.make_node("Loop", ["m", "", "x"], ["y"], body=body)],
              [tensor("m", I64, []), tensor("x", F, [1])], [tensor("y", F, None)])
    rc, err, _ = compile_model(tmp_path, m)
    assert rc not in (0, UNSUPPORTED)
    assert "body takes 2 inputs; 3 are given to it" in err


# ---- Scan --------------------------------------------------------------------------------------

def test_scan_axes_and_directions_against_numpy(tmp_path):
    # State: a running sum over the slices; outputs: the sum after each step (forward, axis 1)
    # and each slice times 2 (reversed, axis 0). x scans along axis 1 reversed, w along axis 0.
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "xs"], ["s1"]),
         helper.make_node("Mul", ["s1", "ws"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["running"]),
         const("two", np.float32(2)),
         helper.make_node("Mul", ["xs", "two"], ["double"])],
        "body", [tensor("s", F, [3]), tensor("xs", F, [3]), tensor("ws", F, [3])],
        [tensor("s_out", F, [3]), tensor("running", F, [3]), tensor("double", F, [3])])
    m = model([helper.make_node("Scan", ["s0", "x", "w"], ["s", "runs", "doubles"], body=body,
                                num_scan_inputs=2, scan_input_axes=[1, 0],
                                scan_input_directions=[1, 0], scan_output_axes=[1, -2],
                                scan_output_directions=[0, 1])],
              [tensor("s0", F, [3]), tensor("x", F, [3, "t"]), tensor("w", F, ["t", 3])],
              [tensor("s", F, None), tensor("runs", F, None), tensor("doubles", F, None)])
    mod = load(tmp_path, m)
    for t in [4, 1, 0]:
        s = np.random.randn(3).astype(np.float32)
        x = np.random.randn(3, t).astype(np.float32)
        w = np.random.randn(t, 3).astype(np.float32)
        got = outputs(mod(*(torch.from_numpy(a) for a in (s, x, w))))
        runs, doubles, state = [], [], s.astype(np.float64)
        for k in range(t):
            xs = x[:, t - 1 - k].astype(np.float64)
            state = (state + xs) * w[k]
            runs.append(state)
            doubles.append(xs * 2)
        np.testing.assert_allclose(got[0].numpy(), state, rtol=1e-5)
        want_runs = np.stack(runs, axis=1) if t else np.zeros((3, 0))
        want_doubles = np.stack(doubles[::-1], axis=0) if t else np.zeros((0, 3))
        np.testing.assert_allclose(got[1].numpy(), want_runs, rtol=1e-5)
        np.testing.assert_allclose(got[2].numpy(), want_doubles, rtol=1e-5)


def test_scan_inputs_of_different_lengths_fail_cleanly(tmp_path):
    body = helper.make_graph([helper.make_node("Add", ["a", "b"], ["c"])], "body",
                             [tensor("a", F, [2]), tensor("b", F, [2])], [tensor("c", F, [2])])
    m = model([helper.make_node("Scan", ["x", "y"], ["z"], body=body, num_scan_inputs=2)],
              [tensor("x", F, ["t", 2]), tensor("y", F, ["u", 2])], [tensor("z", F, None)])
    mod = load(tmp_path, m)
    with pytest.raises(RuntimeError, match="Scan"):
        mod(torch.ones(3, 2), torch.ones(4, 2))
    got = outputs(mod(torch.ones(3, 2), torch.full((3, 2), 2.0)))[0]
    assert torch.equal(got, torch.full((3, 2), 3.0))


def test_nested_loops_whose_types_settle_late_import_in_bounded_time(tmp_path):
    # 25 Loops, each in the body of the one above, each growing a carried value that starts
    # as a constant of its own: every level converts its body twice (once the value's dim is
    # found to change), which nested 25 deep would be 2^25 conversions of the innermost body.
    def level(depth):
        nodes = [helper.make_node("Identity", ["c"], [f"c_out{depth}"]),
                 helper.make_node("Concat", ["v", "v"], [f"grown{depth}"], axis=0)]
        out = f"grown{depth}"
        if depth < 25:
            nodes += [const(f"init{depth}", np.ones(1, np.float32)),
                      helper.make_node("Loop", ["two", "", f"init{depth}"], [f"inner{depth}"],
                                       body=level(depth + 1)),
                      helper.make_node("ReduceSum", [f"inner{depth}"], [f"s{depth}"],
                                       keepdims=1),
                      helper.make_node("Add", [f"grown{depth}", f"s{depth}"], [f"v_out{depth}"])]
            out = f"v_out{depth}"
        return helper.make_graph(nodes, f"body{depth}",
                                 [tensor("i", I64, []), tensor("c", B, []), tensor("v", F, None)],
                                 [tensor(f"c_out{depth}", B, []), tensor(out, F, None)])
    m = model([const("two", np.int64(2)),
               helper.make_node("Loop", ["two", "", "x"], ["y"], body=level(0))],
              [tensor("x", F, [1])], [tensor("y", F, None)])
    rc, err, _ = compile_model(tmp_path, m)
    assert rc == UNSUPPORTED, err
    assert "more than 2000 subgraph conversions (nested too deep)" in err


# ---- devices -------------------------------------------------------------------------------

def compile_for(tmp_path, m, device, name="m"):
    return compile_model(tmp_path, m, f"--device={device}", name=f"{name}_{device}")


def test_constant_trip_loop_and_scan_on_vulkan_match_numpy(tmp_path):
    # Nothing the host decides reads device memory: a constant trip count, Scan's length from a
    # dim. Every loop body a SPIR-V kernel; ral-run on the first Vulkan device (lavapipe in CI).
    ral_run = vulkan_ral_run()
    body = loop_body([helper.make_node("Identity", ["c"], ["c_out"]),
                      const("k", np.float32(1.5)),
                      helper.make_node("Mul", ["y", "k"], ["y_out"]),
                      helper.make_node("Identity", ["y_out"], ["s"])],
                     [tensor("i", I64, []), tensor("c", B, []), tensor("y", F, [4])],
                     [tensor("c_out", B, []), tensor("y_out", F, [4]), tensor("s", F, [4])])
    scan_body = helper.make_graph([helper.make_node("Add", ["acc", "row"], ["acc_out"]),
                                   helper.make_node("Identity", ["acc_out"], ["run"])], "scan",
                                  [tensor("acc", F, [4]), tensor("row", F, [4])],
                                  [tensor("acc_out", F, [4]), tensor("run", F, [4])])
    m = model([const("m", np.int64(3)),
               helper.make_node("Loop", ["m", "", "x"], ["y", "ys"], body=body),
               helper.make_node("Scan", ["x", "ys"], ["total", "runs"], body=scan_body,
                                num_scan_inputs=1)],
              [tensor("x", F, [4])],
              [tensor("y", F, None), tensor("ys", F, None), tensor("total", F, None),
               tensor("runs", F, None)])
    x = np.array([1.0, -2.0, 0.5, 4.0], np.float32)
    np.save(tmp_path / "x.npy", x)
    ys = np.stack([x * 1.5 ** (k + 1) for k in range(3)])
    want = [ys[-1], ys, x + ys.sum(0), x + np.cumsum(ys, 0)]
    for device in ["cpu", "vulkan"]:
        rc, err, out = compile_for(tmp_path, m, device)
        assert rc == 0, err
        files = [tmp_path / f"o{k}_{device}.npy" for k in range(4)]
        r = subprocess.run([ral_run, str(out), f"--device={device}",
                            f"--input=@{tmp_path / 'x.npy'}"] + [f"--output=@{f}" for f in files],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        for f, w in zip(files, want):
            np.testing.assert_allclose(np.load(f), w, rtol=1e-6, err_msg=device)


def host_decision_models():
    """An If on an input condition, a Loop of an input trip count, and a Loop whose body decides
    to stop (x doubles while its sum stays below 100): every decision read from device memory
    on a GPU."""
    then_g = helper.make_graph([helper.make_node("Neg", ["x"], ["t"])], "then", [],
                               [tensor("t", F, None)])
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["e"])], "else", [],
                               [tensor("e", F, None)])
    choose = model([helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g,
                                     name="choose")],
                   [tensor("c", B, []), tensor("x", F, [2])], [tensor("y", F, None)])
    body = loop_body([helper.make_node("Identity", ["c"], ["c_out"]),
                      helper.make_node("Neg", ["v"], ["v_out"])],
                     [tensor("i", I64, []), tensor("c", B, []), tensor("v", F, [2])],
                     [tensor("c_out", B, []), tensor("v_out", F, [2])])
    repeat = model([helper.make_node("Loop", ["m", "", "x"], ["y"], body=body, name="repeat")],
                   [tensor("m", I64, []), tensor("x", F, [2])], [tensor("y", F, None)])
    grow = loop_body([const("two", np.float32(2)), const("limit", np.float32(100)),
                      helper.make_node("Mul", ["v", "two"], ["v_out"]),
                      helper.make_node("ReduceSum", ["v_out"], ["total"], keepdims=0),
                      helper.make_node("Less", ["total", "limit"], ["c_out"])],
                     [tensor("i", I64, []), tensor("c", B, []), tensor("v", F, [2])],
                     [tensor("c_out", B, []), tensor("v_out", F, [2])])
    until = model([helper.make_node("Loop", ["", "go", "x"], ["y"], body=grow, name="until")],
                  [tensor("go", B, []), tensor("x", F, [2])], [tensor("y", F, None)])
    return choose, repeat, until


def test_host_decisions_on_vulkan_read_the_device(tmp_path):
    # A GPU module's host code reads a condition or trip count back from device memory
    # (ral_read_element) and decides; run on the first Vulkan device against numpy, and each
    # module compiled for cuda and hsa imports the read.
    ral_run = vulkan_ral_run()
    choose, repeat, until = host_decision_models()
    x = np.array([1.5, -2.0], np.float32)
    np.save(tmp_path / "x.npy", x)

    def run(m, name, first, want):
        rc, err, out = compile_for(tmp_path, m, "vulkan", name)
        assert rc == 0, err
        np.save(tmp_path / "first.npy", first)
        y = tmp_path / f"{name}_y.npy"
        r = subprocess.run([ral_run, str(out), "--device=vulkan",
                            f"--input=@{tmp_path / 'first.npy'}", f"--input=@{tmp_path / 'x.npy'}",
                            f"--output=@{y}"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        np.testing.assert_array_equal(np.load(y), want, err_msg=f"{name} {first}")

    for c in [True, False]:
        run(choose, "choose", np.array(c), -x if c else x)
    for trips in [0, 1, 3]:
        run(repeat, "repeat", np.array(trips, np.int64), x * (-1) ** trips)
    # x = [30, 1.5] doubles to a sum of 63, then 126: two steps; go = false runs none.
    np.save(tmp_path / "x.npy", np.array([30, 1.5], np.float32))
    run(until, "until", np.array(True), np.array([120, 6], np.float32))
    run(until, "until", np.array(False), np.array([30, 1.5], np.float32))
    for device in ["cuda", "hsa"]:
        for m, name in [(choose, "choose"), (repeat, "repeat"), (until, "until")]:
            rc, err, out = compile_for(tmp_path, m, device, name)
            assert rc == 0, err
            assert f"ral_read_element___{device}___" in out.read_bytes().decode("latin-1")


@pytest.mark.parametrize("device", ["vulkan", "cuda", "hsa"])
def test_host_loops_over_device_tensors_are_refused_by_name(tmp_path, device):
    # Unique's grouping walks every element on the host: refused on GPUs, naming the node.
    m = model([helper.make_node("Unique", ["x"], ["y"], name="distinct")],
              [tensor("x", F, [5])], [tensor("y", F, None)], opset=11)
    rc, err, _ = compile_for(tmp_path, m, device, "unique")
    assert rc == UNSUPPORTED, err
    assert "node 'distinct' (Unique): unsupported Unique on this device" in err
