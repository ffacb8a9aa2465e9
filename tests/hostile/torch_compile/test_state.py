"""ral_torch.compile leaves the module and the example inputs as it found them (bitwise), and
refuses a forward() that changes its buffers, parameters or inputs in place: a compiled module is
a pure function of its inputs."""

import pytest
import torch
from torch import nn

import ral_torch


def snapshot(module):
    return {k: v.detach().clone() for k, v in module.state_dict(keep_vars=True).items()}


def assert_same_bits(before, module):
    after = module.state_dict(keep_vars=True)
    assert before.keys() == after.keys()
    for k, v in before.items():
        a = after[k].detach()
        assert a.dtype == v.dtype and a.shape == v.shape, k
        assert torch.equal(a.reshape(-1).view(torch.uint8) if a.dtype != torch.bool else a,
                           v.reshape(-1).view(torch.uint8) if v.dtype != torch.bool else v), k


class BatchNormNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.drop = nn.Dropout(0.5)
        self.bn.running_mean.uniform_(-0.5, 0.5)
        self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        return self.drop(torch.relu(self.bn(self.conv(x))))


def test_batchnorm_in_train_mode_is_left_untouched(cache, check):
    model = BatchNormNet().train()
    model.bn.num_batches_tracked.fill_(7)
    before = snapshot(model)
    x = torch.randn(2, 3, 6, 6)
    x_before = x.clone()
    compiled = ral_torch.compile(model, x, cache_dir=cache)
    assert_same_bits(before, model)
    assert torch.equal(x, x_before)
    assert all(m.training for m in model.modules()), "the training flags were not restored"
    # The compiled module computes eval mode's result.
    check(compiled, model.eval(), x)


def test_mixed_training_flags_are_restored_one_by_one(cache):
    model = BatchNormNet().train()
    model.bn.eval()
    ral_torch.compile(model, torch.randn(1, 3, 4, 4), cache_dir=cache)
    assert model.training and model.conv.training and model.drop.training
    assert not model.bn.training


def test_example_inputs_are_left_untouched(cache):
    class TwoInputs(nn.Module):
        def forward(self, x, ids):
            return x[:, :3] * 2 + ids.to(x.dtype)

    base = torch.randn(4, 8)
    x = base.t()[:, :4]  # a non-contiguous view of another tensor
    ids = torch.arange(12).reshape(4, 3)
    base_before, ids_before = base.clone(), ids.clone()
    ral_torch.compile(TwoInputs(), (x.t(), ids), cache_dir=cache)
    assert torch.equal(base, base_before) and torch.equal(ids, ids_before)


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(()))

    def forward(self, x):
        self.count += 1
        return x * self.count


class Rebinds(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(3))

    def forward(self, x):
        self.total = self.total + x.sum(0)
        return x - self.total


class WritesInput(nn.Module):
    def forward(self, x):
        x.add_(1)
        return x * 2


class WritesWeight(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        self.fc.weight.data.mul_(0.5)
        return self.fc(x)


MUTATORS = {
    "buffer_in_place": (Counter, "buffer 'count'"),
    "buffer_reassigned": (Rebinds, "buffer 'total' (reassigned)"),
    "input_in_place": (WritesInput, "input 0 ('x')"),
    "parameter_data": (WritesWeight, "parameter 'fc.weight'"),
}


@pytest.mark.parametrize("fallback", [False, True])
@pytest.mark.parametrize("case", sorted(MUTATORS))
def test_state_changes_are_refused(case, fallback, cache, still_works):
    cls, named = MUTATORS[case]
    model = cls().eval()
    before = snapshot(model)
    buffers = {k: id(v) for k, v in model.named_buffers()}
    x = torch.randn(2, 3)
    x_before = x.clone()
    with pytest.raises(ral_torch.MutationError) as info:
        ral_torch.compile(model, x, fallback=fallback, cache_dir=cache)
    message = str(info.value)
    assert cls.__name__ in message and named in message and "cannot change state" in message
    assert isinstance(info.value, RuntimeError)
    # Refused, and nothing changed: values, and the buffer objects themselves.
    assert_same_bits(before, model)
    assert {k: id(v) for k, v in model.named_buffers()} == buffers
    assert torch.equal(x, x_before)
    still_works()


def test_a_change_made_only_while_tracing_is_undone(cache):
    class TouchesWhenTraced(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scale", torch.ones(3))

        def forward(self, x):
            if torch.jit.is_tracing():
                self.scale.mul_(2)
            return x * 2

    model = TouchesWhenTraced().eval()
    ral_torch.compile(model, torch.randn(2, 3), cache_dir=cache)
    assert torch.equal(model.scale, torch.ones(3))
