"""The step's fast paths give what the plain code they replace gives: the memoised
manual search (a pure function of the query) gives byte-identical observations, the fast scan
for case IDs in a tool result (`scenarios.ids.known_ids_in`) finds exactly what `ID_PATTERN`
finds in the result's JSON, and the memoised step reward is the reward computed afresh.
`tests/unit/test_observation_golden.py` pins the whole wire output."""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import random

import pytest

from memex.evaluation.runs import run_episode
from memex.graders import shaping
from memex.models import MemexAction
from memex.policies.heuristic import Heuristic
from memex.scenarios import DIFFICULTIES, KINDS, SUSPICIOUS_KINDS
from memex.scenarios.ids import ID_PATTERN, PREFIXES, known_ids_in
from memex.server import environment, tools
from memex.server.environment import MemexEnvironment

pytestmark = pytest.mark.unit
QUERIES = ("structuring cash deposits", "wire transfer layering", "cash", "the", "PEP",
           "trade invoice over-pricing")


def _observations() -> list[str]:
    env = MemexEnvironment()
    env.reset(seed=3, difficulty="easy")
    return [env.step(MemexAction(tool="search_compliance_manual", arguments={"query": q})
                     ).model_dump_json() for q in QUERIES + QUERIES]  # round 2: cache hits


def test_memoised_manual_search_matches_the_uncached_search(monkeypatch):
    cached = _observations()
    assert tools._manual_hits.cache_info().hits >= len(QUERIES)
    monkeypatch.setattr(tools, "_manual_hits", tools._manual_hits.__wrapped__)
    assert _observations() == cached


def _reference_ids(content, known) -> frozenset[str]:
    return frozenset(i for i in ID_PATTERN.findall(json.dumps(content)) if i in known)


def test_revealed_ids_match_the_id_pattern_on_every_page_of_real_episodes(monkeypatch):
    env = MemexEnvironment()
    pages = []
    revealed = env._revealed

    def checked(content):
        pages.append((content, revealed(content), env._ix.ids))
        return pages[-1][1]

    monkeypatch.setattr(env, "_revealed", checked)
    for i, kind in enumerate(SUSPICIOUS_KINDS):
        run_episode(Heuristic(), seed=i, difficulty="hard", kind=kind, env=env)
    assert len(pages) > 50
    for content, fast, known in pages:
        assert fast == _reference_ids(content, known)
    assert sum(len(fast) for _, fast, _ in pages) > 200  # the pages did carry IDs


def test_no_id_prefix_ends_with_another():
    """`known_ids_in` stops at the first prefix length that names a known ID before a tail."""
    assert not [(a, b) for a in PREFIXES for b in PREFIXES if a != b and a.endswith(b)]


def test_known_ids_in_text_agrees_with_the_pattern_on_adversarial_text():
    known = {"TXN-0A1B2C", "WL-FFFFFF", "CASE-123456", "ACC-ABCDEF", "ENT-000001", "WL-0A1B2C",
             "ACC-123456"}
    parts = [*known, "XTXN-0A1B2C", "TXN-0A1B2CD", "TXN-0a1b2c", "-", "_", " ", "é", "\n",
             "2024-03-01", "ACC-ABCDEF-123456", "EF-123456", "ENT-00000", "ASE-123456", "\"",
             "TXN-", "0A1B2C", "WL-FFFFFF_", "(", ")", "ACC", "XWL-0A1B2C", "C", "W", "CAS"]
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(parts) for _ in range(rng.randrange(1, 9)))
        assert known_ids_in(text, known) == {i for i in ID_PATTERN.findall(text) if i in known}


def test_memoised_step_reward_follows_the_table_and_hands_out_fresh_parts():
    for invalid, redundant, faults, timeout in itertools.product((False, True), (False, True),
                                                                 range(8), (False, True)):
        expected = {"action_cost": shaping.ACTION_COST}
        if invalid:
            expected["invalid_action"] = shaping.INVALID_ACTION_PENALTY
        if redundant:
            expected["redundant_call"] = shaping.REDUNDANT_CALL_PENALTY
        if faults:
            expected["page_fault"] = shaping.PAGE_FAULT_PENALTY * min(
                faults, shaping.MAX_PAGE_FAULTS_CHARGED)
        if timeout:
            expected["async_timeout"] = shaping.ASYNC_TIMEOUT_PENALTY
        for _ in range(2):  # the second call is answered from the memo
            reward, parts = shaping.StepEvents(invalid, redundant, faults, timeout).reward()
            assert parts == expected and list(parts) == list(expected)
            assert reward == round(sum(expected.values()), 6)
            parts.clear()  # the caller's own dict: the memo is untouched


def _plain_compact(d):
    return {k: v for k, v in d.items() if v is not None and v != () and v != []}


