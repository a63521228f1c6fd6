"""Paired comparison of two runs made on the same episodes (`utp-env show A B`, benchmarks/replan.py).

Two runs with the same run seed, split, horizons, limit and trials hold the same episodes
(query id, trial) with the same episode seeds (`utp_env.runs.episode.episode_seed`); in the closed
loop (`--env replan`) the same seed is the same reality (common random numbers, docs/REPLAN.md),
so the difference B - A of one episode is a paired observation and the mean difference has a much
tighter confidence interval than the difference of two means. `pair_records` pairs them and
refuses runs that do not match (other episodes, other seeds, another database), naming the first
mismatch; `paired_difference` gives the mean difference with its Student-t confidence interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from utp_env.runs.records import episode_key
from utp_env.runs.summary import episode_score

# Two-sided 97.5% quantiles of Student's t for 1..30 degrees of freedom; above, the Cornish-Fisher
# expansion of `t_quantile_975` (error < 1e-4 from 30 degrees of freedom on).
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042)
_Z975 = 1.959963984540054


class PairingError(ValueError):
    """Two runs cannot be compared episode by episode; the message says why and what to run."""


def t_quantile_975(df: int) -> float:
    """The 0.975 quantile of Student's t with `df` >= 1 degrees of freedom (a 95% two-sided interval)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    return (z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3))


@dataclass(frozen=True)
class PairedStat:
    """Mean of A, mean of B and the mean paired difference B - A with its 95% confidence interval
    (None when fewer than two pairs: no spread to estimate)."""

    label: str
    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci_low: float | None
    ci_high: float | None

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "n": self.n, "mean_a": self.mean_a, "mean_b": self.mean_b,
                "diff": self.diff, "ci95": None if self.ci_low is None else [self.ci_low, self.ci_high]}


def paired_difference(label: str, a: list[float], b: list[float], unit: bool = False) -> PairedStat:
    """Mean difference of the pairs (b[i] - a[i]) and its 95% Student-t interval
    mean ± t(0.975, n-1) · s / sqrt(n), s the sample standard deviation of the differences. With `unit`
    (values in [0, 1]) the interval is clipped to [-1, 1], the differences there can be: with few pairs
    Student's t reaches past them."""
    if len(a) != len(b) or not a:
        raise ValueError(f"{label}: need the same number (>= 1) of values on both sides, got {len(a)} and {len(b)}")
    n = len(a)
    diffs = [y - x for x, y in zip(a, b, strict=True)]
    mean = sum(diffs) / n
    if n < 2:
        return PairedStat(label, n, sum(a) / n, sum(b) / n, mean, None, None)
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
    half = t_quantile_975(n - 1) * sd / math.sqrt(n)
    low, high = mean - half, mean + half
    if unit:
        low, high = max(-1.0, low), min(1.0, high)
    return PairedStat(label, n, sum(a) / n, sum(b) / n, mean, low, high)


def records_by_episode(run_dir: str | Path) -> dict[str, dict[str, Any]]:
    """The valid episode records of a run folder by episode key, read without changing the folder
    (a bad line is skipped here; `utp-env run` on the folder moves it aside)."""
    from utp_env.runs.records import read_checked_records

    records, _ = read_checked_records(run_dir, "show")
    return {episode_key(r["query_id"], r["trial"]): r for r in records}


