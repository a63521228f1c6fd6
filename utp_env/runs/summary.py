"""A run's summary: the paper's Table 3 (via `utp_env.evaluation.aggregate`), Monte Carlo hold
rates, pass^k over trials, per-query spread, and how episodes ended; for a closed-loop run
(`--env replan`) also the realised outcome by horizon and risk profile (`ReplanSummary`). Shared
by `utp-env run`, `utp-env show` and the plots."""

from __future__ import annotations

import json
import math
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from utp_env.env.episode import TerminationReason
from utp_env.evaluation.aggregate import RISK_PROFILES, UNCERTAINTY, EvaluationSummary, summarize
from utp_env.evaluation.report import EvaluationReport
from utp_env.runs.noise import NoiseFloor, noise_floor, noise_lines
from utp_env.runs.rows import replan_block
from utp_env.tools.atomic import write_text_atomic

SUMMARY_JSON = "summary.json"
SUMMARY_MD = "summary.md"


class QuerySpread(BaseModel):
    """How one query fared over its trials."""

    model_config = ConfigDict(extra="forbid")

    query_id: str
    trials: int
    passes: int
    final_score_min: float | None
    final_score_max: float | None


REPLAN_FIELDS = ("realised_score", "items_kept", "rebookings", "late_minutes", "extra_cost", "disruptions")
"""The per-episode values of a closed-loop record's `replan` block that the summary averages."""


class ReplanCell(BaseModel):
    """Means over the closed-loop episodes of one horizon x risk profile cell (None: no episode)."""

    model_config = ConfigDict(extra="forbid")

    episodes: int = 0
    realised_score: float | None = Field(default=None, description="Mean realised reward (docs/METRICS.md)")
    items_kept: float | None = Field(default=None, description="Mean share of the plan's visits, meals and "
                                                                 "events actually done")
    rebookings: float | None = Field(default=None, description="Mean services booked during the trip")
    late_minutes: float | None = Field(default=None, description="Mean minutes late at fixed commitments")
    extra_cost: float | None = Field(default=None, description="Mean INR spent beyond the plan (rebookings, "
                                                                 "fares paid again)")
    disruptions: float | None = Field(default=None, description="Mean disruptions reported per episode")


class ReplanSummary(BaseModel):
    """A closed-loop run's realised outcome: `cells[horizon][risk]` with 'all' rows and columns."""

    model_config = ConfigDict(extra="forbid")

    cells: dict[str, dict[str, ReplanCell]]


def summarize_replan(records: list[dict[str, Any]], queries: dict[str, Any]) -> ReplanSummary:
    """Mean realised score, items kept, rebookings, lateness, extra cost and disruptions of the
    records that carry a `replan` block, by horizon x risk profile. An episode without one (no
    plan delivered, or it failed before the trip) counts as realised score 0 and nothing kept, as
    an undelivered plan fails every check in Table 3."""
    values: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    horizons = sorted({str(queries[r["query_id"]].days) for r in records}, key=int)
    for record in records:
        query = queries[record["query_id"]]
        block = replan_block(record)
        for h in (str(query.days), "all"):
            for risk in (query.risk_profile, "all"):
                cell = values[(h, risk)]
                cell["episodes"].append(1.0)
                for key in REPLAN_FIELDS:
                    if block.get(key) is not None:
                        cell[key].append(float(block[key]))
    cells: dict[str, dict[str, ReplanCell]] = {}
    for h in (*horizons, "all"):
        cells[h] = {}
        for risk in (*RISK_PROFILES, "all"):
            got = values.get((h, risk))
            if got is None:
                cells[h][risk] = ReplanCell()
                continue
            means = {key: (sum(got[key]) / len(got[key]) if got[key] else None) for key in REPLAN_FIELDS}
            cells[h][risk] = ReplanCell(episodes=len(got["episodes"]), **means)
    return ReplanSummary(cells=cells)


REPLAN_COLUMNS = (("realised", "realised_score", "{:.3f}"), ("kept", "items_kept", "{:.1%}"),
                  ("rebook", "rebookings", "{:.2f}"), ("late min", "late_minutes", "{:.1f}"),
                  ("extra INR", "extra_cost", "{:,.0f}"), ("disrupt", "disruptions", "{:.2f}"))


