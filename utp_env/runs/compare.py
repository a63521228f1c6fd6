"""`utp-env compare A B`: is B better than A, row by row of Table 3, beyond the noise?

Two runs made on the same episodes (database, query set, trials, seed, env configuration) are
paired by query and trial. For every row of Table 3's 'all' column, the episode reward and (for two
closed-loop runs) the realised outcome, `compare_records` gives:

- each run's value and B - A;
- the 95% interval of B - A: the paired percentile bootstrap over queries (each resample draws
  queries with replacement and takes both runs' plans of the drawn queries, so what the two runs
  share cancels; `RESAMPLES` resamples);
- the p-value of the sign-flip permutation test over queries (under "no difference", swapping
  which run made a query's plans changes nothing): exact over all 2^n swaps when there are at most
  `PERMUTATIONS` of them (p = swaps at least as extreme / 2^n, the identity among them), else
  `PERMUTATIONS` random swaps (p = (1 + swaps at least as extreme) / (1 + swaps));
- the Holm-adjusted p-value across the rows compared (family-wise error 5%), and whether it is
  below 0.05.

Every row is a ratio of sums over plans (`utp_env.evaluation.aggregate.plan_cells`): the same
definition as Table 3, so a row's values are exactly the two runs' Table 3 cells. Both generators
are seeded (`utp_env.tools.seeding.stable_int`): the same runs give the same bytes.

`check_comparable` refuses, in one line naming the difference, runs made on other databases, other
query sets (split, horizons, limit, trials, or the episodes recorded), or other env configurations
(env, seed, rollouts, closed-loop settings, and the hashes of configs/env.yaml, uncertainty.yaml and
replan.yaml that `utp-env run` records as `env_config`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from utp_env.runs.records import episode_key
from utp_env.runs.rows import episode_cells, row_specs
from utp_env.tools.seeding import stable_int

if TYPE_CHECKING:
    import numpy as np

    from utp_env.query import Query

RESAMPLES = 2000
PERMUTATIONS = 10000
ALPHA = 0.05
SEED = 0
CHUNK = 250
METHOD = (f"paired by query and trial; 95% interval of B - A: paired percentile bootstrap over queries ({RESAMPLES:,} "
          f"resamples); p: sign-flip permutation test over queries (exact when 2^n <= {PERMUTATIONS:,}, i.e. n <= "
          f"{PERMUTATIONS.bit_length() - 1}; else {PERMUTATIONS:,} random swaps), Holm-adjusted "
          f"across the rows; * = adjusted p < {ALPHA}; seed {SEED}")


class ComparisonError(ValueError):
    """Two runs cannot be compared; the message says why in one line and what to run instead."""


@dataclass(frozen=True)
class Row:
    """One compared row: the two runs' values, B - A with its interval, the p-values."""

    label: str
    key: str
    kind: str  # 'pct' (shown x100), 'num'
    queries: int
    n_a: int
    n_b: int
    value_a: float | None
    value_b: float | None
    diff: float | None
    ci_low: float | None
    ci_high: float | None
    p: float | None
    p_holm: float | None = None

    @property
    def significant(self) -> bool:
        return self.p_holm is not None and self.p_holm < ALPHA

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "key": self.key, "scale": 100 if self.kind == "pct" else 1,
                "queries": self.queries, "n_a": self.n_a, "n_b": self.n_b, "a": self.value_a, "b": self.value_b,
                "diff": self.diff, "ci95": None if self.ci_low is None else [self.ci_low, self.ci_high],
                "p": self.p, "p_holm": self.p_holm, "significant": self.significant}


# ---------------------------------------------------------------- refusals


def _settings(config: Mapping[str, Any]) -> dict[str, Any]:
    given = config.get("config")
    return given if isinstance(given, dict) else {}


QUERY_SET_FIELDS = ("split", "horizons", "limit", "trials")
ENV_FIELDS = ("env", "seed", "rollouts", "replan")


