"""Submission bundles: what a third party needs to re-check a run's Table 3, in one zip
(`utp-env submit prepare RUN --out bundle.zip`, `utp-env submit verify bundle.zip`; docs/RUNS.md
"Reporting").

A bundle holds the run's `results.jsonl` (every episode's plan and record), `config.json` (the run's
options, the agent's identity, the database hash, the env configuration hashes, the versions) and
`summary.json`, and `manifest.json`: the bundle format, the package version, the database and
query-set hashes, the agent's identity and the SHA-256 and size of every file. Entries are written
in a fixed order with a fixed timestamp, so the same run gives the same bytes.

`verify_bundle` trusts nothing in the bundle but the plans. It opens the database the run names
(or the one given), then refuses, in one line naming the file and the field:

- a file whose SHA-256 or size is not the manifest's, a file missing or extra;
- another database (`manifest.json` `db_hash` against the database opened), another query set
  (its hash), other env configurations (`config.json` `env_config` against this installation's);
- a record that is not a valid episode record of the run, a duplicated episode, an episode of the
  run's query set that is missing, or one that is not in it;
- a record whose numbers do not follow from its plan: each plan is evaluated again from scratch
  (`utp_env.env.episode.finish`, the run's own end of an episode: evaluation, reward, Monte Carlo
  with the episode's seed) and the report, metrics, final pass, reward and hold rate compared;
- a summary that is not the one the records give (`utp_env.runs.summary.summarize_run` again).

Plan runs (UTP-v0) only: a closed-loop run's realised outcome depends on the agent's repairs, which
the plans alone cannot replay. Seeded numbers (Monte Carlo hold rates, bootstrap intervals) come
from NumPy's generators; when this machine's NumPy is another version than the bundle's, a
difference in them is reported as a note, not a refusal.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from utp_env.runs.records import CONFIG_FILE
from utp_env.runs.store import RESULTS, episode_key

FORMAT = "utp-env-bundle/1"
MANIFEST = "manifest.json"
SUMMARY = "summary.json"
FILES = (RESULTS, CONFIG_FILE, SUMMARY)
"""The files a bundle holds besides its manifest, in the order they are written."""
MAX_FILE_BYTES = 2 << 30
"""Largest file a bundle may hold once unpacked (a bigger one is refused before it is read)."""
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
TOLERANCE = 1e-9
SEEDED = ("robustness", "evaluation.intervals", "hold_rate", "noise")
"""Paths (prefixes) of numbers drawn from NumPy's seeded generators (module docstring)."""


