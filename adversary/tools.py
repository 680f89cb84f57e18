"""The launderer's one tool, declared once: `submit_plan`, whose arguments are a case plan
(`scenarios.plan.CasePlan`: its fields and bounds are the tool's schema)."""

from __future__ import annotations

from memex.envkit.declarations import ToolSpec
from memex.scenarios.plan import CasePlan

SUBMIT_PLAN = ToolSpec(
    name="submit_plan", category="terminal",
    description="Submit one case plan: kind and variant (the cover story and which cross-check "
                "fails) plus optional knobs within the knob space. Rewarded by the defender's "
                "failure on the plan's cases, if the oracle can still solve them.",
    params={name: (f.description or "") for name, f in CasePlan.model_fields.items()},
    args_model=CasePlan)
TOOLS: dict[str, ToolSpec] = {SUBMIT_PLAN.name: SUBMIT_PLAN}
