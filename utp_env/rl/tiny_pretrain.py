"""The tiny model's pretraining: two skills a real chat model brings from its own pretraining, taught on
synthetic chats in minutes on a CPU, so that what SFT and GRPO add on a level is what a curve measures.

A two-layer model with random weights cannot copy a word from its context until it has seen thousands of
copies: on 64 demonstrations of level 1 (10 epochs) it learns the calls' form and writes memorised cities and
numbers, never the ones its task names (docs/RL.md "Learning curves by level"). A pretrained language model
copies from its first step. `pretrain` gives the tiny model that ability on chats that hold no query, no
answer of the env and no policy, only random values (words of the tokenizer: cities, dates, service numbers,
venue names, clock times, in random roles):

- **copy**: the user asks to call one of the run's tools with a JSON of arguments (random keys of that tool,
  random values, shuffled); the assistant calls it with exactly those;
- **read a table**: the user shows what a search answered, a table laid out as the env's answers of the searches
  among the run's tools (`answer_layouts`: the service searches' or the venue searches' heading, columns and
  "more rows" line; random words in the cells, 1-3 rows), and asks for a call with one argument from its first
  row; the assistant calls the tool with the first row's first cell as that
  argument and the user's JSON as the others. (Tables of a title and four filler columns taught a copy that
  did not carry over to the env's answers: docs/RL.md "Learning curves by level".)

Each step is one batch of `BATCH` fresh chats (nothing is seen twice), the loss on the assistant turns only.

When the skill arrives is luck: the loss sits on a plateau near 0.9 until the model finds how to copy, then
falls to about 0.4. Seeds of the level-1 run found it after 250, after 700, or not within 1,200 steps of a
cosine schedule (docs/RL.md "Learning curves by level"), and a start that cannot copy leaves SFT nothing to
build on. So `pretrain` keeps its learning rate after the warm-up and, given a bar, checks every
`CHECK_EVERY` steps how many new chats the model copies exactly (`copy_accuracy`, on chats of another stream
than the training ones) and stops once the share reaches the bar: the start of every seed can copy, as a real
chat model's can, and the steps it took are recorded.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

PRETRAIN_LR = 1e-3
BATCH = 16
WARM_UP_STEPS = 20
CHECK_EVERY = 100
"""Steps between two checks of the copy skill when `pretrain` is given a bar."""
CHECK_CHATS = 20
"""New chats each check scores (`copy_accuracy`)."""
CHECK_SEED = 2**31 - 1
"""The stream of the checks' chats (the training chats are drawn from the run's seed, a small number)."""
TABLE_SHARE = 0.5
"""The share of chats that read a table (the rest copy the user's JSON)."""
FILLER = ("alpha", "bravo", "carta", "delta", "echo", "forte", "gamma", "hotel", "ivory", "jolly")
"""Cells of the synthetic tables besides the first column."""
Chat = list[dict[str, Any]]


def _call(name: str, args: dict[str, Any], n: int) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [{"id": f"call{n}", "type": "function", "function": {
        "name": name, "arguments": json.dumps(args, ensure_ascii=False)}}]}


def synthetic_chats(tools: Sequence[str], values: Sequence[str], rng: random.Random, n: int) -> list[Chat]:
    """`n` pretraining chats (module docstring) over `tools` (those with arguments) and `values`."""
    from utp_env.env.itinerary_tools import ITINERARY_TOOLS
    from utp_env.tools.lookup import LOOKUP_TOOLS
    from utp_env.tools.toolkit import ToolSpec

    specs: dict[str, ToolSpec[Any]] = {**LOOKUP_TOOLS, **ITINERARY_TOOLS}
    callable_ = [t for t in tools if specs[t].args_model.model_fields]
    layouts = answer_layouts(tools)
    chats: list[Chat] = []
    while len(chats) < n:
        tool = rng.choice(callable_)
        fields = list(specs[tool].args_model.model_fields.items())
        chosen = [(name, info) for name, info in fields if info.is_required() or rng.random() < 0.4]
        args: dict[str, Any] = {}
        for name, info in chosen:
            annotation = str(info.annotation)
            args[name] = rng.randint(1, 7) if "int" in annotation and "str" not in annotation else rng.choice(values)
        texts = [k for k, v in args.items() if isinstance(v, str)]
        if texts and rng.random() < TABLE_SHARE:
            key = rng.choice(texts)
            table, args[key] = search_answer(values, rng, layouts)
            rest = {k: v for k, v in args.items() if k != key}
            ask = f"Call {tool} with {json.dumps(rest, ensure_ascii=False)} and {key} from its first row."
            chats.append([{"role": "user", "content": f"A search answered:\n{table}\n{ask}"}, _call(tool, args, 0)])
        else:
            shown = list(args.items())
            rng.shuffle(shown)
            ask = f"Call {tool} with {json.dumps(dict(shown), ensure_ascii=False)}."
            chats.append([{"role": "user", "content": ask}, _call(tool, args, 0)])
    return chats


