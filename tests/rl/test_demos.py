"""Demonstrations: the reference planner's episodes as tool-calling transcripts that replay,
call by call, to the env's answers, the reference plan and its reward."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from utp_env.cli import main
from utp_env.dataset import dataset_of
from utp_env.env.core import UTPEnv
from utp_env.rl.demos import (
    DEMO_SYSTEM,
    approx_tokens,
    demonstrations,
    read_demos,
    reference_reward,
    replay,
    write_demos,
)
from utp_env.tools.database import Database


def _same_plan(a: object, b: object) -> bool:
    exclude = {"query_id", "source"}
    return a.model_dump(exclude=exclude) == b.model_dump(exclude=exclude)  # type: ignore[attr-defined]


def _check_replays(records: list[dict], db_path: Path) -> None:
    db = Database.open(db_path)
    dataset = dataset_of(db)
    env = UTPEnv(db_path=db_path, config=dict(records[0]["env_config"]))
    for record in records:
        query = dataset.query(record["query_id"])
        reference = dataset.reference(query.query_id)
        result = replay(record, env=env)
        assert result.observations_match, (record["query_id"], result.first_mismatch)
        assert result.termination_reason == "submitted"
        assert result.plan is not None and _same_plan(result.plan, reference)
        expected = reference_reward(env, query, reference)
        assert result.reward == record["reward"] == expected, record["query_id"]
        assert record["reward"] > 0


def _check_format(record: dict) -> None:
    messages = record["messages"]
    assert messages[0] == {"role": "system", "content": DEMO_SYSTEM} and messages[1]["role"] == "user"
    names = {t["function"]["name"] for t in record["tools"]}
    for i, message in enumerate(messages[2:], start=2):
        if message["role"] == "assistant":
            (call,) = message["tool_calls"]
            assert call["type"] == "function" and call["function"]["name"] in names
            assert isinstance(json.loads(call["function"]["arguments"]), dict)  # OpenAI: a JSON string
            answer = messages[i + 1]
            assert answer == {"role": "tool", "tool_call_id": call["id"], "content": answer["content"]}
        else:
            assert message["role"] == "tool" and messages[i - 1]["role"] == "assistant"
    assert messages[-2]["tool_calls"][0]["function"]["name"] == "submit_plan"


def test_every_transcript_of_the_validation_split_replays_to_the_reference(mini_db_path: Path) -> None:
    records = list(demonstrations("validation", db_path=mini_db_path))
    assert len(records) == len(dataset_of(Database.open(mini_db_path)).split("validation")) > 5
    for record in records:
        _check_format(record)
        assert record["lookups"] > 0 and record["report"] is not None
        assert record["approx_tokens"] == approx_tokens(record["messages"], record["tools"])
    _check_replays(records, mini_db_path)


def test_a_token_cap_drops_lookups_and_still_replays(mini_db_path: Path) -> None:
    full = list(demonstrations("test", db_path=mini_db_path, limit=6))
    floor = max(approx_tokens(r["messages"][:2] + r["messages"][-2:], r["tools"]) for r in full)
    cap = floor + 300
    capped = list(demonstrations("test", db_path=mini_db_path, limit=6, max_tokens=cap))
    assert [r["query_id"] for r in capped] == [r["query_id"] for r in full]
    assert all(r["approx_tokens"] <= cap for r in capped)
    assert sum(r["lookups"] for r in capped) < sum(r["lookups"] for r in full)
    for short, long in zip(capped, full, strict=True):  # the lookups kept are the first ones
        assert short["messages"][2:2 + 2 * short["lookups"]] == long["messages"][2:2 + 2 * short["lookups"]]
    _check_replays(capped, mini_db_path)


def test_a_cap_below_the_bare_transcript_leaves_it_out(mini_db_path: Path, tmp_path: Path) -> None:
    summary = write_demos(tmp_path / "d.jsonl", "test", db_path=mini_db_path, limit=3, max_tokens=50, progress=False)
    assert summary.written == 0 and summary.over_cap == 3
    assert summary.reward_mean is None and summary.tokens_mean is None  # a mean over nothing is none
    assert (tmp_path / "d.jsonl").read_text() == ""


def test_demos_that_write_nothing_say_so_and_fail(mini_db_path: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from utp_env.cli import main

    code = main(["data", "demos", "--split", "test", "--db", str(mini_db_path), "--limit", "2", "--max-tokens", "50",
                 "--out", str(tmp_path / "d.jsonl")])
    captured = capsys.readouterr()
    assert code == 1 and "reward mean" not in captured.out and "nothing to average" in captured.out
    assert "error: no transcript written" in captured.err and "of 2 queries, 2 over --max-tokens 50" in captured.err


def test_the_train_split_transcripts_replay(mini_db_path: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import utp_env.train_split as train_split

    monkeypatch.setattr(train_split, "TRAIN_SIZE", 8)
    path = Path(shutil.copytree(mini_db_path, tmp_path / "db"))
    summary = write_demos(tmp_path / "train.jsonl", "train", db_path=path, progress=False)
    records = read_demos(tmp_path / "train.jsonl")
    assert summary.written == len(records) == 8 and {r["split"] for r in records} == {"train"}
    _check_replays(records, path)


def test_cli_writes_both_formats_and_a_datasets_dataset(mini_db_path: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demos.jsonl"
    assert main(["data", "demos", "--split", "validation", "--db", str(mini_db_path), "--out", str(out),
                 "--limit", "3"]) == 0
    assert "3 transcripts of 3 validation queries" in capsys.readouterr().out
    closed = tmp_path / "closed.jsonl"
    assert main(["data", "demos", "--split", "validation", "--db", str(mini_db_path), "--out", str(closed),
                 "--limit", "2", "--closed-loop", "--seed", "3"]) == 0
    assert "2 closed-loop transcripts of 2 validation queries" in capsys.readouterr().out
    assert {(r["env"], r["seed"]) for r in read_demos(closed)} == {("utp_env/UTP-Replan-v0", 3)}
    records = read_demos(out)
    assert len(records) == 3 and {"reward", "report", "query_id", "env_config"} <= set(records[0])
    openai = tmp_path / "openai.jsonl"
    assert main(["data", "demos", "--split", "validation", "--db", str(mini_db_path), "--out", str(openai),
                 "--limit", "3", "--format", "openai"]) == 0
    lines = [json.loads(line) for line in openai.read_text().splitlines()]
    assert [set(line) for line in lines] == [{"messages", "tools"}] * 3
    assert [line["messages"] for line in lines] == [r["messages"] for r in records]
    pytest.importorskip("datasets")
    from utp_env.rl.demos import chat_messages, demo_dataset

    data = demo_dataset(out)
    assert data.num_rows == 3 and data[0]["query_id"] == records[0]["query_id"]
    assert len(json.loads(data[0]["tools"])) == len(records[0]["tools"])
    restored = chat_messages(data[0]["messages"])
    assert restored[2]["tool_calls"][0]["function"]["arguments"] == json.loads(
        records[0]["messages"][2]["tool_calls"][0]["function"]["arguments"])


@pytest.mark.parametrize(("argv", "message"), [
    (["--limit", "0"], "must be a positive integer"),
    (["--max-tokens", "x"], "must be a positive integer"),
    (["--split", "training"], "invalid choice"),
    (["--db", "/nonexistent/db"], "is not a database directory"),
])
def test_cli_refuses_bad_options(argv: list[str], message: str, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(["data", "demos", "--out", str(tmp_path / "d.jsonl"), *argv])
    except SystemExit as exc:
        code = int(exc.code or 0)
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2 and message in last


def test_read_demos_names_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"messages": []}\n[1, 2]\n')
    with pytest.raises(ValueError, match=r"d.jsonl line 2: a JSON object"):
        read_demos(path)


@pytest.mark.slow
def test_every_transcript_of_the_mini_validation_split_replays(mini_full_set_path: Path) -> None:
    """The 1,000-query mini set's validation split (about 190 transcripts), every one replayed."""
    path = mini_full_set_path
    records = list(demonstrations("validation", db_path=path))
    assert len(records) > 150
    _check_replays(records, path)


