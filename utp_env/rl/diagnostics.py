"""Did training move the policy? Its trainable tensors before and after, compared; a loud error when none moved.

A GRPO or SFT run can log a loss and a gradient norm while no weight changes (an optimizer that never
steps, a learning rate of 0, a LoRA whose adapters are not the trainable tensors, a snapshot of the
wrong object). `ParameterSnapshot(model)` keeps the model's trainable tensors (those with
`requires_grad`: every weight in full fine-tuning, the adapters under LoRA) as they are when it is
taken; `compare(model)` says how many of them changed, by how much (L2 and largest change), and
`ParameterChange.require()` raises `NoParameterChangeError` when nothing was compared or nothing changed.

Take the snapshot of the object that will be trained, after any wrapping (the trainer's `model`, once
the trainer has built it): the names must be the same after training. Up to `FULL_COPY_ELEMENTS`
trainable elements the tensors are kept whole (on the CPU); above, a seeded sample of
`SAMPLE_PER_TENSOR` elements of each tensor, so that the check costs little memory on a 8 B model
(an optimizer step moves nearly every element, so a sample tells too; the L2 is then of the sample).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

FULL_COPY_ELEMENTS = 50_000_000  # 200 MB of float32 on the CPU
SAMPLE_PER_TENSOR = 4096


class NoParameterChangeError(RuntimeError):
    """Training left every trainable tensor of the policy as it was (or there was none to compare)."""


@dataclass
class ParameterChange:
    """What `ParameterSnapshot.compare` found."""

    tensors: int = 0
    changed: int = 0
    parameters: int = 0
    l2: float = 0.0
    max: float = 0.0
    sampled: bool = False
    unchanged: list[str] = field(default_factory=list)
    """The names of (up to 5) tensors that did not change."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def line(self) -> str:
        """One line for a run's summary."""
        what = "sampled elements" if self.sampled else "elements"
        return (f"{self.changed}/{self.tensors} trainable tensors changed ({self.parameters:,} {what} compared), "
                f"L2 {self.l2:.3e}, max {self.max:.3e}")

    def require(self, what: str = "training", gradient: bool = True) -> None:
        """Raise `NoParameterChangeError` when no trainable tensor was compared, or none changed although
        the run had a gradient (`gradient`: some step's gradient norm was above 0). A run without any
        gradient (every GRPO group's rewards equal, no KL term) rightly moves nothing: that is reported
        by the run's `frac_reward_zero_std`, not here."""
        if self.tensors == 0:
            raise NoParameterChangeError(
                f"{what}: no trainable tensor was compared (the model has none with requires_grad, or the "
                "snapshot was taken of another object than the one trained); nothing shows the policy moved")
        if self.changed == 0 and gradient:
            raise NoParameterChangeError(
                f"{what} changed none of the policy's {self.tensors} trainable tensors (e.g. "
                f"{', '.join(self.unchanged[:3])}): the optimizer never stepped, the learning rate is 0, or the "
                "gradients were all zero; check the learning rate, the optimizer and, under LoRA, which modules "
                "the adapters target")


class ParameterSnapshot:
    """The trainable tensors of `model` as they are now (module docstring)."""

    def __init__(self, model: Any, seed: int = 0) -> None:
        import torch

        trainable = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
        total = sum(p.numel() for _, p in trainable)
        self.sampled = total > FULL_COPY_ELEMENTS
        generator = torch.Generator().manual_seed(seed)
        self._kept: dict[str, tuple[Any, Any]] = {}  # name -> (flat indices or None, values on the CPU)
        for name, p in trainable:
            flat = p.detach().reshape(-1)
            if self.sampled and flat.numel() > SAMPLE_PER_TENSOR:
                index = torch.randint(flat.numel(), (SAMPLE_PER_TENSOR,), generator=generator)
                self._kept[name] = (index, flat[index.to(flat.device)].to("cpu", copy=True).float())
            else:
                self._kept[name] = (None, flat.to("cpu", copy=True).float())

    def __len__(self) -> int:
        return len(self._kept)

    def compare(self, model: Any) -> ParameterChange:
        """How the trainable tensors of `model` (the same names) differ from the snapshot."""
        import torch

        out = ParameterChange(sampled=self.sampled)
        squares = 0.0
        for name, p in model.named_parameters():
            if name not in self._kept:
                continue
            index, before = self._kept[name]
            flat = p.detach().reshape(-1)
            now = (flat if index is None else flat[index.to(flat.device)]).to("cpu").float()
            delta = (now - before).abs()
            biggest = float(delta.max()) if delta.numel() else 0.0
            out.tensors += 1
            out.parameters += delta.numel()
            squares += float(torch.sum(delta * delta))
            out.max = max(out.max, biggest)
            if biggest > 0:
                out.changed += 1
            elif len(out.unchanged) < 5:
                out.unchanged.append(name)
        out.l2 = squares ** 0.5
        return out
