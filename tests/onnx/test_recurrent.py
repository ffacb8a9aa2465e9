"""ONNX RNN, GRU and LSTM through ral-compile: models exported from torch (an LSTM tagger, a GRU
encoder, an Elman RNN) against eager PyTorch in float64 at several batch and sequence sizes, and
graphs built with onnx.helper (sequence lengths, reverse and bidirectional directions, layout 1,
peepholes, activations, clip) against a numpy reference in float64 written from ONNX's equations.

CTest runs it with RAL_COMPILE at ral-compile and PYTHONPATH at the built ral_torch package.
"""

import io
import subprocess

import numpy as np
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper
from torch import nn

import ral_torch
from onnx_graphs import F, UNSUPPORTED, compile_model, load, vulkan_ral_run

# ---- torch models ------------------------------------------------------------------------------

class Tagger(nn.Module):
    """A part-of-speech tagger: embeddings, a two-layer bidirectional LSTM, a linear head."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 12)
        self.lstm = nn.LSTM(12, 16, num_layers=2, bidirectional=True, batch_first=True)
        self.head = nn.Linear(32, 7)

    def forward(self, tokens):
        h, _ = self.lstm(self.embed(tokens))
        return torch.log_softmax(self.head(h), dim=-1)


class Encoder(nn.Module):
    """A seq2seq encoder: a GRU over time-major inputs from a given state; its outputs and state."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(10, 20, num_layers=1)

    def forward(self, x, h0):
        return self.gru(x, h0)


class Elman(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(6, 9, num_layers=2, nonlinearity="relu", batch_first=True)

    def forward(self, x):
        return self.rnn(x)[0]


def export(model, args, names, dynamic):
    f = io.BytesIO()
    torch.onnx.export(model, args, f, input_names=names, dynamic_axes=dynamic)
    return f.getvalue()


def check_against_eager(compiled, model, *args):
    with torch.no_grad():
        want = model.double()(*[a.double() if a.is_floating_point() else a for a in args])
        model.float()
    got = compiled(*args)
    if not isinstance(want, tuple):
        want, got = (want,), (got,)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g.double().numpy(), w.numpy(), rtol=1e-4, atol=2e-5)


def test_lstm_tagger_dynamic_batch_and_sequence(tmp_path):
    torch.manual_seed(0)
    model = Tagger().eval()
    data = export(model, (torch.randint(0, 50, (2, 5)),), ["tokens"],
                  {"tokens": {0: "batch", 1: "seq"}})
    rc, err, out = compile_model(tmp_path, data)
    assert rc == 0, err
    compiled = ral_torch.load(str(out))
    for batch, seq in [(2, 5), (1, 1), (3, 17), (1, 40)]:
        check_against_eager(compiled, model, torch.randint(0, 50, (batch, seq)))


def test_gru_encoder_with_initial_state(tmp_path):
    torch.manual_seed(1)
    model = Encoder().eval()
    data = export(model, (torch.randn(4, 2, 10), torch.randn(1, 2, 20)), ["x", "h0"],
                  {"x": {0: "seq", 1: "batch"}, "h0": {1: "batch"}})
    rc, err, out = compile_model(tmp_path, data)
    assert rc == 0, err
    compiled = ral_torch.load(str(out))
    for seq, batch in [(4, 2), (1, 1), (9, 3)]:
        x = torch.randn(batch, seq, 10).transpose(0, 1)  # non-contiguous
        check_against_eager(compiled, model, x, torch.randn(1, batch, 20))


def test_two_layer_relu_rnn(tmp_path):
    torch.manual_seed(2)
    model = Elman().eval()
    data = export(model, (torch.randn(2, 3, 6),), ["x"], {"x": {0: "batch", 1: "seq"}})
    rc, err, out = compile_model(tmp_path, data)
    assert rc == 0, err
    compiled = ral_torch.load(str(out))
    for batch, seq in [(2, 3), (1, 1), (5, 11)]:
        check_against_eager(compiled, model, torch.randn(batch, seq, 6))


# ---- graphs built here, against numpy ----------------------------------------------------------

def act(name, alpha=None, beta=None):
    return {
        "Sigmoid": lambda x: 1 / (1 + np.exp(-x)),
        "Tanh": np.tanh,
        "Relu": lambda x: np.maximum(x, 0),
        "LeakyRelu": lambda x: np.where(x < 0, alpha * x, x),
        "HardSigmoid": lambda x: np.clip(alpha * x + beta, 0, 1),
        "Softsign": lambda x: x / (1 + np.abs(x)),
    }[name]


