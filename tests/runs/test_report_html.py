"""`utp-env report`: the HTML page of a run (utp_env/runs/report_html.py), checked as a person would
see it in headless Chromium (`--dump-dom` after the page's script ran, and a screenshot), plus
`utp-env show --markdown` for two runs.

The page keeps its filters and the open episode in the URL hash, so every view is reachable with
`chromium --dump-dom URL#risk=averse` without a WebDriver. Without Debian's chromium the browser
tests skip, saying so; `.ci/run` installs it and sets UTP_ENV_REQUIRE_CHROMIUM=1, which turns
the skip into a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from utp_env.cli import main
from utp_env.runs.config import RunConfig
from utp_env.runs.runner import run

HOSTILE = "<script>document.title='PWNED'</script><img src=x onerror=\"document.title='PWNED'\">Venue & Co"
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars", "--virtual-time-budget=10000")


def _chromium() -> str:
    """Path of the chromium binary, or skip (fail under UTP_ENV_REQUIRE_CHROMIUM=1, as in CI)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("UTP_ENV_REQUIRE_CHROMIUM"):
        pytest.fail("chromium is required (UTP_ENV_REQUIRE_CHROMIUM is set) but not on PATH")
    pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")


def _browse(page: Path, fragment: str, tmp_path: Path, screenshot: Path | None = None) -> str:
    """The DOM of `page#fragment` after its script ran in headless Chromium (a fresh profile),
    or, given `screenshot`, a 1400x2400 PNG of it written there (and the empty string)."""
    binary = _chromium()
    profile = tmp_path / f"chromium-profile-{len(list(tmp_path.glob('chromium-profile-*')))}"
    profile.mkdir()
    url = page.resolve().as_uri() + ("#" + fragment if fragment else "")
    action = [f"--screenshot={screenshot}", "--window-size=1400,2400"] if screenshot else ["--dump-dom"]
    done = subprocess.run([binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *action, url],
                          capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    if screenshot:
        assert screenshot.exists() and screenshot.stat().st_size > 10_000
    return done.stdout


VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})


class _Tables(HTMLParser):
    """Every <table> of a document as (its attributes, rows of cell texts), the text inside each
    element with an id, and the <title>."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[dict[str, str], list[list[str]]]] = []
        self.ids: dict[str, str] = {}
        self.titles: list[str] = []
        self._tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None
        self._open: list[tuple[str, str | None]] = []  # (tag, id) of the open elements

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag == "table":
            self.tables.append((values, []))
            self._tables.append(self.tables[-1][1])
        elif tag == "tr" and self._tables:
            self._tables[-1].append([])
        elif tag in ("td", "th") and self._tables:
            self._cell = []
        if tag not in VOID:
            self._open.append((tag, values.get("id")))
            if values.get("id"):
                self.ids[values["id"]] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "table" and self._tables:
            self._tables.pop()
        elif tag in ("td", "th") and self._cell is not None and self._tables and self._tables[-1]:
            self._tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None
        for i in range(len(self._open) - 1, -1, -1):
            if self._open[i][0] == tag:
                del self._open[i:]
                break

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        for tag, element_id in self._open:
            if element_id:
                self.ids[element_id] += data
            if tag == "title":
                self.titles.append(data)


def _parse(dom: str) -> _Tables:
    parser = _Tables()
    parser.feed(dom)
    return parser


def _table(parsed: _Tables, cls: str) -> list[list[str]]:
    return next(rows for attrs, rows in parsed.tables if cls in attrs.get("class", "").split())


def _list_rows(parsed: _Tables) -> list[list[str]]:
    """The episode list's rows (header first)."""
    return next(rows for attrs, rows in parsed.tables if attrs.get("id") == "list")


