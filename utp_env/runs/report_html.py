"""`utp-env report`: one self-contained HTML file to browse a run, or two runs side by side.

The page is the template `report_page.html` beside this module (HTML with its CSS and JS inline;
it fetches nothing and works from a file:// URL), filled here with a run's data. The
Table-3 summary is rendered here from the run's `summary.json` with the same rows and caption as
the terminal (`EvaluationSummary.rows()` / `caption()` in utp_env/evaluation/aggregate.py). The
episodes are embedded as one JSON blob (every `<`, `>`, `&` escaped, so model output cannot close
the script element) and the page's JS builds the DOM with `textContent` only (no `innerHTML` of
data), one page of the episode list at a time and an episode's detail only when it is opened.

Filter state lives in the URL hash (`report.html#risk=averse&h=7`, `#episode=utp-q-0001`), so a
filtered view can be bookmarked and tests/runs/test_report_html.py can drive the page with
`chromium --dump-dom` alone.
"""

from __future__ import annotations

import functools
import html
import importlib.resources
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from utp_env.runs.records import episode_key, read_checked_records, read_run_config, run_dataset
from utp_env.runs.summary import (
    REPLAN_CAPTION,
    RunSummary,
    check_run_folder,
    load_summary,
    replan_rows,
    summary_notes,
)
from utp_env.tools.atomic import write_text_atomic

REPORT_HTML = "report.html"


@dataclass
class RunData:
    """What the report shows of one run folder."""

    path: Path
    summary: RunSummary
    records: list[dict[str, Any]]
    config: dict[str, Any]
    queries: dict[str, Any] = field(default_factory=dict)  # query id -> utp_env.query.Query
    notes: list[str] = field(default_factory=list)  # warnings shown under the run's heading

    @property
    def name(self) -> str:
        """The run's label: its folder name and agent."""
        return f"{self.path.name} ({self.summary.agent})"


def load_run(run_dir: str | Path, queries: dict[str, Any] | None = None) -> RunData:
    """Read a finished run folder: summary.json, config.json, results.jsonl (bad records skipped
    with a warning, shown on the page too), and the queries of its dataset (given, or opened from
    the run's `--db`/`--profile`)."""
    path = check_run_folder(run_dir)
    summary = load_summary(path)
    config = read_run_config(path)
    notes: list[str] = []
    if queries is None:
        dataset = run_dataset(path, config, "report")
        queries = {q.query_id: q for q in dataset.queries}
        recorded = config.get("db_hash")
        if isinstance(recorded, str) and recorded != dataset.db.content_hash:
            notes.append(f"this run was made on database {recorded[:12]}; the query texts, horizons, "
                         f"levels and risk profiles shown come from {dataset.db.content_hash[:12]} (rebuilt since?)")
            print(f"utp-env report: warning: {path}: {notes[-1]}", file=sys.stderr)
    records, skipped = read_checked_records(path, "report", queries)  # checked, never rewritten
    notes += skipped
    return RunData(path, summary, records, config, queries, notes)


def _round(value: Any, digits: int = 3) -> Any:
    return round(value, digits) if isinstance(value, float) else value


def _compact(item: dict[str, Any]) -> dict[str, Any]:
    """`item` without its None values (the page reads a missing key as none)."""
    return {k: v for k, v in item.items() if v is not None}


def _failed_checks(report: dict[str, Any]) -> list[list[str]]:
    """[group, check, reason] of every failed check of an evaluation report."""
    out = []
    for group in ("commonsense", "hard", "subchecks", "extra"):
        for name, result in (report.get(group) or {}).items():
            if result.get("passed") is False:
                out.append([group, name, result.get("reason") or ""])
    return out


