"""The Gymnasium face (`envkit.gym`, the AML spec in `gym_face.py`): gymnasium's env checker
passes, the menu offers only calls the server accepts (and an index it does not offer reaches no
tool), an episode through the face equals the same calls through the environment directly,
the menu is derived from the declarations (a new tool gets slots), the registered ids and
vector envs work, and the optimal play is reachable through the menu."""

from __future__ import annotations

import hashlib
from typing import Annotated, Literal

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from memex.envkit.declarations import Ref, declare
from memex.envkit.gym import GymEnv, build_menu
from memex.gym_face import SPEC
from memex.registry import GYM_ENVS, get_adapter, register_gym

pytestmark = pytest.mark.unit

ADAPTER = get_adapter("memex")
CASH = ("structuring", "cash_business")


def _env(**kw) -> GymEnv:
    return GymEnv(ADAPTER, tasks=CASH, difficulties=("easy",), **kw)


def _digest(obs) -> str:
    return hashlib.sha256(obs.model_dump_json().encode()).hexdigest()


def _random_episode(env: GymEnv, seed: int) -> tuple[list[int], list]:
    """Masked-uniform actions from reset(seed) to the end: the indices and the calls sent."""
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    actions, calls, done = [], [], False
    while not done:
        actions.append(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        _, _, terminated, truncated, info = env.step(actions[-1])
        calls.append(info["call"])
        done = terminated or truncated
    return actions, calls


def test_env_checker_passes():
    env = _env()
    check_env(env, skip_render_check=True)
    assert env.observation_space.shape == (2 * env.menu_size + SPEC.feature_size,)


def test_offered_calls_are_accepted_and_others_reach_no_tool():
    env, probe = _env(), _env()
    checked = 0
    for seed in (0, 1, 2):
        actions, calls = _random_episode(env, seed)
        assert None not in calls
        for t in range(0, len(actions), 3):  # every third state of the episode
            probe.reset(seed=seed)
            for a in actions[:t]:
                probe.step(a)
            offered = probe.offered()
            assert offered, "a live state offers at least one call"
            for _, call in offered:  # each through a fresh environment at the same state
                session = ADAPTER.open()
                session.reset(**probe.episode.reset)
                for earlier in calls[:t]:
                    session.step(ADAPTER.make_action(*earlier))
                obs = session.step(ADAPTER.make_action(*call))
                assert obs.error is None, (call, obs.error)
                assert ADAPTER.validate_call(*call) is None
                checked += 1
            # An index the mask rules out is the environment's malformed action.
            masked = np.flatnonzero(~probe.action_masks())
            _, reward, _, _, info = probe.step(int(masked[0]))
            assert info["call"] is None and probe.obs.error is not None and reward < -0.005
    assert checked > 50


def test_spare_indices_are_never_offered():
    env = _env(max_menu=_env().menu_size + 7)
    _, info = env.reset(seed=3)
    assert env.action_space.n == len(env.slots) + 7
    assert not info["action_mask"][len(env.slots):].any()
    with pytest.raises(ValueError, match="below"):
        _env(max_menu=5)


def test_round_trip_equals_the_same_calls_through_the_environment():
    env = _env()
    for seed in (4, 5, 6):
        _, info = env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        calls, rewards, digests, done = [], [], [], False
        while not done:
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            _, reward, terminated, truncated, info = env.step(action)
            assert set(info) == {"action_mask", "call"}  # nothing that names the kind
            calls.append(info["call"])
            rewards.append(reward)
            digests.append(_digest(env.obs))
            done = terminated or truncated
        session = ADAPTER.open()
        session.reset(**env.episode.reset)
        direct = [session.step(ADAPTER.make_action(*call)) for call in calls]
        assert [float(o.reward) for o in direct] == rewards
        assert [_digest(o) for o in direct] == digests
        assert direct[-1].done


def test_same_seed_same_episode():
    a, b = _env(), _env()
    assert _random_episode(a, 11) == _random_episode(b, 11)
    assert a.episode == b.episode and _digest(a.obs) == _digest(b.obs)


def test_menu_is_derived_from_the_declarations():
    slots = build_menu(ADAPTER.tool_specs, SPEC)
    tools = {s.tool for s in slots}
    assert tools == set(ADAPTER.tool_specs) - set(SPEC.excluded)
    typologies = ADAPTER.tool_specs["file_sar"].json_schema()["properties"]["typology"]["enum"]
    assert sorted(s.variant["typology"] for s in slots if s.tool == "file_sar") == \
        sorted(typologies)
    assert sum(s.tool == "get_customer_profile" for s in slots) == SPEC.widths["entity"]

    class Extra:
        def request_information(self, entity_id: Annotated[str, Ref("entity")],
                                topic: Literal["employment", "address", "funds"]) -> dict:
            """Ask the customer for information.

            Args:
                entity_id: ID of the entity.
                topic: What to ask about.
            """
            return {}

    specs = {**ADAPTER.tool_specs, **declare(Extra, ("request_information",),
                                             lambda _: "investigation")}
    new = [s for s in build_menu(specs, SPEC) if s.tool == "request_information"]
    assert len(new) == 3 * SPEC.widths["entity"]
    assert {s.variant["topic"] for s in new} == {"employment", "address", "funds"}
    assert {s.param for s in new} == {"entity_id"}


def test_registered_ids_and_vector_envs():
    register_gym()
    assert set(GYM_ENVS) <= set(gymnasium.registry)
    env = gymnasium.make("memex/AML-CashEasy-v0")
    assert env.unwrapped.tasks == CASH
    env.close()
    envs = gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("memex/AML-Easy-v0")] * 2)
    obs, _ = envs.reset(seed=7)
    assert obs.shape == (2, *envs.single_observation_space.shape)
    for _ in range(3):
        masks = np.stack(envs.call("action_masks"))
        actions = np.array([np.flatnonzero(m)[0] for m in masks])
        obs, rewards, *_ = envs.step(actions)
        assert rewards.shape == (2,)
    envs.close()


