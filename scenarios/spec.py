"""`CaseSpec`: the one reset contract of the AML environment — what names a case.

Every way into a case goes through it: the HTTP reset body (`server.app.MemexResetRequest` is a
`CaseSpec` plus the episode's OS sizes), `MemexEnvironment.reset`'s keywords, the adapter's
episode grid and hidden-case regeneration, the adversarial split's entries, the curriculum's
levels and AgentOS's episode list. `scenarios.cases.build(spec)` makes the case.

| field | meaning |
|---|---|
| seed | the generator's seed (None: the environment draws one) |
| difficulty | easy / medium / hard (`model.DIFFICULTIES`) |
| kind | a kind name, "benign", "suspicious", or None (drawn with `benign_share`) |
| variant | pins a variant of the kind, hold-outs included |
| benign_share | the benign share when the kind is drawn |
| case | a fixed case by name ("1mdb"): seed, kind and plan are then ignored |
| plan | a case plan (`scenarios.plan.CasePlan`: a dict or JSON text), or "NAME/INDEX" |

A plan builds the case from (plan, seed). "NAME/INDEX" names an entry of an adversarial split
(`scenarios.splits`, e.g. "adversarial/3"): its plan, on its seed unless `seed` is given.

Aliases (`envkit.tasks.unalias`), replaced by the fields they name before the spec is checked:
`task_id` — a difficulty (the prototype's `{"task_id": "easy"}`), a kind or "benign" /
"suspicious", a task of OpenEnv's Task API ("test/12": `CASE_GRIDS`, seed-major over difficulty
x kind; "adversarial/3": that split entry), or a fixed case ("1mdb"); `split` + `index` — that
task id in two fields; `parameters` — the fields in one object. A field named twice must agree.

The memory sizes (`ram_pages`, `kernel_capacity`) are not here: they size the agent's machine
(`state_manager.OSState`), not the world, and the same case is played under any of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from memex.envkit.episodes import EpisodeSpec
from memex.envkit.errors import validation_message
from memex.envkit.tasks import RESET_ALIASES, Grid, TaskCatalog, unalias
from memex.scenarios.generator import DEFAULT_BENIGN_SHARE, KIND_GROUPS, KINDS, SPLITS
from memex.scenarios.model import DIFFICULTIES, Difficulty

MAX_NAME_CHARS = 64
# A plan may come as JSON text; a split reference ("adversarial/3") is far shorter.
MAX_PLAN_TEXT_CHARS = 4_096


# The generated cases as tasks (OpenEnv's Task API, `envkit.tasks`): each seed split crossed
# with every difficulty x kind, seed-major. `scenarios.tasks` adds the adversarial split.
CASE_GRIDS = TaskCatalog(tuple(
    Grid(name, name, seeds, {"difficulty": tuple(DIFFICULTIES), "kind": tuple(KINDS)},
         description=f"generated cases on the {name} seeds, every difficulty x kind")
    for name, seeds in SPLITS.items()))


def named_case(task_id: str) -> dict[str, Any]:
    """The fields a `task_id` names that is not a task of `CASE_GRIDS`: a difficulty, a kind
    (or kind group), an adversarial split entry ("adversarial/3") or a fixed case ("1mdb")."""
    if task_id in DIFFICULTIES:
        return {"difficulty": task_id}
    if task_id in KINDS or task_id in KIND_GROUPS:
        return {"kind": task_id}
    if "/" in task_id:
        return {"plan": task_id}
    return {"case": task_id}


class CaseSpec(BaseModel):
    """One case, exactly (see the module docstring). Strict: `seed: true` or `seed: "7"` is
    refused, not converted."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    seed: int | None = Field(default=None, ge=0, description="The generator's seed (none: "
                                                             "the environment draws one).")
    difficulty: Difficulty = Field(default="medium", description="Sets the views to combine, "
                                   "the noise, the decoys and the step budget.")
    kind: str | None = Field(default=None, max_length=MAX_NAME_CHARS, description=(
        "A case kind, 'benign', 'suspicious', or none (drawn with benign_share)."))
    variant: str | None = Field(default=None, max_length=MAX_NAME_CHARS,
                                description="A variant of the kind (hold-outs included).")
    benign_share: float = Field(default=DEFAULT_BENIGN_SHARE, gt=0, lt=1,
                                description="The benign share when the kind is drawn.")
    case: str | None = Field(default=None, max_length=MAX_NAME_CHARS,
                             description="A fixed case by name ('1mdb').")
    plan: dict[str, Any] | Annotated[str, Field(max_length=MAX_PLAN_TEXT_CHARS)] | None = Field(
        default=None, description=(
            "A case plan (`scenarios.plan`), or a reference 'adversarial/INDEX' to an entry of "
            "the adversarial split: the case is built from (plan, seed). Served back only "
            "with the truth of a finished episode."))

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        """`task_id`, `split` + `index` and `parameters` become the fields they name."""
        return unalias(data, CASE_GRIDS, named_case) if isinstance(data, Mapping) else data

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> CaseSpec:
        """The spec of reset keywords, aliases included (other keywords, such as the OS sizes,
        are not the case's and are left out); a `ValueError` says in one line what is wrong."""
        try:
            return cls.model_validate({k: v for k, v in options.items()
                                       if k in cls.model_fields or k in RESET_ALIASES})
        except ValidationError as exc:
            raise ValueError(validation_message(exc)) from None

    @classmethod
    def from_plan(cls, plan: Mapping[str, Any], seed: int) -> CaseSpec:
        """The case of a plan dict on `seed`; kind, variant and difficulty are the plan's."""
        return cls(seed=seed, difficulty=plan.get("difficulty") or "medium", kind=plan["kind"],
                   variant=plan.get("variant"), plan=dict(plan))

    @property
    def is_reference(self) -> bool:
        """Whether `plan` names an adversarial split entry rather than holding a plan."""
        return isinstance(self.plan, str) and not self.plan.lstrip().startswith("{")

    @property
    def task(self) -> str:
        """The label of its episodes: the fixed case's name, the kind, or "any"."""
        return self.case or self.kind or "any"

    def options(self) -> dict[str, Any]:
        """The reset keywords that name this case: the fields it was given, minus None."""
        return self.model_dump(mode="json", exclude_unset=True, exclude_none=True)

    def episode(self, repeat: int = 0) -> EpisodeSpec:
        """The episode spec that resets to this case (`envkit.episodes.play` takes it)."""
        return EpisodeSpec(self.task, self.difficulty, self.seed, self.options(), repeat)
