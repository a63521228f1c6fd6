"""The noise floor of a run with `--trials K` (K >= 2): how much a number moves when nothing but the
episode's randomness changes (docs/RUNS.md "Reporting").

Trial t of every query is one complete single-trial run of the same queries under other seeds (an
LLM sampled at temperature > 0, another sampled reality in the closed loop, other Monte Carlo
draws). From the K of them:

- **verdict flips**: the queries whose final pass differs between their trials;
- **spread**: each row's value in each trial (`utp_env/runs/rows.py`: Table 3's 'all' column, the
  reward, the hold rate, the realised outcome), their standard deviation `sd` (K - 1 degrees of
  freedom) and range;
- **minimum detectable difference** (`minimum_detectable`): the smallest true difference between two
  agents that a comparison of their runs on these queries detects with 80% power at a two-sided 5%
  level, when each run averages k trials: (z(0.975) + z(0.8)) · sqrt(2) · sd / sqrt(k), for k = 1
  (two single runs) and for this run's K. To detect a difference d, a run needs
  k >= ((z(0.975) + z(0.8)) · sqrt(2) · sd / d)² trials (`trials_needed`).

This is the within-query noise only: `utp-env compare` pairs runs by query, so the spread of the
queries themselves cancels, and the MDD is what remains. Claims about other queries than these also
carry the query sampling error that Table 3's intervals state.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from utp_env.runs.rows import episode_cells, row_specs

if TYPE_CHECKING:
    from utp_env.query import Query

Z_ALPHA = 1.959963984540054  # two-sided 5%
Z_POWER = 0.8416212335729143  # 80% power
FACTOR = (Z_ALPHA + Z_POWER) * math.sqrt(2)
"""(z(0.975) + z(0.8)) · sqrt(2) ≈ 3.96: the MDD in units of one run's standard deviation."""


class RowNoise(BaseModel):
    """How one row moves across the trials of a run."""

    model_config = ConfigDict(extra="forbid")

    label: str
    key: str
    kind: str = Field(description="pct (shown x100) or num")
    per_trial: list[float | None] = Field(description="The row's value in trial 0, 1, ...")
    sd: float | None = Field(description="Standard deviation across the trials (None: fewer than 2 values)")
    low: float | None = None
    high: float | None = None
    mdd_single: float | None = Field(description="Minimum detectable difference of two single-trial runs")
    mdd_run: float | None = Field(description="Minimum detectable difference of two runs of this run's trials")


class NoiseFloor(BaseModel):
    """The noise floor of a run (module docstring)."""

    model_config = ConfigDict(extra="forbid")

    trials: int
    queries: int = Field(description="Queries with at least two trials")
    flipped: int = Field(description="Of those, the queries whose final pass differs between trials")
    flipped_ids: list[str] = Field(default_factory=list, description="The first 20 of them")
    rows: list[RowNoise]


def minimum_detectable(sd: float, trials: int = 1) -> float:
    """The smallest difference two runs of `trials` trials each detect with 80% power at 5% (two-sided),
    when one single-trial run's value has standard deviation `sd`."""
    return FACTOR * sd / math.sqrt(trials)


def trials_needed(sd: float, difference: float) -> int:
    """Trials per query each of two runs needs to detect `difference` (module docstring)."""
    if difference <= 0:
        raise ValueError(f"the difference to detect must be positive, got {difference}")
    return max(1, math.ceil((FACTOR * sd / difference) ** 2))


def _sd(values: Sequence[float]) -> float | None:
    """The sample standard deviation; 0 when the values agree to rounding (sums in another order)."""
    if len(values) < 2:
        return None
    mean = sum(values) / len(values)
    if max(values) - min(values) <= 1e-12 * max(1.0, abs(mean)):
        return 0.0
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def noise_floor(records: Sequence[Mapping[str, Any]], queries: Mapping[str, Query], trials: int,
                replan: bool = False) -> NoiseFloor | None:
    """The noise floor of a run's records (None with fewer than two trials per query)."""
    if trials < 2:
        return None
    specs = row_specs(replan)
    sums: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0.0]))
    verdicts: dict[str, set[bool]] = defaultdict(set)
    count: dict[str, int] = defaultdict(int)
    for record in records:
        qid = record["query_id"]
        cells = episode_cells(record, queries[qid], replan)
        verdicts[qid].add(cells["final_pass_rate"][0] > 0)  # Table 3's final pass of the episode
        count[qid] += 1
        cell = sums[int(record["trial"])]
        for key, (num, den) in cells.items():
            cell[key][0] += num
            cell[key][1] += den
    present = sorted(sums)
    rows = []
    for label, key, kind in specs:
        per_trial: list[float | None] = []
        for t in present:
            num, den = sums[t].get(key, [0.0, 0.0])
            per_trial.append(num / den if den else None)
        values = [v for v in per_trial if v is not None]
        sd = _sd(values)
        rows.append(RowNoise(label=label, key=key, kind=kind, per_trial=per_trial, sd=sd,
                             low=min(values) if values else None, high=max(values) if values else None,
                             mdd_single=None if sd is None else minimum_detectable(sd),
                             mdd_run=None if sd is None else minimum_detectable(sd, trials)))
    repeated = {qid: v for qid, v in verdicts.items() if count[qid] >= 2}
    flipped = sorted(qid for qid, v in repeated.items() if len(v) == 2)
    return NoiseFloor(trials=trials, queries=len(repeated), flipped=len(flipped), flipped_ids=flipped[:20],
                      rows=rows)


def _fmt(value: float | None, kind: str) -> str:
    """A value as its row shows it: percentage points with two decimals, or a number with three."""
    scale, digits = (100.0, 2) if kind == "pct" else (1.0, 3)
    return "-" if value is None else f"{scale * value:.{digits}f}"


def noise_lines(noise: NoiseFloor, markdown: bool = False) -> list[str]:
    """The noise floor as lines under the summary: the flips, then every row that moves (sd > 0) with
    its spread and MDDs; rows that do not move are counted."""
    share = noise.flipped / noise.queries if noise.queries else 0.0
    lines = [f"Noise floor over {noise.trials} trials of {noise.queries} queries: final-pass verdict flips on "
             f"{noise.flipped} ({share:.1%})" + (f", e.g. {', '.join(noise.flipped_ids[:5])}" if noise.flipped else "")
             + f". MDD: smallest difference two runs detect (80% power, 5% two-sided) = {FACTOR:.2f} x sd / "
             "sqrt(trials each); sd = spread of the row over this run's trials."]
    moving = [row for row in noise.rows if row.sd]
    still = [row for row in noise.rows if row.sd == 0]
    if markdown and moving:
        lines += ["", "| row | per trial | sd | MDD, 1 trial each | MDD, "
                      f"{noise.trials} trials each |", "|---|---|---:|---:|---:|"]
    for row in moving:
        shown = [_fmt(v, row.kind) for v in row.per_trial]
        trials = ", ".join(shown) if len(shown) <= 6 else (
            f"{_fmt(row.low, row.kind)} to {_fmt(row.high, row.kind)} over {len(shown)}")
        sd, single, run = (_fmt(v, row.kind) for v in (row.sd, row.mdd_single, row.mdd_run))
        if markdown:
            lines.append(f"| {row.label} | {trials} | {sd} | {single} | {run} |")
        else:
            lines.append(f"  {row.label}: per trial {trials}; sd {sd}; MDD {single} (1 trial each), {run} "
                         f"({noise.trials} trials each)")
    if still:
        text = f"{len(still)} rows are the same in every trial (no noise)."
        lines += ["", text] if markdown else [f"  {text}"]
    return lines
