"""torchvision's resnet18, mobilenet_v2, efficientnet_b0 and swin_t, a ViT and a Transformer encoder
(random weights, small inputs), exported by torch.onnx.export with a dynamic batch and compiled
by ral-compile with no flags, against eager PyTorch: the whole pipeline a user runs (library
convolutions with folded epilogues, channels-last activations, GEMMs, the generated loops in
between) must agree to 1e-4 of the output's scale at batch 1 and 3.

CTest runs it with RAL_COMPILE at ral-compile and PYTHONPATH at the built ral_torch package.
"""

import os
import subprocess
import warnings

import pytest
import torch

import ral_torch

torchvision = pytest.importorskip("torchvision")
RAL_COMPILE = os.environ.get("RAL_COMPILE", "ral-compile")


def vit():
    return torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2,
                                                num_heads=2, hidden_dim=32, mlp_dim=64,
                                                num_classes=10)


def encoder():
    layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
    return torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)


MODELS = {
    "resnet18": (lambda: torchvision.models.resnet18(weights=None), (3, 64, 64)),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), (3, 64, 64)),
    "efficientnet_b0": (lambda: torchvision.models.efficientnet_b0(weights=None), (3, 64, 64)),
    # Shifted windows: the attention mask exported as ScatterND, the windows as pads, rolls
    # and reshapes of dynamic dims.
    "swin_t": (lambda: torchvision.models.swin_t(weights=None), (3, 64, 64)),
    "vit": (vit, (3, 32, 32)),
    "transformer_encoder": (encoder, (16, 32)),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_matches_eager(tmp_path, name):
    factory, feature = MODELS[name]
    torch.manual_seed(0)
    model = factory().eval()
    # Trained-looking BatchNorm statistics, so that folding them is exercised for real.
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
    path = tmp_path / f"{name}.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (torch.randn((1,) + feature),), str(path), input_names=["x"],
                          output_names=["y"], dynamic_axes={"x": {0: "n"}, "y": {0: "n"}},
                          opset_version=14)
    out = tmp_path / f"{name}.ralm"
    r = subprocess.run([RAL_COMPILE, str(path), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    compiled = ral_torch.load(str(out))
    for batch in (1, 3):
        x = torch.randn((batch,) + feature)
        with torch.inference_mode():
            want = model(x)
        got = compiled(x)
        assert got.shape == want.shape
        error = (got - want).abs().max().item() / max(want.abs().max().item(), 1e-30)
        assert error < 1e-4, f"{name} batch {batch}: relative error {error:.2e}"
