"""Policies for both environments: the one `Policy` base (`base`), and the AML environment's
scripted policies (`scripted`), baselines and exploit probes (`probes`), oracle (`oracle`) and
heuristic investigator (`heuristic`), by name in `registry`. The committee's policies live in
`memex.committee.policies` and derive from the same base. Importing this package imports none
of them.
"""