def answer_layouts(tools: Sequence[str]) -> list[str]:
    """The tables whose answers the pretraining's tables are laid out as: those the run's `tools` search (service
    tables first, then venue tables, each sorted), or every service table when the tools search none."""
    from utp_env.tools.lookup.transport import SEARCH_TOOL_OF_MODE, SERVICE_HEADERS
    from utp_env.tools.lookup.venues import VENUE_HEADERS
    from utp_env.tools.schema import SERVICE_TABLE

    services = sorted(SERVICE_TABLE[mode] for mode, tool in SEARCH_TOOL_OF_MODE.items() if tool in tools)
    venues = sorted(table for table in VENUE_HEADERS if f"search_{table}" in tools)
    return [*services, *venues] or sorted(SERVICE_HEADERS)


def search_answer(values: Sequence[str], rng: random.Random, layouts: Sequence[str]) -> tuple[str, str]:
    """A table laid out as the env's answer of a search of one of `layouts`' tables (`answer_layouts`): a
    service search's (`utp_env.tools.lookup.transport`) or a venue search's (`utp_env.tools.lookup.venues`)
    heading, columns and "more rows" line, its cells random: the words of `values` in the heading and the first
    column, `FILLER` elsewhere; and the first row's first cell, the value a call reads from it."""
    from typing import get_args

    from utp_env.tools.clock import WEEKDAYS
    from utp_env.tools.lookup.render import table_of_lines
    from utp_env.tools.lookup.transport import SERVICE_HEADERS, SERVICE_NARROW, service_heading
    from utp_env.tools.lookup.venues import (
        VENUE_HEADERS,
        VENUE_NARROW,
        AttractionSearch,
        RestaurantSearch,
        venue_heading,
    )

    table = rng.choice(list(layouts))
    header = SERVICE_HEADERS[table] if table in SERVICE_HEADERS else VENUE_HEADERS[table]
    shown = rng.randint(1, 3)
    total = shown + (0 if rng.random() < 0.5 else rng.randint(1, 30))
    rows = [[rng.choice(values), *(rng.choice(FILLER) for _ in header[1:])] for _ in range(shown)]
    if table in SERVICE_HEADERS:
        heading = service_heading(table, rng.choice(values), rng.choice(values), rng.choice(values),
                                  rng.choice(WEEKDAYS), "departure")
        narrow = SERVICE_NARROW
    else:
        search = AttractionSearch if table == "attractions" else RestaurantSearch
        orders = get_args(search.model_fields["sort_by"].annotation)
        heading = venue_heading(table, rng.choice(values), rng.choice(orders))
        narrow = VENUE_NARROW[table]
    text = table_of_lines(heading, header, [" | ".join(row) for row in rows], total=total, truncated=total - shown,
                          narrow=narrow, empty="")
    return text, rows[0][0]


def copy_bar_refusal(bar: float | None, pretrain_steps: int) -> str | None:
    """Why the command lines (`utp_env.rl.sft`, `utp_env.rl.curve`) refuse `--pretrain-copy-bar` `bar` for a run of
    `pretrain_steps` pretraining steps, in one line; None when it is fine (absent, or a share in (0, 1] of a run
    that pretrains)."""
    if bar is None or (pretrain_steps and 0 < bar <= 1):
        return None
    return (f"--pretrain-copy-bar is a share in (0, 1] of a run that pretrains (--tiny, --pretrain-steps above 0), "
            f"not {bar}" + ("" if pretrain_steps else " without pretraining"))


