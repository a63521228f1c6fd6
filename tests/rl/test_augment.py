"""Swapped copies of demonstrations (utp_env/rl/augment.py): every stated value renamed, consistently, one to
one, within its kind, the calendar kept, the same seed giving the same copies."""

from __future__ import annotations

import json
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from utp_env.rl.augment import ValueSwapper, with_swapped_copies

KINDS = {"cities": ["Mumbai", "New Delhi", "Delhi", "Pune", "Goa", "Agra", "Pimpri-Chinchwad"],
         "dates": ["2025-11-20", "2025-12-01", "2026-01-05", "2026-02-14"],
         "numbers": ["11013", "12951", "6E-8637", "AI-101"], "tools": ["search_trains"], "keys": ['"origin": "']}


def chat(origin: str = "Mumbai", destination: str = "New Delhi", date: str = "2025-11-20",
         number: str = "11013") -> list[dict]:
    facts = json.dumps({"origin": origin, "destination": destination, "date": date})
    answer = (f"Trains from {origin} to {destination} on {date} (Thu), by departure: 1 found\n"
              f"train | name | dep\n{number} | {destination} Express | 07:00")
    return [
        {"role": "user", "content": f"TASK (query utp-train-00001): travel on day 1: {facts}."},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function", "function": {
            "name": "search_trains", "arguments": json.dumps({"date": date, "destination": destination,
                                                              "origin": origin})}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": answer},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_2", "type": "function", "function": {
            "name": "add_leg", "arguments": json.dumps({"day": 1, "number": number, "origin": origin})}}]},
    ]


def test_a_copy_renames_every_stated_value_consistently_within_its_kind() -> None:
    messages = chat()
    out = ValueSwapper(KINDS).swapped(messages, random.Random(0))
    facts = json.loads(re.search(r"\{.*\}", out[0]["content"]).group(0))  # type: ignore[union-attr]
    search = json.loads(out[1]["tool_calls"][0]["function"]["arguments"])
    leg = json.loads(out[3]["tool_calls"][0]["function"]["arguments"])
    assert facts == {k: search[k] for k in ("origin", "destination", "date")}
    assert facts["origin"] != "Mumbai" and facts["destination"] != "New Delhi" and facts["date"] != "2025-11-20"
    assert facts["origin"] in KINDS["cities"] and facts["date"] in KINDS["dates"]
    assert leg["number"] != "11013" and leg["number"] in KINDS["numbers"] and leg["origin"] == facts["origin"]
    assert out[2]["content"].splitlines()[-1].startswith(f"{leg['number']} | {facts['destination']} Express")
    assert "utp-train-00001" in out[0]["content"]  # a query id is no value: it keeps its digits
    assert messages == chat()  # the original is left as it was


def test_the_weekday_after_a_date_is_the_new_dates() -> None:
    out = ValueSwapper(KINDS).swapped(chat(), random.Random(3))
    stated = re.search(r"on (\S+) \((\w+)\)", out[2]["content"])
    assert stated is not None
    import datetime as dt
    assert stated.group(2) == dt.date.fromisoformat(stated.group(1)).strftime("%a")


def test_a_longer_name_is_renamed_whole_not_in_part() -> None:
    out = ValueSwapper(KINDS).swapped(chat(origin="Pimpri-Chinchwad", destination="New Delhi"), random.Random(1))
    text = json.dumps(out)
    assert "Pimpri" not in text and "Chinchwad" not in text and "New Delhi" not in text


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cities=st.permutations(KINDS["cities"]), dates=st.permutations(KINDS["dates"]))
def test_renaming_is_one_to_one_and_drawn_from_the_seed(seed: int, cities: list[str], dates: list[str]) -> None:
    messages = chat(origin=cities[0], destination=cities[1], date=dates[0])
    swapper = ValueSwapper(KINDS)
    renaming = swapper.renaming(messages, random.Random(seed))
    assert len(set(renaming.values())) == len(renaming)
    assert all(swapper.kind_of[new] == swapper.kind_of[old] for old, new in renaming.items())
    assert swapper.swapped(messages, random.Random(seed)) == swapper.swapped(messages, random.Random(seed))


def test_with_swapped_copies_keeps_the_records_first_and_their_fields() -> None:
    records = [{"query_id": "q1", "messages": chat()}, {"query_id": "q2", "messages": chat(origin="Pune")}]
    out = with_swapped_copies(records, KINDS, 3, seed=7)
    assert out[:2] == records and len(out) == 8
    assert [r["query_id"] for r in out[2:]] == ["q1", "q2"] * 3
    assert out == with_swapped_copies(records, KINDS, 3, seed=7)
    assert with_swapped_copies(records, KINDS, 0, seed=7) == records


def test_bad_arguments_are_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match="copies must be 0 or more, not -1"):
        with_swapped_copies([{"messages": chat()}], KINDS, -1, seed=0)
    with pytest.raises(ValueError, match="no words of the swapped kinds"):
        ValueSwapper({"tools": ["submit"]})