def _tool_names(record: dict) -> list[str]:
    return [m["tool_calls"][0]["function"]["name"] for m in record["messages"] if m["role"] == "assistant"]


def _after_submission(record: dict) -> list[str]:
    names = _tool_names(record)
    return names[names.index("submit_plan") + 1:]


def test_closed_loop_transcripts_record_the_repairs_and_replay(mini_db_path: Path) -> None:
    """In UTP-Replan-v0 the transcript goes on after the submission: each disruption report is answered
    by the reference planner's repairs (tool calls like the lookups), then `continue_trip`, until the
    trip ends; a fresh closed-loop env answers every call alike and gives the same realised reward."""
    from utp_env.env import REPLAN_ENV_ID
    from utp_env.env.replan import UTPReplanEnv

    # The first reality (episode seed) in which the reference planner repairs some trip: most
    # disruptions are absorbed by the plan's slack and need only `continue_trip`.
    for seed in range(8):
        records = list(demonstrations("test", db_path=mini_db_path, closed_loop=True, seed=seed))
        if any(any(n != "continue_trip" for n in _after_submission(r)) for r in records):
            break
    assert len(records) == len(dataset_of(Database.open(mini_db_path)).split("test"))
    env = UTPReplanEnv(db_path=mini_db_path, config=dict(records[0]["env_config"]))
    repaired = 0
    for record in records:
        assert record["env"] == REPLAN_ENV_ID and record["termination_reason"] == "submitted"
        assert record["seed"] == seed
        after = _after_submission(record)
        assert "submit_plan" not in after and (not after or after[-1] == "continue_trip")
        reports = sum("DISRUPTION" in m["content"] for m in record["messages"] if m["role"] == "tool")
        assert reports == record["replan"]["disruptions"] == after.count("continue_trip")
        repaired += any(name != "continue_trip" for name in after)
        assert "The trip is over" in record["messages"][-1]["content"]
        result = replay(record, env=env)
        assert result.observations_match, (record["query_id"], result.first_mismatch)
        assert result.reward == record["reward"] > 0
    assert repaired > 0  # the repairs are in the transcripts, not only the continues


