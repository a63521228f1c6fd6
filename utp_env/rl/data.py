"""The query set as a `datasets.Dataset` for TRL's GRPOTrainer: one row per query, `prompt` and `query_id`.

Two prompt styles, one per recipe (docs/RL.md):

- `multi_turn`: a compact system prompt and a one-line request. The task itself (the query, the
  rules, the tool list) is the env's first observation: TRL appends what `reset(**row)` returns
  to the last user message, and renders the tools' schemas into the prompt through the chat
  template, so the dataset row only names the query.
- `single_turn`: the request and trip facts of the env's task text (`UTPEnv.task_text`, up to its
  "HOW TO ACT" part, which is about tools) and the day format the plan must be written in; the
  reward (`utp_env.env.adapters.PlanReward`) parses the completion with `parse_plan`.

Both are conversational (lists of `{"role", "content"}` messages), as TRL expects for chat models.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from utp_env.env.config import split_pool
from utp_env.env.core import UTPEnv
from utp_env.itinerary import Day
from utp_env.plan_format.write import format_day

if TYPE_CHECKING:
    from datasets import Dataset

PromptStyle = Literal["multi_turn", "single_turn"]
PROMPT_STYLES: tuple[PromptStyle, ...] = ("multi_turn", "single_turn")

MULTI_TURN_SYSTEM = ("You plan trips within India by calling the tools. Look up what you need, build the plan "
                     "with add_leg, set_stay and add_item, then call submit.")
MULTI_TURN_REQUEST = "Plan this trip with the tools and call submit when the plan is done.\n\n"  # TRL appends the task
SINGLE_TURN_SYSTEM = "You plan trips within India. Reply with the plan only, as JSON."
_ACT_MARKER = "\n\nHOW TO ACT"


def day_format_keys() -> list[str]:
    """The keys of one day object of the paper's JSON day format, in order (from `format_day`)."""
    return list(format_day(Day(day=1, cities=["-"])))


def single_turn_request(task_text: str) -> str:
    """The user message of a single-turn prompt: the task (without its tool instructions) and the format."""
    task = task_text.split(_ACT_MARKER, 1)[0].rstrip()
    keys = ", ".join(day_format_keys())
    return (f"{task}\n\nReply with the whole plan as a JSON list with one object per day, with the keys {keys}; "
            "write - where a day has nothing. Use only real flights, trains, buses, stays, restaurants and "
            "attractions of these cities.")


def query_dataset(style: PromptStyle = "multi_turn", *, split: str = "validation", limit: int | None = None,
                  db_path: str | Path | None = None, profile: str = "full",
                  config: dict[str, Any] | None = None, world: int = 0) -> Dataset:
    """The queries of `split` (in query-id order, the first `limit` of them) as a `datasets.Dataset`.

    Columns: `prompt` (chat messages in the `style` of the recipe) and `query_id` (read by
    `UTPToolEnv.reset` and by `PlanReward`). `db_path`/`profile` choose the database as for `UTPEnv`;
    `world` the embedded sandbox's seed; `config` overrides the env config (the single-turn task
    text names the step limit only in the part that is cut, so it matters only for which split is
    the default).
    """
    if style not in PROMPT_STYLES:
        raise ValueError(f"style must be one of {list(PROMPT_STYLES)}, not {style!r}")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1 (or None for the whole split), not {limit}")
    from datasets import Dataset

    env = UTPEnv(db_path=db_path, profile=profile, split=split, config=config, world=world)
    queries = split_pool(env.db, env.split, limit)
    rows: dict[str, list[Any]] = {"prompt": [], "query_id": []}
    for query in queries:
        if style == "multi_turn":
            prompt = [{"role": "system", "content": MULTI_TURN_SYSTEM},
                      {"role": "user", "content": MULTI_TURN_REQUEST}]
        else:
            prompt = [{"role": "system", "content": SINGLE_TURN_SYSTEM},
                      {"role": "user", "content": single_turn_request(env.task_text(query))}]
        rows["prompt"].append(prompt)
        rows["query_id"].append(query.query_id)
    return Dataset.from_dict(rows)
