"""`utp-env report`: one self-contained HTML file to browse a run, or two runs side by side.

The file holds its CSS and JS inline and fetches nothing (it works from a file:// URL). The
Table-3 summary is rendered here from the run's `summary.json` with the same rows and caption as
the terminal (`EvaluationSummary.rows()` / `caption()` in utp_env/evaluation/aggregate.py). The
episodes are embedded as one JSON blob (every `<`, `>`, `&` escaped, so model output cannot close
the script element) and the page's JS builds the DOM with `textContent` only (no `innerHTML` of
data), one page of the episode list at a time and an episode's detail only when it is opened.

Filter state lives in the URL hash (`report.html#risk=averse&h=7`, `#episode=utp-q-0001`), so a
filtered view can be bookmarked and tests/test_report_html.py can drive the page with
`chromium --dump-dom` alone.
"""

from __future__ import annotations

import html
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from utp_env.runs.records import read_checked_records, read_run_config, run_dataset
from utp_env.runs.store import episode_key
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


def read_records(run_dir: Path, queries: Any = None) -> tuple[list[dict[str, Any]], list[str]]:
    """The valid episode records of `run_dir/results.jsonl` in file order, first per episode, each
    checked (`utp_env/runs/records.py`: types, ranges, the run's query set, database, agent), and
    the warnings about the lines skipped; unlike `ResultsStore` this never rewrites the file (a
    report only reads)."""
    return read_checked_records(run_dir, "report", queries)


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
    records, skipped = read_records(path, queries)
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
    return (PAGE.replace("__TITLE__", e(title))
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


PAGE = r"""<!DOCTYPE html>
<html lang=en><head><meta charset=utf-8>
<meta name=viewport content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>__TITLE__</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:0 1.5em 3em;color:#222}
h1{font-size:1.3em}h2{font-size:1.1em;margin:.8em 0 .3em}h3{font-size:1em;margin:.6em 0 .2em}
.runs{display:flex;gap:2em;flex-wrap:wrap}.run{flex:1 1 28em}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}
td,th{padding:1px 6px;border-bottom:1px solid #e3e3e3;text-align:right}
th[scope=row],td.l,th.l{text-align:left}thead th{background:#f3f3f3;position:sticky;top:0}
.caption,.note{color:#555;font-size:.9em;margin:.2em 0}
#filters{display:flex;gap:.8em;flex-wrap:wrap;align-items:end;padding:.5em 0;position:sticky;top:0;background:#fff;z-index:2;border-bottom:1px solid #ccc}
#filters label{display:flex;flex-direction:column;font-size:.85em;color:#444}
#list th{cursor:pointer;user-select:none}#list tr.row{cursor:pointer}#list tr.row:hover{background:#eef4ff}
#list tr.open{background:#dde8ff}.pass{color:#176b2c}.fail{color:#a4161a}
.detail{display:flex;gap:1.5em;flex-wrap:wrap}.detail>div{flex:1 1 36em;min-width:0}
.ep{border:1px solid #bbb;border-radius:4px;padding:.5em 1em;margin:.5em 0;background:#fcfcfc}
.day td,.day th{font-size:.92em}.leg td{color:#0b4f8a}.bad{background:#ffe1e1}
.tl{position:relative;height:34px;background:#f2f2f2;margin:.3em 0 .2em;border:1px solid #ddd}
.tl div{position:absolute;top:2px;height:28px;overflow:hidden;white-space:nowrap;font-size:10px;line-height:14px;
 border-right:1px solid #fff;padding:0 2px;box-sizing:border-box;color:#fff}
.tl .k-attraction{background:#2a7ab0}.tl .k-restaurant{background:#d98a1c}.tl .k-leg{background:#555}
.tl .k-transit,.tl .k-other{background:#8a8a8a}.tl .k-stay,.tl .k-hotel,.tl .k-accommodation{background:#6b5ca5}
.tl .qbad{outline:2px solid #d00;outline-offset:-2px}
.axis{position:relative;height:12px;font-size:9px;color:#777}.axis span{position:absolute;transform:translateX(-50%)}
.muted{color:#888}button{font:inherit}
</style></head><body>
<h1>__TITLE__</h1>
<p class=note>First render <span id=render-ms>?</span> ms after the page began loading (its script: <span id=script-ms>?</span> ms). Filters and the open episode are kept in the address (#...),
so a view can be bookmarked. Click a column head to sort, a row to open its episode.</p>
<div class=runs>__SUMMARIES__</div>
__COMPARE__
<h2>Episodes</h2>
<div id=filters></div>
<div id=episode></div>
<p id=count class=note></p>
<table id=list></table>
<p><button id=more hidden>show more</button></p>
<script type="application/json" id=data>__DATA__</script>
<script>
"use strict";
const T0 = performance.now();
const DATA = JSON.parse(document.getElementById("data").textContent);
const RUNS = DATA.runs, TWO = RUNS.length === 2, PAGE_SIZE = 100;
for (const run of RUNS) for (const e of run.episodes) Object.assign(e, DATA.queries[e.qid] || {});
// h(tag, attributes, ...children): DOM built with textContent only, never innerHTML of data.
function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "style") el.style.cssText = v; else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const kid of kids.flat()) if (kid !== null && kid !== undefined) el.append(kid instanceof Node ? kid : String(kid));
  return el;
}
const fmt = (v, d = 3) => v === null || v === undefined ? "-" : typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toFixed(d)) : String(v);
const pct = v => v === null || v === undefined ? "-" : (100 * v).toFixed(1) + "%";
// Minutes from the day's midnight as HH:MM; past midnight with "+1" (the next day).
const clock = m => { if (m === null || m === undefined) return ""; const d = Math.floor(m / 1440), r = Math.round(m - 1440 * d);
  return String(Math.floor(r / 60)).padStart(2, "0") + ":" + String(r % 60).padStart(2, "0") + (d ? (d > 0 ? "+" : "") + d : ""); };
const score = e => { const v = ["bas", "cats", "tdas"].map(k => e.m[k]).filter(x => x !== null && x !== undefined); return v.length ? v.reduce((a, b) => a + b) / v.length : null; };
// Rows of the list: one per episode of run A, joined with run B's episode of the same key.
const byKey = TWO ? new Map(RUNS[1].episodes.map(e => [e.key, e])) : null;
const ROWS = RUNS[0].episodes.map(a => ({a, b: TWO ? (byKey.get(a.key) || null) : null}));
if (TWO) { const seen = new Set(RUNS[0].episodes.map(e => e.key)); for (const b of RUNS[1].episodes) if (!seen.has(b.key)) ROWS.push({a: null, b}); }
const ep = r => r.a || r.b;
// Closed-loop runs: the realised columns (a record's plan reward stays apart from its realised score).
const REALISED = [["realised", x => x.score], ["kept", x => x.kept], ["disruptions", x => x.disr],
  ["rebookings", x => x.rebook], ["late min", x => x.late], ["extra ₹", x => x.extra]];
const REPLAN = RUNS.map(r => r.env === "replan"), BOTH_REPLAN = TWO && REPLAN[0] && REPLAN[1];
const delta = (get, r) => { const a = r.a && get(r.a), b = r.b && get(r.b); return a !== null && a !== undefined && b !== null && b !== undefined ? b - a : null; };
const COLUMNS = TWO ? [
  ["episode", r => ep(r).key, "l"], ["days", r => ep(r).h], ["level", r => ep(r).lv, "l"], ["risk", r => ep(r).risk, "l"],
  ["A pass", r => r.a ? (r.a.pass ? 1 : 0) : null], ["B pass", r => r.b ? (r.b.pass ? 1 : 0) : null],
  ["A score", r => r.a && score(r.a)], ["B score", r => r.b && score(r.b)], ["Δ score", r => r.a && r.b && score(r.a) !== null && score(r.b) !== null ? score(r.b) - score(r.a) : null],
  ["A plan reward", r => r.a && r.a.reward], ["B plan reward", r => r.b && r.b.reward], ["Δ plan reward", r => delta(e => e.reward, r)],
  ...(BOTH_REPLAN ? [["A realised", r => r.a && r.a.rl && r.a.rl.score], ["B realised", r => r.b && r.b.rl && r.b.rl.score],
    ["Δ realised", r => delta(e => e.rl ? e.rl.score : null, r)]] : []),
  ["A hold", r => r.a && r.a.hold], ["B hold", r => r.b && r.b.hold], ["Δ hold", r => r.a && r.b && r.a.hold !== null && r.b.hold !== null ? r.b.hold - r.a.hold : null],
  ["A failed", r => r.a && r.a.fails.length], ["B failed", r => r.b && r.b.fails.length],
] : [
  ["episode", r => r.a.key, "l"], ["days", r => r.a.h], ["level", r => r.a.lv, "l"], ["risk", r => r.a.risk, "l"],
  ["ended", r => r.a.end, "l"], ["pass", r => r.a.pass ? 1 : 0], ["BAS", r => r.a.m.bas], ["CATS", r => r.a.m.cats],
  ["TDAS", r => r.a.m.tdas], ["plan reward", r => r.a.reward], ["MC hold", r => r.a.hold], ["failed checks", r => r.a.fails.length],
  ...(REPLAN[0] ? REALISED.map(([label, get]) => [label, r => r.a.rl ? get(r.a.rl) : null]) : []),
  ["tool calls", r => r.a.usage.tool_calls], ["tokens", r => (r.a.usage.input_tokens || 0) + (r.a.usage.output_tokens || 0) || null],
];
// Filters: name -> [label, value of an episode].
const FILTERS = {
  h: ["horizon (days)", e => e.h], level: ["level", e => e.lv], risk: ["risk profile", e => e.risk],
  end: ["termination reason", e => e.end], fail: ["failed check", e => e.fails.map(f => f[1])],
};
function parseHash() {
  const out = {};
  for (const part of location.hash.replace(/^#/, "").split("&")) {
    if (!part) continue; const i = part.indexOf("=");
    out[decodeURIComponent(i < 0 ? part : part.slice(0, i))] = i < 0 ? "" : decodeURIComponent(part.slice(i + 1));
  }
  return out;
}
function setHash(state) {
  const parts = Object.entries(state).filter(([, v]) => v !== "" && v !== undefined && v !== null).map(([k, v]) => encodeURIComponent(k) + "=" + encodeURIComponent(v));
  history.replaceState(null, "", parts.length ? "#" + parts.join("&") : location.pathname + location.search);
  render();
}
function update(changes) { setHash(Object.assign(parseHash(), changes)); }
function matches(e, state) {
  if (!e) return false;
  for (const [name, [, get]] of Object.entries(FILTERS)) {
    const want = state[name]; if (!want) continue;
    const got = get(e); if (Array.isArray(got) ? !got.includes(want) : String(got) !== want) return false;
  }
  if (state.q) { const q = state.q.toLowerCase(); if (!(e.key.toLowerCase().includes(q) || (e.text || "").toLowerCase().includes(q))) return false; }
  return true;
}
function buildFilters(state) {
  const box = document.getElementById("filters"); box.replaceChildren();
  const all = RUNS.flatMap(r => r.episodes);
  for (const [name, [label, get]] of Object.entries(FILTERS)) {
    const values = [...new Set(all.flatMap(e => { const v = get(e); return Array.isArray(v) ? v : [v]; }).filter(v => v !== undefined && v !== null).map(String))].sort();
    const sel = h("select", {id: "f-" + name, onchange: ev => update({[name]: ev.target.value, page: ""})}, h("option", {value: ""}, "any"),
      values.map(v => h("option", {value: v, selected: state[name] === v}, v)));
    box.append(h("label", {}, label, sel));
  }
  box.append(h("label", {}, "query id or text", h("input", {id: "f-q", value: state.q || "", onchange: ev => update({q: ev.target.value, page: ""})})));
  box.append(h("button", {onclick: () => setHash({})}, "clear"));
}
let built = false;
function render() {
  const state = parseHash();
  if (!built) { buildFilters(state); built = true; }
  for (const name of [...Object.keys(FILTERS), "q"]) { const el = document.getElementById("f-" + name); if (el && el.value !== (state[name] || "")) el.value = state[name] || ""; }
  let rows = ROWS.filter(r => matches(r.a, state) || matches(r.b, state));
  const sortIdx = COLUMNS.findIndex(c => c[0] === state.sort);
  if (sortIdx >= 0) {
    const get = COLUMNS[sortIdx][1], dir = state.dir === "desc" ? -1 : 1;
    rows = rows.map(r => [get(r), r]).sort((x, y) => {
      const a = x[0], b = y[0];
      if (a === null || a === undefined) return (b === null || b === undefined) ? 0 : 1;
      if (b === null || b === undefined) return -1;
      return (typeof a === "number" && typeof b === "number" ? a - b : String(a).localeCompare(String(b))) * dir;
    }).map(p => p[1]);
  }
  const shown = Math.min(rows.length, PAGE_SIZE * (parseInt(state.page || "1", 10) || 1));
  document.getElementById("count").textContent = `${rows.length} of ${ROWS.length} episodes match; ${shown} listed.`;
  const head = h("tr", {}, COLUMNS.map(([label, , cls]) => h("th", {class: cls, title: "sort by " + label,
    onclick: () => update({sort: label, dir: state.sort === label && state.dir !== "desc" ? "desc" : "asc"})},
    label + (state.sort === label ? (state.dir === "desc" ? " ▼" : " ▲") : ""))));
  const body = rows.slice(0, shown).map(r => h("tr", {class: "row" + (state.episode === ep(r).key ? " open" : ""), "data-key": ep(r).key,
    onclick: () => update({episode: ep(r).key})},
    COLUMNS.map(([label, get, cls]) => { const v = get(r); const isPass = /pass$/.test(label);
      return h("td", {class: (cls || "") + (isPass && v !== null ? (v ? " pass" : " fail") : "")}, isPass && v !== null ? (v ? "yes" : "no") : fmt(v)); })));
  document.getElementById("list").replaceChildren(h("thead", {}, head), h("tbody", {}, body));
  const more = document.getElementById("more"); more.hidden = shown >= rows.length;
  more.onclick = () => update({page: String((parseInt(state.page || "1", 10) || 1) + 1)});
  renderEpisode(state.episode);
}
function findEpisode(run, key) {
  if (!key) return null;
  return run.episodes.find(e => e.key === key) || run.episodes.find(e => e.qid === key) || null;
}
function timeline(day) {
  const spans = [...day.items.map(i => ({s: i.s, e: i.e, label: i.n, k: i.k || "other", q: i.q})),
                 ...day.legs.map(l => ({s: l.s, e: l.e, label: `${l.mode} ${l.no || ""} ${l.o}→${l.d}`, k: "leg", q: l.q}))]
    .filter(x => typeof x.s === "number" && typeof x.e === "number");
  if (!spans.length) return null;
  let lo = Math.min(...spans.map(x => x.s)), hi = Math.max(...spans.map(x => x.e > x.s ? x.e : x.s + 1440));
  lo = Math.floor(lo / 60) * 60; hi = Math.ceil(hi / 60) * 60; const w = Math.max(hi - lo, 60);
  const box = h("div", {class: "tl"}, spans.map(x => { const end = x.e >= x.s ? x.e : x.e + 1440;
    return h("div", {class: `k-${x.k}` + (x.q ? " qbad" : ""), title: `${clock(x.s)}-${clock(x.e)} ${x.label}` + (x.q ? ` (Q ${fmt(x.q)})` : ""),
      style: `left:${100 * (x.s - lo) / w}%;width:${Math.max(0.4, 100 * (end - x.s) / w)}%`}, x.label.split(",")[0]); }));
  const ticks = []; for (let t = lo; t <= hi; t += (w > 720 ? 180 : 60)) ticks.push(h("span", {style: `left:${100 * (t - lo) / w}%`}, clock(t % 1440)));
  return h("div", {}, box, h("div", {class: "axis"}, ticks));
}
function planView(e) {
  if (!e.days.length) return h("p", {class: "muted"}, "no plan");
  return e.days.map(day => {
    const rows = [...day.items.map(i => ({s: i.s, row: h("tr", {class: i.q ? "bad" : null},
        h("td", {class: "l"}, clock(i.s) + "–" + clock(i.e)), h("td", {class: "l"}, i.a || i.m || ""), h("td", {class: "l"}, i.n || ""),
        h("td", {class: "l"}, i.k || ""), h("td", {}, fmt(i.q)), h("td", {}, fmt(i.c)), h("td", {}, "")) })),
      ...day.legs.map(l => ({s: l.s, row: h("tr", {class: "leg" + (l.q ? " bad" : "")},
        h("td", {class: "l"}, clock(l.s) + "–" + clock(l.e)), h("td", {class: "l"}, l.mode || ""), h("td", {class: "l"}, `${l.no || ""} ${l.o} → ${l.d}`),
        h("td", {class: "l"}, l.ed == null ? "" : `E[delay] ${fmt(l.ed, 1)} min`), h("td", {}, ""), h("td", {}, ""), h("td", {}, fmt(l.q))) }))]
      .sort((x, y) => (x.s ?? 1e9) - (y.s ?? 1e9)).map(x => x.row);
    return h("div", {class: "day"}, h("h3", {}, `Day ${day.d} · ${day.date || ""} · ${day.cities.join(", ")}` + (day.stay ? ` · stay: ${day.stay}` : "")),
      timeline(day),
      h("table", {}, h("thead", {}, h("tr", {}, h("th", {class: "l"}, "time"), h("th", {class: "l"}, "what"), h("th", {class: "l"}, "venue / leg"),
        h("th", {class: "l"}, "type"), h("th", {title: "BAS: normalised deviation of the buffer from its range (0 = inside)"}, "BAS Q"),
        h("th", {title: "CATS crowd score"}, "crowd"), h("th", {title: "TDAS: normalised deviation of the leg's buffer (0 = inside)"}, "TDAS Q"))),
        h("tbody", {}, rows)));
  });
}
function episodeView(e, label) {
  if (!e) return h("div", {class: "ep"}, h("h2", {}, label), h("p", {class: "muted"}, "not in this run"));
  const mc = e.mc, tr = e.trace, u = e.usage;
  const calls = Object.entries(tr.by || {}).filter(([k]) => k.startsWith("tool_call:"));
  return h("div", {class: "ep", id: "ep-" + (label ? label + "-" : "") + e.key},
    h("h2", {}, (label ? label + ": " : "") + e.key + " · " + (e.pass ? "passes" : "fails"), h("span", {class: "muted"}, ` · ended ${e.end}`)),
    e.text ? h("p", {class: "query"}, e.text) : null,
    h("p", {class: "note"}, `${e.h ?? "?"} days, ${e.lv ?? "?"}, risk ${e.risk ?? "?"}, ${e.org ?? "?"} → ${e.dest ?? "?"}, ${e.people ?? "?"} people, budget ₹${fmt(e.budget, 0)}; plan cost ₹${fmt(e.cost, 0)}; plan reward ${fmt(e.reward)}; BAS ${fmt(e.m.bas)}, CATS ${fmt(e.m.cats)}, TDAS ${fmt(e.m.tdas)}`),
    e.rl ? h("p", {class: "realised"}, `Closed loop: realised score ${fmt(e.rl.score)}; items kept ${pct(e.rl.kept)} (${fmt(e.rl.done)} of ${fmt(e.rl.planned)}); ${fmt(e.rl.disr)} disruption(s); ${fmt(e.rl.rebook)} rebooking(s); ${fmt(e.rl.late, 1)} late minutes; extra cost ₹${fmt(e.rl.extra, 0)}; ${fmt(e.rl.repairs)} repair step(s)` + (e.rl.rerr ? `; repair error: ${e.rl.rerr}` : "")) : null,
    e.err ? h("p", {class: "fail"}, "error: " + e.err) : null,
    h("h3", {}, `Failed checks (${e.fails.length})`),
    e.fails.length ? h("ul", {class: "fails"}, e.fails.map(([g, n, r]) => h("li", {}, h("b", {}, n), ` (${g}): ${r}`))) : h("p", {class: "muted"}, "none"),
    h("h3", {}, "Monte Carlo robustness"),
    mc ? h("div", {}, h("p", {}, `hold rate ${pct(mc.hold)} over ${mc.n} rollouts (late tolerance ${mc.tol} min); P(any missed leg) ${pct(mc.miss)}; expected lost items ${fmt(mc.lost)}; item start lateness mean ${fmt(mc.item[0], 1)} / p95 ${fmt(mc.item[2], 1)} min; trip end lateness mean ${fmt(mc.trip[0], 1)} / p95 ${fmt(mc.trip[2], 1)} min`),
      mc.steps.length ? h("table", {}, h("thead", {}, h("tr", {}, ["step (late or at risk)", "start late mean", "start late p95", "end late p95", "P(lost)", "P(missed)"].map((t, i) => h("th", {class: i ? null : "l"}, t)))),
        h("tbody", {}, mc.steps.map(s => h("tr", {}, h("td", {class: "l"}, s[0]), s.slice(1).map((v, i) => h("td", {}, fmt(v, i < 3 ? 1 : 3))))))) : null,
      h("p", {class: "note"}, `${mc.steps.length} of ${mc.nsteps} steps late or at risk`)) : h("p", {class: "muted"}, "not simulated (rollouts 0 or no plan)"),
    h("h3", {}, "Trace"),
    h("p", {}, `${tr.steps ?? "-"} steps; ${calls.reduce((a, [, n]) => a + n, 0)} tool calls; ${Object.values(tr.failed || {}).reduce((a, n) => a + n, 0)} failed; model calls ${fmt(u.model_calls)}; tokens in ${fmt(u.input_tokens)} / out ${fmt(u.output_tokens)}; cost ${u.cost_usd === undefined ? "-" : "$" + fmt(u.cost_usd, 4)}`),
    calls.length ? h("p", {class: "note"}, calls.map(([k, n]) => `${k.slice(10)} ×${n}` + ((tr.failed || {})[k] ? ` (${tr.failed[k]} failed)` : "")).join(", ")) : null,
    h("h3", {}, "Plan"), planView(e));
}
function renderEpisode(key) {
  const box = document.getElementById("episode");
  if (!key) { box.replaceChildren(); return; }
  const found = RUNS.map(r => findEpisode(r, key));
  if (!found.some(Boolean)) { box.replaceChildren(h("p", {class: "fail"}, `no episode ${key} in this report`)); return; }
  box.replaceChildren(h("p", {}, h("button", {onclick: () => update({episode: ""})}, "close episode")),
    h("div", {class: "detail"}, found.map((e, i) => h("div", {}, episodeView(e, TWO ? "AB"[i] : "")))));
  if (!render.first) box.scrollIntoView();
}
window.addEventListener("hashchange", () => render());
render.first = true; render(); render.first = false;
document.getElementById("script-ms").textContent = (performance.now() - T0).toFixed(0);
document.getElementById("render-ms").textContent = performance.now().toFixed(0);
</script>
</body></html>
"""  # noqa: E501 (the page's inline JS and CSS)