def test_a_closed_loop_record_refuses_the_planning_env(mini_db_path: Path) -> None:
    (record,) = demonstrations("validation", db_path=mini_db_path, closed_loop=True, limit=1)
    with pytest.raises(ValueError, match="UTP-Replan-v0; give an env of that id"):
        replay(record, env=UTPEnv(db_path=mini_db_path, config=dict(record["env_config"])))
    with pytest.raises(ValueError, match="neither utp_env/UTP-v0 nor"):
        replay({**record, "env": "utp_env/Other-v0"}, db_path=mini_db_path)


# ---------------------------------------------------------------- where the file goes, and what a kill leaves


def test_out_must_be_a_file_and_may_have_no_suffix(mini_db_path: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """--out a folder, or a device-like file (a pipe here; /dev/full is one too), is refused up front with
    what to do; a name without a suffix is written (the temporary file once took its place and was lost)."""
    import os

    folder, pipe = tmp_path / "folder", tmp_path / "pipe"
    folder.mkdir()
    os.mkfifo(pipe)
    for out, wrong in ((folder, "is a folder; name the JSONL file to write in it"),
                       (pipe, "is not a regular file (a device, pipe or socket)")):
        assert main(["data", "demos", "--split", "validation", "--db", str(mini_db_path), "--limit", "1",
                     "--out", str(out)]) == 2
        assert capsys.readouterr().err.strip().splitlines()[-1].startswith(
            f"utp-env data demos: error: --out {str(out)!r} {wrong}")
    assert pipe.exists() and not pipe.is_file()  # untouched
    bare = tmp_path / "demos"
    assert main(["data", "demos", "--split", "validation", "--db", str(mini_db_path), "--limit", "1",
                 "--out", str(bare)]) == 0
    assert len(read_demos(bare)) == 1 and sorted(p.name for p in tmp_path.iterdir()) == ["demos", "folder", "pipe"]


def test_a_killed_write_leaves_nothing_once_the_command_runs_again(mini_db_path: Path, tmp_path: Path) -> None:
    """SIGTERM mid-write: the temporary file is removed on the way out. SIGKILL (nothing runs): the next
    run removes what the killed one left, and writes the file."""
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "demos.jsonl"
    argv = [sys.executable, "-m", "utp_env", "data", "demos", "--split", "validation", "--db", str(mini_db_path),
            "--out", str(out)]

    def temporaries() -> list[str]:
        return sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".demos.jsonl."))

    for sig in (signal.SIGTERM, signal.SIGKILL):
        proc = subprocess.Popen(argv, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        while not temporaries() and proc.poll() is None:
            time.sleep(0.01)
        assert temporaries() and proc.poll() is None, "the write ended before it could be interrupted"
        proc.send_signal(sig)
        proc.wait(timeout=120)
        if sig == signal.SIGTERM:
            assert proc.returncode == 128 + signal.SIGTERM and temporaries() == [] and not out.exists()
    assert temporaries() and not out.exists()  # what SIGKILL left
    assert main(["data", "demos", "--split", "validation", "--db", str(mini_db_path), "--limit", "1",
                 "--out", str(out)]) == 0
    assert temporaries() == [] and len(read_demos(out)) == 1
