"""Pydantic models built without validation from values their builder has already typed.

A model that mixes in `Trusted` gets `Model.trusted(**fields)`: the instance validation would
build, without the validation. Two hot paths use it: the case generator (`scenarios.builder`)
writes ~150 records per case, where validation took about a third of generation time, and the
environment step (`server.environment`) builds an observation and its context views every
step, where validating them took about a third of the step. pydantic's own `model_construct`
is slower than validation, so the constructor is generated from the fields, like a dataclass
`__init__`: keyword-only parameters, required fields without a default, so an unknown or
missing field is a `TypeError`. A field whose default comes from a factory (a fresh list or
dict per instance) has no default here either: the caller passes it, so no two instances ever
share a default container.

The instance's dict is set in declaration order (the serialised field order) and every field is
marked set, defaults included (validation marks the fields passed to it: the same when the
builder passes every field, as the environment does). A model's instances share one set of all
its field names: pydantic only ever adds a name to it (assigning a field adds one already
there) and copies it before it changes one (`model_copy`).

Types are not checked, and values are not copied or coerced as validation would (a list given
to a `list` field is kept, not copied; an int given to a `float` field stays an int): the
builder passes exactly what validation would produce. Golden tests pin both uses against the
validated models (`tests/unit/test_generation_golden.py`, `test_observation_golden.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from pydantic import BaseModel

# Setters of the instance dict and of the three slots every pydantic model has, taken from their
# descriptors once: calling one costs less than `object.__setattr__`, which looks the name up.
_SETTERS = {"_set_dict": vars(BaseModel)["__dict__"].__set__,
            "_set_fields_set": vars(BaseModel)["__pydantic_fields_set__"].__set__,
            "_set_extra": vars(BaseModel)["__pydantic_extra__"].__set__,
            "_set_private": vars(BaseModel)["__pydantic_private__"].__set__}


class Trusted:
    """Mixin for a pydantic model (list it before the model base): sets `trusted` on every
    subclass."""

    trusted: ClassVar[Callable[..., Any]]

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls.trusted = staticmethod(trusted_constructor(cls))


def trusted_constructor(cls: type[BaseModel]) -> Callable[..., Any]:
    """A constructor of `cls` that skips validation (see the module docstring)."""
    if cls.__private_attributes__ or cls.model_config.get("extra") == "allow":
        raise TypeError(f"{cls.__name__}: private attributes and extra fields are not built here")
    fields = cls.model_fields
    defaults = {name: f.get_default() for name, f in fields.items()
                if not f.is_required() and f.default_factory is None}
    params = ", ".join(f"{name}=_defaults[{name!r}]" if name in defaults else name
                       for name in fields)
    values = ", ".join(f"{name!r}: {name}" for name in fields)
    source = (f"def trusted({'*, ' + params if params else ''}):\n"
              f"    obj = _new(_cls)\n"
              f"    _set_dict(obj, {{{values}}})\n"
              f"    _set_fields_set(obj, _names)\n"
              f"    _set_extra(obj, None)\n"
              f"    _set_private(obj, None)\n"
              f"    return obj\n")
    namespace = {"_cls": cls, "_defaults": defaults, "_names": set(fields), "_new": object.__new__,
                 **_SETTERS}
    exec(source, namespace)  # the source is built above from the field names only
    trusted = namespace["trusted"]
    trusted.__qualname__ = f"{cls.__name__}.trusted"
    return trusted