class BundleError(ValueError):
    """A bundle cannot be made or does not verify; the message is one line naming the file and field."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def query_set_hash(queries: list[Any]) -> str:
    """SHA-256 of the run's queries (their JSON, one per line, in query-id order)."""
    lines = [json.dumps(q.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
             for q in sorted(queries, key=lambda q: q.query_id)]
    return sha256("\n".join(lines).encode())


@dataclass
class ScoringContext:
    """What re-scoring a run's plans needs (the run worker's context without its agent: a bundle of an
    LLM run verifies without the model's package or key)."""

    config: Any
    dataset: Any
    queries: dict[str, Any]
    reward_weights: dict[str, float]

    @classmethod
    def of(cls, config: Any) -> ScoringContext:
        from utp_env.env.config import load_env_config
        from utp_env.runs.episode import dataset_for

        dataset = dataset_for(config)
        return cls(config, dataset, {q.query_id: q for q in dataset.queries},
                   dict(load_env_config().reward_weights))


# ---------------------------------------------------------------- prepare


def prepare_bundle(run_dir: str | Path, out: str | Path) -> dict[str, Any]:
    """Pack a finished plan run into `out` (written atomically); returns the manifest."""
    from utp_env.runs.records import read_run_config
    from utp_env.runs.runner import plan_episodes
    from utp_env.runs.summary import check_run_folder, load_summary
    from utp_env.tools.atomic import write_bytes_atomic

    folder = check_run_folder(run_dir)
    summary = load_summary(folder)
    config = read_run_config(folder)
    settings = config.get("config") if isinstance(config.get("config"), dict) else None
    if settings is None or not isinstance(config.get("db_hash"), str):
        raise BundleError(f"{folder / CONFIG_FILE} has no run config or database hash: rerun `utp-env run --out "
                          f"{run_dir}` to write it")
    if summary.env != "plan":
        raise BundleError(f"{run_dir} is a closed-loop run (--env replan): its realised outcome depends on the agent's "
                          "repairs, which the plans alone cannot replay; bundles hold plan runs (UTP-v0)")
    records = _run_records(folder)
    broken = [r for r in records if r.get("termination_reason") == "infrastructure_error"]
    if broken:
        first = broken[0]
        raise BundleError(f"{run_dir}: episode {first['query_id']}#{first['trial']} ended in an infrastructure error; "
                          "rerun `utp-env run` on the folder to retry it, then prepare the bundle")
    from utp_env.runs.config import RunConfig

    run_config = RunConfig.model_validate(settings)
    episodes = plan_episodes(run_config)
    have = {episode_key(r["query_id"], r["trial"]) for r in records}
    missing = [episode_key(q, t) for q, t in episodes if episode_key(q, t) not in have]
    if missing:
        raise BundleError(f"{run_dir} is not finished: {len(missing)} of {len(episodes)} episodes have no record (e.g. "
                          f"{missing[0]}); rerun `utp-env run --out {run_dir}` with the run's options to finish it")
    dataset = ScoringContext.of(run_config).dataset
    if dataset.db.content_hash != config["db_hash"]:
        raise BundleError(f"{folder / CONFIG_FILE}: db_hash {config['db_hash'][:12]} is not the database the run's "
                          f"options open now ({dataset.db.content_hash[:12]}: rebuilt since?)")
    chosen = sorted({q for q, _ in episodes})
    queries = {q.query_id: q for q in dataset.queries}
    contents = {name: (folder / name).read_bytes() for name in FILES}
    manifest = {
        "format": FORMAT, "utp_env": _version(), "db_hash": config["db_hash"],
        "query_set": {"queries": len(chosen), "episodes": len(episodes), "sha256": query_set_hash(
            [queries[q] for q in chosen])},
        "agent": config.get("agent"), "env_config": config.get("env_config"),
        "files": {name: {"sha256": sha256(data), "bytes": len(data)} for name, data in contents.items()},
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in [(MANIFEST, (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()),
                           *contents.items()]:
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    write_bytes_atomic(out, buffer.getvalue())
    return manifest


def _run_records(folder: Path) -> list[dict[str, Any]]:
    from utp_env.runs.records import read_checked_records

    records, _ = read_checked_records(folder, "submit")
    return records


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("utp-env")
    except PackageNotFoundError:
        from utp_env import __version__

        return __version__


# ---------------------------------------------------------------- verify


@dataclass
class Verified:
    """What `verify_bundle` checked, for the one line `utp-env submit verify` prints."""

    episodes: int
    queries: int
    agent: str
    db_hash: str
    notes: list[str] = field(default_factory=list)


def _read_zip(path: Path) -> dict[str, bytes]:
    """The bundle's files by name; a BundleError for what is not a bundle."""
    name = path.name
    try:
        zf = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"{path} does not exist; give the zip written by `utp-env submit prepare`") from None
    except (zipfile.BadZipFile, OSError) as exc:
        raise BundleError(f"{name} is not a zip file ({exc}); give the zip written by `utp-env submit "
                          "prepare`") from None
    with zf:
        infos = zf.infolist()
        names = [info.filename for info in infos]
        for dup in {n for n in names if names.count(n) > 1}:
            raise BundleError(f"{name}: {dup} is in the zip twice; rebuild the bundle with `utp-env submit prepare`")
        unknown = sorted(set(names) - {MANIFEST, *FILES})
        if unknown:
            raise BundleError(f"{name}: {unknown[0]} is not a file of a bundle (it holds {MANIFEST}, "
                              f"{', '.join(FILES)}); rebuild it with `utp-env submit prepare`")
        if MANIFEST not in names:
            raise BundleError(f"{name}: no {MANIFEST}; rebuild the bundle with `utp-env submit prepare`")
        out = {}
        for info in infos:
            if info.file_size > MAX_FILE_BYTES:
                raise BundleError(f"{name}: {info.filename} unpacks to {info.file_size:,} bytes, more than "
                                  f"{MAX_FILE_BYTES:,}")
            try:
                out[info.filename] = zf.read(info)
            except (zipfile.BadZipFile, OSError, EOFError) as exc:
                raise BundleError(f"{name}: {info.filename} cannot be read ({exc})") from None
    return out


def _json(name: str, data: bytes) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise BundleError(f"{name} is not JSON ({type(exc).__name__}: {str(exc)[:100]})") from None


def differences(given: Any, computed: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """Every (path, given, computed) where two JSON values differ (numbers within `TOLERANCE`). A key the
    computed value has and the given one lacks is not a difference: a bundle made by an older utp-env
    holds fewer fields (what it holds must follow; a key only the given value has must not be there)."""
    if isinstance(given, dict) and isinstance(computed, dict):
        for key in sorted(given, key=str):
            yield from differences(given.get(key), computed.get(key), f"{path}.{key}" if path else str(key))
    elif isinstance(given, list) and isinstance(computed, list) and len(given) == len(computed):
        for i, (a, b) in enumerate(zip(given, computed, strict=True)):
            yield from differences(a, b, f"{path}[{i}]")
    elif (isinstance(given, int | float) and isinstance(computed, int | float)
          and not isinstance(given, bool) and not isinstance(computed, bool)):
        if not math.isclose(given, computed, rel_tol=TOLERANCE, abs_tol=TOLERANCE):
            yield path, given, computed
    elif given != computed:
        yield path, given, computed


def _show(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _seeded(path: str) -> bool:
    return any(path == p or path.startswith((p + ".", p + "[")) for p in SEEDED)


def verify_bundle(bundle: str | Path, db: str | Path | None = None) -> Verified:
    """Re-check a bundle (module docstring); a BundleError naming the file and the field, or what was checked."""
    from utp_env.runs.config import RunConfig, env_identity
    from utp_env.runs.records import RecordContext, check_record

    path = Path(bundle)
    files = _read_zip(path)
    manifest = _json(MANIFEST, files[MANIFEST])
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        given = manifest.get("format") if isinstance(manifest, dict) else None
        raise BundleError(f"{MANIFEST}: format is {_show(given)}, not {FORMAT!r}; rebuild the bundle with `utp-env "
                          "submit prepare`")
    listed = manifest.get("files")
    if not isinstance(listed, dict):
        raise BundleError(f"{MANIFEST}: files is not an object of file name -> sha256 and bytes")
    for name in FILES:
        entry = listed.get(name)
        if name not in files:
            raise BundleError(f"{path.name}: {name} is missing (listed in {MANIFEST} files)")
        if not isinstance(entry, dict):
            raise BundleError(f"{MANIFEST}: files.{name} is missing")
        if entry.get("sha256") != sha256(files[name]):
            raise BundleError(f"{name}: its SHA-256 is not {MANIFEST} files.{name}.sha256 ({_show(entry.get('sha256'))}"
                              f"): the file was changed after the bundle was made")
        if entry.get("bytes") != len(files[name]):
            raise BundleError(f"{name}: {len(files[name]):,} bytes, not {MANIFEST} files.{name}.bytes")
    config = _json(CONFIG_FILE, files[CONFIG_FILE])
    if not isinstance(config, dict):
        raise BundleError(f"{CONFIG_FILE} is not a run's config (a JSON {type(config).__name__})")
    summary_given = _json(SUMMARY, files[SUMMARY])
    settings = config.get("config")
    try:
        run_config = RunConfig.model_validate(settings)
    except ValueError as exc:
        raise BundleError(f"{CONFIG_FILE}: config is not a run config ({str(exc).splitlines()[0]})") from None
    if run_config.env != "plan":
        raise BundleError(f"{CONFIG_FILE}: config.env is {run_config.env!r}; bundles hold plan runs (UTP-v0)")
    for key in ("db_hash", "env_config"):
        if config.get(key) != manifest.get(key):
            raise BundleError(f"{MANIFEST}: {key} is {_show(manifest.get(key))} but {CONFIG_FILE} {key} is "
                              f"{_show(config.get(key))}")
    if db is not None:
        run_config = run_config.model_copy(update={"db": str(db), "world": 0})
    elif run_config.db is not None:
        raise BundleError(f"{CONFIG_FILE}: config.db names a database folder ({run_config.db}) of the machine that "
                          "made the run; pass --db with that database on this machine")
    from utp_env.runs.runner import plan_episodes

    ctx = ScoringContext.of(run_config)
    where = f"--db {db}" if db is not None else f"the embedded {run_config.profile} sandbox (world {run_config.world})"
    opened = ctx.dataset.db.content_hash
    if manifest.get("db_hash") != opened:
        raise BundleError(f"{MANIFEST}: db_hash is {str(manifest.get('db_hash'))[:12]} but {where} is "
                          f"{opened[:12]}: the bundle was made on another database")
    here = env_identity(run_config)
    there = config.get("env_config")
    if isinstance(there, dict):
        for part in sorted(set(here) | set(there)):
            if here.get(part) != there.get(part):
                raise BundleError(f"{CONFIG_FILE}: env_config.{part} is {_show(there.get(part))} but this "
                                  f"installation's configs/{part}.yaml is {here.get(part)}: the run was scored with "
                                  "other parameters")
    episodes = plan_episodes(run_config)
    chosen = sorted({q for q, _ in episodes})
    given_set = manifest.get("query_set")
    query_set: dict[str, Any] = given_set if isinstance(given_set, dict) else {}
    expected_hash = query_set_hash([ctx.queries[q] for q in chosen])
    if query_set.get("sha256") != expected_hash:
        raise BundleError(f"{MANIFEST}: query_set.sha256 is {_show(query_set.get('sha256'))} but the run's "
                          f"{len(chosen)} queries on {where} hash to {expected_hash[:12]}...: another query set")
    given_agent = config.get("agent")
    agent: dict[str, Any] = given_agent if isinstance(given_agent, dict) else {}
    hashes = config.get("agent_hashes")
    context = RecordContext(queries=frozenset(chosen), trials=run_config.trials, db_hash=opened,
                            agent_hashes=frozenset(hashes) if isinstance(hashes, list) else None, env="plan")
    numpy_note = _numpy_note(config)
    notes: list[str] = []
    records: dict[str, dict[str, Any]] = {}
    first_line: dict[str, int] = {}
    lines = files[RESULTS].decode("utf-8", errors="replace").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where_line = f"{RESULTS} line {number}"
        record = _json(where_line, line.encode())
        reason = check_record(record, context)
        if reason is not None:
            raise BundleError(f"{where_line}: {reason}")
        key = episode_key(record["query_id"], record["trial"])
        if key in first_line:
            raise BundleError(f"{where_line}: a second record of episode {key} (first on line {first_line[key]}): a "
                              "duplicated episode")
        first_line[key] = number
        records[key] = record
        for pathname, given, computed in _recompute(record, ctx):
            if _seeded(pathname) and numpy_note:
                notes.append(f"{where_line}: {pathname} is {_show(given)}, {_show(computed)} here ({numpy_note})")
                continue
            raise BundleError(f"{where_line} ({key}): {pathname} is {_show(given)} but its plan re-evaluates to "
                              f"{_show(computed)}: the record does not follow from the plan")
    missing = [episode_key(q, t) for q, t in episodes if episode_key(q, t) not in records]
    if missing:
        raise BundleError(f"{RESULTS}: episode {missing[0]} of the run's query set is missing ({len(missing)} of "
                          f"{len(episodes)}): a removed plan or an incomplete query set")
    from utp_env.runs.summary import summarize_run

    ordered = [records[episode_key(q, t)] for q, t in episodes]
    computed = summarize_run(ordered, ctx.queries, run_config.agent, run_config.split, run_config.trials,
                             env="plan").model_dump(mode="json")
    for pathname, given, value in differences(summary_given, computed):
        if _seeded(pathname) and numpy_note:
            notes.append(f"{SUMMARY}: {pathname} is {_show(given)}, {_show(value)} here ({numpy_note})")
            continue
        raise BundleError(f"{SUMMARY}: {pathname} is {_show(given)} but the records give {_show(value)}: the summary "
                          "does not follow from the records")
    return Verified(episodes=len(episodes), queries=len(chosen), agent=str(agent.get("class") or run_config.agent),
                    db_hash=opened, notes=notes)


def _numpy_note(config: Mapping[str, Any]) -> str | None:
    """Why seeded numbers may differ here: the bundle's NumPy version is not this one (None when equal)."""
    import numpy

    given = config.get("versions")
    versions: Mapping[str, Any] = given if isinstance(given, dict) else {}
    theirs = versions.get("numpy")
    if theirs == numpy.__version__:
        return None
    return f"seeded by NumPy {theirs}, this machine has {numpy.__version__}: not refused"


RECOMPUTED = ("report", "metrics", "final_pass", "reward", "robustness")
"""The fields of a record `verify_bundle` computes again from its plan."""


def _recompute(record: Mapping[str, Any], ctx: Any) -> Iterator[tuple[str, Any, Any]]:
    """The differences between a record's numbers and those its plan gives when the episode's end is run
    again (`finish` with the run's weights, reference plan, rollouts and the episode's seed)."""
    from utp_env.env.episode import TerminationReason, finish
    from utp_env.itinerary import Plan

    raw = record.get("plan")
    reason = TerminationReason(record["termination_reason"])
    if raw is None:
        recomputed: dict[str, Any] = {"report": None, "metrics": None, "final_pass": False, "reward": 0.0,
                                      "robustness": None}
    else:
        plan = Plan.model_validate(raw)
        query = ctx.queries[record["query_id"]]
        outcome = finish(reason, plan, query, ctx.dataset.db, weights=ctx.reward_weights,
                         reference=ctx.dataset.references.get(query.query_id), rollouts=ctx.config.rollouts,
                         rollout_seed=int(record["seed"]))
        recomputed = {key: value for key, value in outcome.to_json().items() if key in RECOMPUTED}
    given = {key: record.get(key) for key in RECOMPUTED}
    yield from differences(json.loads(json.dumps(given)), json.loads(json.dumps(recomputed)))
