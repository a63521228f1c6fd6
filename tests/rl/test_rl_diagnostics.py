"""The parameter diagnostic (utp_env/rl/diagnostics.py): a real optimizer step shows as changed tensors; a
planted no-op optimizer, a frozen model or a snapshot of another object fails loudly."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="the rl extra is not installed (pip install 'utp-env[rl]')")

from utp_env.rl import diagnostics  # noqa: E402
from utp_env.rl.diagnostics import NoParameterChangeError, ParameterSnapshot  # noqa: E402


class NoOpAdamW(torch.optim.AdamW):
    """An optimizer that computes nothing and moves nothing: the planted bug."""

    def step(self, closure=None):  # type: ignore[no-untyped-def, override]
        return None


def model_and_step(optimizer_class: type) -> tuple[torch.nn.Module, ParameterSnapshot]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    snapshot = ParameterSnapshot(model)
    optimizer = optimizer_class(model.parameters(), lr=1e-2)
    loss = model(torch.randn(16, 4)).pow(2).mean()
    loss.backward()
    optimizer.step()
    return model, snapshot


def test_a_real_step_changes_every_trainable_tensor() -> None:
    model, snapshot = model_and_step(torch.optim.AdamW)
    change = snapshot.compare(model)
    assert change.tensors == change.changed == 4 and change.parameters == 4 * 8 + 8 + 8 + 1
    assert change.l2 > 0 and change.max > 0 and not change.sampled
    change.require()  # no error
    assert "4/4 trainable tensors changed" in change.line()


def test_a_planted_no_op_optimizer_fails_loudly() -> None:
    model, snapshot = model_and_step(NoOpAdamW)
    change = snapshot.compare(model)
    assert change.tensors == 4 and change.changed == 0 and change.l2 == 0
    with pytest.raises(NoParameterChangeError, match="changed none of the policy's 4 trainable tensors"):
        change.require("GRPO")


def test_only_trainable_tensors_are_compared_as_under_lora() -> None:
    """Frozen base weights (LoRA's) are not compared; the trainable ones (the adapters) are."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 1))
    model[0].requires_grad_(False)  # the frozen base
    snapshot = ParameterSnapshot(model)
    assert len(snapshot) == 2
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    model(torch.randn(3, 4)).sum().backward()
    optimizer.step()
    change = snapshot.compare(model)
    assert (change.tensors, change.changed) == (2, 2)


def test_nothing_to_compare_fails_loudly() -> None:
    model = torch.nn.Linear(2, 2).requires_grad_(False)
    change = ParameterSnapshot(model).compare(model)
    with pytest.raises(NoParameterChangeError, match="no trainable tensor was compared"):
        change.require()
    other = torch.nn.Linear(2, 2)  # a snapshot of one object, a comparison of another with other names
    assert ParameterSnapshot(torch.nn.Sequential(other)).compare(other).tensors == 0


def test_a_large_model_is_compared_on_a_seeded_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diagnostics, "FULL_COPY_ELEMENTS", 10)
    monkeypatch.setattr(diagnostics, "SAMPLE_PER_TENSOR", 5)
    model, snapshot = model_and_step(torch.optim.AdamW)
    change = snapshot.compare(model)
    assert change.sampled and change.changed == 4 and change.parameters == 5 + 5 + 5 + 1  # the 1-element bias whole
    model, snapshot = model_and_step(NoOpAdamW)
    with pytest.raises(NoParameterChangeError):
        snapshot.compare(model).require()


def test_a_run_without_a_gradient_is_not_a_silent_bug() -> None:
    """Every GRPO group's rewards equal: the gradient is 0 and nothing rightly moves; only a run that had a
    gradient and moved nothing is an error."""
    model = torch.nn.Linear(2, 2)
    change = ParameterSnapshot(model).compare(model)
    change.require("GRPO", gradient=False)  # no error
    with pytest.raises(NoParameterChangeError):
        change.require("GRPO", gradient=True)
