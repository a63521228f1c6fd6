"""utp-env as an Inspect AI task: `inspect eval utp_env/utp_bench` (docs/SERVE.md "Inspect AI").

Inspect finds the task through the package's `inspect_ai` entry point (`utp_env/utp_bench`, from any
folder), or loads this file by its path (`inspect eval utp_env/inspect_task.py@utp_bench`, from the
repository's root). The task:

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
  column, computed by `utp_env.evaluation.aggregate.SummaryAccumulator` over every sample, an empty
  plan counted as not delivered: the numbers `utp-env run` prints), each with its 95% interval and n
  (`<row>_ci_low`, `<row>_ci_high`, `<row>_n`), plus the mean reward.

Also here: the task's arguments are checked (`check_task_args`: an unknown one or a `limit=1.9` is
refused in one line); `--model utp-scripted/reference` (`ScriptedInspectModel`) runs the task with no
network and no key; and `UTPExitStatus` makes `inspect eval` exit 1 when no sample of utp_bench
completed.

One epoch: Table 3's rates are over queries (several epochs would need a reducer that keeps the
reports; not provided).
"""

from __future__ import annotations

import atexit
import copy
import importlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.agent import AgentState, as_solver, react
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.hooks import Hooks, RunEnd, hooks
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.scorer import Metric, SampleScore, Score, Target, Value, mean, metric, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolCall, ToolChoice, ToolDef, ToolInfo, ToolParams

from utp_env.env.config import open_database, split_pool
from utp_env.evaluation.aggregate import (
    QUALITATIVE,
    QUALITATIVE_LABELS,
    RISK_PROFILES,
    UNCERTAINTY,
    SummaryAccumulator,
    counted_report,
)
from utp_env.evaluation.report import EvaluationReport
from utp_env.query import Query
from utp_env.scripted import ENDING, SCRIPTS, count_tokens, reference_plan_for, scripted_reply
from utp_env.serve.session import EpisodeSession, SessionFactory, json_safe

STOPPED_MESSAGE = "the solver stopped without submit; the plan built so far is scored as at the step limit"

_EPISODES: dict[str, EpisodeSession] = {} if __name__ == "utp_env.inspect_task" else importlib.import_module(
    "utp_env.inspect_task")._EPISODES
"""The live episode of each running sample, by `TaskState.uuid` (an env is no JSON: not in the store). One
dict per process: this file loaded by its path (`inspect eval utp_env/inspect_task.py@utp_bench`) shares the
package module's, which the scripted model (registered from the package) reads."""

RATE_ROWS = ("delivery_rate", "commonsense_micro", "commonsense_macro", "hard_micro", "hard_macro", "final_pass_rate")
"""Table 3's pass-rate rows (`GroupSummary` fields, in [0, 1])."""


def table3_keys() -> list[str]:
    """The task's Table 3 metric names: the pass rates, the TripCraft metrics, BAS/CATS/TDAS per risk profile
    (each also with `_ci_low`, `_ci_high` and `_n`)."""
    return list(table3_cells())


def table3_cells() -> dict[str, str]:
    """The task's Table 3 metric names and the cell of `utp_env.evaluation.aggregate.CELLS` each reports."""
    out = {key: key for key in RATE_ROWS}
    out.update({QUALITATIVE_LABELS[m]: f"qualitative.{m}" for m in QUALITATIVE})
    out.update({f"{m.upper()}_{risk}": f"uncertainty.{m}.{risk}" for m in UNCERTAINTY for risk in RISK_PROFILES})
    return out


_LAST: list[tuple[tuple[int, ...], dict[str, float]]] = []
"""The last computation of `table3_values` (every row metric asks for the same samples' table)."""