def replan_rows(summary: ReplanSummary) -> list[list[str]]:
    """The realised-outcome table as rows of strings: a header, then one row per horizon x risk
    profile cell that has episodes (the 'all' rows last)."""
    rows = [["horizon", "risk", "episodes", *(label for label, _, _ in REPLAN_COLUMNS)]]
    for h, by_risk in summary.cells.items():
        for risk, cell in by_risk.items():
            if not cell.episodes:
                continue
            values = [getattr(cell, key) for _, key, _ in REPLAN_COLUMNS]
            rows.append([f"{h}-day" if h.isdigit() else h, risk, str(cell.episodes),
                         *("-" if v is None else fmt.format(v) for v, (_, _, fmt) in zip(values, REPLAN_COLUMNS,
                                                                                           strict=True))])
    return rows


def render_replan_text(summary: ReplanSummary) -> str:
    """The realised-outcome table for the terminal."""
    rows = replan_rows(summary)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.rjust(w) if i > 1 else cell.ljust(w) for i, (cell, w) in
                               enumerate(zip(row, widths, strict=True))) for row in rows)


def render_replan_markdown(summary: ReplanSummary) -> str:
    """The realised-outcome table as markdown."""
    rows = replan_rows(summary)
    lines = ["| " + " | ".join(rows[0]) + " |", "|---|---|" + "---:|" * (len(rows[0]) - 2)]
    lines += ["| " + " | ".join(row) + " |" for row in rows[1:]]
    return "\n".join(lines)


REPLAN_CAPTION = ("Closed loop (UTP-Replan-v0): realised outcome of one sampled reality per episode; realised = "
                  "realised reward, kept = share of planned visits, meals and events done, rebook = services "
                  "booked during the trip, late min = minutes late at fixed commitments, extra INR = spent beyond "
                  "the plan, disrupt = disruptions reported (docs/REPLAN.md).")


class EpisodeMean(BaseModel):
    """The mean of a per-episode value over a column's episodes, with its 95% interval (the bootstrap
    over queries of utp_env/evaluation/intervals.py) and n, the episodes with a value."""

    model_config = ConfigDict(extra="forbid")

    mean: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0


EPISODE_MEANS = {"reward": "reward (of the plan, UTP-v0)", "hold_rate": "Monte Carlo hold rate"}
"""The per-episode values the summary averages besides Table 3 (keys of `utp_env.runs.rows.EPISODE_ROWS`)."""


def episode_means(records: list[dict[str, Any]], queries: dict[str, Any]) -> dict[str, dict[str, EpisodeMean]]:
    """For each value of `EPISODE_MEANS`, its mean by horizon and over all with interval and n."""
    import numpy as np

    from utp_env.evaluation.intervals import cell_intervals
    from utp_env.runs.rows import EPISODE_ROWS

    getters = {key: value for _, key, _, value in EPISODE_ROWS if key in EPISODE_MEANS}
    keys = tuple(EPISODE_MEANS)
    per_query: dict[str, list[list[float]]] = {}
    for record in records:
        sums = per_query.setdefault(record["query_id"], [[0.0] * len(keys), [0.0] * len(keys)])
        for i, key in enumerate(keys):
            value = getters[key](record)
            if value is not None:
                sums[0][i] += value
                sums[1][i] += 1.0
    out: dict[str, dict[str, EpisodeMean]] = {key: {} for key in keys}
    horizons = sorted({queries[q].days for q in per_query})
    for column, members in [*((str(h), [q for q in sorted(per_query) if queries[q].days == h]) for h in horizons),
                            ("all", sorted(per_query))]:
        num = np.array([per_query[q][0] for q in members])
        den = np.array([per_query[q][1] for q in members])
        intervals = cell_intervals(keys, frozenset(), num, den, den, f"episode-{column}")
        for i, key in enumerate(keys):
            total = float(den[:, i].sum())
            cell = intervals.get(key)
            out[key][column] = EpisodeMean(mean=float(num[:, i].sum()) / total if total else None,
                                           low=None if cell is None else cell.low,
                                           high=None if cell is None else cell.high, n=int(total))
    return out