def _plain_profile(toolkit, entity_id):
    """`get_customer_profile` as it was written before it was made fast."""
    e = toolkit.ix.entities[entity_id]
    profile = _plain_compact(e.model_dump(exclude={"id"}))
    if e.household:
        profile["household"] = [toolkit._entity_brief(m) for m in e.household]
    profile["entity_id"] = e.id
    profile["directors"] = [toolkit._entity_brief(d) for d in e.directors]
    profile["accounts"] = [{"account_id": a.id, "bank": a.bank, "country": a.country,
                            "kind": a.kind, "opened": a.opened}
                           for a in toolkit.ix.accounts_of[e.id]]
    return _plain_compact(profile)


def _plain_optional_facts(t):
    return _plain_compact({"memo": t.memo or None, "branch": t.branch,
                           "conducted_by": t.conducted_by, "reference": t.reference,
                           "ctr_filed": t.ctr_filed or None})


def test_fast_profiles_and_ledger_lines_match_the_plain_code():
    """Every profile and every ledger line of a grid of cases, values and types alike."""
    env, peps, lines = MemexEnvironment(), 0, 0
    cases = [{"seed": i, "difficulty": d, "kind": k} for i, k in enumerate(KINDS)
             for d in DIFFICULTIES] + [{"case": "1mdb"}]
    for options in cases:
        env.reset(**options)
        toolkit = env._toolkit
        for entity_id, entity in toolkit.ix.entities.items():
            assert repr(toolkit.get_customer_profile(entity_id)) == repr(
                _plain_profile(toolkit, entity_id))
            peps += entity.pep is not None
        for t in toolkit.ix.transactions.values():
            line = toolkit._txn_line(t)
            facts = {k: line[k] for k in ("memo", "branch", "conducted_by", "reference",
                                          "ctr_filed") if k in line}
            assert repr(facts) == repr(_plain_optional_facts(t))
            assert list(line)[len(line) - len(facts):] == list(facts)  # last, in this order
            lines += 1
    assert peps >= 5 and lines > 4_000


TRICKY_TEXT = ("ACC-0A1B2C", "", "é \u2028 \x7f \x1f \" \\ \n \t 😀", "x" * 150)
TRICKY_FLOATS = (0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e16, 1.5e-7, 5e-324,
                 1.7976931348623157e308, 0.1 + 0.2, 123456.789, 5000)


def test_call_keys_are_the_typed_arguments_json_as_pydantic_dumps_it():
    """The redundancy key's JSON (orjson, or pydantic's serializer where orjson cannot) is
    `model_dump_json`'s, byte for byte, so equal calls are exactly the calls they were."""
    calls = [("review_alert", {}), ("search_compliance_manual", {"query": TRICKY_TEXT[2]}),
             ("write_to_case_file", {"note": "n", "evidence_ids": list(TRICKY_TEXT)}),
             ("write_to_case_file", {"note": "n", "evidence_ids": []}),
             ("file_sar", {"subjects": ["ENT-000001"], "typology": "layering",
                           "findings": [{"code": "ROUND_TRIP", "evidence_ids": ["TXN-000001"]}],
                           "cited_sections": [], "narrative": "n"})]
    calls += [("check_watchlist", {"name": text}) for text in TRICKY_TEXT]
    calls += [("query_transactions", {"account_id": "ACC-0A1B2C", "min_amount_usd": amount,
                                      "limit": limit, "channel": "wire",
                                      "start_date": "2024-01-01"})
              for amount in TRICKY_FLOATS for limit in (1, 2**63 - 1, -2**63, 2**64, 10**30)]
    for tool, arguments in calls:
        args = tools.TOOLS[tool].args_model.model_validate(arguments)
        call = f"{tool}\n{args.model_dump_json()}".encode("utf-8", "replace")
        expected = call if len(call) <= environment.MAX_RAW_CALL_KEY_BYTES else (
            b"\0" + hashlib.blake2b(call, digest_size=16).digest())
        assert environment._call_key(tool, args) == expected, (tool, arguments)


def test_residency_of_one_id_agrees_with_the_resident_set_through_real_episodes():
    env, checked = MemexEnvironment(), 0
    step = env.step

    def checking(action, *args, **kwargs):
        obs = step(action, *args, **kwargs)
        os = env._os
        resident = os.resident()
        assert all(os.is_resident(i) == (i in resident) for i in os.seen)
        nonlocal checked
        checked += len(os.seen) - len(resident & os.seen)
        return obs

    env.step = checking
    for seed in range(6):
        run_episode(Heuristic(), seed=seed, difficulty="hard", env=env)
    assert checked > 50  # seen IDs that had left residency were among those checked


def _cases() -> list[dict]:
    return [{"seed": i, "difficulty": d, "kind": k} for i, k in enumerate(KINDS)
            for d in DIFFICULTIES] + [{"case": "1mdb"}]


def _plain_totals(toolkit, account_id: str, rows) -> dict:
    """The ledger totals as an auditor adds them: rounded to the cent after every line."""
    totals = {}
    for t in rows:
        key = f"{t.channel}_{'in' if t.to_account == account_id else 'out'}"
        entry = totals.setdefault(key, {"count": 0, "usd": 0.0})
        entry["count"] += 1
        entry["usd"] = round(entry["usd"] + t.amount_usd, 2)
    return dict(sorted(totals.items()))


