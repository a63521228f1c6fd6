"""Value-swapped copies of the tiny model's demonstrations, so that a handful of them teach reading, not recall.

A few demonstrations state a few cities, dates and service numbers. A model as small as the tiny one learns
those values (it calls every trip's search with the date it saw most) instead of where each call's values
are read: the trip facts of the task text, the first row of a search's answer. A swapped copy renames every
value of a swapped kind that a chat states (`SWAPPED_KINDS` of `utp_env/rl/sft.py`'s `tiny_word_kinds`:
cities, dates, service numbers, venues), consistently in the task text, the calls and the tool answers, to
another value of the same kind of the training world, drawn from the caller's seeded generator. The only
way left to predict a call's value is to copy it from where the chat states it.

A copy is training text, never a fact: its renamed train may not run on its renamed route on its renamed
date. The weekday a search's answer prints after a date is recomputed for the new date, so that no copy
contradicts the calendar. Held-out queries are never copied (only the demonstrations' own chats are).
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

SWAPPED_KINDS = ("cities", "dates", "numbers", "venues")
"""The kinds of words a swapped copy renames (the values a call copies from the chat)."""
_WEEKDAY = re.compile(r"(\d{4}-\d{2}-\d{2}) \((Mon|Tue|Wed|Thu|Fri|Sat|Sun)\)")


class ValueSwapper:
    """Renames the values of `kinds` (kind -> its words) in chats; one compiled pattern for all of them."""

    def __init__(self, kinds: Mapping[str, Sequence[str]]) -> None:
        self.kind_of: dict[str, str] = {}
        for kind in SWAPPED_KINDS:
            for word in kinds.get(kind, ()):
                self.kind_of.setdefault(word, kind)
        if not self.kind_of:
            raise ValueError(f"no words of the swapped kinds {', '.join(SWAPPED_KINDS)} to rename values with")
        self.words: dict[str, list[str]] = {}
        for word, kind in self.kind_of.items():
            self.words.setdefault(kind, []).append(word)
        alternatives = "|".join(re.escape(w) for w in sorted(self.kind_of, key=lambda w: (-len(w), w)))
        self.pattern = re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])")

    def texts(self, message: dict[str, Any]) -> list[str]:
        """The strings of `message` a value may occur in: its content and its calls' arguments."""
        found = [message.get("content") or ""]
        found += [call["function"]["arguments"] for call in message.get("tool_calls") or ()]
        return [text if isinstance(text, str) else json.dumps(text) for text in found]

    def renaming(self, messages: Sequence[dict[str, Any]], rng: random.Random) -> dict[str, str]:
        """Each value `messages` state -> a different value of its kind, one to one (values the chat states
        are never drawn as a replacement, so two values never merge)."""
        stated = list(dict.fromkeys(m.group(0) for message in messages for text in self.texts(message)
                                    for m in self.pattern.finditer(text)))
        taken = set(stated)
        renaming: dict[str, str] = {}
        for value in stated:
            pool = self.words[self.kind_of[value]]
            if len(pool) <= len(taken & set(pool)):
                renaming[value] = value  # the kind has no unused word left: keep the value
                continue
            while (new := pool[rng.randrange(len(pool))]) in taken:
                pass
            taken.add(new)
            renaming[value] = new
        return renaming

    def swapped(self, messages: Sequence[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
        """A copy of `messages` with every stated value renamed (module docstring)."""
        renaming = self.renaming(messages, rng)

        def rename(text: str) -> str:
            text = self.pattern.sub(lambda m: renaming.get(m.group(0), m.group(0)), text)
            return _WEEKDAY.sub(lambda m: f"{m.group(1)} ({_weekday(m.group(1), m.group(2))})", text)

        out = copy.deepcopy(list(messages))
        for message in out:
            if isinstance(message.get("content"), str):
                message["content"] = rename(message["content"])
            for call in message.get("tool_calls") or ():
                arguments = call["function"]["arguments"]
                if isinstance(arguments, str):
                    call["function"]["arguments"] = rename(arguments)
                else:
                    call["function"]["arguments"] = json.loads(rename(json.dumps(arguments, ensure_ascii=False)))
        return out


def _weekday(date: str, stated: str) -> str:
    try:
        return dt.date.fromisoformat(date).strftime("%a")
    except ValueError:
        return stated


def with_swapped_copies(records: Sequence[dict[str, Any]], kinds: Mapping[str, Sequence[str]], copies: int,
                        seed: int) -> list[dict[str, Any]]:
    """`records` (demonstration records with `messages`) followed by `copies` swapped copies of each, drawn
    from `seed`; the copies keep every other field of their record."""
    if copies < 0:
        raise ValueError(f"copies must be 0 or more, not {copies}")
    if not copies:
        return list(records)
    swapper = ValueSwapper(kinds)
    rng = random.Random(seed)
    out = list(records)
    for _ in range(copies):
        out += [{**record, "messages": swapper.swapped(record["messages"], rng)} for record in records]
    return out