class RunSummary(BaseModel):
    """Everything `summary.json` holds."""

    model_config = ConfigDict(extra="forbid")

    agent: str
    split: str
    env: str = Field(default="plan", description="plan (UTP-v0) or replan (UTP-Replan-v0, closed loop)")
    episodes: int
    trials: int
    evaluation: EvaluationSummary
    pass_hat_k: dict[str, float | None] = Field(description="pass^k for k = 1..trials (tau-bench definition)")
    hold_rate: dict[str, float | None] = Field(description="Mean Monte Carlo hold rate by horizon and 'all'")
    termination: dict[str, int] = Field(description="Episodes by `TerminationReason` value")
    errors: list[dict[str, str]] = Field(description="query_id, trial and error of episodes not submitted")
    usage: dict[str, float | None]
    mean_duration_s: float | None
    per_query: list[QuerySpread]
    replan: ReplanSummary | None = Field(default=None, description="Realised outcome of a closed-loop run")
    noise: NoiseFloor | None = Field(default=None, description="With trials >= 2: verdict flips, each row's spread "
                                                               "across trials, minimum detectable differences")
    episode_means: dict[str, dict[str, EpisodeMean]] = Field(
        default_factory=dict, description="The mean reward and hold rate by horizon and 'all', with intervals")


def run_names(left: RunSummary, right: RunSummary, left_dir: str, right_dir: str) -> tuple[str, str]:
    """How the two runs are named in the tables: by agent, by folder when both have the same agent
    (else 'A'/'B'), each with its env when the envs differ."""
    names = (left.agent, right.agent)
    if names[0] == names[1]:
        folders = (Path(left_dir).resolve().name, Path(right_dir).resolve().name)
        names = folders if folders[0] != folders[1] else ("A", "B")
    if left.env != right.env:
        names = (f"{names[0]} ({left.env})", f"{names[1]} ({right.env})")
    return names


def pass_hat_k(passes_per_query: list[tuple[int, int]], k: int) -> float | None:
    """pass^k = mean over queries of C(c, k) / C(n, k): the chance that k i.i.d. trials all pass."""
    eligible = [(n, c) for n, c in passes_per_query if n >= k]
    if not eligible:
        return None
    return sum(math.comb(c, k) / math.comb(n, k) for n, c in eligible) / len(eligible)


def episode_score(record: dict[str, Any]) -> float | None:
    """The mean of an episode's BAS, CATS and TDAS that apply (its `metrics`); None when none does."""
    metrics = record.get("metrics") or {}
    values = [metrics.get(m) for m in UNCERTAINTY]
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _has_days(plan: Any) -> bool:
    """Whether a record's plan (the Plan model's JSON, or the paper's list of days) has a day."""
    if isinstance(plan, dict):
        return bool(plan.get("days"))
    return bool(plan)


def summarize_run(records: list[dict[str, Any]], queries: dict[str, Any], agent: str, split: str,
                  trials: int, env: str = "plan") -> RunSummary:
    """The RunSummary of a run's records (in canonical order) with their queries by id; `env`
    'replan' adds the realised outcome (`summarize_replan`)."""
    pairs = []
    for record in records:
        # A plan with no days delivered nothing: counted as undelivered, as `utp-env evaluate`
        # counts it (its report would pass every check that has nothing to check).
        report = record.get("report") if _has_days(record.get("plan")) else None
        pairs.append((queries[record["query_id"]],
                      EvaluationReport.model_validate(report) if report is not None else None))
    by_query: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_query[record["query_id"]].append(record)
    counts = [(len(rs), sum(bool(r.get("final_pass")) for r in rs)) for rs in by_query.values()]
    holds: dict[str, list[float]] = defaultdict(list)
    for record in records:
        robustness = record.get("robustness")
        if robustness is not None and robustness.get("hold_rate") is not None:
            holds[str(queries[record["query_id"]].days)].append(robustness["hold_rate"])
            holds["all"].append(robustness["hold_rate"])
    usage_keys = ("tool_calls", "model_calls", "input_tokens", "output_tokens", "cost_usd")
    usage: dict[str, float | None] = {}
    for key in usage_keys:
        values = [r["usage"][key] for r in records if r.get("usage") and r["usage"].get(key) is not None]
        usage[key] = float(sum(values)) if values else None
    durations = [r["duration_s"] for r in records if r.get("duration_s") is not None]
    per_query = []
    for qid, rs in by_query.items():
        scores = [s for s in (episode_score(r) for r in rs) if s is not None]
        per_query.append(QuerySpread(query_id=qid, trials=len(rs), passes=sum(bool(r.get("final_pass")) for r in rs),
                                     final_score_min=min(scores) if scores else None,
                                     final_score_max=max(scores) if scores else None))
    return RunSummary(
        agent=agent, split=split, env=env, episodes=len(records), trials=trials,
        evaluation=summarize(pairs),
        pass_hat_k={str(k): pass_hat_k(counts, k) for k in range(1, trials + 1)},
        hold_rate={key: sum(v) / len(v) for key, v in sorted(holds.items())},
        termination=dict(sorted(Counter(str(r.get("termination_reason")) for r in records).items())),
        errors=[{"query_id": r["query_id"], "trial": str(r["trial"]), "reason": str(r.get("error"))}
                for r in records if r.get("termination_reason") != TerminationReason.SUBMITTED],
        usage=usage,
        mean_duration_s=sum(durations) / len(durations) if durations else None,
        per_query=per_query,
        replan=summarize_replan(records, queries) if env == "replan" else None,
        noise=noise_floor(records, queries, trials, replan=env == "replan"),
        episode_means=episode_means(records, queries),
    )