def table3_values(scores: Sequence[SampleScore]) -> dict[str, float]:
    """Table 3's 'all' column over the scored samples, as `utp-env run` computes it (an empty or missing
    plan is not delivered: `aggregate.counted_report`): for each row its value, `<row>_ci_low`,
    `<row>_ci_high` (the 95% interval, `utp_env.evaluation.intervals`) and `<row>_n` (plans behind it).
    A row with no value (CATS of a profile no sample has) or no interval: NaN."""
    key = tuple(id(s.score) for s in scores)
    if _LAST and _LAST[0][0] == key:
        return _LAST[0][1]
    accumulator = SummaryAccumulator()
    for s in scores:
        meta = s.score.metadata or {}
        report = meta.get("report")
        counted = counted_report(meta.get("plan"), None if report is None else EvaluationReport.model_validate(report))
        accumulator.add(Query.model_validate(meta["query"]), counted)
    summary = accumulator.summary()
    out: dict[str, float] = {}
    nan = float("nan")
    for name, cell in table3_cells().items():
        value = summary.value("all", cell)
        interval = summary.intervals.get("all", {}).get(cell)
        out[name] = nan if value is None else float(value)
        out[f"{name}_ci_low"] = nan if interval is None or interval.low is None else float(interval.low)
        out[f"{name}_ci_high"] = nan if interval is None or interval.high is None else float(interval.high)
        out[f"{name}_n"] = 0.0 if interval is None else float(interval.n)
    _LAST[:] = [(key, out)]
    return out


def _table3_metric(name: str) -> Metric:
    @metric(name=f"utp/{name}")
    def table3_row() -> Metric:
        def compute(scores: list[SampleScore]) -> Value:
            values = table3_values(scores)
            return {k: values[k] for k in (name, f"{name}_ci_low", f"{name}_ci_high", f"{name}_n")}

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
                                             "report": info.get("report"), "plan": info.get("plan"),
                                             "reward": answer.reward,
                                             "termination_reason": info.get("termination_reason"),
                                             "final_pass": info.get("final_pass"), "metrics": info.get("metrics"),
                                             "episode_id": info.get("episode_id"), "steps": info.get("steps"),
                                             "message": info.get("message")}))
        finally:
            session.close()

    return score


class ScriptedInspectModel(ModelAPI):
    """`--model utp-scripted/reference`: the offline scripted model (`utp_env.scripted.scripted_reply`)
    as an Inspect model, to try the task end to end with no network and no key. It plays the reference
    plan of the sample's query from the database the task opened, and counts tokens without a tokenizer
    download (`utp_env.scripted.count_tokens`), so Inspect's token accounting works offline."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), **model_args: Any) -> None:  # noqa: B008 (Inspect's form)
        super().__init__(model_name, base_url, api_key, [], config)
        if model_name not in SCRIPTS:
            raise ValueError(f"utp-scripted/{model_name}: unknown script; use "
                             + ", ".join(f"utp-scripted/{s}" for s in SCRIPTS))

    async def count_text_tokens(self, text: str) -> int:
        return count_tokens(text)

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        system = next((m.text for m in input if m.role == "system"), "")
        conversation = "\n".join(m.text for m in input)
        answered = any(m.role == "tool" for m in input)
        submitted = any(c.function in ENDING for m in input if isinstance(m, ChatMessageAssistant)
                        for c in m.tool_calls or [])
        reply = scripted_reply(system, conversation, [t.name for t in tools], answered,
                               bool(input) and input[-1].role == "tool", _plan_of_running_sample, submitted)
        calls = [ToolCall(id=f"call_{len(input)}_{i}", function=name, arguments=json.loads(args))
                 for i, (name, args) in enumerate(reply.tool_calls)]
        message = ChatMessageAssistant(content=reply.content, tool_calls=calls or None, model=self.model_name,
                                       source="generate")
        out_tokens = count_tokens(reply.content) + sum(count_tokens(a) for _, a in reply.tool_calls)
        in_tokens = count_tokens(conversation)
        return ModelOutput(model=self.model_name, choices=[ChatCompletionChoice(
            message=message, stop_reason="tool_calls" if calls else "stop")], usage=ModelUsage(
            input_tokens=in_tokens, output_tokens=out_tokens, total_tokens=in_tokens + out_tokens))


def _plan_of_running_sample(conversation: str) -> str | None:
    """The reference plan of the running sample whose query the conversation names (from the database its
    episode is on)."""
    from utp_env.dataset import dataset_of

    for session in list(_EPISODES.values()):
        ep = session.env.episode
        if ep is not None and ep.query.query_id in conversation:
            return reference_plan_for(dataset_of(session.env.db), ep.query.query_id)
    return None


@modelapi(name="utp-scripted")
def utp_scripted() -> type[ModelAPI]:
    """The Inspect model API of `ScriptedInspectModel` (`--model utp-scripted/reference`)."""
    return ScriptedInspectModel


NO_SAMPLE = ("utp_bench: no sample completed ({why}); `inspect eval` exits with status 1 (its log: {log}). With "
             "--model mockllm/model, Inspect counts tokens with tiktoken, which downloads its encoding: offline, use "
             "--model utp-scripted/reference (docs/SERVE.md)")


def _under_inspect_cli() -> bool:
    """Whether this process is the `inspect` command line (not a program calling `inspect_ai.eval`)."""
    return Path(sys.argv[0]).name in ("inspect", "inspect.exe") and "eval" in sys.argv[1:3]


@hooks(name="utp_env_exit_status", description="utp-env: `inspect eval` of utp_bench exits non-zero when no sample "
       "completed")
class UTPExitStatus(Hooks):
    """Inspect's `eval` command exits 0 when a task was interrupted before any sample completed (a model
    server down, a missing download); for utp_bench that number would be read as a result. When no sample
    of a utp_bench task completed, this says so in one line and makes the command's exit status 1 (only
    under the `inspect` command line: a program calling `inspect_ai.eval` gets the log, as it asked)."""

    async def on_run_end(self, data: RunEnd) -> None:
        for log in data.logs or []:
            if not str(log.eval.task).endswith("utp_bench"):
                continue
            done = 0 if log.results is None else log.results.completed_samples
            if done == 0 and _under_inspect_cli():
                why = str(log.error.message).splitlines()[0][:200] if log.error is not None else str(log.status)
                print(NO_SAMPLE.format(why=why, log=log.location), file=sys.stderr, flush=True)
                atexit.register(_exit_failed)
                return


def _exit_failed() -> None:
    """The exit status 1 of `UTPExitStatus`, after Inspect has printed and written everything."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(1)