@dataclass
class Pretraining:
    """What `pretrain` did: the loss of each step, and each check of the copy skill as (step, share copied)."""

    losses: list[float] = field(default_factory=list)
    checks: list[tuple[int, float]] = field(default_factory=list)

    @property
    def steps(self) -> int:
        return len(self.losses)


def pretrain(model: Any, tokenizer: Any, tools: Sequence[str], values: Sequence[str], steps: int,
             seed: int = 0, copy_bar: float | None = None) -> Pretraining:
    """At most `steps` optimizer steps of AdamW (learning rate `PRETRAIN_LR` after a linear warm-up of
    `WARM_UP_STEPS`) on batches of fresh synthetic chats. With `copy_bar` (a share in (0, 1]), the copy skill is
    checked every `CHECK_EVERY` steps and after the last (`copy_accuracy` on `CHECK_CHATS` chats of the
    `CHECK_SEED` stream) and training stops at the first check that reaches the bar. The model is left in
    eval mode."""
    import torch

    from utp_env.rl.tiny import training_chat_template

    if copy_bar is not None and not 0 < copy_bar <= 1:
        raise ValueError(f"copy_bar must be a share in (0, 1], not {copy_bar}")
    rng = random.Random(seed)
    template = training_chat_template(tokenizer)
    pad = tokenizer.pad_token_id
    optimizer = torch.optim.AdamW(model.parameters(), lr=PRETRAIN_LR, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / WARM_UP_STEPS))
    done = Pretraining()
    model.train()
    for step in range(1, steps + 1):
        encoded = []
        for chat in synthetic_chats(tools, values, rng, BATCH):
            out = tokenizer.apply_chat_template(chat, chat_template=template, tokenize=True, return_dict=True,
                                                return_assistant_tokens_mask=True)
            ids = torch.tensor(out["input_ids"])
            mask = torch.tensor(out["assistant_masks"], dtype=torch.bool)
            encoded.append((ids, torch.where(mask, ids, torch.full_like(ids, -100))))
        width = max(len(ids) for ids, _ in encoded)
        inputs = torch.stack([torch.cat([torch.full((width - len(i),), pad), i]) for i, _ in encoded])
        labels = torch.stack([torch.cat([torch.full((width - len(lab),), -100), lab]) for _, lab in encoded])
        attention = (inputs != pad).long()
        loss = model(input_ids=inputs, attention_mask=attention, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        done.losses.append(float(loss.detach()))
        if copy_bar is not None and (step % CHECK_EVERY == 0 or step == steps):
            model.eval()
            share = copy_accuracy(model, tokenizer, tools, values, n=CHECK_CHATS, seed=CHECK_SEED)
            done.checks.append((step, share))
            model.train()
            if share >= copy_bar:
                break
    model.eval()
    return done


def copy_accuracy(model: Any, tokenizer: Any, tools: Sequence[str], values: Sequence[str], n: int = 40,
                  seed: int = 1) -> float:
    """The share of `n` new synthetic chats whose final call the model writes exactly (greedy)."""
    import torch

    from utp_env.rl.tiny_words import TOOL_CALL

    hits = 0
    for chat in synthetic_chats(tools, values, random.Random(seed), n):
        prompt = tokenizer.apply_chat_template(chat[:-1], add_generation_prompt=True, tokenize=False)
        ids = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
        with torch.no_grad():
            out = model.generate(**ids, max_new_tokens=80, do_sample=False)
        found = TOOL_CALL.findall(tokenizer.decode(out[0][ids["input_ids"].shape[1]:], skip_special_tokens=False))
        try:
            call = json.loads(found[0]) if found else {}
        except json.JSONDecodeError:
            call = {}
        want = chat[-1]["tool_calls"][0]["function"]
        hits += call.get("name") == want["name"] and call.get("arguments") == json.loads(want["arguments"])
    return hits / n