def _days(plan: dict[str, Any], report: dict[str, Any]) -> list[dict[str, Any]]:
    """The plan day by day: items (with the BAS Q and crowd score of the report's matching POI
    detail) and transport legs (with the TDAS Q of the matching leg detail)."""
    pois: dict[tuple[int, str, int], dict[str, Any]] = {}
    for poi in report.get("pois") or []:
        pois.setdefault((poi.get("day"), poi.get("name"), poi.get("start")), poi)
    legs: dict[tuple[int, str | None, str, str], list[dict[str, Any]]] = {}
    for leg in report.get("legs") or []:
        legs.setdefault((leg.get("day"), leg.get("number"), leg.get("origin"), leg.get("destination")), []).append(leg)
    out = []
    for day in plan.get("days") or []:
        items = []
        for item in day.get("items") or []:
            poi = pois.get((day.get("day"), item.get("name"), item.get("start")))
            items.append(_compact({"s": item.get("start"), "e": item.get("end"), "a": item.get("activity"),
                          "n": item.get("name"), "k": item.get("venue_type"), "m": item.get("meal"),
                          "q": None if poi is None else _round(poi.get("q")),
                          "c": None if poi is None else _round(poi.get("crowd_score")),
                          "t": None if poi is None else poi.get("tier")}))
        transport = []
        for leg in day.get("transport") or []:
            found = legs.get((day.get("day"), leg.get("number"), leg.get("origin"), leg.get("destination")))
            detail = found.pop(0) if found else None
            transport.append(_compact({"s": leg.get("dep"), "e": leg.get("arr"), "mode": leg.get("mode"),
                              "no": leg.get("number"), "o": leg.get("origin"), "d": leg.get("destination"),
                              "q": None if detail is None else _round(detail.get("q")),
                              "ed": None if detail is None else _round(detail.get("expected_delay"), 1)}))
        out.append({"d": day.get("day"), "date": day.get("date"), "cities": day.get("cities") or [],
                    "stay": day.get("accommodation"), "items": items, "legs": transport})
    return out


def _robustness(robustness: dict[str, Any] | None) -> dict[str, Any] | None:
    """Hold rate, lateness and the steps that are late or at risk (the others are left out)."""
    if robustness is None:
        return None
    steps = []
    for step in robustness.get("steps") or []:
        start, end = step.get("start_lateness") or {}, step.get("end_lateness") or {}
        if start.get("p95") or end.get("p95") or step.get("lost_probability") or step.get("missed_probability"):
            steps.append([step.get("label"), _round(start.get("mean"), 1), _round(start.get("p95"), 1),
                          _round(end.get("p95"), 1), _round(step.get("lost_probability")),
                          _round(step.get("missed_probability"))])
    def lateness(key: str) -> list[Any]:
        value = robustness.get(key) or {}
        return [_round(value.get("mean"), 1), _round(value.get("p50"), 1), _round(value.get("p95"), 1)]
    return {"n": robustness.get("n"), "hold": _round(robustness.get("hold_rate")),
            "tol": robustness.get("late_tolerance_min"), "miss": _round(robustness.get("any_missed_leg_probability")),
            "item": lateness("item_start_lateness"), "trip": lateness("trip_end_lateness"),
            "lost": _round(robustness.get("expected_lost_items")), "steps": steps,
            "nsteps": len(robustness.get("steps") or [])}


def episode_view(record: dict[str, Any], query: Any | None) -> dict[str, Any]:
    """The compact JSON the page shows of one episode (record of results.jsonl, its Query)."""
    report = record.get("report") or {}
    metrics = record.get("metrics") or {}
    trace = record.get("trace") or {}
    usage = record.get("usage") or {}
    robustness = _robustness(record.get("robustness"))
    view: dict[str, Any] = {
        "key": episode_key(record["query_id"], record["trial"]), "qid": record["query_id"], "trial": record["trial"],
        "end": record.get("termination_reason"), "err": record.get("error"),
        "pass": bool(record.get("final_pass")),
        # the plan's reward (UTP-v0): a closed-loop record's `reward` is the realised one (docs/RUNS.md)
        "reward": _round(record.get("plan_reward", record.get("reward"))),
        "rl": _realised(record.get("replan")),
        "m": {k: _round(v) for k, v in metrics.items()},
        "fails": _failed_checks(report),
        "days": _days(plan if isinstance(plan := record.get("plan"), dict) else {}, report),
        "mc": robustness, "hold": None if robustness is None else robustness["hold"],
        "trace": {"steps": trace.get("steps"), "by": trace.get("by_name") or {}, "failed": trace.get("failed") or {}},
        "usage": {k: v for k, v in usage.items() if v is not None},
        "cost": (report.get("cost") or {}).get("total"),
    }
    if query is not None:
        view.update({"h": query.days, "lv": query.level, "risk": query.risk_profile})
    return view


