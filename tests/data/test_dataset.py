"""Reference plans are read when asked for: opening a dataset checks every line's JSON and
query id at once, parses a plan on first access, and a bad line is an error naming the file and
the line either way."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from utp_env.dataset import load_dataset
from utp_env.plan_format import parse_plan
from utp_env.reference_plans import REFERENCES_FILE, ReferencePlans
from utp_env.tools.database import Database


def _dataset_copy(mini_db_path: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(mini_db_path, tmp_path / "db"))


def test_references_parse_on_access_to_what_parse_plan_gives(mini_db_path: Path) -> None:
    db = Database.open(mini_db_path)
    dataset = load_dataset(db)
    refs = dataset.references
    assert isinstance(refs, ReferencePlans)
    lines = [json.loads(line) for line in (mini_db_path / REFERENCES_FILE).read_text().splitlines() if line.strip()]
    assert len(refs) == len(lines) and list(refs) == [r["query_id"] for r in lines]
    assert not refs._plans  # nothing parsed yet
    queries = {q.query_id: q for q in dataset.queries}
    for record in lines[:5]:
        plan = refs[record["query_id"]]
        expected = parse_plan(record["plan"], query=queries[record["query_id"]], db=db)
        assert plan == expected.model_copy(update={"query_id": record["query_id"], "source": record["source"]})
        assert refs.get(record["query_id"]) is plan  # parsed once, kept
    assert len(refs._plans) == 5
    assert refs.get("utp-q-9999") is None and "utp-q-9999" not in refs and lines[0]["query_id"] in refs


@pytest.mark.parametrize(("line", "why"), [
    ("{not json", r"line 2: Expecting property name"),
    ("[1, 2]", r"line 2: a JSON object with query_id, source and plan was expected, found list"),
    ('{"plan": []}', r"line 2: no 'query_id' field"),
    ('{"query_id": "utp-q-9999", "plan": []}', r"line 2: unknown query id 'utp-q-9999'"),
    ('{"query_id": "QID"}', r"line 2: no 'plan' field"),
])
def test_a_malformed_line_is_refused_when_the_dataset_opens(mini_db_path: Path, tmp_path: Path, line: str,
                                                            why: str) -> None:
    path = _dataset_copy(mini_db_path, tmp_path)
    lines = (path / REFERENCES_FILE).read_text().splitlines()
    lines.insert(1, line.replace("QID", json.loads(lines[0])["query_id"]))
    (path / REFERENCES_FILE).write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=f"{REFERENCES_FILE} {why}"):
        load_dataset(Database.open(path, check_manifest=False))


def test_a_plan_that_does_not_parse_is_named_when_it_is_read(mini_db_path: Path, tmp_path: Path) -> None:
    path = _dataset_copy(mini_db_path, tmp_path)
    lines = (path / REFERENCES_FILE).read_text().splitlines()
    record = json.loads(lines[2])
    record["plan"][0]["transportation"] = "Flight: XX, from A to B, Departure Time: 99:99"
    lines[2] = json.dumps(record)
    (path / REFERENCES_FILE).write_text("\n".join(lines) + "\n")
    refs = load_dataset(Database.open(path, check_manifest=False)).references
    assert refs.get(json.loads(lines[0])["query_id"]) is not None  # the others still read
    with pytest.raises(ValueError, match=rf"{REFERENCES_FILE} line 3: day 1, field 'transportation'"):
        refs.get(record["query_id"])


def test_processes_that_open_a_dataset_without_queries_at_once_build_it_once(mini_db_path: Path,
                                                                             tmp_path: Path) -> None:
    """Two processes that find the query set missing at the same moment (two test workers, two
    `utp-env run`s on a fresh cache) build it once: the second waits for the first and reads it."""
    import subprocess
    import sys

    from utp_env.dataset import QUERIES_FILE

    path = _dataset_copy(mini_db_path, tmp_path)
    for name in (QUERIES_FILE, REFERENCES_FILE):
        (path / name).unlink()
    # A 20-query set (the lock is under test, not the size).
    code = ("import sys, utp_env.dataset as d; d.build_query_set.__defaults__ = (20, 0, False); "
            "print(len(d.open_dataset(sys.argv[1]).queries))")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
    assert [out.strip() for out, _ in outs] == ["20", "20"]
    assert sum(err.count("building the query set") for _, err in outs) == 1, [err for _, err in outs]


def test_a_folder_without_its_query_set_names_the_build_that_remakes_it_as_it_is(mini_db_path: Path,
                                                                                  tmp_path: Path) -> None:
    """The hint names the folder's own profile and seed: a bare `data build --out` would write the
    full sandbox into a mini folder, and every later `--profile mini` command would run on it."""
    from utp_env.dataset import QUERIES_FILE

    path = _dataset_copy(mini_db_path, tmp_path)
    (path / QUERIES_FILE).unlink()
    with pytest.raises(FileNotFoundError) as caught:
        load_dataset(Database.open(path, check_manifest=False))
    message = str(caught.value)
    assert f"utp-env data build --profile mini --seed 0 --out {path}" in message and "\n" not in message, message
