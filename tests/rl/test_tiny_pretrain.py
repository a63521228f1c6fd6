"""The tiny model's pretraining (utp_env/rl/tiny_pretrain.py): synthetic chats that ask for a copy the assistant
makes, the same for the same seed; pretraining that stops at the first check reaching its copy bar, records
every check, and refuses a bar that is not a share."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from utp_env.rl import tiny_pretrain
from utp_env.rl.tiny_pretrain import synthetic_chats

TOOLS = ("search_trains", "add_leg", "submit")
VALUES = ["Mumbai", "Pune", "Goa", "2026-02-14", "2026-03-01", "12951", "6E-8637", "07:00"]


def test_a_synthetic_chat_asks_for_the_call_its_assistant_makes() -> None:
    chats = synthetic_chats(TOOLS, VALUES, random.Random(3), 30)
    assert len(chats) == 30
    assert chats == synthetic_chats(TOOLS, VALUES, random.Random(3), 30)
    assert chats != synthetic_chats(TOOLS, VALUES, random.Random(4), 30)
    for chat in chats:
        call = chat[-1]["tool_calls"][0]["function"]
        assert call["name"] in TOOLS and call["name"] != "submit"  # a tool without arguments copies nothing
        asked = "\n".join(m["content"] for m in chat[:-1] if m["role"] == "user")
        for value in json.loads(call["arguments"]).values():
            assert str(value) in asked  # every argument is in what the user showed: copying, not recall


@pytest.mark.parametrize(("tools", "layouts"), [
    (("search_buses", "search_trains", "search_flights", "add_leg", "submit"), ["buses", "flights", "trains"]),
    (("search_attractions", "search_restaurants", "add_item", "submit"), ["attractions", "restaurants"]),
    (("add_item", "submit"), ["buses", "flights", "trains"]),
])
def test_the_tables_are_laid_out_as_the_answers_of_the_runs_own_searches(mini_db: Any, tools: tuple[str, ...],
                                                                          layouts: list[str]) -> None:
    from utp_env.tools.lookup import LOOKUP_TOOLS

    assert tiny_pretrain.answer_layouts(tools) == layouts
    found = {}
    for chat in synthetic_chats(tools, VALUES, random.Random(0), 60):
        lines = chat[0]["content"].splitlines()
        if lines[0] == "A search answered:":
            found[lines[1].split(" ")[0].lower()] = lines[2]  # the table's kind -> its column line
    assert sorted(found) == layouts  # every layout drawn, and no other
    for table in layouts:  # each column line is the one the env's own search of that table answers with
        if table in ("attractions", "restaurants"):
            spec = LOOKUP_TOOLS[f"search_{table}"]
            answer = spec.fn(mini_db, spec.args_model(city="Mumbai", limit=1)).text
            assert answer.splitlines()[1] == found[table]


@pytest.mark.usefixtures("rl_extra")
def test_pretraining_stops_at_the_first_check_that_reaches_the_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    from utp_env.rl import tiny as tiny_model
    from utp_env.rl.recipe import _corpus

    tokenizer = tiny_model.train_tokenizer(_corpus([(c, None) for c in synthetic_chats(TOOLS, VALUES, random.Random(0),
                                                                                        20)]), words=VALUES)
    shares = iter([0.0, 0.3, 0.6, 0.9])
    seen: list[dict[str, Any]] = []

    def measured(model: Any, tok: Any, tools: Any, values: Any, n: int, seed: int) -> float:
        seen.append({"n": n, "seed": seed, "training": model.training})
        return next(shares)

    monkeypatch.setattr(tiny_pretrain, "CHECK_EVERY", 2)
    monkeypatch.setattr(tiny_pretrain, "copy_accuracy", measured)
    model = tiny_model.build_model(tokenizer, tiny_model.TinySpec(layers=1, hidden_size=32, intermediate_size=64))
    done = tiny_pretrain.pretrain(model, tokenizer, TOOLS, VALUES, steps=50, copy_bar=0.5)
    assert done.checks == [(2, 0.0), (4, 0.3), (6, 0.6)] and done.steps == len(done.losses) == 6
    assert all(c == {"n": tiny_pretrain.CHECK_CHATS, "seed": tiny_pretrain.CHECK_SEED, "training": False}
               for c in seen)  # scored in eval mode, on the checks' own stream
    assert not model.training

    shares = iter([0.0, 0.1])  # never reached: all steps, a check after the last
    done = tiny_pretrain.pretrain(model, tokenizer, TOOLS, VALUES, steps=3, copy_bar=0.5)
    assert done.checks == [(2, 0.0), (3, 0.1)] and done.steps == 3
    assert tiny_pretrain.pretrain(model, tokenizer, TOOLS, VALUES, steps=3).checks == []  # no bar: no checks


@pytest.mark.parametrize("bar", [0.0, -0.1, 1.5])
def test_a_copy_bar_that_is_not_a_share_is_refused(bar: float) -> None:
    with pytest.raises(ValueError, match=r"copy_bar must be a share in \(0, 1\]"):
        tiny_pretrain.pretrain(None, None, TOOLS, VALUES, steps=1, copy_bar=bar)