def _realised(block: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the page shows of a closed-loop record's `replan` block (None for a plan run)."""
    if not block:
        return None
    return {"score": _round(block.get("realised_score")), "kept": _round(block.get("items_kept")),
            "done": block.get("items_done"), "planned": block.get("items_planned"),
            "disr": block.get("disruptions"), "rebook": block.get("rebookings"),
            "late": _round(block.get("late_minutes"), 1), "extra": _round(block.get("extra_cost"), 0),
            "repairs": block.get("repair_steps"), "rerr": block.get("repair_error")}


def query_view(query: Any) -> dict[str, Any]:
    """What the page shows of a query beside its episodes (once per query, whatever the trials)."""
    return {"text": query.text, "org": query.org, "dest": query.dest, "budget": query.budget_inr,
            "people": query.people_number, "dates": query.dates}


def _summary_table(summary: RunSummary) -> str:
    """Table 3 as the terminal shows it (same rows and caption), as an escaped HTML table."""
    evaluation = summary.evaluation
    e = html.escape
    head = "".join(f"<th>{e(h)}</th>" for h in evaluation.header())
    body = "".join(f"<tr><th scope=row>{e(label)}</th>" + "".join(f"<td>{e(c)}</td>" for c in cells) + "</tr>"
                   for label, cells in evaluation.rows())
    extra = summary_notes(summary)
    closed = ""
    if summary.replan is not None:  # the realised outcome, as `utp-env show` prints it
        header, *cells = replan_rows(summary.replan)
        closed = (f"<p class=caption>{e(REPLAN_CAPTION)}</p><table class='t3 realised'><thead><tr>"
                  + "".join(f"<th>{e(c)}</th>" for c in header) + "</tr></thead><tbody>"
                  + "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in cells)
                  + "</tbody></table>")
    return (f"<p class=caption>{e(evaluation.caption())}</p>"
            f"<table class='t3 summary'><thead><tr><th></th>{head}</tr></thead><tbody>{body}</tbody></table>"
            + "".join(f"<p class=note>{e(line)}</p>" for line in extra) + closed)


def compare_rows(left: RunSummary, right: RunSummary, ci: bool = True) -> list[tuple[str, str, str, str]]:
    """(label, left, right, right - left) for each row of the 'all' column of two runs' Table 3
    (each cell with its interval and n when `ci`) and the Monte Carlo hold rate; the difference is
    blank when a cell has no value, and a whole number for the plan count. Whether a difference is
    real is `utp-env compare`'s to say (utp_env/runs/compare.py)."""
    from utp_env.evaluation.aggregate import format_cell

    out: list[tuple[str, str, str, str]] = []
    for label, key, kind in left.evaluation.row_cells():
        sides: list[tuple[float | None, str]] = []
        for summary in (left, right):
            evaluation = summary.evaluation
            if key is None:
                sides.append((float(evaluation.groups["all"].n_queries), str(evaluation.groups["all"].n_queries)))
                continue
            value = evaluation.value("all", key)
            interval = evaluation.intervals.get("all", {}).get(key) if ci else None
            sides.append((value, format_cell(value, kind, interval, ci and evaluation.has_intervals)))
        (a, text_a), (b, text_b) = sides
        if a is None or b is None:
            diff = ""
        elif key is None:
            diff = f"{int(b - a):+d}"
        else:
            diff = f"{(100 if kind == 'pct' else 1) * (b - a):+.{2 if kind == 'pct' else 3}f}"
        out.append((label, text_a, text_b, diff))
    hold_a, hold_b = (summary.hold_rate.get("all") for summary in (left, right))
    out.append(("MC hold rate %", "-" if hold_a is None else f"{100 * hold_a:.2f}",
                "-" if hold_b is None else f"{100 * hold_b:.2f}",
                "" if hold_a is None or hold_b is None else f"{100 * (hold_b - hold_a):+.2f}"))
    return out


def env_label(env: str) -> str:
    """How a run's env is named beside it: plan (UTP-v0) or replan (closed loop, UTP-Replan-v0)."""
    return "replan: closed loop, UTP-Replan-v0" if env == "replan" else "plan: UTP-v0"


def cross_env_note(left: RunSummary, right: RunSummary) -> str | None:
    """A line saying that two runs of different envs are compared as plans only, or None."""
    if left.env == right.env:
        return None
    return (f"A is a {left.env} run and B a {right.env} run: they are compared as plans only (plan reward, "
            "BAS/CATS/TDAS, pass); realised outcomes are compared between two replan runs.")


def _compare_table(left: RunSummary, right: RunSummary) -> str:
    """The 'all' column of both runs' Table 3 with the difference, as `utp-env show A B` prints."""
    e = html.escape
    rows = "".join(f"<tr><th scope=row>{e(label)}</th><td>{e(a)}</td><td>{e(b)}</td><td>{e(d)}</td></tr>"
                   for label, a, b, d in compare_rows(left, right))
    return (f"<table class='t3 compare'><thead><tr><th></th><th>A: {e(left.agent)}</th><th>B: {e(right.agent)}</th>"
            f"<th>B &minus; A</th></tr></thead><tbody>{rows}</tbody></table>")


def _json_for_script(data: Any) -> str:
    """JSON safe inside a <script> element: no `<`, `>`, `&` or line separators left raw."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, escaped in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


def _clean(value: Any) -> Any:
    """NaN and infinities (not JSON) as None."""
    if (isinstance(value, float) and value != value) or value in (float("inf"), float("-inf")):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


PAGE_TEMPLATE = "report_page.html"
"""The page (HTML, its CSS and JavaScript) beside this module, shipped as package data (pyproject.toml):
`build_report` fills its `__TITLE__`, `__SUMMARIES__`, `__COMPARE__` and `__DATA__` slots."""


@functools.cache
def page_template() -> str:
    """The text of `PAGE_TEMPLATE`, read once per process from the installed package."""
    return importlib.resources.files(__package__ or "utp_env.runs").joinpath(PAGE_TEMPLATE).read_text(
        encoding="utf-8")


def build_report(runs: list[RunData]) -> str:
    """The HTML text of the report of one run, or of two runs on the same queries."""
    if not 1 <= len(runs) <= 2:
        raise ValueError("a report shows one run, or two to compare")
    e = html.escape
    data = {
        "runs": [{"name": run.name, "agent": run.summary.agent, "split": run.summary.split, "env": run.summary.env,
                  "trials": run.summary.trials,
                  "episodes": [episode_view(r, run.queries.get(r["query_id"])) for r in run.records]}
                 for run in runs],
        "queries": {qid: query_view(run.queries[qid]) for run in runs for qid in
                    dict.fromkeys(r["query_id"] for r in run.records) if qid in run.queries},
    }
    title = "utp-env report: " + " vs ".join(run.name for run in runs)
    summaries = "".join(f"<section class=run><h2>{'AB'[i] + ': ' if len(runs) == 2 else ''}{e(run.name)}</h2>"
                        f"<p class=note>{e(env_label(run.summary.env))} | split {e(run.summary.split)} | "
                        f"{run.summary.episodes} episodes | "
                        f"{run.summary.trials} trial(s) per query | {e(str(run.path))}</p>"
                        + "".join(f"<p class=fail>warning: {e(note)}</p>" for note in run.notes) +
                        f"{_summary_table(run.summary)}</section>" for i, run in enumerate(runs))
    note = cross_env_note(runs[0].summary, runs[1].summary) if len(runs) == 2 else None
    compare = ("<section><h2>A vs B (all queries)</h2>"
               + (f"<p class=fail>{e(note)}</p>" if note else "")
               + f"{_compare_table(runs[0].summary, runs[1].summary)}</section>" if len(runs) == 2 else "")
    return (page_template().replace("__TITLE__", e(title))
            .replace("__SUMMARIES__", summaries)
            .replace("__COMPARE__", compare)
            .replace("__DATA__", _json_for_script(_clean(data))))


def write_report(run_dirs: list[str | Path], out: str | Path | None = None,
                 queries: dict[str, Any] | None = None) -> Path:
    """Write the report of one or two run folders to `out` (default: report.html in the first
    run folder, or report-vs-<second>.html there for two) atomically; returns its path."""
    runs = [load_run(path, queries) for path in run_dirs]
    if queries is None and len(runs) == 2:
        runs[1].queries = runs[1].queries or runs[0].queries
    if out is None:
        name = REPORT_HTML if len(runs) == 1 else f"report-vs-{runs[1].path.name}.html"
        out = runs[0].path / name
    write_text_atomic(out, build_report(runs))
    return Path(out)