def check_comparable(config_a: Mapping[str, Any], config_b: Mapping[str, Any], names: tuple[str, str]) -> None:
    """Refuse (ComparisonError, one line) two runs' config.json that differ in database, query set or
    env configuration (module docstring)."""
    a, b = _settings(config_a), _settings(config_b)
    if config_a.get("db_hash") != config_b.get("db_hash"):
        raise ComparisonError(
            f"the runs were made on different databases ({names[0]}: {str(config_a.get('db_hash'))[:12]}, "
            f"{names[1]}: {str(config_b.get('db_hash'))[:12]}); compare runs of the same --profile/--world or --db")
    from utp_env.runs.config import RunConfig

    defaults = RunConfig().model_dump(mode="json")
    for group, fields, fix in (("query sets", QUERY_SET_FIELDS, "the same --split, --horizons, --limit and --trials"),
                               ("env configurations", ENV_FIELDS, "the same --env, --seed, --rollouts and "
                                                                 "--replan-set")):
        for name in fields:
            x, y = a.get(name, defaults.get(name)), b.get(name, defaults.get(name))
            if x != y:
                raise ComparisonError(f"the runs have different {group}: {name} is {json.dumps(x)} in {names[0]} "
                                      f"and {json.dumps(y)} in {names[1]}; compare runs made with {fix}")
    env_a, env_b = config_a.get("env_config"), config_b.get("env_config")
    if isinstance(env_a, dict) and isinstance(env_b, dict):
        for part in sorted(set(env_a) | set(env_b)):
            if env_a.get(part) != env_b.get(part):
                raise ComparisonError(
                    f"the runs have different env configurations: configs/{part}.yaml differs ({names[0]}: "
                    f"{env_a.get(part)}, {names[1]}: {env_b.get(part)}); their rewards and metrics are not on one "
                    "scale: rerun one with the other's configuration")


def check_episodes(left: Mapping[str, Any], right: Mapping[str, Any], names: tuple[str, str]) -> list[str]:
    """The episode keys both runs hold, in order; a ComparisonError naming the first episode one run
    lacks (an unfinished run, or another query set), or one run with another seed."""
    only_a, only_b = sorted(set(left) - set(right)), sorted(set(right) - set(left))
    if only_a or only_b:
        side, key = (names[0], only_a[0]) if only_a else (names[1], only_b[0])
        raise ComparisonError(f"the runs hold different query sets: {len(only_a)} episode(s) only in {names[0]}, "
                              f"{len(only_b)} only in {names[1]} (e.g. {key} only in {side}); finish both runs "
                              "(rerun `utp-env run` on the folder) or compare runs of the same episodes")
    if not left:
        raise ComparisonError("the runs hold no episodes to compare")
    for key in sorted(left):
        if left[key].get("seed") != right[key].get("seed"):
            raise ComparisonError(f"the runs have different env configurations: episode {key} has seed "
                                  f"{left[key].get('seed')} in {names[0]} and {right[key].get('seed')} in {names[1]}; "
                                  "compare runs made with the same --seed")
    return sorted(left)


# ---------------------------------------------------------------- the rows


def _per_query(keys: list[str], records: Mapping[str, Mapping[str, Any]], queries: Mapping[str, Query],
               rows: list[str], replan: bool) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(numerators, denominators) of shape (queries x rows), summed over each query's trials, and
    the query ids in row order."""
    import numpy as np

    ids = sorted({records[k]["query_id"] for k in keys})
    at = {qid: i for i, qid in enumerate(ids)}
    index = {key: j for j, key in enumerate(rows)}
    num, den = np.zeros((len(ids), len(rows))), np.zeros((len(ids), len(rows)))
    for key in keys:
        record = records[key]
        i = at[record["query_id"]]
        for cell, (a, b) in episode_cells(record, queries[record["query_id"]], replan).items():
            j = index.get(cell)
            if j is not None:
                num[i, j] += a
                den[i, j] += b
    return num, den, ids


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    import numpy as np

    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _weights(n: int, total: int, seed: int) -> Iterator[np.ndarray]:
    from utp_env.evaluation.intervals import resample_weights

    yield from resample_weights(n, total, seed)


def _flips(n: int, total: int, seed: int) -> Iterator[np.ndarray]:
    """Random swaps of the two runs' plans, query by query: (chunk, n) matrices of 0 (kept) or 1."""
    import numpy as np

    rng = np.random.default_rng(seed)
    done = 0
    while done < total:
        size = min(CHUNK, total - done)
        yield rng.integers(0, 2, size=(size, n)).astype(np.float64)
        done += size


def _all_flips(n: int) -> Iterator[np.ndarray]:
    """Every one of the 2^n swaps of the two runs' plans, query by query, in (chunk, n) matrices of 0 or 1
    (the exact test, for few queries)."""
    import numpy as np

    for first in range(0, 2**n, CHUNK):
        codes = np.arange(first, min(first + CHUNK, 2**n))
        yield ((codes[:, None] >> np.arange(n)) & 1).astype(np.float64)


