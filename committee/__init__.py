"""The investment-committee environment: a Portfolio Manager runs a small multi-asset fund over
monthly periods between a noisy Research Analyst and a strict Risk Officer, under hidden market
regimes. The second environment of the project; independent of the AML world, served by the
same framework (`memex.envkit`); it imports no AML module.

Where things are:
- `world.py` the market (assets, regimes, return model, mandate); `tasks.py` the four tasks,
  their seeded variants and the seed splits; `research.py` and `risk.py` the two actors;
  `book.py` the fund's book; `optimizer.py` mandate-constrained mean-variance.
- `actions.py` the six actions, declared once; `models.py` the wire types; `rewards.py` the
  ten reward terms; `scoring.py` the [-1, 1] episode score; `environment.py` the OpenEnv
  environment (its docstring is the contract); `references.py` the score's reference returns
  (the regime oracle's), injected into `ScoredCommitteeEnvironment`.
- `server.py` the app (`python -m memex.committee.server --port 7861`); `client.py` the typed
  WebSocket client; `prompting.py` the LLM prompt and renderers; `policies.py` baselines,
  probes and the regime oracle; `report.py` the baseline report and `run_episode`;
  `training.py` the trainer's reward signals; `adapter.py` the `--env committee` adapter of
  `memex.envkit.adapter`.

The names below are what a trainer or an evaluation harness needs; importing this package does
not start a server.
"""

from memex.committee.actions import ACTION_NAMES, ACTIONS
from memex.committee.client import CommitteeEnv
from memex.committee.environment import CommitteeEnvironment
from memex.committee.models import CommitteeAction, CommitteeObservation, CommitteeState
from memex.committee.policies import BASELINES, POLICIES, PROBES, make_policy
from memex.committee.prompting import (
    SYSTEM_PROMPT,
    parse_action,
    render_observation,
    render_step,
    system_prompt,
)
from memex.committee.references import ScoredCommitteeEnvironment
from memex.committee.report import run_episode
from memex.committee.rewards import TERMS
from memex.committee.scoring import episode_metrics
from memex.committee.tasks import CANONICAL_SEED, SPLITS, TASK_NAMES, TASKS, episode_grid

SERVER_MODULE = "memex.committee.server"

__all__ = [
    "ACTIONS", "ACTION_NAMES", "BASELINES", "CANONICAL_SEED", "POLICIES", "PROBES",
    "SERVER_MODULE", "SPLITS", "SYSTEM_PROMPT", "TASKS", "TASK_NAMES", "TERMS",
    "CommitteeAction", "CommitteeEnv", "CommitteeEnvironment", "CommitteeObservation",
    "CommitteeState", "ScoredCommitteeEnvironment", "episode_grid", "episode_metrics",
    "make_policy", "parse_action", "render_observation", "render_step", "run_episode",
    "system_prompt",
]
