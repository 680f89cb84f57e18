"""Scoring: small per-step shaping (`shaping`) and the terminal score (`terminal`).

Graders are pure functions of the case's ground truth and a read-only snapshot of what the
agent did; they never mutate episode state.
"""