def holm(pvalues: list[float]) -> list[float]:
    """Holm's step-down adjustment: the i-th smallest p times (m - i), kept monotone, at most 1."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    adjusted = [0.0] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(pvalues) - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def compare_arrays(num_a: np.ndarray, den_a: np.ndarray, num_b: np.ndarray, den_b: np.ndarray,
                   seed: int = SEED) -> tuple[list[float | None], ...]:
    """Per row (column of the arrays, queries x rows): A, B, B - A, its bootstrap interval and its
    permutation p-value (the statistics of the module docstring). A row where a run has no value has
    no difference; a row where the two runs agree on every query has B - A = 0 and is not tested (no
    swap can change it: its interval and p are None, and Holm's family leaves it out)."""
    import numpy as np

    from utp_env.evaluation.intervals import percentile_interval

    n, rows = num_a.shape
    a, b = _ratio(num_a.sum(0), den_a.sum(0)), _ratio(num_b.sum(0), den_b.sum(0))
    same = ((num_a == num_b) & (den_a == den_b)).all(axis=0)  # no query differs: nothing to test
    diff = b - a
    boot = []
    for w in _weights(n, RESAMPLES, stable_int("compare-bootstrap", seed)):
        boot.append(_ratio(w @ num_b, w @ den_b) - _ratio(w @ num_a, w @ den_a))
    low, high = percentile_interval(np.vstack(boot))
    extreme = np.zeros(rows)
    tol = 1e-12 * np.maximum(1.0, np.abs(diff))
    exact = 2**n <= PERMUTATIONS  # few queries: every swap, not a sample of them
    swaps = _all_flips(n) if exact else _flips(n, PERMUTATIONS, stable_int("compare-permutation", seed))
    for s in swaps:
        # swapped queries trade their plans: A gets B's sums and B gets A's
        sa_num, sa_den = num_a.sum(0) + s @ (num_b - num_a), den_a.sum(0) + s @ (den_b - den_a)
        sb_num, sb_den = num_b.sum(0) - s @ (num_b - num_a), den_b.sum(0) - s @ (den_b - den_a)
        stat = _ratio(sb_num, sb_den) - _ratio(sa_num, sa_den)
        with np.errstate(invalid="ignore"):
            extreme += (np.abs(np.nan_to_num(stat, nan=0.0)) >= np.abs(diff) - tol).sum(axis=0)
    out: tuple[list[float | None], ...] = ([], [], [], [], [], [])
    for j in range(rows):
        if np.isnan(diff[j]) or same[j]:
            values: list[float | None] = [None if np.isnan(a[j]) else float(a[j]),
                                          None if np.isnan(b[j]) else float(b[j]),
                                          None if np.isnan(diff[j]) else 0.0, None, None, None]
        else:
            values = [float(a[j]), float(b[j]), float(diff[j]),
                      None if np.isnan(low[j]) else float(low[j]), None if np.isnan(high[j]) else float(high[j]),
                      float(extreme[j] / 2**n if exact else (1 + extreme[j]) / (1 + PERMUTATIONS))]
        for column, value in zip(out, values, strict=True):
            column.append(value)
    return out


def compare_records(left: Mapping[str, Mapping[str, Any]], right: Mapping[str, Mapping[str, Any]],
                    queries: Mapping[str, Query], names: tuple[str, str] = ("A", "B"), replan: bool = False,
                    seed: int = SEED) -> list[Row]:
    """The compared rows of two runs' records (by episode key) on the same queries (module docstring);
    Holm's adjustment is over the rows that have a p-value."""
    keys = check_episodes(left, right, names)
    specs = row_specs(replan)
    row_keys = [key for _, key, _ in specs]
    num_a, den_a, _ = _per_query(keys, left, queries, row_keys, replan)
    num_b, den_b, _ = _per_query(keys, right, queries, row_keys, replan)
    value_a, value_b, diff, low, high, p = compare_arrays(num_a, den_a, num_b, den_b, seed)
    tested = [i for i, value in enumerate(p) if value is not None]
    adjusted = dict(zip(tested, holm([p[i] for i in tested]), strict=True))  # type: ignore[misc]
    rows = []
    for j, (label, key, kind) in enumerate(specs):
        rows.append(Row(label, key, kind, queries=int(((den_a[:, j] > 0) & (den_b[:, j] > 0)).sum()),
                        n_a=_plans(left, keys, queries, key, replan), n_b=_plans(right, keys, queries, key, replan),
                        value_a=value_a[j], value_b=value_b[j], diff=diff[j], ci_low=low[j], ci_high=high[j],
                        p=p[j], p_holm=adjusted.get(j)))
    return rows


def _plans(records: Mapping[str, Mapping[str, Any]], keys: Iterable[str], queries: Mapping[str, Query], cell: str,
           replan: bool) -> int:
    return sum(episode_cells(records[k], queries[records[k]["query_id"]], replan).get(cell, (0.0, 0.0))[1] > 0
               for k in keys)


# ---------------------------------------------------------------- run folders and output


@dataclass(frozen=True)
class Comparison:
    """What `utp-env compare` prints: the two runs, how many episodes and queries, the rows."""

    names: tuple[str, str]
    folders: tuple[str, str]
    episodes: int
    queries: int
    rows: list[Row]

    def to_json(self) -> dict[str, Any]:
        return {"a": {"name": self.names[0], "run": self.folders[0]}, "b": {"name": self.names[1],
                                                                          "run": self.folders[1]},
                "episodes": self.episodes, "queries": self.queries, "method": METHOD,
                "rows": [row.to_json() for row in self.rows]}

    def to_markdown(self) -> str:
        head = (f"B - A over {self.episodes} episodes ({self.queries} queries) of A = {self.names[0]} and B = "
                f"{self.names[1]}: {METHOD}.")
        lines = [head, "", "| Row | A | B | B - A | 95% CI | p | p (Holm) |", "|---|---:|---:|---:|---|---:|---:|"]
        for row in self.rows:
            lines.append("| " + " | ".join(_cells(row)) + " |")
        significant = [row.label for row in self.rows if row.significant]
        tested = sum(r.p is not None for r in self.rows)
        lines += ["", (f"{len(significant)} of the {tested} rows tested differ beyond the noise (Holm-adjusted p < "
                       f"{ALPHA}): " + ", ".join(significant)) if significant else
                  f"No row differs beyond the noise ({tested} rows tested, every Holm-adjusted p >= {ALPHA})."]
        return "\n".join(lines)


def _cells(row: Row) -> list[str]:
    scale, digits = (100.0, 2) if row.kind == "pct" else (1.0, 3)

    def fmt(value: float | None, sign: bool = False) -> str:
        return "n/a" if value is None else f"{scale * value:{'+' if sign else ''}.{digits}f}"

    if row.diff == 0.0 and row.p is None:  # the same on every query
        return [row.label.replace("|", "\\|"), f"{fmt(row.value_a)} (n={row.n_a})", f"{fmt(row.value_b)} (n={row.n_b})",
                fmt(row.diff, sign=True), "identical on every query", "-", "-"]
    ci = "-" if row.ci_low is None or row.ci_high is None else (
        f"[{scale * row.ci_low:+.{digits}f}, {scale * row.ci_high:+.{digits}f}]")
    star = " *" if row.significant else ""
    return [row.label.replace("|", "\\|"), f"{fmt(row.value_a)} (n={row.n_a})", f"{fmt(row.value_b)} (n={row.n_b})",
            fmt(row.diff, sign=True) + star, ci, "-" if row.p is None else f"{row.p:.4f}",
            "-" if row.p_holm is None else f"{row.p_holm:.4f}"]


def compare_runs(left_dir: str | Path, right_dir: str | Path) -> Comparison:
    """Read two finished run folders, refuse them when they are not comparable, compare them."""
    from utp_env.runs.records import read_checked_records, read_run_config, run_dataset
    from utp_env.runs.summary import check_run_folders, load_summary, run_names

    folders = (str(left_dir), str(right_dir))
    try:
        check_run_folders(list(folders))
    except ValueError as exc:  # (a missing folder stays a FileNotFoundError)
        raise ComparisonError(str(exc)) from None
    summaries = [load_summary(folder) for folder in folders]
    names = run_names(summaries[0], summaries[1], *folders)
    configs = [read_run_config(folder) for folder in folders]
    check_comparable(configs[0], configs[1], names)
    dataset = run_dataset(left_dir, configs[0], "compare")
    queries = {q.query_id: q for q in dataset.queries}
    left, right = ({episode_key(r["query_id"], r["trial"]): r for r in read_checked_records(folder, "compare",
                                                                                            queries)[0]}
                   for folder in folders)
    replan = summaries[0].env == summaries[1].env == "replan"
    rows = compare_records(left, right, queries, names, replan)
    return Comparison(names, folders, episodes=len(left), queries=len({r["query_id"] for r in left.values()}),
                      rows=rows)