def summary_notes(summary: RunSummary) -> list[str]:
    """The lines under Table 3, shared by the terminal and the HTML report: robustness, pass^k, endings."""
    notes = []
    for key, label in EPISODE_MEANS.items():
        cells = summary.episode_means.get(key) or {}
        shown = [f"{k}{'-day' if k.isdigit() else ''} {_mean_text(c, key == 'hold_rate')}" for k, c in cells.items()
                 if c.mean is not None]
        if shown:
            notes.append(f"{label}, mean per episode [95% interval] n: " + ", ".join(shown))
    if summary.hold_rate and not summary.episode_means.get("hold_rate"):  # a summary written before the means
        notes.append("Monte Carlo hold rate: " + ", ".join(
            f"{k}{'-day' if k.isdigit() else ''} {v:.1%}" for k, v in summary.hold_rate.items() if v is not None))
    if summary.trials > 1:
        from utp_env.evaluation.intervals import wilson_interval

        def with_interval(k: str, v: float) -> str:
            n = sum(1 for q in summary.per_query if q.trials >= int(k))  # queries with k trials: each a share
            low, high = wilson_interval(v, n) if n else (v, v)
            return f"k={k} {v:.1%} [{low:.1%}, {high:.1%}] n={n}"

        notes.append("pass^k [95% Wilson interval over queries] n: " + ", ".join(
            with_interval(k, v) for k, v in summary.pass_hat_k.items() if v is not None))
    notes.append("endings: " + ", ".join(f"{k} {v}" for k, v in summary.termination.items()))
    usage = summary.usage
    if usage.get("model_calls"):
        cost = usage.get("cost_usd")
        priced = (f"cost ${cost:,.4f}" if cost is not None else
                  "cost unknown (the agent config's price is for another model, or it has none)")
        notes.append(f"model usage: {usage['model_calls']:,.0f} calls, tokens in {usage.get('input_tokens') or 0:,.0f} "
                     f"/ out {usage.get('output_tokens') or 0:,.0f}, {priced}")
    return notes


def _mean_text(cell: EpisodeMean, pct: bool) -> str:
    def fmt(v: float) -> str:
        return f"{100 * v:.1f}%" if pct else f"{v:.3f}"

    interval = "[-]" if cell.low is None or cell.high is None else f"[{fmt(cell.low)}, {fmt(cell.high)}]"
    return f"{fmt(cell.mean or 0.0)} {interval} n={cell.n}"


def render_text(summary: RunSummary, ci: bool = True) -> str:
    """The summary as the terminal shows it: Table 3 (`ci`: each cell with its 95% interval and n,
    else the paper's plain layout), then robustness, pass^k and endings."""
    env = " | closed loop (--env replan)" if summary.env == "replan" else ""
    lines = [f"agent {summary.agent} | split {summary.split} | {summary.episodes} episodes{env}", "",
             summary.evaluation.to_text(ci), "", *summary_notes(summary)]
    if summary.replan is not None:
        lines += ["", REPLAN_CAPTION, render_replan_text(summary.replan)]
    if summary.noise is not None:
        lines += ["", *noise_lines(summary.noise)]
    for error in summary.errors[:5]:
        lines.append(f"  {error['query_id']}#{error['trial']}: {error['reason'][:160]}")
    if len(summary.errors) > 5:
        lines.append(f"  ... {len(summary.errors) - 5} more in summary.json")
    return "\n".join(lines)