def pair_records(left: dict[str, dict[str, Any]], right: dict[str, dict[str, Any]],
                 names: tuple[str, str] = ("A", "B")) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The records of the same episodes side by side, in episode order; a PairingError naming the
    first difference when the runs do not hold the same episodes with the same seeds on the same
    database."""
    only_left, only_right = sorted(set(left) - set(right)), sorted(set(right) - set(left))
    if only_left or only_right:
        side, keys = (names[0], only_left) if only_left else (names[1], only_right)
        raise PairingError(f"the runs hold different episodes ({len(only_left)} only in {names[0]}, "
                           f"{len(only_right)} only in {names[1]}; e.g. {keys[0]} only in {side}); compare runs "
                           "made with the same --env, --seed, --split, --horizons, --limit and --trials")
    if not left:
        raise PairingError("the runs hold no episodes to compare")
    pairs = []
    for key in sorted(left):
        a, b = left[key], right[key]
        if a.get("seed") != b.get("seed"):
            raise PairingError(f"episode {key} has seed {a.get('seed')} in {names[0]} but {b.get('seed')} in "
                               f"{names[1]}: the runs were made with different --seed values; compare runs of the "
                               "same seed")
        if a.get("db_hash") != b.get("db_hash"):
            raise PairingError(f"episode {key} was run on another database in {names[0]} than in {names[1]} "
                               f"({str(a.get('db_hash'))[:12]} vs {str(b.get('db_hash'))[:12]}); compare runs "
                               "made on the same --profile or --db")
        pairs.append((a, b))
    return pairs


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def _replan_value(key: str) -> Callable[[dict[str, Any]], float | None]:
    def value(record: dict[str, Any]) -> float | None:
        block = record.get("replan") or {}
        got = block.get(key)
        return None if got is None else float(got)
    return value


# (label, value of a record or None when it has none, whether the values lie in [0, 1]). The realised rows
# apply to replan runs only.
Row = tuple[str, Callable[[dict[str, Any]], float | None], bool]
PLAN_ROWS: tuple[Row, ...] = (
    ("reward (of the plan, UTP-v0)", lambda r: _number(r.get("plan_reward", r.get("reward"))), True),
    ("score (mean BAS/CATS/TDAS)", episode_score, True),
    ("final pass", lambda r: float(bool(r.get("final_pass"))) if r.get("report") is not None else 0.0, True),
)
REPLAN_ROWS: tuple[Row, ...] = (
    ("realised score", _replan_value("realised_score"), True),
    ("items kept (share)", _replan_value("items_kept"), True),
    ("rebookings", _replan_value("rebookings"), False),
    ("late minutes", _replan_value("late_minutes"), False),
    ("extra cost (INR)", _replan_value("extra_cost"), False),
    ("disruptions", _replan_value("disruptions"), False),
)


def paired_table(pairs: Iterable[tuple[dict[str, Any], dict[str, Any]]], replan: bool) -> list[PairedStat]:
    """Paired differences of every row that both records of a pair have: the realised rows first
    when both runs are closed-loop (`replan`), then the plan's rows."""
    pairs = list(pairs)
    rows = (REPLAN_ROWS if replan else ()) + PLAN_ROWS
    out = []
    for label, value, unit in rows:
        both = [(value(a), value(b)) for a, b in pairs]
        kept = [(x, y) for x, y in both if x is not None and y is not None]
        if kept:
            out.append(paired_difference(label, [x for x, _ in kept], [y for _, y in kept], unit))
    return out


def render_paired(stats: list[PairedStat], names: tuple[str, str], markdown: bool = False) -> str:
    """The paired table: mean of each run, the mean difference B - A and its 95% interval."""
    def ci(s: PairedStat) -> str:
        return "-" if s.ci_low is None else f"[{s.ci_low:+.4f}, {s.ci_high:+.4f}]"

    n = stats[0].n if stats else 0
    caption = (f"Paired over {n} episodes (same query, trial and seed in both runs): mean of each run, mean "
               "difference B - A and its 95% Student-t confidence interval (for values in [0, 1], within [-1, 1]).")
    if markdown:
        lines = [caption, "", f"| paired (n) | A: {names[0]} | B: {names[1]} | B - A | 95% CI |",
                 "|---|---:|---:|---:|---|"]
        lines += [f"| {s.label} ({s.n}) | {s.mean_a:.4f} | {s.mean_b:.4f} | {s.diff:+.4f} | {ci(s)} |" for s in stats]
        return "\n".join(lines)
    width = max((len(s.label) + len(str(s.n)) + 3 for s in stats), default=10)
    wa, wb = max(12, len(names[0])), max(12, len(names[1]))  # whole names: a column is as wide as its head
    lines = [caption, f"{'':{width}}  {names[0]:>{wa}}  {names[1]:>{wb}}  {'B - A':>9}  95% CI"]
    lines += [f"{f'{s.label} ({s.n})':{width}}  {s.mean_a:>{wa}.4f}  {s.mean_b:>{wb}.4f}  {s.diff:>+9.4f}  {ci(s)}"
              for s in stats]
    return "\n".join(lines)
