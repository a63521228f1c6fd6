"""utp-env as an Inspect AI task: `inspect eval utp_env/inspect.py@utp_bench` (docs/SERVE.md "Inspect AI").

Inspect loads this file by its path (or as `utp_env/utp_bench` through the package's `inspect_ai`
entry point). The task:

- **samples**: the queries of a split (`split`, `limit`), in query-id order; the input is the env's
  task text for the query and `seed`, the metadata the query id, seed, horizon and risk profile;
- **setup** (`utp_setup`, run even when the solver is replaced): each sample gets its own episode of
  `UTP-v0` (or `UTP-Replan-v0`) over the database loaded once, and the env's tools in `state.tools`
  (the in-process schemas; a call is one `env.step`, so answers and errors are the env's);
- **solver**: Inspect's ReAct agent over those tools (`utp_react`: no extra submit tool, the env's
  `submit`/`submit_plan` end the episode, the loop stops when the episode has ended or the model
  stops calling tools); `--solver` or `utp_bench(solver=...)` puts another one in its place, which
  finds the tools in `state.tools`;
- **scorer** (`utp_scorer`): ends the episode if the solver did not (a last reply holding a plan is
  submitted with `submit_plan`, else the plan so far is scored as at the step limit, as RL's
  `get_reward` does), and scores the env's reward; the sample's `EvaluationReport`, query and ending
  go in the score's metadata, and the task's metrics are the rows of the paper's Table 3 (the 'all'
  column, computed by `utp_env.evaluation.aggregate.summarize_group` over every sample: the same
  numbers `utp-env run` prints) plus the mean reward.

One epoch: Table 3's rates are over queries (several epochs would need a reducer that keeps the
reports; not provided).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.agent import AgentState, as_solver, react
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Metric, SampleScore, Score, Target, mean, metric, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolDef, ToolParams

from utp_env.env.config import open_database, split_pool
from utp_env.evaluation.aggregate import QUALITATIVE, QUALITATIVE_LABELS, RISK_PROFILES, UNCERTAINTY, summarize_group
from utp_env.evaluation.report import EvaluationReport
from utp_env.query import Query
from utp_env.serve.session import EpisodeSession, SessionFactory, json_safe

STOPPED_MESSAGE = "the solver stopped without submit; the plan built so far is scored as at the step limit"

_EPISODES: dict[str, EpisodeSession] = {}
"""The live episode of each running sample, by `TaskState.uuid` (an env is no JSON: not in the store)."""

RATE_ROWS = ("delivery_rate", "commonsense_micro", "commonsense_macro", "hard_micro", "hard_macro", "final_pass_rate")
"""Table 3's pass-rate rows (`GroupSummary` fields, in [0, 1])."""


def table3_keys() -> list[str]:
    """The task's Table 3 metric names: the pass rates, the TripCraft metrics, BAS/CATS/TDAS per risk profile."""
    return [*RATE_ROWS, *(QUALITATIVE_LABELS[m] for m in QUALITATIVE),
            *(f"{m.upper()}_{risk}" for m in UNCERTAINTY for risk in RISK_PROFILES)]


def table3_values(scores: Sequence[SampleScore]) -> dict[str, float]:
    """Table 3's 'all' column over the scored samples (a row with no value, e.g. CATS of a profile no
    sample has: NaN)."""
    results: list[tuple[Query, EvaluationReport | None]] = []
    for s in scores:
        meta = s.score.metadata or {}
        report = meta.get("report")
        results.append((Query.model_validate(meta["query"]),
                        None if report is None else EvaluationReport.model_validate(report)))
    g = summarize_group(results)
    out: dict[str, float] = {}
    for key in RATE_ROWS:
        value = getattr(g, key)
        out[key] = float("nan") if value is None else float(value)
    for m in QUALITATIVE:
        value = g.qualitative[m].mean
        out[QUALITATIVE_LABELS[m]] = float("nan") if value is None else float(value)
    for m in UNCERTAINTY:
        for risk in RISK_PROFILES:
            value = g.uncertainty[m][risk].mean
            out[f"{m.upper()}_{risk}"] = float("nan") if value is None else float(value)
    return out


def _table3_metric(key: str) -> Metric:
    @metric(name=f"utp/{key}")
    def table3_row() -> Metric:
        def compute(scores: list[SampleScore]) -> float:
            return table3_values(scores)[key]

        return compute

    return table3_row()