def _records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def runs(mini_db_path: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two finished runs on the same 6 queries of the mini sandbox: the reference planner (with
    Monte Carlo rollouts) and the deterministic planner; run A's first plan names a venue with
    markup in it, as a model could."""
    root = tmp_path_factory.mktemp("report_runs")
    base = {"db": str(mini_db_path), "split": "all", "limit": 6, "rollouts": 30}
    a = run(RunConfig(**base, out=str(root / "a")), progress=False)
    b = run(RunConfig(**base, agent="deterministic", out=str(root / "b")), progress=False)
    records = _records(a)
    records[0]["plan"]["days"][0]["items"][0]["name"] = HOSTILE
    records[0]["error"] = "</script><script>document.title='PWNED'</script>"
    # An LLM agent's episode: a failed budget check, tool calls with a failure, tokens.
    records[2]["report"]["hard"]["budget"] = {"passed": False, "reason": "total cost 91,000 exceeds the budget 90,000"}
    records[2]["final_pass"] = False  # as its report now says (a record that disagrees with it is skipped)
    records[2]["trace"] = {"steps": 9, "by_name": {"tool_call:search_flights": 3, "tool_call:search_stays": 2},
                           "failed": {"tool_call:search_flights": 1}}
    records[2]["usage"] = {"tool_calls": 5, "model_calls": 4, "input_tokens": 12345, "output_tokens": 678,
                           "cost_usd": 0.0123}
    (a / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return a, b


@pytest.fixture(scope="module")
def one_report(runs: tuple[Path, Path]) -> Path:
    assert main(["report", str(runs[0])]) == 0
    return runs[0] / "report.html"


@pytest.fixture(scope="module")
def two_report(runs: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report_two") / "compare.html"
    assert main(["report", str(runs[0]), str(runs[1]), "--out", str(out)]) == 0
    return out


def test_the_report_is_one_self_contained_file(one_report: Path) -> None:
    text = one_report.read_text(encoding="utf-8")
    assert "<link" not in text and "http://" not in text and "https://" not in text
    assert "<script src" not in text and "@import" not in text
    assert "warning:" not in text  # made on the database whose queries it shows
    # Model output cannot close the data element: no raw '<' inside the JSON blob.
    blob = text.split('<script type="application/json" id=data>', 1)[1].split("</script>", 1)[0]
    assert "<" not in blob and HOSTILE not in blob
    data = json.loads(blob)
    assert data["runs"][0]["episodes"][0]["days"][0]["items"][0]["n"] == HOSTILE


CELL_WITH_INTERVAL = re.compile(r"\d+\.\d\d \[\d+\.\d, \d+\.\d\] n=\d+")
"""A Table 3 cell as the report shows it: the value, its 95% interval with one decimal fewer, and n."""


def _value(cell: str) -> str:
    """The value of a cell without its interval ('n/a', a cell with nothing to count, reads '-')."""
    return "-" if cell == "n/a" else cell.split(" [", 1)[0]


def test_the_summary_table_shows_summary_json(one_report: Path, runs: tuple[Path, Path], tmp_path: Path) -> None:
    summary = json.loads((runs[0] / "summary.json").read_text())
    parsed = _parse(_browse(one_report, "", tmp_path))
    table = _table(parsed, "summary")
    header, body = table[0], {row[0]: row[1:] for row in table[1:]}
    groups = summary["evaluation"]["groups"]
    assert header[1:] == [f"{k}-day" if k.isdigit() else k for k in groups]
    for label, field in (("Delivery rate % \u2191", "delivery_rate"), ("CPR micro % \u2191", "commonsense_micro"),
                         ("HCPR macro % \u2191", "hard_macro"), ("Final pass rate % \u2191", "final_pass_rate")):
        assert [_value(cell) for cell in body[label]] == [
            "-" if g[field] is None else f"{100 * g[field]:.2f}" for g in groups.values()], label
        assert all(CELL_WITH_INTERVAL.fullmatch(cell) for cell in body[label] if cell != "n/a"), body[label]
    assert body["Plans scored"] == [str(g["n_queries"]) for g in groups.values()]
    tdas = [g["uncertainty"]["tdas"]["averse"]["mean"] for g in groups.values()]
    assert [_value(cell) for cell in body["TDAS Risk_av % \u2191"]] == [
        "-" if v is None else f"{100 * v:.2f}" for v in tdas]
    assert "TravelPlanner" in one_report.read_text(encoding="utf-8").split("<table", 1)[0]  # the aggregation named
    assert parsed.ids["count"].startswith(f"{summary['episodes']} of {summary['episodes']} episodes match")


def test_a_filter_narrows_the_list(one_report: Path, runs: tuple[Path, Path], tmp_path: Path) -> None:
    data = json.loads(one_report.read_text(encoding="utf-8").split("id=data>", 1)[1].split("</script>", 1)[0])
    episodes = data["runs"][0]["episodes"]
    risk = episodes[-1]["risk"]
    expected = sorted(e["key"] for e in episodes if e["risk"] == risk)
    assert 0 < len(expected) < len(episodes)
    parsed = _parse(_browse(one_report, f"risk={risk}", tmp_path))
    rows = _list_rows(parsed)
    risk_col = rows[0].index("risk")
    assert sorted(row[0] for row in rows[1:]) == expected
    assert {row[risk_col] for row in rows[1:]} == {risk}
    assert parsed.ids["count"].startswith(f"{len(expected)} of {len(episodes)} episodes match")
    horizon = episodes[0]["h"]
    parsed = _parse(_browse(one_report, f"risk={risk}&h={horizon}", tmp_path))
    keys = [row[0] for row in _list_rows(parsed)[1:]]
    assert keys == sorted(e["key"] for e in episodes if e["risk"] == risk and e["h"] == horizon)


def test_an_episode_opens_with_its_plan_and_markup_stays_text(one_report: Path, runs: tuple[Path, Path],
                                                               tmp_path: Path) -> None:
    record = _records(runs[0])[0]
    dom = _browse(one_report, f"episode={quote(record['query_id'])}", tmp_path)
    parsed = _parse(dom)
    assert "PWNED" not in "".join(parsed.titles) and "<img src=\"x\"" not in dom and "<img src=x" not in dom
    key = f"{record['query_id']}#{record['trial']}"
    episode = parsed.ids[f"ep-{key}"]
    assert "Day 1" in episode and "Failed checks" in episode and "Monte Carlo robustness" in episode
    assert HOSTILE in episode  # shown as the text it is
    assert "error: </script><script>" in episode
    plan_tables = [rows for attrs, rows in parsed.tables if rows and rows[0][:1] == ["time"]]
    assert len(plan_tables) == len(record["plan"]["days"])
    head = plan_tables[0][0]
    assert head[4:7] == ["BAS Q", "crowd", "TDAS Q"]
    names = {row[2] for rows in plan_tables for row in rows[1:]}
    visits = {poi["name"] for poi in record["report"]["pois"]}
    assert visits <= names
    poi = record["report"]["pois"][0]
    row = next(row for rows in plan_tables for row in rows[1:] if row[2] == poi["name"])
    assert float(row[4]) == pytest.approx(poi["q"], abs=1e-3)
    hold = record["robustness"]["hold_rate"]
    assert f"hold rate {100 * hold:.1f}%" in episode
    _browse(one_report, f"episode={quote(record['query_id'])}", tmp_path, screenshot=tmp_path / "episode.png")
    _browse(one_report, "", tmp_path, screenshot=tmp_path / "summary.png")


def test_two_runs_side_by_side_sortable_by_difference(two_report: Path, runs: tuple[Path, Path],
                                                        tmp_path: Path) -> None:
    summaries = [json.loads((r / "summary.json").read_text()) for r in runs]
    parsed = _parse(_browse(two_report, quote("sort=Δ plan reward&dir=desc", safe="=&"), tmp_path))
    assert len([t for attrs, t in parsed.tables if "summary" in attrs.get("class", "").split()]) == 2
    compare = {row[0]: row[1:] for row in _table(parsed, "compare")[1:]}
    final = [s["evaluation"]["groups"]["all"]["final_pass_rate"] for s in summaries]
    assert [_value(cell) for cell in compare["Final pass rate % \u2191"][:2]] == [f"{100 * v:.2f}" for v in final]
    rows = _list_rows(parsed)
    column = rows[0].index("Δ plan reward ▼")
    diffs = [float(row[column]) for row in rows[1:] if row[column] != "-"]
    assert diffs and diffs == sorted(diffs, reverse=True)
    a, b = (_records(r) for r in runs)
    assert {row[0] for row in rows[1:]} == {f"{r['query_id']}#{r['trial']}" for r in a}
    reward_b = {r["query_id"]: r["reward"] for r in b}
    first = next(r for r in a if f"{r['query_id']}#{r['trial']}" == rows[1][0])
    assert diffs[0] == pytest.approx(reward_b[first["query_id"]] - first["reward"], abs=2e-3)
    record = a[1]
    parsed = _parse(_browse(two_report, f"episode={quote(record['query_id'])}", tmp_path))
    assert "A: " + record["query_id"] in parsed.ids[f"ep-A-{record['query_id']}#0"]
    _browse(two_report, f"episode={quote(record['query_id'])}", tmp_path, screenshot=tmp_path / "compare.png")


def test_show_markdown_compares_two_runs_as_markdown(runs: tuple[Path, Path],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "--markdown", str(runs[0]), str(runs[1])]) == 0
    out = capsys.readouterr().out
    assert "| Metric (all) | reference | deterministic | diff |" in out
    assert "| Plans scored | 6 | 6 | +0 |" in out and "Aggregation:" in out
    assert main(["show", str(runs[0]), str(runs[1])]) == 0
    text = capsys.readouterr().out
    assert "|" not in text.split("\n", 1)[1] and "+0.00" not in text.splitlines()[2]


def test_a_failed_check_filter_and_the_trace_of_an_llm_episode(one_report: Path, runs: tuple[Path, Path],
                                                               tmp_path: Path) -> None:
    record = _records(runs[0])[2]
    key = f"{record['query_id']}#{record['trial']}"
    parsed = _parse(_browse(one_report, f"fail=budget&episode={quote(key)}", tmp_path))
    rows = _list_rows(parsed)
    assert [row[0] for row in rows[1:]] == [key]
    assert rows[1][rows[0].index("tokens")] == str(12345 + 678)
    assert rows[1][rows[0].index("failed checks")] == "1"
    episode = parsed.ids[f"ep-{key}"]
    assert "Failed checks (1)" in episode and "budget (hard): total cost 91,000 exceeds the budget 90,000" in episode
    assert "9 steps; 5 tool calls; 1 failed; model calls 4; tokens in 12345 / out 678" in episode
    assert "search_flights ×3 (1 failed)" in episode


def test_a_run_made_on_another_database_is_flagged(runs: tuple[Path, Path], tmp_path: Path) -> None:
    from utp_env.runs.report_html import write_report

    copy = tmp_path / "moved"
    shutil.copytree(runs[0], copy)
    config = json.loads((copy / "config.json").read_text())
    config["db_hash"] = "0" * 64
    (copy / "config.json").write_text(json.dumps(config))
    text = write_report([copy], tmp_path / "r.html").read_text(encoding="utf-8")
    assert "warning: this run was made on database 000000000000" in text


@pytest.fixture(scope="module")
def replan_run(mini_db_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A closed-loop run on the same 6 queries as `runs` (no rollouts)."""
    root = tmp_path_factory.mktemp("report_replan")
    base = {"db": str(mini_db_path), "split": "all", "limit": 6, "rollouts": 0}
    return run(RunConfig(**base, env="replan", out=str(root / "r")), progress=False)


def test_a_replan_run_shows_its_realised_outcome_apart_from_the_plan_reward(replan_run: Path,
                                                                           tmp_path: Path) -> None:
    """The episode list and line of a closed-loop run hold the plan's reward as 'plan reward' (its
    record's `reward` is the realised one) and the realised columns; the summary shows the
    closed-loop table."""
    assert main(["report", str(replan_run)]) == 0
    page = replan_run / "report.html"
    assert "Closed loop (UTP-Replan-v0)" in page.read_text(encoding="utf-8")
    parsed = _parse(_browse(page, "", tmp_path))
    realised = _table(parsed, "realised")
    assert realised[0][:3] == ["horizon", "risk", "episodes"] and realised[-1][:2] == ["all", "all"]
    rows = _list_rows(parsed)
    header = rows[0]
    for label in ("plan reward", "realised", "kept", "disruptions", "rebookings", "late min", "extra ₹"):
        assert label in header, (label, header)
    records = {f"{r['query_id']}#{r['trial']}": r for r in _records(replan_run)}
    for row in rows[1:]:
        record = records[row[0]]
        assert float(row[header.index("plan reward")]) == pytest.approx(record["plan_reward"], abs=2e-3)
        assert float(row[header.index("realised")]) == pytest.approx(record["replan"]["realised_score"], abs=2e-3)
    record = next(iter(records.values()))
    dom = _browse(page, f"episode={quote(record['query_id'])}", tmp_path)
    assert f"plan reward {_js_fmt(record['plan_reward'])}" in dom
    assert f"Closed loop: realised score {_js_fmt(record['replan']['realised_score'])}" in dom


def _js_fmt(value: float) -> str:
    """A number as the page's `fmt` writes it: an integer as such (a realised score of exactly 1 is
    '1'), else with three decimals."""
    return str(int(value)) if float(value).is_integer() else f"{value:.3f}"


def test_a_plan_run_and_a_replan_run_are_compared_as_plans_and_say_so(runs: tuple[Path, Path], replan_run: Path,
                                                                      tmp_path: Path) -> None:
    out = tmp_path / "cross.html"
    assert main(["report", str(runs[0]), str(replan_run), "--out", str(out)]) == 0
    parsed = _parse(_browse(out, "", tmp_path))
    header = _list_rows(parsed)[0]
    assert "Δ plan reward" in header and "Δ reward" not in header and not any("realised" in h for h in header)
    text = out.read_text(encoding="utf-8")
    assert "A is a plan run and B a replan run: they are compared as plans only" in text
    rows = _list_rows(parsed)
    column = header.index("Δ plan reward")
    a = {f"{r['query_id']}#{r['trial']}": r for r in _records(runs[0])}
    b = {f"{r['query_id']}#{r['trial']}": r for r in _records(replan_run)}
    for row in rows[1:]:
        if row[column] != "-":
            assert float(row[column]) == pytest.approx(b[row[0]]["plan_reward"] - a[row[0]]["reward"], abs=2e-3)
