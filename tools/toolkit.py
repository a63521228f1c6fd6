"""The toolkit: one typed function per tool, with generated schemas and adapters (every tool of the
package, the lookup tools of tools/lookup/ and the env's itinerary tools, is defined with it).

A tool is a plain function `fn(ctx, args) -> ToolResult` whose `args` is a pydantic model. The
`Registry.tool` decorator records it as a `ToolSpec` (name = function name, description = the
docstring). From that single definition the spec generates the OpenAI function schema, validates
raw arguments from a model (dict or JSON string) into error results instead of exceptions, and
builds a LangChain `StructuredTool` bound to the hidden context. The registry is generic over the
context type: lookup tools take the `Database`; the env registers its itinerary tools, whose
context is the episode, in a registry of its own made with `make_registry`.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Generic, NoReturn, TypeVar

from pydantic import BaseModel, ValidationError

from utp_env.tools.database import suggest
from utp_env.tools.errors import UnknownNameError
from utp_env.tools.tool_schemas import provider_schema

if TYPE_CHECKING:
    from langchain_core.tools import StructuredTool

Ctx = TypeVar("Ctx")
MAX_ARGUMENT_CHARS = 20_000


@dataclass(slots=True)
class ToolResult:
    """What a tool call returns: `text` for the model to read, `rows` for programs.

    `ok` is False exactly when `error` is set; `truncated` counts result rows left out of `text`
    (they are also left out of `rows`, which hold the rows shown).
    """

    ok: bool
    text: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    truncated: int = 0

    @classmethod
    def failure(cls, message: str) -> ToolResult:
        """An error result whose text is the message, so the model reads what to fix."""
        return cls(ok=False, text=f"Error: {message}", error=message)


class ToolError(ValueError):
    """A tool's arguments are well-typed but wrong for the database (unknown name, bad range).

    `argument` names the offending argument so the message says where to look.
    """

    def __init__(self, message: str, argument: str | None = None) -> None:
        self.argument = argument
        super().__init__(f"argument '{argument}': {message}" if argument else message)


@dataclass(frozen=True)
class ToolSpec(Generic[Ctx]):
    """One registered tool: its name, LLM-facing description, argument model and function.

    `peers` are the tools of its registry (itself included): an unknown argument that another of
    them takes is named with that tool (`submit` given `plan` points to `submit_plan`)."""

    name: str
    description: str
    args_model: type[BaseModel]
    fn: Callable[[Ctx, Any], ToolResult]
    peers: Mapping[str, ToolSpec[Ctx]] = field(default_factory=dict, repr=False, compare=False)

    def parameters_schema(self) -> dict[str, Any]:
        """JSON schema of the arguments with `$ref`s inlined, titles and null branches dropped
        (built once per tool, shared and immutable: see `FrozenDict`)."""
        return self._schema["function"]["parameters"]

    def openai_schema(self) -> dict[str, Any]:
        """The OpenAI function-calling declaration of this tool: one shared, immutable object per tool
        (mutating it raises TypeError; `copy.deepcopy` or `thaw` give a plain mutable copy)."""
        return self._schema

    @cached_property
    def _schema(self) -> FrozenDict:
        return freeze({"type": "function",
                       "function": {"name": self.name, "description": self.description,
                                    "parameters": provider_schema(self.args_model.model_json_schema())}})

    def parse_args(self, raw_args: dict[str, Any] | str | None) -> BaseModel | str:
        """Validate raw arguments into the model; on failure return the error message instead."""
        if raw_args is None or raw_args == "":
            raw_args = {}
        if isinstance(raw_args, str | bytes):
            if len(raw_args) > MAX_ARGUMENT_CHARS:
                return f"arguments are {len(raw_args)} characters long; the limit is {MAX_ARGUMENT_CHARS}"
            try:
                raw_args = json.loads(raw_args)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                return (f"arguments are not valid JSON ({getattr(exc, 'msg', exc)} at position "
                        f"{getattr(exc, 'pos', '?')}); send a JSON object such as {self._example()}")
        if not isinstance(raw_args, dict):
            return (f"arguments must be a JSON object of named arguments, not {type(raw_args).__name__}; "
                    f"send e.g. {self._example()}")
        try:
            return self.args_model.model_validate(raw_args)
        except ValidationError as exc:
            return format_validation_error(exc, self.args_model, self.peers)

    def invoke(self, ctx: Ctx, raw_args: dict[str, Any] | str | None) -> ToolResult:
        """Validate the arguments and run the tool; bad input yields an error result, never raises.

        Expected failures (unknown names, empty ranges, wrong formats) are `ToolError`,
        `UnknownNameError` or `ValueError` from the tool and become error results. Anything else is
        a bug and propagates so that it is seen.
        """
        args = self.parse_args(raw_args)
        if isinstance(args, str):
            return ToolResult.failure(f"{self.name}: {args}")
        try:
            return self.fn(ctx, args)
        except (ToolError, UnknownNameError, ValueError) as exc:
            return ToolResult.failure(f"{self.name}: {exc}")

    def langchain_tool(self, ctx: Ctx) -> StructuredTool:
        """This tool as a LangChain StructuredTool bound to `ctx` (hidden from the model).

        The model sees the argument model; the tool returns the result text (errors included).
        """
        from langchain_core.tools import StructuredTool

        def run(**kwargs: Any) -> str:
            return self.invoke(ctx, kwargs).text

        def on_invalid(exc: ValidationError) -> str:
            return ToolResult.failure(f"{self.name}: {format_validation_error(exc, self.args_model, self.peers)}").text

        return StructuredTool.from_function(func=run, name=self.name, description=self.description,
                                            args_schema=self.args_model, infer_schema=False,
                                            handle_validation_error=on_invalid)

    def _example(self) -> str:
        required = [n for n, f in self.args_model.model_fields.items() if f.is_required()]
        return "{" + ", ".join(f'"{n}": ...' for n in required) + "}"


class Registry(Generic[Ctx]):
    """An ordered set of tools sharing one context type."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.tools: dict[str, ToolSpec[Ctx]] = {}

    def tool(self, fn: Callable[[Ctx, Any], ToolResult]) -> Callable[[Ctx, Any], ToolResult]:
        """Decorator: register `fn(ctx, args: Model) -> ToolResult` under its own name."""
        params = list(inspect.signature(fn).parameters.values())
        if len(params) != 2:
            raise TypeError(f"tool {fn.__name__} must take (context, args), not {len(params)} parameters")
        try:
            hints = inspect.get_annotations(fn, eval_str=True)
        except NameError as exc:
            raise TypeError(f"tool {fn.__name__}: cannot resolve its annotations ({exc}); define the argument "
                            "model at module level") from None
        model = hints.get(params[1].name)
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise TypeError(f"tool {fn.__name__}: the args parameter must be annotated with a pydantic model")
        if not fn.__doc__:
            raise TypeError(f"tool {fn.__name__} needs a docstring: it is the description the model reads")
        if fn.__name__ in self.tools:
            raise ValueError(f"tool {fn.__name__!r} is already registered in {self.name}")
        self.tools[fn.__name__] = ToolSpec(fn.__name__, inspect.cleandoc(fn.__doc__), model, fn, self.tools)
        return fn

    def __getitem__(self, name: str) -> ToolSpec[Ctx]:
        return self.tools[name]

    def get(self, name: str) -> ToolSpec[Ctx] | None:
        return self.tools.get(name)

    def invoke(self, ctx: Ctx, name: str, raw_args: dict[str, Any] | str | None) -> ToolResult:
        """Run tool `name`; an unknown name gives an error result listing the closest tools."""
        spec = self.tools.get(name) if isinstance(name, str) else None
        if spec is None:
            close = suggest(str(name), self.tools) or list(self.tools)
            return ToolResult.failure(f"unknown tool {name!r}; available tools: {', '.join(close)}")
        return spec.invoke(ctx, raw_args)

    def openai_schemas(self) -> list[dict[str, Any]]:
        """The tools' OpenAI schemas: a new list of the shared, immutable per-tool schemas."""
        return [spec.openai_schema() for spec in self.tools.values()]

    def langchain_tools(self, ctx: Ctx) -> list[StructuredTool]:
        return [spec.langchain_tool(ctx) for spec in self.tools.values()]


