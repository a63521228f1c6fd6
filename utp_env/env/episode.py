"""One episode, from start to outcome: its state, how it ends, and the record of how it ended.

- `Episode`: the mutable state of one episode (query, plan being built, steps, trace). It is the
  context of the itinerary tools (as the `Database` is of the lookup tools): tools read
  `episode.db` and `episode.query` and change `episode.plan`. It knows nothing of gymnasium.
- `TerminationReason`: the one list of ways an episode ends, used by the env (`core.py`), the run
  worker (`utp_env/runs/episode.py`) and the run summaries (`utp_env/runs/summary.py`).
- `finish`: the one end-of-episode step shared by the env and the run worker: evaluate the plan
  (`utp_env.evaluation.evaluate`, the only evaluator), compute the reward, optionally run Monte
  Carlo robustness and draw one delay realisation, and return an `EpisodeOutcome`.
- `EpisodeOutcome.to_json()`: the one JSON form of an outcome; the env's final `info` and each
  line of a run's `results.jsonl` are built on it (docs/ENV.md, docs/RUNS.md).

The reward itself lives in utp_env/env/reward/ (`score_plan`); `finish` calls it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from utp_env.evaluation.report import CheckResult
from utp_env.evaluation.report import pass_rate as pass_rate  # re-exported: one definition, in evaluation
from utp_env.itinerary import Day, Plan, check_plan_query
from utp_env.query import Query
from utp_env.tools.database import Database

if TYPE_CHECKING:
    import numpy as np

    from utp_env.env.levels import LevelTask
    from utp_env.evaluation.report import EvaluationReport
    from utp_env.simulation import Realisation, RobustnessReport


class TerminationReason(StrEnum):
    """Why an episode ended. Members compare equal to their string values ("submitted", ...)."""

    SUBMITTED = "submitted"
    """The agent delivered a plan (env: `submit`/`submit_plan`, terminated; runs: a plan returned)."""
    STEP_LIMIT = "step_limit"
    """The env's step limit was reached (truncated); the plan built so far is scored."""
    NOT_DELIVERED = "not_delivered"
    """The agent finished without a plan (runs: `AgentResult.plan` is None)."""
    AGENT_ERROR = "agent_error"
    """The agent raised or its model failed; the plan built so far (if any) is scored."""
    INFRASTRUCTURE_ERROR = "infrastructure_error"
    """A tool, the evaluator or the simulation failed: the benchmark's fault, not the agent's."""


# ---------------------------------------------------------------- episode state


@dataclass(slots=True)
class TraceEntry:
    """One answered tool call: which step, which tool, the raw arguments, success and the answer."""

    step: int
    tool: str
    args: Any
    ok: bool
    text: str
    call_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The entry as a JSON-ready dict (the env pickles its trace this way)."""
        return {"step": self.step, "tool": self.tool, "args": self.args, "ok": self.ok,
                "text": self.text, "call_id": self.call_id}


@dataclass(slots=True)
class Episode:
    """Mutable episode state shared by the env, its tools and the adapters.

    `status` is None while the episode runs and its `TerminationReason` once it has ended;
    `reference` is the dataset's reference plan of the query (used by the Ordering metric).
    """

    db: Database
    query: Query
    episode_id: str = ""
    plan: Plan = field(default_factory=Plan)
    steps: int = 0
    trace: list[TraceEntry] = field(default_factory=list)
    status: TerminationReason | None = None
    check_plan_enabled: bool = True
    reference: Plan | None = None
    execution: Any = None
    """The closed-loop execution phase (`utp_env/env/replan.py`, a `locks.Execution`) once
    the trip is being lived through; None while planning (always None in `utp_env/UTP-v0`)."""
    task: LevelTask | None = None
    """The query as the env's level asks it (utp_env/env/levels.py); None: the whole trip (level 4)."""

    def __post_init__(self) -> None:
        if self.plan.query_id is None:
            self.plan = Plan(query_id=self.query.query_id, days=[], source="env")

    @property
    def done(self) -> bool:
        """Whether the episode has ended (it has a termination reason)."""
        return self.status is not None

    def date_of(self, day: int) -> str | None:
        """The query's date of day `day` (1-based), or None when the trip is shorter."""
        return self.query.dates[day - 1] if 1 <= day <= len(self.query.dates) else None

    def day(self, number: int, city: str | None = None) -> Day:
        """Day `number` of the plan, creating it (and any missing earlier days) on first use.

        New days start in `city`, else in the previous day's last city, else the query's origin.
        """
        while len(self.plan.days) < number:
            n = len(self.plan.days) + 1
            previous = self.plan.days[-1].end_city if self.plan.days else self.query.org
            start = city if (n == number and city) else previous
            self.plan.days.append(Day(day=n, date=self.date_of(n), cities=[start]))
        return self.plan.days[number - 1]

    def record(self, tool: str, args: Any, ok: bool, text: str, call_id: str | None = None) -> None:
        """Append one answered tool call to the trace, at the current step."""
        self.trace.append(TraceEntry(self.steps, tool, args, ok, text, call_id))

    def snapshot(self) -> str:
        """The plan as canonical JSON, to compare before/after an action."""
        return self.plan.model_dump_json()