def render_markdown(summary: RunSummary, ci: bool = True) -> str:
    """The summary as `summary.md`: Table 3 (`ci` as `render_text`), the hold rates and the endings
    as markdown."""
    parts = [f"# Run summary: {summary.agent} on {summary.split}", "",
             f"{summary.episodes} episodes, {summary.trials} trial(s) per query.", "",
             summary.evaluation.to_markdown(ci), ""]
    if summary.hold_rate:
        parts += ["| Monte Carlo hold rate | " + " | ".join(summary.hold_rate) + " |",
                  "|---|" + "---:|" * len(summary.hold_rate),
                  "| | " + " | ".join(f"{v:.1%}" for v in summary.hold_rate.values()) + " |", ""]
    if summary.replan is not None:
        parts += [REPLAN_CAPTION, "", render_replan_markdown(summary.replan), ""]
    if summary.noise is not None:
        parts += [*noise_lines(summary.noise, markdown=True), ""]
    parts.append("Endings: " + ", ".join(f"{k} {v}" for k, v in summary.termination.items()))
    return "\n".join(parts) + "\n"


def write_summary(run_dir: Path, ctx: Any, records: list[dict[str, Any]], progress: bool = False) -> RunSummary:
    """Write summary.json, summary.md and the plots of a finished run (`progress`: say so first)."""
    config = ctx.config
    summary = summarize_run(records, ctx.queries, config.agent, config.split, config.trials,
                            env=getattr(config, "env", "plan"))
    write_text_atomic(run_dir / SUMMARY_JSON, summary.model_dump_json(indent=2) + "\n")
    write_text_atomic(run_dir / SUMMARY_MD, render_markdown(summary))
    from utp_env.runs.plots import write_plots

    try:
        write_plots(run_dir, summary, records, ctx, progress=progress)
    except OSError:
        raise  # a file that cannot be written: the caller's one-line error naming it
    except Exception as exc:  # a plan a plot cannot replay must not cost the run its summary
        print(f"warning: the plots of {run_dir} were not all drawn ({type(exc).__name__}: {str(exc)[:200]}); "
              "summary.json and summary.md are written", file=sys.stderr)
    return summary


def all_failed(summary: RunSummary) -> str | None:
    """When no episode of a run delivered a plan and some ended in an error: a one-line message
    with the first error (`utp-env run` then exits non-zero); else None."""
    if not summary.episodes or summary.termination.get(TerminationReason.SUBMITTED.value):
        return None
    if not summary.errors:
        return None
    first = summary.errors[0]
    reason = " ".join(first["reason"].split())[:300]
    return (f"every one of the {summary.episodes} episodes failed; the first, {first['query_id']}#{first['trial']}: "
            f"{reason} (all errors in summary.json)")


def check_run_folder(run_dir: str | Path) -> Path:
    """`run_dir` as a Path when it is an existing folder; else a one-line FileNotFoundError (a
    missing path, or a file given where a run folder is expected) that says so."""
    path = Path(run_dir)
    if not path.exists():
        raise FileNotFoundError(f"{run_dir} does not exist; give a run folder made by `utp-env run`")
    if not path.is_dir():
        raise FileNotFoundError(f"{run_dir} is a file, not a run folder; give the folder that holds it "
                                "(made by `utp-env run`)")
    return path


def check_run_folders(runs: list[str]) -> list[Path]:
    """`check_run_folder` of each run, and a one-line ValueError when two name the same folder (a run
    compared with itself shows no difference, whatever the runs are)."""
    paths = [check_run_folder(run) for run in runs]
    if len(paths) == 2 and paths[0].resolve() == paths[1].resolve():
        raise ValueError(f"{runs[0]} is given twice: compare two different run folders (a run with a copy of "
                         "itself shows the noise floor of the comparison)")
    return paths