def reference(cell, x, w, r, b=None, lens=None, h0=None, c0=None, p=None, acts=None,
              direction="forward", clip=None, lbr=0, input_forget=0, layout=0):
    """ONNX's equations in float64; returns Y, Y_h (and Y_c) in the node's layout."""
    x = np.asarray(x, np.float64)
    if layout:
        x = x.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
        c0 = None if c0 is None else c0.transpose(1, 0, 2)
    seq, batch, _ = x.shape
    dirs, gh, _ = w.shape
    g = {"rnn": 1, "gru": 3, "lstm": 4}[cell]
    h = gh // g
    lens = np.full(batch, seq) if lens is None else lens
    per = {"rnn": 1, "gru": 2, "lstm": 3}[cell]
    y = np.zeros((seq, dirs, batch, h))
    yh = np.zeros((dirs, batch, h))
    yc = np.zeros((dirs, batch, h))

    def cl(v):
        return v if clip is None else np.clip(v, -clip, clip)

    acts = [act(a) if isinstance(a, str) else a for a in acts]
    for d in range(dirs):
        f = acts[d * per:(d + 1) * per]
        reverse = direction == "reverse" or d == 1
        wb = b[d, :gh] if b is not None else np.zeros(gh)
        rb = b[d, gh:] if b is not None else np.zeros(gh)
        for n in range(batch):
            hs = h0[d, n].astype(np.float64) if h0 is not None else np.zeros(h)
            cs = c0[d, n].astype(np.float64) if c0 is not None else np.zeros(h)
            steps = range(lens[n] - 1, -1, -1) if reverse else range(lens[n])
            for t in steps:
                xw = w[d] @ x[t, n] + wb
                hr = r[d] @ hs
                if cell == "rnn":
                    hs = f[0](cl(xw + hr + rb))
                elif cell == "gru":
                    z = f[0](cl(xw[:h] + hr[:h] + rb[:h]))
                    rr = f[0](cl(xw[h:2 * h] + hr[h:2 * h] + rb[h:2 * h]))
                    if lbr:
                        hh = f[1](cl(xw[2 * h:] + rr * (hr[2 * h:] + rb[2 * h:])))
                    else:
                        hh = f[1](cl(xw[2 * h:] + r[d][2 * h:] @ (rr * hs) + rb[2 * h:]))
                    hs = (1 - z) * hh + z * hs
                else:
                    pre = xw + hr + rb
                    pi, po, pf = (p[d, :h], p[d, h:2 * h], p[d, 2 * h:]) if p is not None else (0, 0, 0)
                    i = f[0](cl(pre[:h] + pi * cs))
                    fg = 1 - i if input_forget else f[0](cl(pre[2 * h:3 * h] + pf * cs))
                    cs = fg * cs + i * f[1](cl(pre[3 * h:]))
                    o = f[0](cl(pre[h:2 * h] + po * cs))
                    hs = o * f[2](cs)
                y[t, d, n] = hs
            yh[d, n], yc[d, n] = hs, cs
    if layout:
        y, yh, yc = y.transpose(2, 0, 1, 3), yh.transpose(1, 0, 2), yc.transpose(1, 0, 2)
    return (y, yh, yc) if cell == "lstm" else (y, yh)


