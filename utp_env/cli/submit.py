"""`utp-env submit prepare RUN --out bundle.zip` and `utp-env submit verify bundle.zip`: pack a run for
a third party, and re-check one from its plans alone (utp_env/runs/bundle.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `submit` command group."""
    p = sub.add_parser("submit", help="pack a run into a verifiable bundle, or verify one",
                       description="Submission bundles (docs/RUNS.md \"Reporting\"): `prepare` packs a finished run "
                       "(plans, episode records, config, agent identity, database and query-set hashes, versions, "
                       "SHA-256 of every file) into one zip; `verify` re-evaluates every plan from scratch on the "
                       "named database and refuses, in one line naming the file and the field, a bundle whose "
                       "numbers do not follow from its plans.")
    commands = p.add_subparsers(dest="submit_command", required=True, metavar="COMMAND", title="commands",
                                parser_class=type(p))
    prep = commands.add_parser("prepare", help="pack a finished run folder into a bundle zip",
                               description="Pack a finished plan run (UTP-v0) into a bundle zip.")
    prep.add_argument("run", metavar="RUN_DIR", help="a finished run folder made by `utp-env run`")
    prep.add_argument("--out", type=Path, required=True, metavar="BUNDLE.zip", help="the zip to write (atomically)")
    prep.set_defaults(handler=handle_prepare)
    ver = commands.add_parser("verify", help="re-check a bundle from its plans alone",
                              description="Re-evaluate every plan of a bundle on the database it names and check "
                              "every record, the summary and the hashes against it. Exit status 0: verified; 2: "
                              "refused (one line says which file and field).")
    ver.add_argument("bundle", type=Path, metavar="BUNDLE.zip", help="the zip written by `utp-env submit prepare`")
    ver.add_argument("--db", type=Path, metavar="DIR",
                     help="the database folder to verify on, for a run made with --db (default: the embedded "
                     "sandbox the run names, built here if missing)")
    ver.set_defaults(handler=handle_verify)


def handle_prepare(args: argparse.Namespace) -> int:
    from utp_env.runs.bundle import prepare_bundle

    manifest = prepare_bundle(args.run, args.out)
    size = args.out.stat().st_size
    print(f"wrote {args.out} ({size / 1e6:.2f} MB): {manifest['query_set']['episodes']} episodes of "
          f"{manifest['query_set']['queries']} queries on database {manifest['db_hash'][:12]}; check it anywhere with "
          f"`utp-env submit verify {args.out}`")
    return 0


def handle_verify(args: argparse.Namespace) -> int:
    from utp_env.runs.bundle import verify_bundle

    print(f"utp-env submit verify: re-evaluating every plan of {args.bundle} ...", file=sys.stderr)
    verified = verify_bundle(args.bundle, args.db)
    for note in verified.notes[:10]:
        print(f"note: {note}", file=sys.stderr)
    print(f"verified: {verified.episodes} episodes of {verified.queries} queries by {verified.agent} on database "
          f"{verified.db_hash[:12]}; every record and the summary follow from the plans")
    return 0
