"""The run store survives kills (torn lines), seeds are stable, pass^k follows its definition."""

import json
import math
import subprocess
import sys

from run_records import minimal_record

from utp_env.runs.episode import episode_seed
from utp_env.runs.store import ResultsStore
from utp_env.runs.summary import pass_hat_k


def test_torn_last_line_is_dropped_and_redone(tmp_path) -> None:
    store = ResultsStore(tmp_path)
    store.append(minimal_record("q1", x=1))
    store.append(minimal_record("q2", x=2))
    with (tmp_path / "results.jsonl").open("a") as fh:
        fh.write('{"query_id": "q3", "trial": 0, "x"')  # killed mid-write
    again = ResultsStore(tmp_path)
    assert again.torn_lines == 1
    assert again.done("q1", 0) and again.done("q2", 0) and not again.done("q3", 0)
    again.append(minimal_record("q3", x=3))
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert [json.loads(line)["query_id"] for line in lines] == ["q1", "q2", "q3"]


def test_episode_seed_is_stable_across_processes() -> None:
    here = episode_seed(7, "utp-q-0001", 2)
    code = "from utp_env.runs.episode import episode_seed; print(episode_seed(7, 'utp-q-0001', 2))"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": "123"})
    assert int(other.stdout) == here
    assert episode_seed(7, "utp-q-0001", 3) != here
    assert episode_seed(8, "utp-q-0001", 2) != here


def test_pass_hat_k_by_hand() -> None:
    # query A: 3 trials, 2 passes; query B: 3 trials, 3 passes.
    counts = [(3, 2), (3, 3)]
    assert pass_hat_k(counts, 1) == (2 / 3 + 1) / 2
    assert math.isclose(pass_hat_k(counts, 2), (1 / 3 + 1) / 2)  # C(2,2)/C(3,2) = 1/3
    assert pass_hat_k(counts, 3) == (0 + 1) / 2
    assert pass_hat_k(counts, 4) is None
