"""The sampled scoring of a policy (`utp_env.rl.sft.evaluate_policy` with a temperature): seeded, so
that two scorings of one model draw the same episodes, and run on a forked random state, so that
scoring in the middle of a GRPO run leaves the trainer's random numbers as they were."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.usefixtures("rl_extra")


@pytest.fixture(scope="module")
def tiny_policy() -> tuple[Any, Any]:
    from utp_env.rl import tiny

    corpus = ['<tool_call>{"name": "search_buses", "arguments": {"origin": "Pune"}}</tool_call>',
              "plan the trip from Pune to Goa", "submit the plan"] * 20
    tokenizer = tiny.train_tokenizer(corpus, vocab_size=600)
    return tokenizer, tiny.build_model(tokenizer, seed=0)


def score(policy: tuple[Any, Any], db: Path, **kwargs: Any) -> dict[str, Any]:
    from utp_env.rl import sft

    tokenizer, model = policy
    where = {"db_path": str(db), "profile": "mini", "world": 0}
    schemas = sft.trl_tool_schemas(("search_buses", "submit"), where, None)
    return sft.evaluate_policy(model, tokenizer, where, "validation", 2, schemas, None, system="plan", request="",
                               max_new_tokens=8, rounds=1, **kwargs)


def test_sampled_turns_repeat_with_the_seed_and_differ_across_seeds(tiny_policy: tuple[Any, Any]) -> None:
    import torch

    from utp_env.rl import sft

    tokenizer, model = tiny_policy
    conversations = [[{"role": "user", "content": "plan the trip"}]] * 4

    def sample(seed: int) -> list[str]:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return sft._generate(model, tokenizer, conversations, [], 12, temperature=1.0)

    assert sample(0) == sample(0)
    assert sample(0) != sample(1)
    assert len(set(sample(0))) > 1  # the four rows of one batch are sampled apart, not copied
    greedy = sft._generate(model, tokenizer, conversations, [], 12)
    assert len(set(greedy)) == 1


def test_sampled_scoring_repeats_and_leaves_the_callers_random_state(tiny_policy: tuple[Any, Any],
                                                                     mini_db_path: Path) -> None:
    import torch

    state = torch.random.get_rng_state()
    first = score(tiny_policy, mini_db_path, samples=3, temperature=0.7, seed=5)
    assert torch.equal(torch.random.get_rng_state(), state)
    again = score(tiny_policy, mini_db_path, samples=3, temperature=0.7, seed=5)
    assert first == again
    ids = first["query_ids"]
    assert first["queries"] == 6 and ids[:3] == [ids[0]] * 3 and ids[3:] == [ids[3]] * 3 and ids[0] != ids[3]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"samples": 2}, "samples must be 1 for greedy rollouts and at least 1 with a temperature"),
    ({"samples": 0, "temperature": 0.7}, "samples must be 1 for greedy rollouts"),
    ({"samples": 2, "temperature": 0.0}, "temperature must be above 0 for sampled rollouts"),
    ({"samples": 1, "temperature": -1.0}, "temperature must be above 0")])
def test_sampled_scoring_refuses_samples_it_cannot_draw(tiny_policy: tuple[Any, Any], mini_db_path: Path,
                                                        kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        score(tiny_policy, mini_db_path, **kwargs)
