"""The typed OpenEnv WebSocket client of the committee environment, for `/ws` sessions:

    with CommitteeEnv(base_url="http://localhost:7861").sync() as env:
        result = env.reset(task="research_risk_conflict", seed=3)
        result = env.step(CommitteeAction(action_type="query_research", query_target="TECH"))
"""

from __future__ import annotations

from memex.committee.models import CommitteeObservation, CommitteeState
from memex.envkit.client import TypedEnvClient


class CommitteeEnv(TypedEnvClient):
    """Typed WebSocket client for a committee server (one session per client instance)."""

    observation_cls = CommitteeObservation
    state_cls = CommitteeState
