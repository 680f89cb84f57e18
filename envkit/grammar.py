"""Grammar-constrained decoding, derived from the tool declarations.

One more interface generated from `envkit.declarations` (like `/schema`, the prompt's tool list
and the OpenAI specs): the grammar of one tool call in a given state, so that every sampled
reply is a call the environment accepts.

- The tool is one of the declared tools (those callable in the state: a tool whose required
  argument has no allowed value is left out).
- Its arguments follow the tool's JSON schema (types, required fields, no extra fields, the
  declared bounds), with the state's **closed sets** in place: a `Ref` parameter takes one of
  the IDs of its record types that the agent can see, and a parameter (at any depth) named in
  `closed` takes one of those values (AML: red-flag codes and typologies are already closed by
  their declarations; cited sections are the kernel's, evidence and subjects the visible IDs).
  The environment's adapter says what the sets are (`EnvAdapter.closed_sets`); nothing here
  knows an environment.

Three forms, from one derivation:

- `call_schema`: the JSON schema of the whole reply `{"tool": ..., "arguments": {...}}`; an
  OpenAI-compatible endpoint takes it as `response_format` (vLLM enforces it with its own
  guided-decoding backend, llguidance or xgrammar).
- `call_grammar`: an llguidance Lark grammar of what follows `CALL_PREFIX`, which the prompt
  ends with. Given the tokenizer's ids of each tool name (`name_tokens`), the name must be those
  exact tokens: the decision is whole tokens (`file` or `close`), never spread over sub-word
  pieces, so a policy gradient pushes on the choice itself.
- `CallConstraint`: llguidance matchers over a Hugging Face fast tokenizer, and a transformers
  `LogitsProcessor` that masks every token the grammar forbids, row by row of a batch
  (`model.generate(..., logits_processor=[...])`): the trainer's rollouts and the local `ckpt:`
  policy decode through it.

The reply's form is canonical: arguments in declaration order, `", "` and `": "` separators, no
other whitespace. `Limits` tightens free text and list lengths for generation (a small model
given 2,000 characters of note fills them); the default keeps the declared bounds, so the
grammar accepts every call the environment accepts in that form and state.

llguidance was chosen over xgrammar, outlines and lm-format-enforcer: see docs/training.md.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memex.envkit.declarations import ToolSpec

CALL_PREFIX = '{"tool": "'
# How the JSON of a call is written: no free whitespace, one separator each.
JSON_FORMAT = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}


class GrammarError(ValueError):
    """A grammar llguidance would not compile, or a state in which no tool can be called."""


@dataclass(frozen=True)
class Limits:
    """Tighter bounds for generation: free-text strings (`text_chars`) and lists
    (`list_items`); None keeps the declared bound."""

    text_chars: int | None = None
    list_items: int | None = None

    def clip(self, value: Any) -> Any:
        """`value` (a call's arguments) cut to these bounds: every list to `list_items`, every
        free-text string (one with a space: IDs, codes and section numbers have none) to
        `text_chars` — a demonstrator's call as the grammar lets a model write it."""
        if isinstance(value, dict):
            return {k: self.clip(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.clip(v) for v in value[:self.list_items]]
        if isinstance(value, str) and self.text_chars is not None and " " in value:
            return value[:self.text_chars].rstrip()
        return value


@dataclass(frozen=True)
class Rule:
    """A closed set that is not a list of values: a string field's `pattern` (a regular
    expression over the whole value, its length bound included) or a number's bounds."""

    pattern: str | None = None
    minimum: float | None = None
    maximum: float | None = None


def _tighter(bound: int | None, cap: int | None) -> int | None:
    if cap is None:
        return bound
    return cap if bound is None else min(bound, cap)


def _restrict(node: dict[str, Any], allowed: Sequence[str] | Rule | None,
              closed: Mapping[str, Sequence[str]], limits: Limits) -> dict[str, Any] | None:
    """`node` (a field's schema) with its strings restricted to `allowed` (None: not closed;
    for a list, its items), nested objects closed by `closed`, and the limits applied; None
    when no value satisfies it."""
    node = dict(node)
    if "anyOf" in node:
        branches = [b for b in (_restrict(b, allowed, closed, limits) for b in node["anyOf"])
                    if b is not None]
        if not branches:
            return None
        node["anyOf"] = branches
        return node
    kind = node.get("type")
    if isinstance(allowed, Rule):
        if kind == "string" and allowed.pattern is not None:
            return {"type": "string", "pattern": allowed.pattern}
        if kind in ("integer", "number"):
            bounds = {"minimum": allowed.minimum, "maximum": allowed.maximum}
            return {**node, **{k: v for k, v in bounds.items() if v is not None}}
        return node
    if kind == "array":
        items = _restrict(node.get("items", {}), allowed, closed, limits)
        top = _tighter(node.get("maxItems"), limits.list_items)
        if items is None:  # no item can be written: only the empty list
            items, top = {"type": "string"}, 0
        if top is not None:
            if top < node.get("minItems", 0):
                return None
            node["maxItems"] = top
        node["items"] = items
        return node
    if kind == "object":
        return _object(node, {}, {}, closed, limits)
    if kind == "string" and "enum" not in node:
        if allowed is not None:
            if not allowed:
                return None
            return {"type": "string", "enum": list(dict.fromkeys(allowed))}
        top = _tighter(node.get("maxLength"), limits.text_chars)
        if top is not None:
            node["maxLength"] = top
    return node


def _object(node: dict[str, Any], refs: Mapping[str, Sequence[str]],
            ids: Mapping[str, Sequence[str]], closed: Mapping[str, Sequence[str]],
            limits: Limits) -> dict[str, Any] | None:
    """An object schema with its fields restricted (`refs`: field -> record types, closed by
    `ids`; `closed` applies by field name at any depth); None when a required field cannot be
    satisfied. An optional field with no allowed value is left out (no extra fields)."""
    node = dict(node)
    required = set(node.get("required", ()))
    properties = {}
    for name, prop in node.get("properties", {}).items():
        if name in refs:
            allowed = [i for kind in refs[name] for i in ids.get(kind, ())]
        else:
            allowed = closed.get(name)
        restricted = _restrict(prop, allowed, closed, limits)
        if restricted is None:
            if name in required:
                return None
            continue
        properties[name] = restricted
    node["properties"] = properties
    node["required"] = [r for r in node.get("required", ()) if r in properties]
    node["additionalProperties"] = False
    return node


def arguments_schema(spec: ToolSpec, ids: Mapping[str, Sequence[str]],
                     closed: Mapping[str, Sequence[str]],
                     limits: Limits = Limits()) -> dict[str, Any] | None:
    """The JSON schema of `spec`'s arguments in a state: `ids` (record type -> the IDs the
    agent can see) close its `Ref` parameters, `closed` (field name -> allowed values) every
    field of that name. None when the tool cannot be called in the state."""
    schema = copy.deepcopy(spec.json_schema())
    schema.pop("description", None)
    return _object(schema, spec.refs, ids, closed, limits)


def callable_tools(specs: Mapping[str, ToolSpec], ids: Mapping[str, Sequence[str]],
                   closed: Mapping[str, Sequence[str]],
                   limits: Limits = Limits()) -> dict[str, dict[str, Any]]:
    """Tool name -> its arguments' schema, for the tools callable in the state (declaration
    order); `GrammarError` if there is none."""
    out = {}
    for name, spec in specs.items():
        schema = arguments_schema(spec, ids, closed, limits)
        if schema is not None:
            out[name] = schema
    if not out:
        raise GrammarError("no tool can be called in this state")
    return out


def call_schema(specs: Mapping[str, ToolSpec], ids: Mapping[str, Sequence[str]],
                closed: Mapping[str, Sequence[str]],
                limits: Limits = Limits()) -> dict[str, Any]:
    """The JSON schema of one reply, `{"tool": <name>, "arguments": {...}}`, in the state."""
    return {"anyOf": [
        {"type": "object", "properties": {"tool": {"const": name}, "arguments": schema},
         "required": ["tool", "arguments"], "additionalProperties": False}
        for name, schema in callable_tools(specs, ids, closed, limits).items()],
        "x-guidance": JSON_FORMAT}


def _lark_literal(text: str) -> str:
    return json.dumps(text)  # a JSON string literal is a valid Lark string literal


_ARGUMENTS_KEY = _lark_literal('", "arguments": ')


def call_grammar(specs: Mapping[str, ToolSpec], ids: Mapping[str, Sequence[str]],
                 closed: Mapping[str, Sequence[str]], *,
                 name_tokens: Mapping[str, Sequence[int]] | None = None,
                 limits: Limits = Limits()) -> str:
    """The llguidance Lark grammar of what follows `CALL_PREFIX` in a reply:
    `<name>", "arguments": {...}}`. With `name_tokens` (tool -> its token ids) the name must be
    exactly those tokens."""
    tools = callable_tools(specs, ids, closed, limits)
    lines = ["start: " + " | ".join(f"c{i}" for i in range(len(tools)))]
    for i, (name, schema) in enumerate(tools.items()):
        if name_tokens is not None:
            head = " ".join(f"<[{t}]>" for t in name_tokens[name])
        else:
            head = _lark_literal(name)
        lines.append(f'c{i}: {head} {_ARGUMENTS_KEY} a{i} "}}"')
        lines.append(f"a{i}: %json " + json.dumps({**schema, "x-guidance": JSON_FORMAT}))
    return "\n".join(lines) + "\n"


def canonical_call(specs: Mapping[str, ToolSpec], tool: str, arguments: Mapping[str, Any],
                   ) -> str:
    """A call written in the grammar's form: its arguments as the tool's model validates and
    dumps them (declaration order, the fields given), after `CALL_PREFIX`. `ValidationError` if
    the environment would reject the arguments."""
    args = specs[tool].args_model.model_validate(dict(arguments))
    body = json.dumps(args.model_dump(mode="json", exclude_unset=True), separators=(", ", ": "),
                      ensure_ascii=False)
    return f'{CALL_PREFIX}{tool}", "arguments": {body}}}'


# Bounds for generation: enough for a note, a reason or a narrative of a few sentences and a
# SAR's lists; a small model given the declared 2,000 characters fills them.
GENERATION_LIMITS = Limits(text_chars=160, list_items=6)


@dataclass(frozen=True)
class StateGrammar:
    """The grammar of one state: the declarations and the state's closed sets
    (`EnvAdapter.state_grammar(obs)`), in either form."""

    specs: Mapping[str, ToolSpec]
    ids: Mapping[str, Sequence[str]]
    closed: Mapping[str, Sequence[str]]

    def schema(self, limits: Limits = Limits()) -> dict[str, Any]:
        return call_schema(self.specs, self.ids, self.closed, limits)

    def lark(self, *, name_tokens: Mapping[str, Sequence[int]] | None = None,
             limits: Limits = Limits()) -> str:
        return call_grammar(self.specs, self.ids, self.closed, name_tokens=name_tokens,
                            limits=limits)

    def writable(self, arguments: Mapping[str, Any], limits: Limits = Limits()) -> dict[str, Any]:
        """`arguments` as a model could write them in this state: list items outside their
        field's closed set dropped (IDs the agent cannot see, sections not loaded), an object
        item left without the list items it had dropped, then `limits.clip`. A demonstrator
        that remembers IDs outside the context becomes a target the grammar accepts."""
        def keep(value: Any, field: str | None) -> Any:
            if isinstance(value, dict):
                return {k: keep(v, k) for k, v in value.items()}
            if not isinstance(value, list):
                return value
            allowed = self.closed.get(field) if field else None
            if isinstance(allowed, Sequence) and not isinstance(allowed, str):
                value = [v for v in value if v in allowed]
            out = []
            for v in value:
                kept = keep(v, field)
                emptied = isinstance(v, dict) and any(isinstance(x, list) and x and not kept[k]
                                                      for k, x in v.items())
                if not emptied:
                    out.append(kept)
            return out

        return limits.clip(keep(dict(arguments), None))

    def response_format(self, limits: Limits = GENERATION_LIMITS) -> dict[str, Any]:
        """The OpenAI `response_format` of a guided-JSON request (vLLM and compatible servers
        enforce it)."""
        return {"type": "json_schema",
                "json_schema": {"name": "tool_call", "schema": self.schema(limits)}}