def plan_mismatch(plan: Plan, query: Query, db: Database | None = None) -> list[str]:
    """What shows that `plan` was made for another query (or another query set, where the same
    query id names another trip): a different query id, more days than the trip, dates that are
    not the query's, a start away from the query's origin, a destination never visited. Empty
    when nothing does; each entry is one clause for a message."""
    from utp_env.tools.database import normalize

    out: list[str] = []
    if plan.query_id is not None and plan.query_id != query.query_id:
        out.append(f"the plan is for query {plan.query_id!r}")
    if len(plan.days) > query.days:
        out.append(f"it has {len(plan.days)} days, the trip {query.days}")
    for day in plan.days:
        if day.date is not None and day.day <= len(query.dates) and day.date != query.dates[day.day - 1]:
            out.append(f"its day {day.day} is {day.date}, the query's {query.dates[day.day - 1]}")
            break
    if not plan.days:
        return out
    start = plan.days[0].cities[0]
    if normalize(start) != normalize(query.org):
        out.append(f"it starts in {start}, the trip in {query.org}")
    visited = {normalize(city) for day in plan.days for city in day.cities}
    if query.days == 3 and normalize(query.dest) not in visited:
        out.append(f"it never reaches {query.dest}")
    elif query.days > 3 and db is not None:
        try:
            in_state = {normalize(c) for c in db.cities_of_state(query.dest)}
        except LookupError:
            in_state = set()
        if in_state and not visited & in_state:
            out.append(f"it visits no city of {query.dest}")
    return out


# ---------------------------------------------------------------- checking a plan


def evaluate_plan(plan: Plan, ep: Episode) -> EvaluationReport:
    """`utp_env.evaluation.evaluate` of `plan` for the episode's query, against its reference plan."""
    from utp_env.evaluation import evaluate

    return evaluate(plan, ep.query, ep.db, reference=ep.reference)


@functools.lru_cache(maxsize=4)
def commonsense_rules(min_meal_gap: float | None = None, extra: bool = False) -> dict[str, str]:
    """Each commonsense check the evaluator runs (`report.COMMONSENSE_CHECKS`) with its rule in
    one line, read from the check function's docstring in `utp_env/evaluation/commonsense.py` or, for
    Complete Information, `utp_env/evaluation/complete_information.py` (the one definition; a
    composite check joins its parts' `<NAME>_PARTS` docstrings), with the meal
    gap of `configs/uncertainty.yaml` (or `min_meal_gap`) filled in. The task text states them and
    `check_plan` repeats the rule of each failed check. With `extra`, the extra checks too
    (`report.EXTRA_CHECKS`, read the same way), which a level's reward may score."""
    from utp_env.config import load_uncertainty
    from utp_env.evaluation import commonsense, complete_information, report

    gap = load_uncertainty().min_meal_gap_minutes if min_meal_gap is None else min_meal_gap
    rules: dict[str, str] = {}
    for name in (*report.COMMONSENSE_CHECKS, *(report.EXTRA_CHECKS if extra else ())):
        parts = [name, *getattr(report, f"{name.upper()}_PARTS", ())]
        functions = [getattr(commonsense, part, None) or getattr(complete_information, part, None) for part in parts]
        docs = [f.__doc__ for f in functions if callable(f)]
        text = " ".join(" ".join(d.split()) for d in docs if d) or name.replace("_", " ")
        rules[name] = text.replace("`min_gap` minutes", f"{gap:g} minutes").replace("`", "")
    return rules


def report_text(report: EvaluationReport, reward_checks: Mapping[str, CheckResult] | None = None,
                reward_hard: Mapping[str, CheckResult] | None = None) -> str:
    """A short account of a report for the agent: failed checks with reasons (a failed commonsense
    check also with its rule, `commonsense_rules`), then the metrics. Given the reward's checks
    (`utp_env.env.reward.plan_checks`: the paper's with the reward's rules folded in and the extra
    checks it counts; the hard checks on what counts), those are listed instead of the paper's."""
    rules = commonsense_rules()
    lines: list[str] = []
    commonsense = report.commonsense if reward_checks is None else reward_checks
    hard = report.hard if reward_hard is None else reward_hard
    for group, checks in (("commonsense", commonsense), ("hard", hard)):
        failed = [(name, c.reason) for name, c in checks.items() if c.passed is False]
        applicable = sum(c.passed is not None for c in checks.values())
        lines.append(f"{group} checks: {applicable - len(failed)}/{applicable} passed")
        lines.extend(f"  FAILED {name}: {reason or 'no reason given'}"
                     + (f" [rule: {rules[name]}]" if group == "commonsense" and name in rules else "")
                     for name, reason in failed)
    lines.append("metrics: " + ", ".join(f"{k}={_fmt(v)}" for k, v in report.metrics().items()))
    lines.append(f"cost: {report.cost.total:.0f} INR")
    return "\n".join(lines)


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{float(value):.3f}"