def graph(op, inputs, initializers, outputs, **attrs):
    node = helper.make_node(op, [name for name, _ in inputs], outputs, name="rec", **attrs)
    vis = [helper.make_tensor_value_info(name, *spec) for name, spec in inputs if spec]
    inits = [numpy_helper.from_array(v, k) for k, v in initializers.items()]
    outs = [helper.make_tensor_value_info(o, F, None) for o in outputs]
    m = helper.make_model(helper.make_graph([node], "g", vis, outs, initializer=inits),
                          opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    return m


def weights(rng, cell, dirs, h, i):
    g = {"rnn": 1, "gru": 3, "lstm": 4}[cell]
    w = rng.standard_normal((dirs, g * h, i)).astype(np.float32) * 0.5
    r = rng.standard_normal((dirs, g * h, h)).astype(np.float32) * 0.5
    b = rng.standard_normal((dirs, 2 * g * h)).astype(np.float32) * 0.5
    return w, r, b


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("cell", ["rnn", "gru", "lstm"])
def test_sequence_lengths_and_directions(tmp_path, cell, direction):
    rng = np.random.default_rng(3)
    dirs, h, i = (2 if direction == "bidirectional" else 1), 5, 3
    w, r, b = weights(rng, cell, dirs, h, i)
    op = {"rnn": "RNN", "gru": "GRU", "lstm": "LSTM"}[cell]
    inputs = [("x", (F, ["s", "n", i])), ("w", None), ("r", None), ("b", None),
              ("lens", (TensorProto.INT32, ["n"])), ("h0", (F, [dirs, "n", h]))]
    if cell == "lstm":
        inputs.append(("c0", (F, [dirs, "n", h])))
    outputs = ["y", "yh", "yc"] if cell == "lstm" else ["y", "yh"]
    m = graph(op, inputs, {"w": w, "r": r, "b": b}, outputs, hidden_size=h, direction=direction)
    mod = load(tmp_path, m)
    acts = {"rnn": ["Tanh"], "gru": ["Sigmoid", "Tanh"], "lstm": ["Sigmoid", "Tanh", "Tanh"]}[cell]
    for seq, lens in [(4, [4, 2, 0]), (1, [1]), (6, [3, 6]), (0, [0, 0])]:
        n = len(lens)
        x = rng.standard_normal((n, seq, i)).astype(np.float32)
        h0 = rng.standard_normal((dirs, n, h)).astype(np.float32)
        c0 = rng.standard_normal((dirs, n, h)).astype(np.float32)
        args = [torch.from_numpy(x).transpose(0, 1), torch.tensor(lens, dtype=torch.int32),
                torch.from_numpy(h0)]
        if cell == "lstm":
            args.append(torch.from_numpy(c0))
        got = mod(*args)
        want = reference(cell, x.transpose(1, 0, 2), w, r, b, np.array(lens), h0, c0,
                         acts=acts * dirs, direction=direction)
        for g_, w_ in zip(got, want):
            np.testing.assert_allclose(g_.double().numpy(), w_, rtol=1e-5, atol=1e-5)
    # A length outside [0, S] fails the execution; the next one is right.
    bad = [torch.zeros(3, 2, i), torch.tensor([1, 4], dtype=torch.int32), torch.zeros(dirs, 2, h)]
    if cell == "lstm":
        bad.append(torch.zeros(dirs, 2, h))
    with pytest.raises(RuntimeError, match=r"\(" + op + r"\): a sequence length is outside"):
        mod(*bad)
    bad[1] = torch.tensor([1, 3], dtype=torch.int32)
    assert mod(*bad)[0].shape == (3, dirs, 2, h)


def test_lstm_with_lengths_and_peepholes_on_vulkan(tmp_path):
    # Compiled for Vulkan (lavapipe in CI) and run by ral-run: the host checks each length it
    # reads back from the device, the steps' GEMMs and gates run there; against the reference.
    ral_run = vulkan_ral_run()
    rng = np.random.default_rng(6)
    dirs, h, i = 2, 4, 3
    w, r, b = weights(rng, "lstm", dirs, h, i)
    p = rng.standard_normal((dirs, 3 * h)).astype(np.float32) * 0.5
    inputs = [("x", (F, ["s", "n", i])), ("w", None), ("r", None), ("b", None),
              ("lens", (TensorProto.INT32, ["n"])), ("", None), ("", None), ("p", None)]
    m = graph("LSTM", inputs, {"w": w, "r": r, "b": b, "p": p}, ["y", "yh", "yc"], hidden_size=h,
              direction="bidirectional")
    rc, err, module = compile_model(tmp_path, m, "--device=vulkan")
    assert rc == 0, err

    def run(x, lens):
        np.save(tmp_path / "x.npy", x)
        np.save(tmp_path / "lens.npy", np.array(lens, np.int32))
        outs = [tmp_path / f"o{k}.npy" for k in range(3)]
        r_ = subprocess.run([ral_run, str(module), "--device=vulkan",
                             f"--input=@{tmp_path / 'x.npy'}", f"--input=@{tmp_path / 'lens.npy'}"]
                            + [f"--output=@{o}" for o in outs], capture_output=True, text=True)
        return r_, outs
    for seq, lens in [(4, [4, 2, 0]), (3, [3])]:
        x = rng.standard_normal((seq, len(lens), i)).astype(np.float32)
        res, outs = run(x, lens)
        assert res.returncode == 0, res.stderr
        zeros = np.zeros((dirs, len(lens), h), np.float32)
        want = reference("lstm", x, w, r, b, np.array(lens), zeros, zeros, p=p,
                         acts=["Sigmoid", "Tanh", "Tanh"] * dirs, direction="bidirectional")
        for o, w_ in zip(outs, want):
            np.testing.assert_allclose(np.load(o), w_, rtol=1e-5, atol=1e-5)
    res, _ = run(np.zeros((3, 2, i), np.float32), [1, 4])
    assert res.returncode != 0 and "(LSTM): a sequence length is outside" in res.stderr, res.stderr


def test_lstm_peepholes_input_forget_clip_and_layout(tmp_path):
    rng = np.random.default_rng(4)
    h, i = 4, 3
    w, r, b = weights(rng, "lstm", 1, h, i)
    p = rng.standard_normal((1, 3 * h)).astype(np.float32)
    for input_forget in [0, 1]:
        inputs = [("x", (F, ["n", "s", i])), ("w", None), ("r", None), ("b", None), ("", None),
                  ("", None), ("", None), ("p", None)]
        m = graph("LSTM", inputs, {"w": w, "r": r, "b": b, "p": p}, ["y", "yh", "yc"],
                  hidden_size=h, layout=1, clip=0.8, input_forget=input_forget)
        mod = load(tmp_path, m)
        for n, seq in [(2, 5), (1, 1)]:
            x = rng.standard_normal((n, seq, i)).astype(np.float32) * 3
            got = mod(torch.from_numpy(x))
            want = reference("lstm", x, w, r, b, p=p, acts=["Sigmoid", "Tanh", "Tanh"], clip=0.8,
                             input_forget=input_forget, layout=1)
            for g_, w_ in zip(got, want):
                np.testing.assert_allclose(g_.double().numpy(), w_, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("lbr", [0, 1])
def test_gru_linear_before_reset_and_activations(tmp_path, lbr):
    rng = np.random.default_rng(5)
    h, i = 6, 4
    w, r, b = weights(rng, "gru", 2, h, i)
    acts = ["HardSigmoid", "LeakyRelu", "Sigmoid", "Softsign"]
    m = graph("GRU", [("x", (F, ["s", "n", i])), ("w", None), ("r", None), ("b", None)],
              {"w": w, "r": r, "b": b}, ["y", "yh"], hidden_size=h, direction="bidirectional",
              linear_before_reset=lbr, activations=acts, activation_alpha=[0.3, 0.05],
              activation_beta=[0.4])
    mod = load(tmp_path, m)
    fs = [act("HardSigmoid", 0.3, 0.4), act("LeakyRelu", 0.05), act("Sigmoid"), act("Softsign")]
    for seq, n in [(3, 2), (7, 1)]:
        x = rng.standard_normal((seq, n, i)).astype(np.float32)
        got = mod(torch.from_numpy(x))
        want = reference("gru", x, w, r, b, acts=fs, direction="bidirectional", lbr=lbr)
        for g_, w_ in zip(got, want):
            np.testing.assert_allclose(g_.double().numpy(), w_, rtol=1e-5, atol=1e-5)


def test_what_the_importer_refuses(tmp_path):
    rng = np.random.default_rng(6)
    w, r, b = weights(rng, "rnn", 1, 3, 2)
    base = [("x", (F, [2, 1, 2])), ("w", None), ("r", None)]
    cases = [
        ({"activations": ["Gelu"]}, UNSUPPORTED, "unsupported activation 'Gelu'"),
        ({"activations": ["LeakyRelu"]}, UNSUPPORTED,
         "unsupported activation 'LeakyRelu' without its alpha"),
        ({"activations": ["Tanh", "Tanh"]}, 1, "'activations' has 2 names, 1 expected"),
        ({"direction": "sideways"}, 1, "unknown direction 'sideways'"),
    ]
    for attrs, code, message in cases:
        m = graph("RNN", base, {"w": w, "r": r}, ["y"], hidden_size=3, **attrs)
        rc, err, _ = compile_model(tmp_path, m.SerializeToString())
        assert rc == code and "node 'rec' (RNN): " + message in err, err
    # Weights that do not match hidden_size are the model's error.
    m = graph("RNN", base, {"w": w, "r": r}, ["y"], hidden_size=4)
    rc, err, _ = compile_model(tmp_path, m.SerializeToString())
    assert rc not in (0, UNSUPPORTED) and "node 'rec' (RNN): W must have shape [1, 4" in err
