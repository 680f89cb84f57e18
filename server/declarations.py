"""Declare an environment's tools once, derive every interface from the declaration.

A toolkit is a class whose public methods are the tools: typed parameters and a Google-style
docstring (`Args:`). `declare` turns them into `ToolSpec`s — a pydantic model per tool for
argument validation, the JSON schema an LLM or a UI reads, the OpenAI function spec, the
prompt's tool list — and `tool_method` rebuilds each as a method of a TRL
`environment_factory` class. The AML tools (`server/tools.py`) and the committee's actions
(`committee/actions.py`) are both declared this way.

A parameter annotated `Annotated[str, Ref("entity")]` names a case record; the spec keeps
which record types each such parameter accepts, so the environment can check them.
"""

from __future__ import annotations

import functools
import inspect
import operator
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, get_args, get_origin, get_type_hints

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, create_model


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
        hint = hints[pname]
        if get_origin(hint) is Annotated:
            base, *meta = get_args(hint)
            for marker in meta:
                if isinstance(marker, Ref):
                    refs[pname] = marker.record_types
            hint = base
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


def plain_annotation(annotation: Any) -> Any:
    """An annotation that transformers' JSON-schema reader (used by TRL) understands: no
    pydantic models (-> dict) and no `Annotated` markers."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return plain_annotation(args[0])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return dict
    if origin is list:
        return list[plain_annotation(args[0])]
    if origin is dict and args:
        return dict[plain_annotation(args[0]), plain_annotation(args[1])]
    if origin in (typing.Union, types.UnionType):
        return functools.reduce(operator.or_, (plain_annotation(a) for a in args))
    return annotation


def tool_method(spec: ToolSpec, returns: str) -> Callable[..., str]:
    """A method with the tool's name, signature and Google docstring that forwards to
    `self._call(name, arguments)` (the TRL tool class's dispatcher)."""
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    for name, fld in spec.args_model.model_fields.items():
        annotations[name] = plain_annotation(fld.annotation)
        default = inspect.Parameter.empty if fld.is_required() else fld.default
        params.append(inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                        default=default, annotation=annotations[name]))
    annotations["return"] = str

    def method(self, *args: Any, **kwargs: Any) -> str:
        bound = method.__signature__.bind(self, *args, **kwargs)
        return self._call(spec.name, {k: v for k, v in bound.arguments.items() if k != "self"})

    doc = [spec.description, ""]
    if spec.params:
        doc += ["Args:", *(f"    {p}: {d or p}" for p, d in spec.params.items()), ""]
    doc += ["Returns:", f"    {returns}"]
    method.__name__ = method.__qualname__ = spec.name
    method.__doc__ = "\n".join(doc)
    method.__signature__ = inspect.Signature(params, return_annotation=str)
    method.__annotations__ = annotations
    return method
