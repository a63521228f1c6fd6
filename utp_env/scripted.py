"""A scripted stand-in for a model: what a competent model would answer in a utp-env conversation,
from the dataset's reference plan, with no network and no key (docs/AGENTS.md "Trying a pipeline
offline").

`scripted_reply` is the one decision, wrapped for each harness: as a LangChain chat model for the
LLM agents (`model: scripted:reference`, agents/llm/scripted.py), as an Inspect model
(`--model utp-scripted/reference`, utp_env/inspect_task.py) and by the tests' scripted OpenAI-wire server
(tests/support/fault_server.py). In as few turns as the caller allows:

- with tools offered: first a look at the plan (`view_plan` for the env's tools, `list_cities` for
  the lookup tools), then the reference plan with `submit_plan` (the env's tools; `submit` when the
  trip is unknown) or a line saying the search is done (the lookup tools);
- without tools: the reference plan as JSON text (the direct agent and ATLAS's planner), and the
  short answers ATLAS's checker, constraint manager and search advisor expect.

`count_tokens` counts words and punctuation, so usage is known offline. It is a harness for trying
pipelines, not a baseline: its plans are the reference planner's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

SCRIPTS = ("reference",)
"""What a scripted model plays: the dataset's reference plan."""
QUERY_ID = re.compile(r"\butp-q-\d+\b|\butp-train-\d+\b")
UNKNOWN = "I do not know which trip you mean."


@dataclass
class Reply:
    """A scripted reply: text and/or tool calls as (name, arguments JSON text)."""

    content: str = ""
    tool_calls: list[tuple[str, str]] = field(default_factory=list)


ENDING = frozenset({"submit", "submit_plan"})
"""The env's tools that end an episode: once one was called, the scripted model says it is done."""


def scripted_reply(system: str, conversation: str, tools: Sequence[str], answered: bool, last_was_tool: bool,
                   plan_for: Callable[[str], str | None], submitted: bool = False) -> Reply:
    """The reply of the scripted model (module docstring) to a conversation: its system text, all its text,
    the names of the tools offered, whether a tool has answered, whether the last message is a tool answer,
    `plan_for(conversation)`, the reference plan as JSON text (None when the trip is unknown), and whether
    it already called an ending tool (`ENDING`: then it replies in text, which ends an agent's loop)."""
    if tools:
        first = "view_plan" if "submit_plan" in tools else "list_cities"
        if submitted:
            return Reply(content="The plan is submitted.")
        if "submit_plan" in tools:  # the env's tools: look once, then submit
            if not answered:
                return Reply(tool_calls=[(first, "{}")])
            plan = plan_for(conversation)
            return Reply(tool_calls=[("submit_plan", json.dumps({"plan": plan}))] if plan else [("submit", "{}")])
        if not last_was_tool:  # the lookup tools (ATLAS's search): one call per round
            return Reply(tool_calls=[(first, "{}")])
        return Reply(content="I have gathered what the planner needs.")
    if system.startswith("You are the checker"):
        return Reply(content='{"verdict": "pass", "feedback": "all constraints hold"}')
    if system.startswith("You are the constraint manager"):
        return Reply(content='{"explicit": [], "implicit": []}')
    if system.startswith("You are the search advisor"):
        return Reply(content="Search the stays again.")
    return Reply(content=plan_for(conversation) or UNKNOWN)


def count_tokens(text: str) -> int:
    """A tokenizer-free token count (words and punctuation marks), so usage is known offline."""
    return len(re.findall(r"\w+|[^\w\s]", text))


def reference_plan_for(dataset: Any, conversation: str) -> str | None:
    """The reference plan (JSON text, the paper's day format) of the dataset's query the conversation is
    about (its query id, else its text), or None when it names none or the query has no reference plan."""
    from utp_env.plan_format import plan_to_json

    found = QUERY_ID.search(conversation)
    query = next((q for q in dataset.queries if found and q.query_id == found.group(0)), None)
    if query is None:
        query = next((q for q in dataset.queries if q.text and q.text in conversation), None)
    plan = None if query is None else dataset.references.get(query.query_id)
    return None if plan is None else plan_to_json(plan)
