"""`utp-env report RUN_DIR [OTHER_RUN_DIR]`: write one self-contained HTML page to browse a run,
or two runs side by side on the same queries (built by utp_env/runs/report_html.py)."""

from __future__ import annotations

import argparse
import sys
import time


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `report` command."""
    p = sub.add_parser(
        "report", help="write an HTML page to browse a run's episodes, or two runs side by side",
        description="Write one self-contained HTML file (no server, nothing fetched; open it from disk in a "
        "browser) with the run's Table-3 summary, filters (horizon, level, risk profile, termination reason, "
        "failed check) and every episode: the query, the plan day by day with each item's BAS Q, crowd score "
        "and TDAS Q, the failed checks with their reasons, Monte Carlo hold rate and lateness, and the "
        "tool-call trace. With two run folders: both summaries and a sortable per-query comparison.")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR", help="one finished run folder, or two to compare")
    p.add_argument("--out", metavar="FILE", default=None,
                   help="where to write the HTML (default: report.html in the first run folder, or "
                   "report-vs-OTHER.html there for two runs)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from utp_env.runs.report_html import write_report
    from utp_env.runs.summary import check_run_folders

    if len(args.runs) > 2:
        raise ValueError("report takes one run folder, or two to compare")
    check_run_folders(args.runs)  # before anything is read: a missing folder, a file, a folder given twice
    start = time.perf_counter()
    print(f"utp-env report: reading {' and '.join(args.runs)} ...", file=sys.stderr)
    path = write_report(args.runs, args.out)
    size = path.stat().st_size
    print(f"wrote {path} ({size / 1e6:.1f} MB) [{time.perf_counter() - start:.1f} s]; open it in a browser: "
          f"{path.resolve().as_uri()}")
    return 0