def _unit_fields(summary: RunSummary) -> list[tuple[str, float | None]]:
    """(where, value) of every share, rate or score of a summary: each must lie in [0, 1]."""
    out: list[tuple[str, float | None]] = []
    for name, group in summary.evaluation.groups.items():
        where = f"evaluation.groups.{name}"
        for field in ("delivery_rate", "commonsense_micro", "commonsense_macro", "hard_micro", "hard_macro",
                      "final_pass_rate"):
            out.append((f"{where}.{field}", getattr(group, field)))
        for table in ("commonsense_checks", "hard_checks"):
            out += [(f"{where}.{table}.{k}", v) for k, v in getattr(group, table).items()]
        for table in ("extra_checks", "qualitative"):
            out += [(f"{where}.{table}.{k}.mean", m.mean) for k, m in getattr(group, table).items()]
        out += [(f"{where}.uncertainty.{metric}.{risk}.mean", m.mean)
                for metric, by_risk in group.uncertainty.items() for risk, m in by_risk.items()]
    for column, cells in summary.evaluation.intervals.items():
        for key, interval in cells.items():
            out += [(f"evaluation.intervals.{column}.{key}.low", interval.low),
                    (f"evaluation.intervals.{column}.{key}.high", interval.high)]
    for key, by_column in summary.episode_means.items():
        for column, mean in by_column.items():
            out += [(f"episode_means.{key}.{column}.{part}", getattr(mean, part)) for part in ("mean", "low", "high")]
    out += [(f"pass_hat_k.{k}", v) for k, v in summary.pass_hat_k.items()]
    out += [(f"hold_rate.{k}", v) for k, v in summary.hold_rate.items()]
    if summary.replan is not None:
        for h, by_risk in summary.replan.cells.items():
            for risk, cell in by_risk.items():
                out += [(f"replan.cells.{h}.{risk}.realised_score", cell.realised_score),
                        (f"replan.cells.{h}.{risk}.items_kept", cell.items_kept)]
    return out


def summary_out_of_range(summary: RunSummary) -> str | None:
    """The first value of a summary outside its range ('where: value'), or None. Shares, rates and
    scores lie in [0, 1]; counts, means of minutes, costs, tokens and durations are not negative;
    every number is finite."""
    for where, value in _unit_fields(summary):
        if value is not None and not (math.isfinite(value) and -1e-9 <= value <= 1 + 1e-9):
            return f"{where} is {value!r}, outside [0, 1]"
    others: list[tuple[str, float | None]] = [("episodes", summary.episodes), ("trials", summary.trials),
                                              ("mean_duration_s", summary.mean_duration_s)]
    others += [(f"usage.{k}", v) for k, v in summary.usage.items()]
    others += [(f"termination.{k}", v) for k, v in summary.termination.items()]
    for name, group in summary.evaluation.groups.items():
        others += [(f"evaluation.groups.{name}.{f}", getattr(group, f)) for f in ("n_queries", "n_delivered")]
    if summary.replan is not None:
        for h, by_risk in summary.replan.cells.items():
            for risk, cell in by_risk.items():
                others += [(f"replan.cells.{h}.{risk}.{f}", getattr(cell, f))
                           for f in ("episodes", "rebookings", "late_minutes", "extra_cost", "disruptions")]
    for where, value in others:
        if value is not None and not (math.isfinite(value) and value >= 0):
            return f"{where} is {value!r}, not a finite number >= 0"
    return None


def load_summary(run_dir: str | Path) -> RunSummary:
    """Read a run folder's summary.json, with a one-line error naming the file when it is missing
    (not a finished run), unreadable, not a summary, or holds a value outside its range."""
    folder = check_run_folder(run_dir)
    path = folder / SUMMARY_JSON
    if not path.exists():
        raise FileNotFoundError(f"{path} not found: is {run_dir} a finished run folder? "
                                "(rerun `utp-env run --out` on it to finish it)")
    from pydantic import ValidationError

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ValueError(f"{path} cannot be read ({type(exc).__name__}: {str(exc)[:120]}); rerun `utp-env run "
                         f"--out {run_dir}` with the run's options to write it again") from None
    try:
        summary = RunSummary.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "summary"
        raise ValueError(f"{path} is not a run summary ({where}: {first['msg']}); rerun `utp-env run --out "
                         f"{run_dir}` with the run's options to write it again") from None
    except RecursionError:
        raise ValueError(f"{path} is nested too deep to be a run summary") from None
    wrong = summary_out_of_range(summary)
    if wrong is not None:
        raise ValueError(f"{path} holds a value outside its range ({wrong}); it was edited or is damaged: rerun "
                         f"`utp-env run --out {run_dir}` with the run's options to write it again from the "
                         "checked results")
    return summary