# ---------------------------------------------------------------- the outcome and `finish`


@dataclass(frozen=True, slots=True)
class EpisodeOutcome:
    """How one episode ended: the reason, the final plan (None when none was delivered), its
    evaluation report, reward, Monte Carlo robustness, one drawn delay realisation, and an error."""

    termination_reason: TerminationReason
    plan: Plan | None = None
    report: EvaluationReport | None = None
    reward: float = 0.0
    robustness: RobustnessReport | None = None
    realisation: Realisation | None = None
    error: str | None = None
    success: bool = False
    """Every check the reward scores passed and something counted (`reward.PlanScore.success`): a level's
    pass (utp_env/env/levels.py); at level 4 the reward's pass, beside the report's `final_pass`."""

    @property
    def final_pass(self) -> bool:
        """The report's final pass (every applicable check passed); False without a report."""
        return self.report is not None and self.report.final_pass

    @property
    def metrics(self) -> dict[str, float | None] | None:
        """The report's eight metrics (`EvaluationReport.metrics()`); None without a report."""
        return None if self.report is None else self.report.metrics()

    def to_json(self) -> dict[str, Any]:
        """The outcome as JSON-ready values; the keys shared by env `info` and `results.jsonl`.

        `plan` is the `Plan` model's JSON (`Plan.model_validate` reads it back without a database;
        `utp_env.plan_format.format_plan` turns it into the paper's day format).
        """
        return {
            "termination_reason": self.termination_reason.value,
            "plan": None if self.plan is None else self.plan.model_dump(mode="json"),
            "report": None if self.report is None else self.report.model_dump(mode="json"),
            "final_pass": self.final_pass,
            "metrics": self.metrics,
            "reward": self.reward,
            "robustness": None if self.robustness is None else self.robustness.model_dump(mode="json"),
            "realisation": None if self.realisation is None else self.realisation.model_dump(mode="json"),
            "error": self.error,
            "success": self.success,
        }


def finish(reason: TerminationReason, plan: Plan | None, query: Query, db: Database, *,
           weights: Mapping[str, float], reference: Plan | None = None, rollouts: int = 0,
           rollout_seed: int = 0, rng: np.random.Generator | None = None,
           error: str | None = None, task: LevelTask | None = None) -> EpisodeOutcome:
    """End an episode: evaluate `plan`, reward it (at the level of `task`, when given), simulate it when
    asked, and record the outcome.

    A `plan` of None (nothing delivered) is not evaluated and scores 0. `rollouts` > 0 adds the
    Monte Carlo robustness report (seeded by `rollout_seed`); `rng` draws one delay realisation
    of the plan. Both are skipped for an empty plan. An exception of the evaluator or the
    simulation never escapes: the outcome then says `infrastructure_error` and names the error. A plan
    that names another query (`itinerary.check_plan_query`) is the agent's error, and delivers nothing.
    """
    if plan is None:
        return EpisodeOutcome(reason, None, error=error)
    try:
        check_plan_query(plan, query.query_id)
    except ValueError as exc:  # the agent's plan answers another query: nothing delivered for this one
        return EpisodeOutcome(TerminationReason.AGENT_ERROR, None, error=f"the agent's plan: {exc}")
    from utp_env.env.reward import score_plan

    try:
        scored = score_plan(plan, query, db, weights=weights, reference=reference, task=task)
        report, reward = scored.report, scored.reward
    except Exception as exc:  # the evaluator failing is the benchmark's fault, not the agent's
        return EpisodeOutcome(TerminationReason.INFRASTRUCTURE_ERROR, plan,
                              error=f"evaluation failed: {type(exc).__name__}: {exc}")
    robustness: RobustnessReport | None = None
    realisation: Realisation | None = None
    if plan.days and (rollouts > 0 or rng is not None):
        from utp_env.simulation import simulate, simulate_once

        try:
            if rollouts > 0:
                robustness = simulate(plan, query, db, n=rollouts, seed=rollout_seed)
            if rng is not None:
                realisation = simulate_once(plan, query, db, rng)
        except Exception as exc:  # as above: a simulation bug must not stop a run
            return EpisodeOutcome(TerminationReason.INFRASTRUCTURE_ERROR, plan, report, reward, robustness,
                                  error=f"simulation failed: {type(exc).__name__}: {exc}", success=scored.success)
    return EpisodeOutcome(reason, plan, report, reward, robustness, realisation, error, scored.success)


def realisation_text(real: Realisation) -> str:
    """One sentence per consequence of a drawn realisation: missed legs, lost items, lateness."""
    if real.held:
        return f"The plan held in this realisation (trip ended {real.trip_end_lateness:.0f} min late)."
    parts = []
    if real.missed_legs:
        parts.append("missed: " + ", ".join(real.missed_legs))
    if real.lost_items:
        parts.append(f"lost: {', '.join(real.lost_items)} ({real.lost_minutes:.0f} planned minutes)")
    parts.append(f"trip ended {real.trip_end_lateness:.0f} min late")
    return "The plan did not hold: " + "; ".join(parts) + "."