def test_ledger_totals_match_the_line_by_line_rounded_sums():
    """`query_transactions` rounds each total once; that is the running total rounded after
    every line, value and type, on every account of a grid of cases, with and without filters."""
    env, checked = MemexEnvironment(), 0
    for options in _cases():
        env.reset(**options)
        toolkit = env._toolkit
        for account_id, rows in toolkit.ix.txns_of_account.items():
            for channel in (None, "cash", "wire"):
                got = toolkit.query_transactions(account_id, channel=channel)["totals"]
                kept = [t for t in rows if channel is None or t.channel == channel]
                assert repr(got) == repr(_plain_totals(toolkit, account_id, kept))
                checked += 1
    assert checked > 1_000


def _plain_watchlist_hits(toolkit, name: str) -> list[dict]:
    """The screening as plain difflib: the exact ratio wherever either bound reaches 0.8."""
    query = tools._norm_name(name)
    q_tokens, hits = set(query.split()), []
    for w in toolkit.ix.case.watchlist:
        w_name = tools._norm_name(w.name)
        w_tokens = set(w_name.split())
        overlap = len(q_tokens & w_tokens) / max(1, min(len(q_tokens), len(w_tokens)))
        matcher = difflib.SequenceMatcher(None, query, w_name)
        score = matcher.ratio() if max(matcher.quick_ratio(), overlap * 0.9) >= 0.8 else 0.0
        similarity = max(score, overlap * 0.9)
        if similarity >= 0.8:
            hits.append((w.id, round(similarity, 2)))
    return sorted(hits, key=lambda h: (-h[1], h[0]))[:10]


def test_watchlist_screening_matches_plain_difflib_on_every_name_of_real_cases():
    """The bounds that skip most exact ratios change no hit and no similarity: every entity
    and watchlist name of a grid of cases, and altered spellings of them, screened both ways."""
    env, rng, screened, hits = MemexEnvironment(), random.Random(5), 0, 0
    for options in _cases():
        env.reset(**options)
        toolkit = env._toolkit
        names = [e.name for e in toolkit.ix.entities.values()]
        names += [w.name for w in toolkit.ix.case.watchlist]
        names += [n[:i] + n[i + 1:] for n in names[:20] for i in (rng.randrange(len(n)),)]
        names += [" ".join(reversed(n.split())) for n in names[:10]]
        for name in names:
            if len(tools._norm_name(name)) < 3:
                continue
            got = [(h["entry_id"], h["similarity"])
                   for h in toolkit.check_watchlist(name)["hits"]]
            assert got == _plain_watchlist_hits(toolkit, name), name
            screened += 1
            hits += len(got)
    assert screened > 1_000 and hits > 100


def _plain_device_overlap(toolkit, entity_id: str) -> dict:
    """`check_device_overlap` going through every own login's device and IP lists in turn."""
    ix = toolkit.ix
    accounts = {a.id for a in ix.accounts_of[entity_id]}
    own = [d for d in ix.case.devices if d.entity_id == entity_id or d.account_id in accounts]
    parties = {entity_id} | {d.entity_id for d in own}
    shared: dict = {}
    for d in own:
        for other in ix.logins_by_device[d.device_id] + ix.logins_by_ip[d.ip_address]:
            owner = ix.accounts[other.account_id].owner_id
            if other.account_id in accounts or {other.entity_id, owner} <= parties:
                continue
            row = shared.setdefault(other.entity_id, {**toolkit._entity_brief(other.entity_id),
                                                      "login_ids": [], "devices": set(),
                                                      "ips": set()})
            if other.id not in row["login_ids"]:
                row["login_ids"].append(other.id)
            row["devices"].add(other.device_id)
            row["ips"].add(other.ip_address)
    for row in shared.values():
        row["devices"], row["ips"] = sorted(row["devices"]), sorted(row["ips"])
    return {"entity": toolkit._entity_brief(entity_id),
            "logins": [{"login_id": d.id, "by": toolkit._entity_brief(d.entity_id),
                        "account_id": d.account_id, "device_id": d.device_id,
                        "ip_address": d.ip_address, "timestamp": d.timestamp} for d in own],
            "shared_with": list(shared.values())}


def test_device_overlap_matches_the_login_by_login_walk_on_every_entity():
    """Going through each device and IP once gives what walking every own login's lists gives,
    order included, for every entity of a grid of cases."""
    env, shared = MemexEnvironment(), 0
    for options in _cases():
        env.reset(**options)
        toolkit = env._toolkit
        for entity_id in toolkit.ix.entities:
            got = toolkit.check_device_overlap(entity_id)
            assert repr(got) == repr(_plain_device_overlap(toolkit, entity_id))
            shared += len(got["shared_with"])
    assert shared > 50
