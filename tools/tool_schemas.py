"""Every form a tool's argument schema takes, in one module: a tool is defined once (a typed
function with a pydantic argument model, tools/toolkit.py) and each front door reads one of these
named variants of its schema.

- `provider_schema`: the OpenAI function schema every function-calling provider accepts (what
  `ToolSpec.openai_schema` gives: `$ref`s inlined, titles dropped, optional arguments not nullable);
- `compact_schema`: the compact mode's form of an OpenAI tool schema (the description's first
  paragraph, the parameters without descriptions, bounds or defaults; the env's errors say those);
- `strict_schema`: OpenAI's strict mode (every object closed, every property required, optional ones
  nullable), for the openai-agents SDK's `FunctionTool`;
- `google_docstring`: a Google-style docstring with an `Args:` section, what TRL's
  `environment_factory` reads a tool method's schema from.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel


def provider_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A pydantic JSON schema rewritten so every function-calling provider accepts it.

    Inlines `$defs`/`$ref`, drops `title`s, and collapses `anyOf [X, null]` of optional
    arguments to `X` (an optional argument is expressed by leaving it out of `required`).
    """
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            target = defs[node["$ref"].rsplit("/", 1)[-1]]
            merged = {**copy.deepcopy(target), **{k: v for k, v in node.items() if k != "$ref"}}
            return walk(merged)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("title", "$defs"):
                continue
            if key == "properties":
                out[key] = {name: walk(sub) for name, sub in value.items()}
            elif key in ("anyOf", "oneOf", "allOf", "prefixItems"):
                out[key] = [walk(sub) for sub in value]
            elif key in ("items", "additionalProperties", "not"):
                out[key] = walk(value)
            else:
                out[key] = value
        branches = out.get("anyOf")
        if branches is not None:
            non_null = [b for b in branches if b.get("type") != "null"]
            if len(non_null) == 1 and len(non_null) < len(branches):
                out.pop("anyOf")
                out = {**non_null[0], **out}
                if out.get("default", 0) is None:
                    out.pop("default")
        return out

    return walk(schema)


_SCHEMA_DETAIL = frozenset({"description", "maxLength", "minLength", "maximum", "minimum", "pattern", "default",
                            "additionalProperties", "title", "examples", "maxItems", "minItems"})


def compact_schema(schema: Any, *, in_properties: bool = False) -> Any:
    """A tool's OpenAI schema in the compact mode: the description's first paragraph on one line, and
    the parameters' types, enums and required lists without their descriptions, bounds and defaults
    (the env checks them and its error messages say what is wrong)."""
    if isinstance(schema, Mapping):
        if "function" in schema and "type" in schema and not in_properties:
            function = schema["function"]
            return {"type": schema["type"], "function": {
                "name": function["name"], "description": summary(function["description"]),
                "parameters": compact_schema(function["parameters"])}}
        return {k: compact_schema(v, in_properties=(k == "properties" and not in_properties))
                for k, v in schema.items() if in_properties or k not in _SCHEMA_DETAIL}
    if isinstance(schema, list | tuple):
        return [compact_schema(v) for v in schema]
    return schema


def summary(description: str) -> str:
    """The first paragraph of a tool description on one line."""
    return " ".join(description.split("\n\n")[0].split())


def google_docstring(description: str, args_model: type[BaseModel], compact: bool = False) -> str:
    """The tool's description followed by an `Args:` section documenting every argument (compact:
    the description's first paragraph and each argument's name, as `compact_schema` has them)."""
    description = summary(description) if compact else description
    lines = [description, "", "Args:"]
    for name, field in args_model.model_fields.items():
        desc = name.replace("_", " ") if compact else " ".join((field.description or name.replace("_", " ")).split())
        lines.append(f"    {name}: {desc}")
    if not compact:
        lines += ["", "Returns:", "    The tool's answer as text (an error message says what to fix)."]
    return "\n".join(lines)


STRICT_DROPPED_KEYWORDS = frozenset({"default", "minLength", "maxLength", "title"})
"""Keywords OpenAI's strict mode does not take; the env checks them itself (its own error text)."""


def _strictable(schema: Any) -> bool:
    """Whether strict mode can express `schema` without loosening it: no open objects, no untyped items."""
    if not isinstance(schema, dict):
        return False
    if schema.get("type") == "object" and (schema.get("additionalProperties") is not False
                                           or not schema.get("properties")):
        return False
    return not (schema.get("type") == "array" and not schema.get("items"))


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` that also accepts null (strict mode's way of saying an argument may be left out)."""
    if "anyOf" in schema:
        if not any(s.get("type") == "null" for s in schema["anyOf"]):
            schema["anyOf"] = [*schema["anyOf"], {"type": "null"}]
        return schema
    kind = schema.get("type")
    if isinstance(kind, str) and kind != "null":
        schema["type"] = [kind, "null"]
        if "enum" in schema and None not in schema["enum"]:
            schema["enum"] = [*schema["enum"], None]
        return schema
    if isinstance(kind, list) and "null" not in kind:
        schema["type"] = [*kind, "null"]
        return schema
    return {"anyOf": [schema, {"type": "null"}]}


def _strict(schema: Any, name: str) -> Any:
    if isinstance(schema, list):
        return [_strict(s, name) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _strict(v, name) for k, v in schema.items() if k not in STRICT_DROPPED_KEYWORDS and k != "properties"}
    if "anyOf" in out:
        kept = [s for s in out["anyOf"] if _strictable(s)]
        if not kept:
            raise ValueError(f"{name}: no alternative of {schema['anyOf']} can be written in strict mode")
        if len(kept) < len(out["anyOf"]) and "description" in out:
            out["description"] = f"{out['description']}. Send it as JSON text."
        if len(kept) == 1:
            del out["anyOf"]
            out = {**kept[0], **out}
        else:
            out["anyOf"] = kept
    if "properties" in schema:
        required = set(schema.get("required", []))
        props = {}
        for key, sub in schema["properties"].items():
            converted = _strict(sub, f"{name}.{key}")
            props[key] = converted if key in required else _nullable(converted)
        out["properties"] = props
        out["required"] = list(props)
        out["additionalProperties"] = False
    return out


def strict_schema(parameters: dict[str, Any], name: str = "tool") -> dict[str, Any]:
    """The strict-mode form of a tool's argument schema: every object closed, every property required,
    optional ones nullable, keywords strict mode lacks removed, open alternatives dropped where a closed
    one remains (`plan`: the JSON text). `ValueError` naming the argument when that is impossible."""
    result: dict[str, Any] = _strict(copy.deepcopy(dict(parameters)), name)
    return result