def make_registry(name: str) -> Registry[Any]:
    """A new, empty registry (e.g. the env's itinerary tools, whose context is the episode)."""
    return Registry(name)


# ---------------------------------------------------------------- schemas and error messages


def _immutable(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(f"tool schemas are shared and immutable ({type(self).__name__}); "
                    "mutate a copy: copy.deepcopy(schema) or utp_env.tools.toolkit.thaw(schema)")


class FrozenDict(dict[str, Any]):
    """A dict that refuses changes: tool schemas are built once and shared by every episode.

    Still a `dict` to `json`, `jsonschema` and LangChain; `copy.copy`/`copy.deepcopy` return plain
    mutable dicts, and it pickles as one.
    """

    __slots__ = ()
    __setitem__ = __delitem__ = update = pop = popitem = clear = setdefault = __ior__ = _immutable

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return thaw(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))


class FrozenList(list[Any]):
    """A list that refuses changes (the list members of a `FrozenDict` schema)."""

    __slots__ = ()
    __setitem__ = __delitem__ = append = extend = insert = pop = remove = clear = sort = reverse = _immutable
    __iadd__ = __imul__ = _immutable

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return thaw(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (list(self),))


def freeze(value: Any) -> Any:
    """`value` with every dict and list (recursively) made a FrozenDict / FrozenList."""
    if isinstance(value, dict):
        return FrozenDict({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return FrozenList(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """A plain, mutable deep copy of a (frozen) schema."""
    if isinstance(value, dict):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, list):
        return [thaw(v) for v in value]
    return value


def format_validation_error(exc: ValidationError, model: type[BaseModel],
                            peers: Mapping[str, ToolSpec[Any]] | None = None) -> str:
    """One line per problem, naming the argument, what was wrong and what it expects; an unknown
    argument lists the valid ones (or says the tool takes none) and names the `peers` (the other
    tools of the registry) that take an argument of that name."""
    fields = model.model_fields
    parts = []
    for err in exc.errors(include_url=False):
        loc = [str(p) for p in err["loc"]]
        name = loc[0] if loc else "arguments"
        where = ".".join(loc) if loc else name
        info = fields.get(name)
        expects = f" (expected: {info.description})" if info is not None and info.description else ""
        if err["type"] == "missing":
            parts.append(f"missing required argument '{name}'{expects}")
        elif err["type"] == "extra_forbidden":
            valid = f"valid arguments: {', '.join(fields)}" if fields else "this tool takes no arguments (send {})"
            takers = [tool for tool, spec in (peers or {}).items()
                      if spec.args_model is not model and name in spec.args_model.model_fields]
            elsewhere = f"; '{name}' is an argument of {', '.join(takers)}" if takers else ""
            parts.append(f"unknown argument '{where}'; {valid}{elsewhere}")
        else:
            got = json.dumps(err.get("input"), default=str)
            if len(got) > 80:
                got = got[:77] + "..."
            parts.append(f"argument '{where}': {err['msg']} (got {got}){expects}")
    return "; ".join(parts)