def test_takeover_starts_where_the_prefix_policy_has_k_actions_left():
    env = _env(prefix_policy="heuristic", takeover_last=4)
    spec = ADAPTER.grid("train", tasks=CASH, difficulties=("easy",), episodes=1)[0]
    reference = ADAPTER.play(ADAPTER.open(), ADAPTER.make_policy("heuristic"), spec)
    _, info = env.reset(options={"episode": spec})
    assert env.obs.step == reference.steps - 4 and not env.obs.done
    assert _digest(env.obs) == _digest(reference.observations[reference.steps - 4])
    index = next(i for i, c in env.offered() if c[0] == "close_alert")
    _, reward, terminated, _, info = env.step(index)
    assert terminated and info["call"][0] == "close_alert"
    with pytest.raises(ValueError, match="prefix_policy"):
        _env(takeover_last=3)


def _slot(env: GymEnv, tool: str, index: int = 0, **variant) -> int:
    return next(i for i, s in enumerate(env.slots) if s.tool == tool and s.index == index
                and all(s.variant.get(k) == v for k, v in variant.items()))


BREAK_CODE = {"trace": "ROUND_TRIP", "source_of_funds": "UNSUPPORTED_SOURCE_OF_FUNDS",
              "device": "SHARED_DEVICE_ACROSS_ENTITIES", "watchlist": "SANCTIONS_MATCH",
              "holdings": "UNDISCLOSED_RELATED_PARTY"}
BREAK_SECTION = {"trace": "7.3", "source_of_funds": "5.2", "device": "3.6", "watchlist": "4.4",
                 "holdings": "3.2"}
TOPIC = {"trace": "related_parties", "source_of_funds": "source_of_funds",
         "device": "device_use", "watchlist": "identity", "holdings": "related_parties"}