def tool_defs(session: EpisodeSession) -> list[Tool]:
    """The session's env tools as Inspect tools: the in-process schemas, each call one env step."""
    tools: list[Tool] = []
    for schema in session.env.openai_tools():
        fn = copy.deepcopy(schema["function"])

        def bind(name: str) -> Callable[..., Any]:
            async def execute(**kwargs: Any) -> str:
                return session.call(name, kwargs).text

            return execute

        tools.append(ToolDef(bind(fn["name"]), name=fn["name"], description=fn["description"],
                             parameters=ToolParams.model_validate(fn["parameters"])).as_tool())
    return tools


@solver
def utp_setup(factory: SessionFactory) -> Solver:
    """Start the sample's episode (its query and seed) and put the env's tools in `state.tools`."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        session = factory.new()
        session.start(seed=int(state.metadata["seed"]), query_id=str(state.metadata["query_id"]))
        _EPISODES[state.uuid] = session
        state.tools = tool_defs(session)
        return state

    return solve


@solver
def utp_react() -> Solver:
    """Inspect's ReAct agent over `state.tools`, stopping once the episode has ended (no submit tool of
    its own: the env's `submit` and `submit_plan` end the episode)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        session = _EPISODES.get(state.uuid)

        async def go_on(agent_state: AgentState) -> bool:  # on tool calls, until the episode has ended
            ep = None if session is None else session.env.episode
            return bool(agent_state.output.message.tool_calls) and not (ep is None or ep.done)

        agent = react(prompt="Plan the trip with the tools; finish with submit (or submit_plan).",
                      tools=list(state.tools), submit=False, on_continue=go_on)
        result: TaskState = await as_solver(agent)(state, generate)
        return result

    return solve


@scorer(metrics=[{"reward": [mean(), stderr()]}, *(_table3_metric(k) for k in table3_keys())])
def utp_scorer() -> Any:
    """The env's evaluation of the sample's episode: the reward as the value, the report in the metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        session = _EPISODES.pop(state.uuid, None)
        if session is None:
            raise RuntimeError("utp_scorer: the sample has no episode; keep the task's setup (utp_setup)")
        try:
            answer = session.finish(state.output.completion if state.output else "", STOPPED_MESSAGE)
            info = answer.info
            return Score(value={"reward": answer.reward}, answer=str(info.get("termination_reason")),
                         explanation=answer.text,
                         metadata=json_safe({"query": session.env.episode.query.model_dump(mode="json")
                                             if session.env.episode else None,
                                             "report": info.get("report"), "reward": answer.reward,
                                             "termination_reason": info.get("termination_reason"),
                                             "final_pass": info.get("final_pass"), "metrics": info.get("metrics"),
                                             "episode_id": info.get("episode_id"), "steps": info.get("steps"),
                                             "message": info.get("message")}))
        finally:
            session.close()

    return score


async def _cleanup(state: TaskState) -> None:
    session = _EPISODES.pop(state.uuid, None)  # a sample that failed before scoring
    if session is not None:
        session.close()


@task
def utp_bench(split: str = "validation", limit: int | None = None, profile: str = "full",
              db_path: str | None = None, env: str = "UTP-v0", seed: int = 0,
              solver: Solver | None = None) -> Task:
    """The benchmark as an Inspect task (module docstring). `-T split=test -T limit=50 -T profile=mini
    -T db_path=DIR -T env=UTP-Replan-v0 -T seed=0` on the command line."""
    if limit is not None and int(limit) < 1:
        raise ValueError(f"utp_bench: limit must be at least 1, not {limit}")
    factory = SessionFactory(env=env, db_path=None if db_path is None else Path(db_path), profile=profile)
    factory.preload()
    db = open_database(factory.env_kwargs["db_path"], profile)
    try:
        queries = split_pool(db, split)
    except ValueError as exc:
        raise ValueError(f"utp_bench: split: {exc}") from None
    queries = sorted(queries, key=lambda q: q.query_id)[: None if limit is None else int(limit)]
    session = factory.new()
    samples = []
    for q in queries:
        text, _ = session.start(seed=int(seed), query_id=q.query_id)
        samples.append(Sample(input=text, id=q.query_id, metadata={
            "query_id": q.query_id, "seed": int(seed), "days": q.days, "risk_profile": q.risk_profile}))
    session.close()
    return Task(dataset=MemoryDataset(samples, name=f"utp-{split}"), setup=utp_setup(factory),
                solver=solver or utp_react(), scorer=utp_scorer(), cleanup=_cleanup,
                metadata={"env": factory.env_id, "split": split, "db_hash": db.content_hash})
