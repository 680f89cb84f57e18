"""The pinned alert header: every observation's `context` names the case.

A policy that sees only `context` must be able to write a filing: the alert's ID, rule,
subject, accounts and counterparties stay in every observation, however many pages the
investigation evicts. The header shows only what the alert shows (the leak audit's "alert" view
bounds it), and its IDs are exactly the ones that are always resident.
"""

from __future__ import annotations

import json

import pytest

from memex.adapter import ADAPTER
from memex.envkit.episodes import EpisodeSpec, LocalSession
from memex.models import AlertHeader, MemexAction
from memex.policies.heuristic import Heuristic
from memex.scenarios import KINDS
from memex.server.environment import MemexEnvironment

pytestmark = pytest.mark.unit


def header_ids(header: AlertHeader) -> set[str]:
    ids = {header.alert_id, header.subject.entity_id, *header.subject.account_ids,
           *header.transaction_ids, *header.related_ids}
    for party in header.counterparties:
        ids |= {party.entity_id, *party.account_ids}
    return ids


def leaves(node) -> set[str]:
    """Every string and number in a JSON value (keys excluded)."""
    if isinstance(node, dict):
        return set().union(*map(leaves, node.values())) if node else set()
    if isinstance(node, list):
        return set().union(*map(leaves, node)) if node else set()
    return {str(node)}


@pytest.mark.parametrize("kind", list(KINDS)[::2])
def test_every_observation_of_a_heuristic_episode_names_the_case(kind):
    env = MemexEnvironment()
    spec = EpisodeSpec(kind, "medium", 7, {"seed": 7, "difficulty": "medium", "kind": kind})
    episode = ADAPTER.play(LocalSession(env), Heuristic(), spec)
    alert = env.current_case.public.alert
    assert episode.done and len(episode.observations) > 4
    evicted = 0
    for obs in episode.observations:
        header = obs.context.alert
        assert header is not None
        assert header.alert_id == alert.id and header.rule == alert.rule.code
        assert header.subject.entity_id == alert.subject_id
        assert set(alert.account_ids) <= set(header.subject.account_ids)
        assert header.transaction_ids == list(alert.transaction_ids)
        # The prompt a policy reads from the observation names them too.
        prompt = ADAPTER.user_prompt(obs, "k", max_chars=2_000)
        assert alert.subject_id in prompt and all(a in prompt for a in alert.account_ids)
        evicted += all(p.tool != "review_alert" for p in obs.context.ram)
    assert evicted > 0  # the alert page did leave RAM, and the header stayed


def test_the_header_shows_only_what_the_alert_shows_and_its_ids_stay_resident():
    env = MemexEnvironment()
    for i, kind in enumerate(KINDS):
        obs = env.reset(seed=40 + i, difficulty=("easy", "medium", "hard")[i % 3], kind=kind)
        header, alert = obs.context.alert, obs.result
        shown = leaves(alert)
        assert leaves(header.model_dump(mode="json")) <= shown
        # Exactly the IDs of the alert's page (but the case's own ID), all always resident.
        page = {i for i in obs.context.ram[-1].ids if not i.startswith("CASE-")}
        assert header_ids(header) == page == set(env._os.alert_ids)
        assert header.counterparties or all(t["from_party_id"] in (None, alert["subject"][
            "entity_id"]) and t["to_party_id"] in (None, alert["subject"]["entity_id"])
                                             for t in alert["transactions"])


def test_a_counterparty_of_the_header_is_usable_after_the_alert_page_left_ram():
    env = MemexEnvironment()
    obs = env.reset(seed=3, difficulty="easy", kind="trade_based")
    party = obs.context.alert.counterparties[0].entity_id
    for q in ("a", "b", "c"):
        obs = env.step(MemexAction(tool="search_compliance_manual",
                                   arguments={"query": f"trade {q}"}))
    assert all(p.tool != "review_alert" for p in obs.context.ram)
    assert party in json.dumps(obs.context.alert.model_dump())
    obs = env.step(MemexAction(tool="get_customer_profile", arguments={"entity_id": party}))
    assert obs.error is None and env.state.page_faults == 0
    assert obs.context.alert == env.reset(seed=3, difficulty="easy",
                                          kind="trade_based").context.alert
