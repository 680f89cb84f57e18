"""The AML environment's policies by name: baselines, exploit probes, the heuristic and the
oracle (the committee's are in `memex.committee.policies`)."""

from __future__ import annotations

from collections.abc import Callable

from memex.policies.base import Policy
from memex.policies.heuristic import Heuristic
from memex.policies.oracle import Oracle
from memex.policies.probes import (
    AllCodesSar,
    AlwaysClose,
    AlwaysSar,
    NeverDecide,
    OsFarming,
    RandomPolicy,
    ToolSpam,
)
from memex.policies.surface_probes import AlertOnly, MemorisedCloser, MemorisedSar, OneLookup

POLICIES: dict[str, Callable[[], Policy]] = {
    "heuristic": Heuristic, "oracle": Oracle, "random": RandomPolicy, "always_sar": AlwaysSar,
    "always_close": AlwaysClose, "all_codes_sar": AllCodesSar, "tool_spam": ToolSpam,
    "os_farming": OsFarming, "never_decide": NeverDecide,
    "memorised_closer": MemorisedCloser, "memorised_sar": MemorisedSar, "alert_only": AlertOnly,
    "one_lookup": OneLookup,
}
PROBES = ("always_sar", "always_close", "all_codes_sar", "tool_spam", "os_farming",
          "never_decide", "random", "memorised_closer", "memorised_sar", "alert_only",
          "one_lookup")
