"""Submission bundles (utp_env/runs/bundle.py): a bundle verifies, on another machine too, and every
tampering is refused in one line naming the file and the field."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from utp_env.cli import main
from utp_env.runs.bundle import MANIFEST, BundleError, prepare_bundle, verify_bundle


@pytest.fixture(scope="module")
def bundle(mini_db_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bundle")
    assert main(["run", "--db", str(mini_db_path), "--limit", "6", "--rollouts", "50", "--out", str(root / "run"),
                 "--quiet"]) == 0
    out = root / "bundle.zip"
    assert main(["submit", "prepare", str(root / "run"), "--out", str(out)]) == 0
    return out


def files_of(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def rewrite(path: Path, files: dict[str, bytes], update_manifest: bool = True) -> None:
    """Write `files` as a bundle at `path`; with `update_manifest` the manifest's hashes follow the edits (a
    tamperer who knows the format)."""
    if update_manifest:
        manifest = json.loads(files[MANIFEST])
        for name, data in files.items():
            if name != MANIFEST:
                manifest["files"][name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        files = {**files, MANIFEST: json.dumps(manifest).encode()}
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)


def lines_of(files: dict[str, bytes]) -> list[dict]:
    return [json.loads(line) for line in files["results.jsonl"].decode().splitlines() if line.strip()]


def with_lines(files: dict[str, bytes], records: list[dict]) -> dict[str, bytes]:
    text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in records)
    return {**files, "results.jsonl": text.encode()}


def test_a_bundle_verifies_and_is_the_same_bytes_twice(bundle: Path, mini_db_path: Path, tmp_path: Path) -> None:
    verified = verify_bundle(bundle, mini_db_path)
    assert verified.episodes == len(lines_of(files_of(bundle))) and verified.notes == []
    again = tmp_path / "again.zip"
    prepare_bundle(bundle.parent / "run", again)
    assert again.read_bytes() == bundle.read_bytes()


def test_a_bundle_from_one_machine_verifies_on_another(bundle: Path, mini_db_path: Path, tmp_path: Path) -> None:
    """Another folder, another copy of the database, another cache and home, another working directory, a fresh
    process: only the bundle and the database travel."""
    elsewhere = tmp_path / "machine2"
    db = shutil.copytree(mini_db_path, elsewhere / "data" / "db")
    shutil.copy(bundle, elsewhere / "b.zip")
    env = {**os.environ, "UTP_ENV_CACHE": str(elsewhere / "cache"), "HOME": str(elsewhere / "home")}
    done = subprocess.run([sys.executable, "-m", "utp_env", "submit", "verify", "b.zip", "--db", str(db)],
                          cwd=elsewhere, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("verified: ")


def tamper(bundle: Path, tmp_path: Path, edit: Callable[[dict[str, bytes]], dict[str, bytes]],
           update_manifest: bool = True) -> Path:
    out = tmp_path / "tampered.zip"
    rewrite(out, edit(files_of(bundle)), update_manifest)
    return out


def refused(path: Path, db: Path) -> str:
    with pytest.raises(BundleError) as error:
        verify_bundle(path, db)
    message = str(error.value)
    assert "\n" not in message
    return message


def edit_metric(files: dict[str, bytes]) -> dict[str, bytes]:
    """Raise the first record's BAS in its metrics and in its report (the two agree, so the record passes its own
    checks; only re-evaluating the plan shows the number is not the plan's)."""
    records = lines_of(files)
    record = next(r for r in records if r["metrics"] and r["metrics"]["bas"] is not None)
    value = min(1.0, record["metrics"]["bas"] + 0.05) if record["metrics"]["bas"] < 1 else 0.5
    record["metrics"]["bas"] = record["report"]["bas"] = value
    return with_lines(files, records)


def test_an_edited_metric_is_refused(bundle: Path, mini_db_path: Path, tmp_path: Path) -> None:
    message = refused(tamper(bundle, tmp_path, edit_metric), mini_db_path)
    assert re.match(r"results\.jsonl line \d+ \(.+#0\): metrics\.bas is [0-9.]+ but its plan re-evaluates to "
                    r"[0-9.]+: the record does not follow from the plan$", message), message


def test_an_edit_the_manifest_does_not_know_is_refused_by_its_hash(bundle: Path, mini_db_path: Path,
                                                                   tmp_path: Path) -> None:
    message = refused(tamper(bundle, tmp_path, edit_metric, update_manifest=False), mini_db_path)
    assert message.startswith("results.jsonl: its SHA-256 is not manifest.json files.results.jsonl.sha256")


def test_an_edited_summary_is_refused(bundle: Path, mini_db_path: Path, tmp_path: Path) -> None:
    def edit(files: dict[str, bytes]) -> dict[str, bytes]:
        summary = json.loads(files["summary.json"])
        summary["evaluation"]["groups"]["all"]["final_pass_rate"] = 0.123
        return {**files, "summary.json": json.dumps(summary).encode()}

    message = refused(tamper(bundle, tmp_path, edit), mini_db_path)
    assert re.match(r"summary\.json: evaluation\.groups\.all\.final_pass_rate is 0\.123 but the records give "
                    r"[0-9.]+: the summary does not follow from the records$", message), message