def _menu_investigator(env: GymEnv, spec) -> tuple[float, list[str]]:
    """The heuristic's cash-rule investigation played through the menu (features decide):
    the cross-checks, the first day's ledger and the KYC files an explanation may be on, a
    request for information on each anomaly still unexplained, its answer once due, then a SAR
    iff two or more stay unexplained. Returns the return and the unexplained checks."""
    _, info = env.reset(options={"episode": spec})
    total = 0.0

    def go(index: int) -> None:
        nonlocal total, info
        if info["action_mask"][index]:
            _, reward, _, _, info = env.step(index)
            total += reward

    def wait_and_collect() -> None:
        fillers = [i for i, s in enumerate(env.slots) if s.tool in (
            "assess_risk", "get_customer_profile", "check_device_overlap", "check_watchlist",
            "query_beneficial_ownership", "check_source_of_funds")]
        while any(j.status == "pending" for j in env.obs.context.jobs) and any(
                info["action_mask"][i] for i in fillers):  # read the file meanwhile
            go(next(i for i in fillers if info["action_mask"][i]))
        for k in range(SPEC.widths["job"]):
            go(_slot(env, "retrieve_async_result", k))

    def ask() -> None:
        """Each anomaly nothing on file explains: its records to disk while in RAM, and a
        request for information."""
        for c, check in env.reader.checks().items():
            if check.unexplained:
                go(_slot(env, "write_to_case_file", note=BREAK_CODE[c]))
                go(_slot(env, "request_information", topic=TOPIC[c]))

    for tool in ("query_transactions", "request_wire_trace", "query_beneficial_ownership",
                 "check_source_of_funds", "get_customer_profile", "check_device_overlap"):
        go(_slot(env, tool))
    # The KYC file of whoever runs a company subject (its first director): the household.
    directors = (env.reader.last("query_beneficial_ownership", entity_id=env.reader.subject)
                 or {}).get("directors", [])
    if directors:
        go(next((i for i, c in env.offered() if c == (
            "get_customer_profile", {"entity_id": directors[0]["entity_id"]})), 0))
    go(_slot(env, "query_transactions", channel=None))  # the first day: FX charges
    ask()
    go(_slot(env, "check_watchlist"))
    ask()
    wait_and_collect()
    ask()
    wait_and_collect()
    broke = [c for c, check in env.reader.checks().items() if check.unexplained]
    if len(broke) >= 2:
        for check in broke:
            go(_slot(env, "write_to_case_file", note=BREAK_CODE[check]))
        surface = ("CASH_BELOW_CTR_THRESHOLD", "MULTI_BRANCH_CASH", "MULTIPLE_DEPOSITORS")
        for code, shown in zip(surface, env.reader.surface(), strict=True):
            if shown:
                go(_slot(env, "write_to_case_file", note=code))
        for section in ("2.1", BREAK_SECTION[broke[0]], BREAK_SECTION[broke[1]]):
            go(_slot(env, "update_system_prompt", section_id=section))
        go(_slot(env, "file_sar", typology="structuring"))
    else:
        for section in ("8.1", "5.2", "7.6"):
            go(_slot(env, "update_system_prompt", section_id=section))
        go(_slot(env, "close_alert"))
    assert env.obs.done
    return total, broke


def test_the_heuristics_play_is_reachable_through_the_menu():
    env = _env()
    specs = ADAPTER.grid("test", tasks=CASH, difficulties=("easy",), episodes=5)
    menu, heuristic = [], []
    for spec in specs:
        total, _ = _menu_investigator(env, spec)
        menu.append(total)
        assert env.obs.metadata["terminal"]["outcome"] in ("TP", "TN")
        episode = ADAPTER.play(ADAPTER.open(), ADAPTER.make_policy("heuristic"), spec)
        heuristic.append(episode.episode_return)
    assert np.mean(menu) >= 0.8 * np.mean(heuristic)


