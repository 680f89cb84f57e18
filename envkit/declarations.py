"""Declare an environment's tools once, derive every interface from the declaration.

A toolkit is a class whose public methods are the tools: typed parameters and a Google-style
docstring (`Args:`). `declare` turns them into `ToolSpec`s — a pydantic model per tool for
argument validation, the JSON schema an LLM or a UI reads, the OpenAI function spec, the
prompt's tool list. The AML tools (`server/tools.py`) and the committee's actions
(`committee/actions.py`) are both declared this way.

A parameter annotated `Annotated[str, Ref("entity")]` names a case record; the spec keeps
which record types each such parameter accepts, so the environment can check them.

Every argument is bounded where it is declared: strings (in lists and dicts too) to
`MAX_ARG_CHARS` characters and lists and dicts to `MAX_ARG_ITEMS` items, or tighter where the
parameter says so (`Annotated[str, Field(max_length=200)]`), so validation, the
published schema (`maxLength`/`maxItems`), prompts and the TRL class all carry the same bound
and no call can make a tool echo or search unbounded text.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, create_model

# The longest string argument any tool takes: a case-file note (`MAX_NOTE_CHARS`).
MAX_ARG_CHARS = 2_000
MAX_ARG_ITEMS = 64


def bounded(hint: Any) -> Any:
    """`hint` with `MAX_ARG_CHARS` on every `str` and `MAX_ARG_ITEMS` on every list and dict."""
    if hint is str:
        return Annotated[str, Field(max_length=MAX_ARG_CHARS)]
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        return Union[tuple(bounded(a) for a in get_args(hint))]  # noqa: UP007
    if origin is list:
        (item,) = get_args(hint) or (Any,)
        return Annotated[list[bounded(item)], Field(max_length=MAX_ARG_ITEMS)]
    if origin is dict:
        key, value = get_args(hint) or (Any, Any)
        return Annotated[dict[bounded(key), bounded(value)], Field(max_length=MAX_ARG_ITEMS)]
    if isinstance(hint, type) and issubclass(hint, BaseModel):
        return _bounded_model(hint)
    return hint


@functools.cache
def _bounded_model(model: type[BaseModel]) -> type[BaseModel]:
    """A subclass of `model` (so its instances still pass isinstance checks) whose fields are
    bounded like top-level arguments; keeps the name, so the schema reads the same."""
    fields = {name: (bounded(f.annotation), f) for name, f in model.model_fields.items()}
    return create_model(model.__name__, __base__=model, __doc__=model.__doc__, **fields)


class Ref:
    """Marks a parameter whose value is the ID of a record of one of `record_types`."""

    def __init__(self, *record_types: str):
        self.record_types = record_types


@dataclass(frozen=True)
class ToolSpec:
    name: str
    category: str
    description: str
    params: dict[str, str]            # parameter -> description
    args_model: type[BaseModel]
    refs: dict[str, tuple[str, ...]] = field(default_factory=dict)  # parameter -> record types

    def json_schema(self) -> dict[str, Any]:
        """Parameter schema with `$ref`s inlined and titles dropped (LLM tool APIs and UIs
        read it directly)."""
        schema = self.args_model.model_json_schema()
        defs = schema.pop("$defs", {})

        def inline(node: Any) -> Any:
            if isinstance(node, dict):
                if "$ref" in node:
                    return inline(defs[node["$ref"].rsplit("/", 1)[-1]])
                return {k: inline(v) for k, v in node.items() if k != "title"}
            if isinstance(node, list):
                return [inline(v) for v in node]
            return node

        return inline(schema)

    def openai_tool(self) -> dict[str, Any]:
        return {"type": "function", "function": {"name": self.name,
                                                 "description": self.description,
                                                 "parameters": self.json_schema()}}

    def catalog_entry(self) -> dict[str, Any]:
        """The entry published in the action schema's `tools` list."""
        return {"name": self.name, "category": self.category, "description": self.description,
                "parameters": self.json_schema()}


def declare(toolkit: type, names: tuple[str, ...],
            category: Callable[[str], str]) -> dict[str, ToolSpec]:
    """Specs for the named public methods of `toolkit`; checks that they are all of them."""
    public = {n for n, _ in inspect.getmembers(toolkit, inspect.isfunction)
              if not n.startswith("_")}
    if public != set(names):
        raise TypeError(f"{toolkit.__name__}: declared {sorted(names)} but its public methods "
                        f"are {sorted(public)}")
    return {name: _declare_one(toolkit, name, category(name)) for name in names}


def _declare_one(toolkit: type, name: str, category: str) -> ToolSpec:
    method = getattr(toolkit, name)
    doc = docstring_parser.parse(inspect.getdoc(method) or "")
    descriptions = {p.arg_name: " ".join((p.description or "").split()) for p in doc.params}
    hints = get_type_hints(method, include_extras=True)
    fields: dict[str, Any] = {}
    refs: dict[str, tuple[str, ...]] = {}
    for pname, param in inspect.signature(method).parameters.items():
        if pname == "self":
            continue
        hint, constraints = hints[pname], []
        if get_origin(hint) is Annotated:
            base, *meta = get_args(hint)
            for marker in meta:
                if isinstance(marker, Ref):
                    refs[pname] = marker.record_types
                else:  # e.g. Field(max_length=200): a tighter bound than the default
                    constraints.append(marker)
            hint = base
        hint = bounded(hint)
        if constraints:
            hint = Annotated[(hint, *constraints)]
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[pname] = (hint, Field(default, description=descriptions.get(pname, "")))
    model = create_model(f"{name}_args", __config__=ConfigDict(extra="forbid"), **fields)
    summary = " ".join(((doc.short_description or "") + " " + (doc.long_description or ""))
                       .split())
    return ToolSpec(name, category, summary, descriptions, model, refs)


def prompt_list(specs: dict[str, ToolSpec]) -> str:
    """The tool list for an LLM prompt, one block per tool."""
    blocks = []
    for spec in specs.values():
        params = "; ".join(f"{p}: {d}" for p, d in spec.params.items()) or "none"
        blocks.append(f"- {spec.name}({', '.join(spec.params)}) [{spec.category}]: "
                      f"{spec.description}\n    args: {params}")
    return "\n".join(blocks)
