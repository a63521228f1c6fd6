"""A scripted OpenAI-compatible chat-completions server for the tests, with faults on request.

`FaultServer` serves `POST /v1/chat/completions` on 127.0.0.1 at an ephemeral port from a thread
(standard library `http.server`; no network beyond the loopback). It speaks the wire format the
`openai` client and `langchain-openai` read (`choices[].message.tool_calls`, `finish_reason`,
`usage`) and enforces OpenAI's message-ordering rules: a `tool` message must answer a tool call
of the assistant message before it, and every tool call id of an assistant message must be
answered by a tool message before the next non-tool message (else 400, "tool_call_ids did not
have response messages", as OpenAI answers), and the arguments of every tool call in the history
must be JSON (a server that re-parses the history, as vLLM does, refuses them). Tool schemas are
checked too (function names, JSON-schema `parameters` of type object); each request body is kept in `requests`.

Replies are scripted by a `brain(body) -> Reply` (see `PlanningBrain` for one that drives the
shipped LLM agents to a submitted plan). Faults are queued in `faults` and one is consumed per
request before the brain answers; `FAULTS` lists them. The server records what it answered in
`log` as (fault or "ok", HTTP status).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# fault -> what the server does with the request that consumes it
FAULTS: dict[str, str] = {
    "500": "HTTP 500 with an OpenAI error body (transient)",
    "429": "HTTP 429 with Retry-After: 0 (transient)",
    "slow": "the normal reply, after `slow_seconds` (longer than the client timeout: transient)",
    "drop": "the connection closed without a response (transient)",
    "truncated": "a 200 whose body stops short of its Content-Length (transient)",
    "cut_json": "a 200 whose JSON body is cut in half, Content-Length matching the cut (transient)",
    "ok": "the normal reply (to place a fault after some good calls)",
    "no_choices": "a 200 whose JSON has no `choices` (permanent)",
    "401": "HTTP 401, invalid API key (permanent)",
    "bad_args": "a tool call whose `arguments` are not JSON (the agent must answer it)",
    "unknown_tool": "a call of a tool that was not offered (the agent must answer it)",
    "empty": "a reply with empty content and no tool calls",
}
NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


@dataclass
class Reply:
    """What the brain answers: text content and/or tool calls as (name, arguments JSON text)."""

    content: str | None = None
    tool_calls: list[tuple[str, str]] = field(default_factory=list)


class WireError(ValueError):
    """A request OpenAI would refuse with HTTP 400."""


def check_request(body: dict[str, Any]) -> None:
    """Raise WireError where OpenAI's chat-completions endpoint would answer 400."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise WireError("'messages' must be a non-empty array")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise WireError("'model' is required")
    for tool in body.get("tools") or []:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if tool.get("type") != "function" or not isinstance(fn, dict):
            raise WireError(f"invalid tool {tool!r}: expected type 'function' with a 'function' object")
        if not isinstance(fn.get("name"), str) or not NAME.match(fn["name"]):
            raise WireError(f"invalid function name {fn.get('name')!r}")
        params = fn.get("parameters", {"type": "object", "properties": {}})
        if not isinstance(params, dict) or params.get("type") != "object":
            raise WireError(f"Invalid schema for function '{fn['name']}': schema must be a JSON Schema of "
                            "'type: \"object\"'")
        import jsonschema

        try:
            jsonschema.validators.validator_for(params).check_schema(params)
        except jsonschema.SchemaError as exc:
            raise WireError(f"Invalid schema for function '{fn['name']}': {exc.message}") from None
    pending: list[str] = []  # tool-call ids of the last assistant message not yet answered
    open_ids: set[str] = set()
    for i, msg in enumerate(messages):
        role = msg.get("role") if isinstance(msg, dict) else None
        if role not in ROLES:
            raise WireError(f"messages[{i}]: invalid role {role!r}")
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if call_id not in open_ids:
                raise WireError(f"messages[{i}]: messages with role 'tool' must be a response to a preceeding "
                                "message with 'tool_calls'")
            if call_id in pending:
                pending.remove(call_id)
            continue
        if pending:
            raise WireError("An assistant message with 'tool_calls' must be followed by tool messages responding "
                            "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                            + ", ".join(pending))
        open_ids = set()
        if role == "assistant":
            for j, call in enumerate(msg.get("tool_calls") or []):
                try:  # servers that re-parse the history (vLLM's chat templates) refuse broken arguments
                    json.loads((call.get("function") or {}).get("arguments") or "{}")
                except json.JSONDecodeError as exc:
                    raise WireError(f"messages[{i}].tool_calls[{j}].function.arguments is not valid JSON "
                                    f"({exc.msg})") from None
                pending.append(call["id"])
                open_ids.add(call["id"])
    if pending:
        raise WireError("An assistant message with 'tool_calls' must be followed by tool messages responding to "
                        "each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                        + ", ".join(pending))


def text_of(body: dict[str, Any]) -> str:
    """All message contents of a request, joined (string or text-part content)."""
    parts: list[str] = []
    for msg in body.get("messages", []):
        content = msg.get("content")
        if isinstance(content, list):
            content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        parts.append(str(content or ""))
    return "\n".join(parts)


class PlanningBrain:
    """Replies that take each shipped LLM agent to a submitted plan.

    `plan_for(request_text)` returns the plan JSON for the query the request is about. With tools
    offered: the first turn calls one tool (`view_plan` for the env's tools, `list_cities` for the
    lookup tools), later turns submit the plan (`submit_plan`) or end the search (text). Without
    tools: ATLAS's checker passes, its constraint manager lists nothing, and any other prompt gets
    the plan as text (direct's planner, ATLAS's planner).
    """

    def __init__(self, plan_for: Callable[[str], str]) -> None:
        self.plan_for = plan_for

    def __call__(self, body: dict[str, Any], fault: str | None) -> Reply:
        from utp_env.scripted import ENDING, scripted_reply

        tools = [t["function"]["name"] for t in body.get("tools") or []]
        messages = body["messages"]
        system = str(messages[0].get("content") or "") if messages else ""
        answered = any(m.get("role") == "tool" for m in messages)
        if tools:
            first = "view_plan" if "submit_plan" in tools else "list_cities"
            if fault == "bad_args":
                return Reply(tool_calls=[(first, '{"day": 1,')])
            if fault == "unknown_tool":
                return Reply(tool_calls=[("teleport", "{}")])
        # the offline scripted model's own decision (utp_env/scripted.py), over the wire
        submitted = any((c.get("function") or {}).get("name") in ENDING for m in messages
                        if m.get("role") == "assistant" for c in m.get("tool_calls") or [])
        reply = scripted_reply(system, text_of(body), tools, answered, messages[-1].get("role") == "tool",
                               self.plan_for, submitted)
        return Reply(content=reply.content or None, tool_calls=reply.tool_calls)


class FaultServer:
    """The server (see the module docstring). Use as a context manager or call start()/stop()."""

    def __init__(self, brain: Callable[[dict[str, Any], str | None], Reply], slow_seconds: float = 2.0) -> None:
        self.brain = brain
        self.slow_seconds = slow_seconds
        self.faults: deque[str] = deque()
        self.requests: list[dict[str, Any]] = []
        self.log: list[tuple[str, int]] = []
        self.refused: list[str] = []  # 400 messages, for assertions
        self.usage: list[dict[str, int]] = []  # the usage block of every completion sent in full
        self.lock = threading.Lock()
        self._counter = 0
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def start(self) -> FaultServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def inject(self, *faults: str) -> None:
        """Queue faults, one per coming request."""
        unknown = [f for f in faults if f not in FAULTS]
        if unknown:
            raise ValueError(f"unknown fault(s) {unknown}; known: {sorted(FAULTS)}")
        with self.lock:
            self.faults.extend(faults)

    def statuses(self) -> list[int]:
        return [status for _, status in self.log]

    # ------------------------------------------------------------ the wire

    def completion(self, body: dict[str, Any], fault: str | None) -> dict[str, Any]:
        """The chat.completion JSON of the brain's reply (after a content fault, if any)."""
        reply = self.brain(body, fault)
        if fault == "empty":
            reply = Reply(content="")
        with self.lock:
            self._counter += 1
            n = self._counter
        message: dict[str, Any] = {"role": "assistant", "content": reply.content, "refusal": None}
        if reply.tool_calls:
            message["tool_calls"] = [{"id": f"call_{n}_{i}", "type": "function",
                                      "function": {"name": name, "arguments": args}}
                                     for i, (name, args) in enumerate(reply.tool_calls)]
        prompt_tokens = max(1, len(json.dumps(body["messages"])) // 4)
        completion_tokens = max(1, len(json.dumps(message)) // 4)
        return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()),
                "model": body["model"], "system_fingerprint": "fault-server",
                "choices": [{"index": 0, "message": message, "logprobs": None,
                             "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                          "total_tokens": prompt_tokens + completion_tokens}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _json(self, status: int, data: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

            def _error(self, status: int, message: str, kind: str, headers: dict[str, str] | None = None) -> None:
                self._json(status, {"error": {"message": message, "type": kind, "param": None, "code": None}},
                           headers)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    server.requests.append(body)
                    fault = server.faults.popleft() if server.faults else None
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    server.log.append((fault or "ok", 404))
                    self._error(404, f"no route {self.path}", "invalid_request_error")
                    return
                try:
                    check_request(body)
                except WireError as exc:
                    server.refused.append(str(exc))
                    server.log.append((fault or "ok", 400))
                    self._error(400, str(exc), "invalid_request_error")
                    return
                status = {"500": 500, "429": 429, "401": 401}.get(fault or "", 200)
                server.log.append((fault or "ok", status if fault not in ("drop", "truncated") else 0))
                if fault == "500":
                    self._error(500, "The server had an error while processing your request.", "server_error")
                elif fault == "429":
                    self._error(429, "Rate limit reached; try again.", "rate_limit_error", {"Retry-After": "0"})
                elif fault == "401":
                    self._error(401, "Incorrect API key provided.", "invalid_request_error")
                elif fault == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
                elif fault == "truncated":
                    raw = json.dumps(server.completion(body, None)).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw[: len(raw) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(2)
                elif fault == "cut_json":
                    raw = json.dumps(server.completion(body, None)).encode()
                    raw = raw[: len(raw) // 2]
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                elif fault == "no_choices":
                    data = server.completion(body, None)
                    del data["choices"]
                    self._json(200, data)
                else:
                    if fault == "slow":
                        time.sleep(server.slow_seconds)
                    data = server.completion(body, fault)
                    try:
                        self._json(200, data)
                    except (BrokenPipeError, ConnectionResetError):  # the client gave up (slow)
                        self.close_connection = True
                    else:
                        if fault != "slow":  # a slow reply arrives after the client gave up
                            server.usage.append(data["usage"])

        return Handler