def _heuristic_tail_through_the_menu(env: GymEnv, spec, last: int) -> tuple[float, float, list]:
    """The heuristic's last `last` actions sent through the takeover menu (the slot that makes
    the same call up to what the menu completes: the section, the job, the typology); returns
    the heuristic's own return over them, the menu's, and the file_sar calls offered at the
    takeover point."""
    episode = ADAPTER.play(ADAPTER.open(), ADAPTER.make_policy("heuristic"), spec)
    _, info = env.reset(options={"episode": spec})
    sar_calls = [c for _, c in env.offered() if c[0] == "file_sar"]
    total = 0.0
    for action in episode.actions[-last:]:
        tool, arguments = ADAPTER.action_call(action)
        fixed = {k: v for k, v in arguments.items()
                 if k in ("section_id", "job_id", "typology", "entity_id", "topic")}
        index = next((i for i, c in env.offered() if c[0] == tool
                      and all(c[1].get(k) == v for k, v in fixed.items())), None)
        if index is None:  # a wait the menu does not offer (polling early is a no-op)
            assert tool in ("retrieve_async_result", "assess_risk")
            continue
        _, reward, terminated, _, info = env.step(index)
        total += reward
        if terminated:
            break
    assert env.obs.done
    return sum(episode.rewards[-last:]), total, sar_calls


def test_the_heuristics_last_actions_are_reachable_from_the_takeover_point():
    """From the takeover point the menu's SAR and closure carry what the heuristic's do: the
    heuristic's own last actions through the menu decide every episode right and earn at least
    0.95 of its return (the findings, subjects and citations of its filing are expressible)."""
    env = _env(prefix_policy="heuristic", takeover_last=5)
    specs = ADAPTER.grid("test", tasks=CASH, difficulties=("easy",), episodes=3)
    own, menu = [], []
    for spec in specs:
        heuristic, total, _ = _heuristic_tail_through_the_menu(env, spec, 5)
        assert env.obs.metadata["terminal"]["outcome"] in ("TP", "TN")
        own.append(heuristic)
        menu.append(total)
    assert np.mean(menu) >= 0.95 * np.mean(own)


def test_the_sar_slot_is_built_from_what_was_read_and_kept():
    """At the takeover point of a structuring case the SAR slot files one finding per
    unexplained cross-check (its carriers) and per flag the alert shows, every evidence ID
    on disk, the customer first among the subjects, the loaded sections cited — all from the
    observations (a reader rebuilt from the same observations files the same)."""
    env = _env(prefix_policy="heuristic", takeover_last=5)
    spec = ADAPTER.grid("test", tasks=("structuring",), difficulties=("easy",), episodes=1)[0]
    env.reset(options={"episode": spec})
    sar = next(c for _, c in env.offered() if c[0] == "file_sar")[1]
    disk = {i for n in env.obs.context.disk for i in n.ids}
    failed = [c for c in env.reader.checks().values() if c.unexplained]
    assert len(failed) >= 2  # the heuristic files a SAR here
    codes = {f["code"] for f in sar["findings"]}
    assert {c.code for c in failed} | set(env.reader.flags()) <= codes
    assert all(f["evidence_ids"] and set(f["evidence_ids"]) <= disk for f in sar["findings"])
    assert sar["subjects"][0] == env.reader.subject
    assert {i for c in failed for i in c.implicated} <= set(sar["subjects"])
    assert sar["cited_sections"] == [s.section_id for s in env.obs.context.kernel]
    # The same observations, read afresh, give the same filing: nothing else feeds it.
    reference = ADAPTER.play(ADAPTER.open(), ADAPTER.make_policy("heuristic"), spec)
    reader = SPEC.reader(reference.observations[0])
    reader.observe(reference.observations[0], None)
    for action, obs in zip(reference.actions[:reference.steps - 5],
                           reference.observations[1:], strict=False):
        reader.observe(obs, ADAPTER.action_call(action))
    assert reader.complete("file_sar", {"typology": sar["typology"]}) == sar
