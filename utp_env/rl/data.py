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

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from utp_env.env.config import level_pool
from utp_env.env.core import UTPEnv
from utp_env.itinerary import Day
from utp_env.plan_format.write import format_day
from utp_env.query import Query
from utp_env.tools.database import Database

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


def single_turn_request(task_text: str, example: str = "") -> str:
    """The user message of a single-turn prompt: the task (without its tool instructions), the format,
    and `example` (`field_examples`: each field written out with this trip's own data)."""
    task = task_text.split(_ACT_MARKER, 1)[0].rstrip()
    keys = ", ".join(day_format_keys())
    text = (f"{task}\n\nReply with the whole plan as a JSON list with one object per day, with the keys {keys}; "
            "write - where a day has nothing. Use only real flights, trains, buses, stays, restaurants and "
            "attractions of these cities.")
    return f"{text}\n\n{example}" if example else text


EXAMPLE_HEAD = "How each field is written (real services and places of this trip; times HH:MM):"


def field_examples(db: Database, query: Query) -> str:
    """Each key of the day format with one example written from this query's own data, so that a small
    model sees the exact form the parser reads (`plan_format.parse`): the trip's first day, the first
    service (by departure) from the origin to the first destination city that one runs to on that date
    (flights, then trains, then buses), and that city's best-rated stay, restaurant and attraction, as
    `format_day` writes them. The example is not a plan: one of each, at plausible times. Empty when
    no service leaves the origin for a destination city on the first date."""
    from utp_env.itinerary import PlanItem, TransportLeg
    from utp_env.tools.clock import parse_hhmm, weekday
    from utp_env.tools.lookup.transport import services
    from utp_env.tools.schema import NUMBER_COLUMN, SERVICE_TABLE, scheduled_arrival

    cities = [query.dest] if db.has_city(query.dest) else db.cities_of_state(query.dest)
    date = query.dates[0]
    for city in cities:
        for mode in ("flight", "train", "bus"):
            table = SERVICE_TABLE[mode]
            rows = services(db, table, query.org, city, weekday(date))  # type: ignore[arg-type]
            if not rows.size:
                continue
            columns = db.tables[table].columns
            row = int(rows[0])
            dep, arr = parse_hhmm(columns["dep_time"][row]), scheduled_arrival(columns, row)
            leg = TransportLeg(mode=mode, number=str(columns[NUMBER_COLUMN[table]][row]), origin=query.org,
                               destination=city, dep=dep, arr=arr)
            return _example_text(db, query, city, leg, date, PlanItem)
    return ""


def _best(db: Database, table: str, city: str) -> str | None:
    """The best-rated venue of `table` in `city` (ties by name), as "Name, City"."""
    rows = db.city_rows(table, city)
    if not rows.size:
        return None
    columns = db.tables[table].columns
    row = min((int(i) for i in rows), key=lambda i: (-float(columns["rating"][i]), str(columns["name"][i])))
    return f"{columns['name'][row]}, {city}"


def _example_text(db: Database, query: Query, city: str, leg: Any, date: str, item: Any) -> str:
    stay, meal, sight = (_best(db, t, city) for t in ("accommodations", "restaurants", "attractions"))
    dinner = min(max(leg.arr % 1440 + 30, 19 * 60 + 30), 21 * 60)  # after the arrival, at a dinner hour
    items = [item(name=name, activity=activity, start=start, end=end) for name, activity, start, end in (
        (meal, "visit", dinner, dinner + 60), (stay, "stay", 22 * 60, 31 * 60 + 30)) if name]
    day = Day(day=1, date=date, cities=[query.org, city], transport=[leg], dinner=meal,
              attractions=[sight] if sight else [], accommodation=stay, items=items)
    fields = format_day(day)
    lines = [EXAMPLE_HEAD] + [f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in fields.items()]
    return "\n".join(lines)


def query_dataset(style: PromptStyle = "multi_turn", *, split: str = "validation", limit: int | None = None,
                  db_path: str | Path | None = None, profile: str = "full",
                  config: dict[str, Any] | None = None, world: int = 0, skip: int = 0,
                  level: int | None = None) -> Dataset:
    """The queries of `split` (in query-id order: the `limit` after the first `skip`) as a `datasets.Dataset`.

    Columns: `prompt` (chat messages in the `style` of the recipe) and `query_id` (read by
    `UTPToolEnv.reset` and by `PlanReward`). `db_path`/`profile` choose the database as for `UTPEnv`;
    `world` the embedded sandbox's seed; `config` overrides the env config (the single-turn task
    text names the step limit only in the part that is cut, so it matters only for which split is
    the default). `skip` leaves out the split's first queries, e.g. those an SFT checkpoint was
    trained on, so that RL trains on queries the policy has not memorised. `level` (utp_env/env/levels.py)
    keeps the queries the level views (`level_pool`: at level 3 the 3-day ones) and words the task as it.
    """
    if style not in PROMPT_STYLES:
        raise ValueError(f"style must be one of {list(PROMPT_STYLES)}, not {style!r}")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1 (or None for the whole split), not {limit}")
    if skip < 0:
        raise ValueError(f"skip must be 0 or more, not {skip}")
    from datasets import Dataset

    env = UTPEnv(db_path=db_path, profile=profile, split=split, config=config, world=world, level=level)
    queries = level_pool(env.db, env.split, env.level, None if limit is None else skip + limit)[skip:]
    if not queries:
        raise ValueError(f"no queries left in split {split!r} after skipping its first {skip}")
    rows: dict[str, list[Any]] = {"prompt": [], "query_id": []}
    for query in queries:
        if style == "multi_turn":
            prompt = [{"role": "system", "content": MULTI_TURN_SYSTEM},
                      {"role": "user", "content": MULTI_TURN_REQUEST}]
        else:
            prompt = [{"role": "system", "content": SINGLE_TURN_SYSTEM},
                      {"role": "user", "content": single_turn_request(task_text_of(env, query),
                                                                      field_examples(env.db, query))}]
        rows["prompt"].append(prompt)
        rows["query_id"].append(query.query_id)
    return Dataset.from_dict(rows)


def task_text_of(env: UTPEnv, query: Query) -> str:
    """The env's first observation for `query` at the env's level (what `reset` would return)."""
    text, _ = env.reset(seed=0, options={"query_id": query.query_id})
    return text
