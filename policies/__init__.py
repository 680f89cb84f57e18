"""The AML environment's scripted agents: scripted policies (`scripted`), baselines and exploit
probes (`probes`), the oracle (`oracle`) and the heuristic investigator (`heuristic`). They
derive from the one `Policy` base (`memex.envkit.policy`) and are listed by name in
`memex.adapter.POLICIES` (with the surface probes of `memex.audit`). The committee's policies
live in `memex.committee.policies`. Importing this package imports none of them.
"""
