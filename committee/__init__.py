"""The investment-committee environment: a Portfolio Manager runs a small multi-asset fund over
monthly periods between a noisy Research Analyst and a strict Risk Officer, under hidden market
regimes. The second environment of the project; independent of the AML world, served by the
same framework (`memex.envkit`); it imports no AML module.

The same shape as every environment of the project (`committee/README.md` has the map):
`models.py` the wire types, `client.py` the typed client, `server/app.py` the app (wiring
only), `environment.py` the episode logic (its docstring is the contract), `tools.py` the six
actions declared once; `world/` the market, the tasks and the two scripted actors; `policies/`
the heuristic, the probes and the regime oracle; `reports/` in-process episodes and the
baseline report; `adapter.py` the `--env committee` adapter.

The face is what a user types first: the client and the models. Importing it starts no server
and loads no policy.
"""

from memex.committee.client import CommitteeEnv
from memex.committee.models import CommitteeAction, CommitteeObservation, CommitteeState
from memex.committee.tools import ACTION_NAMES
from memex.committee.world.tasks import TASK_NAMES

__all__ = ["ACTION_NAMES", "TASK_NAMES", "CommitteeAction", "CommitteeEnv",
           "CommitteeObservation", "CommitteeState"]