async def _cleanup(state: TaskState) -> None:
    session = _EPISODES.pop(state.uuid, None)  # a sample that failed before scoring
    if session is not None:
        session.close()


TASK_ARGS = ("split", "limit", "profile", "db_path", "env", "seed", "solver")
"""The task's arguments (`-T NAME=VALUE`)."""


def check_task_args(split: Any, limit: Any, profile: Any, db_path: Any, env: Any, seed: Any,
                    unknown: dict[str, Any]) -> None:
    """One-line ValueErrors naming the argument, its value and what it takes: an unknown argument (a typo
    would otherwise be dropped), a limit or seed that is not a whole number (`limit=1.9` is not 1),
    a profile that is not full or mini, a split, env or db_path that is not text."""
    if unknown:
        names = ", ".join(f"{k}={v!r}" for k, v in sorted(unknown.items()))
        raise ValueError(f"utp_bench: unknown argument(s) {names}; the task takes {', '.join(TASK_ARGS)}")
    for name, value, low in (("limit", limit, 1), ("seed", seed, 0)):
        if name == "limit" and value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"utp_bench: {name}={value!r} ({type(value).__name__}): {name} must be a whole number "
                             f">= {low}, e.g. -T {name}={max(low, 1) if name == 'limit' else 0}")
        if value < low:
            raise ValueError(f"utp_bench: {name} must be at least {low}, not {value}")
    for name, value in (("split", split), ("env", env)):
        if not isinstance(value, str):
            raise ValueError(f"utp_bench: {name}={value!r} ({type(value).__name__}): {name} must be text")
    if profile not in ("full", "mini"):
        raise ValueError(f"utp_bench: profile={profile!r}: profile must be full or mini")
    if db_path is not None and not isinstance(db_path, str):
        raise ValueError(f"utp_bench: db_path={db_path!r} ({type(db_path).__name__}): db_path must be a folder path")


@task
def utp_bench(split: str = "validation", limit: int | None = None, profile: str = "full",
              db_path: str | None = None, env: str = "UTP-v0", seed: int = 0,
              solver: Solver | None = None, **unknown: Any) -> Task:
    """The benchmark as an Inspect task (module docstring). `-T split=test -T limit=50 -T profile=mini
    -T db_path=DIR -T env=UTP-Replan-v0 -T seed=0` on the command line; anything else is refused
    (`check_task_args`)."""
    check_task_args(split, limit, profile, db_path, env, seed, unknown)
    factory = SessionFactory(env=env, db_path=None if db_path is None else Path(db_path), profile=profile)
    factory.preload()
    db = open_database(factory.env_kwargs["db_path"], profile)
    try:
        queries = split_pool(db, split)
    except ValueError as exc:
        raise ValueError(f"utp_bench: split: {exc}") from None
    queries = sorted(queries, key=lambda q: q.query_id)[:limit]
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
