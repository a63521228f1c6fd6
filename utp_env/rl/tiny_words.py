"""The tiny model's vocabulary by kind and its tools per level: what the tiny SFT run, its pretraining, its
value embeddings and its GRPO agree on (one place, so that they cannot disagree), and the pattern of a call
in its output.

`tiny_word_kinds` groups the words the tiny tokenizer keeps whole: the tools, the modes, the argument keys as
they precede a value in JSON, and the values a call copies from the chat (cities, dates, service numbers;
at level 2 venues and clock times). Values are what pretraining fills its chats with, what swapped copies
rename (utp_env/rl/augment.py) and whose embeddings stay as pretraining left them
(utp_env/rl/value_embeddings.py).
"""

from __future__ import annotations

import re
from typing import Any

from utp_env.tools.schema import NUMBER_COLUMN

TINY_SFT_TOOLS = ("search_buses", "search_trains", "search_flights", "add_leg", "submit")
"""The tiny run's tools: the three transport searches, add_leg and submit (its demonstrations use no others)."""
TOOL_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.S)
"""A tool call as the tiny chat template writes it."""

NOT_VALUES = ("tools", "modes", "keys")
"""The kinds of `tiny_word_kinds` that are not values a pretraining chat may fill in."""
TINY_LEVEL_SFT_TOOLS: dict[int, tuple[str, ...]] = {
    2: ("search_attractions", "search_restaurants", "add_item", "submit")}
"""The tiny run's tools at a level whose demonstrations use others than `TINY_SFT_TOOLS` (level 2's)."""


def tiny_sft_tools(level: int) -> tuple[str, ...]:
    """The tools the tiny SFT run and its scoring offer at `level` (`TINY_SFT_TOOLS`, or the level's own)."""
    return TINY_LEVEL_SFT_TOOLS.get(level, TINY_SFT_TOOLS)


def tiny_word_kinds(db: Any, level: int = 4) -> dict[str, list[str]]:
    """What the tiny tokenizer keeps as single tokens, by kind, so that copying one is one step:
    the tools' names, the modes, the cities, every date of the calendar, and the service numbers
    of `db`'s flights, trains and buses (the training world's: another world's numbers that differ
    are split into pieces; docs/RL.md says what that costs); at level 2 also the names of its attractions
    and restaurants and every clock time of the day. The kinds also seed the embeddings (`tiny.build_model`)."""
    from utp_env.rl.level_demos import LOOKUP_ORDER, calendar_dates

    numbers = [str(v) for table, column in NUMBER_COLUMN.items() for v in sorted(set(db.tables[table].columns[column]))]
    kinds: dict[str, list[str]] = {"tools": list(tiny_sft_tools(level)), "modes": list(LOOKUP_ORDER),
             "cities": sorted({str(c) for c in db.tables["cities"].columns["city"]}), "dates": calendar_dates(db),
             "numbers": list(dict.fromkeys(numbers))}
    if level == 2:
        kinds["venues"] = sorted({str(n) for t in ("attractions", "restaurants") for n in db.tables[t].columns["name"]})
        kinds["times"] = [f"{h:02d}:{m:02d}" for h in range(24) for m in range(60)]
    kinds["keys"] = argument_keys(tiny_sft_tools(level))
    return kinds


def argument_keys(tools: tuple[str, ...]) -> list[str]:
    """Each argument name of `tools` with what precedes its value in JSON (`"origin": "`, `"day": `): one token
    of the tiny tokenizer, so that a value the task text states in the same JSON (level 1's trip facts) is
    preceded by the same token there and in a call, the pattern a two-layer model copies along."""
    from utp_env.env.itinerary_tools import ITINERARY_TOOLS
    from utp_env.tools.lookup import LOOKUP_TOOLS
    from utp_env.tools.toolkit import ToolSpec

    specs: dict[str, ToolSpec[Any]] = {**LOOKUP_TOOLS, **ITINERARY_TOOLS}
    keys: dict[str, None] = {}
    for name in tools:
        for arg, info in specs[name].args_model.model_fields.items():
            quoted = "str" in str(info.annotation) or "Literal" in str(info.annotation)
            keys[f'"{arg}": "' if quoted else f'"{arg}": '] = None
    return list(keys)