def test_a_removed_plan_is_refused(bundle: Path, mini_db_path: Path, tmp_path: Path) -> None:
    def edit(files: dict[str, bytes]) -> dict[str, bytes]:
        return with_lines(files, lines_of(files)[1:])

    message = refused(tamper(bundle, tmp_path, edit), mini_db_path)
    assert re.match(r"results\.jsonl: episode .+#0 of the run's query set is missing \(1 of \d+\)", message), message


def test_a_duplicated_episode_is_refused(bundle: Path, mini_db_path: Path, tmp_path: Path) -> None:
    def edit(files: dict[str, bytes]) -> dict[str, bytes]:
        records = lines_of(files)
        return with_lines(files, [*records, records[0]])

    message = refused(tamper(bundle, tmp_path, edit), mini_db_path)
    assert re.match(r"results\.jsonl line \d+: a second record of episode .+#0 \(first on line 1\): a duplicated "
                    r"episode$", message), message


def test_a_plan_edited_after_the_run_is_refused(bundle: Path, mini_db_path: Path, tmp_path: Path) -> None:
    """A visit made 45 minutes longer: the record's numbers were made for the other plan."""
    def edit(files: dict[str, bytes]) -> dict[str, bytes]:
        records = lines_of(files)
        for record in records:
            items = [i for d in (record["plan"] or {}).get("days", []) for i in d["items"]
                     if i.get("venue_type") == "attraction" and i.get("end") is not None]
            if items:
                items[0]["end"] += 45
                return with_lines(files, records)
        raise AssertionError("no plan with a timed attraction")

    message = refused(tamper(bundle, tmp_path, edit), mini_db_path)
    assert re.match(r"results\.jsonl line \d+ \(.+#0\): \S+ is .+ but its plan re-evaluates to .+: the record does "
                    r"not follow from the plan$", message), message


def test_another_databases_hash_is_refused(bundle: Path, mini_db_path: Path, tmp_path: Path) -> None:
    def edit(files: dict[str, bytes]) -> dict[str, bytes]:
        manifest, config = json.loads(files[MANIFEST]), json.loads(files["config.json"])
        manifest["db_hash"] = config["db_hash"] = "f" * 64
        return {**files, MANIFEST: json.dumps(manifest).encode(), "config.json": json.dumps(config).encode()}

    message = refused(tamper(bundle, tmp_path, edit), mini_db_path)
    assert message.startswith(f"manifest.json: db_hash is ffffffffffff but --db {mini_db_path} is ")
    assert message.endswith(": the bundle was made on another database")


def test_a_manifest_that_disagrees_with_the_config_is_refused(bundle: Path, mini_db_path: Path,
                                                              tmp_path: Path) -> None:
    def edit(files: dict[str, bytes]) -> dict[str, bytes]:
        manifest = json.loads(files[MANIFEST])
        manifest["db_hash"] = "e" * 64
        return {**files, MANIFEST: json.dumps(manifest).encode()}

    assert refused(tamper(bundle, tmp_path, edit), mini_db_path).startswith(
        "manifest.json: db_hash is 'eeeeeeee")


@pytest.mark.parametrize(("content", "message"), [
    (b"not a zip", "is not a zip file"),
])
def test_what_is_not_a_bundle_is_refused(tmp_path: Path, mini_db_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "x.zip"
    path.write_bytes(content)
    assert message in refused(path, mini_db_path)


def test_a_foreign_file_in_the_zip_is_refused(bundle: Path, mini_db_path: Path, tmp_path: Path) -> None:
    message = refused(tamper(bundle, tmp_path, lambda f: {**f, "../evil.py": b"x"}), mini_db_path)
    assert message == ("tampered.zip: ../evil.py is not a file of a bundle (it holds manifest.json, results.jsonl, "
                       "config.json, summary.json); rebuild it with `utp-env submit prepare`")


def test_the_command_line(bundle: Path, mini_db_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", "verify", str(bundle), "--db", str(mini_db_path)]) == 0
    assert capsys.readouterr().out.startswith("verified: ")
    bad = tamper(bundle, tmp_path, edit_metric)
    assert main(["submit", "verify", str(bad), "--db", str(mini_db_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("utp-env submit: error: results.jsonl line ")


def test_prepare_names_the_bundle_to_verify_with_its_folder(bundle: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sub" / "b.zip"
    out.parent.mkdir()
    assert main(["submit", "prepare", str(bundle.parent / "run"), "--out", str(out)]) == 0
    assert f"`utp-env submit verify {out}`" in capsys.readouterr().out  # a path that works from here
