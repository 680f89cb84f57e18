"""The committee's conveniences, as its prototype had them: `inference.py --env committee
--policy heuristic` (no model, no key: the [START]/[STEP]/[END] lines and a score per task),
`AMC_TASK_ID` naming the task of a reset that names none (server and inference alike), and what
the Glass Box's committee view reads from the real server: the built-in agent's regime belief
and the reference PM's NAV path."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import httpx
import pytest

from memex.committee.policies import Heuristic
from memex.committee.reports.episodes import run_episode
from memex.committee.world.tasks import TASK_NAMES
from memex.envkit.servers import serve
from memex.envkit.traces import read_trace

# No endpoint configured: a scripted policy must not need one.
NO_ENDPOINT = {k: v for k, v in os.environ.items()
               if k not in ("API_BASE_URL", "MODEL_NAME", "API_KEY", "AMC_TASK_ID")}


def _inference(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memex.inference", "--env", "committee", *args],
                          capture_output=True, text=True, timeout=300,
                          env={**NO_ENDPOINT, **(env or {})})


def test_scripted_committee_run_plays_every_task_and_scores_it(tmp_path):
    out = _inference("--policy", "heuristic", "--trace-dir", str(tmp_path))
    assert out.returncode == 0, out.stderr
    starts = re.findall(r"^\[START\] task=(\w+)-standard-\d+-r0 env=committee model=heuristic$",
                        out.stdout, flags=re.M)
    assert starts == list(TASK_NAMES)
    ends = re.findall(r"^\[END\] success=(?:true|false) steps=20 score=(-?\d+\.\d{3}) ",
                      out.stdout, flags=re.M)
    assert len(ends) == len(TASK_NAMES)
    assert len(re.findall(r"^\[STEP\] ", out.stdout, flags=re.M)) == 20 * len(TASK_NAMES)
    table = dict(re.findall(r"^(\w+)\s+heuristic=(-?\d+\.\d{4})$", out.stderr, flags=re.M))
    assert set(table) == {*TASK_NAMES, "overall"}
    assert float(table["overall"]) == pytest.approx(sum(map(float, ends)) / len(ends), abs=1e-3)
    traces = sorted(tmp_path.glob("*.jsonl"))
    assert len(traces) == len(TASK_NAMES)
    trace = read_trace(traces[0])
    assert trace.header["env"] == "committee" and "regime_belief" in trace.steps[1]["insight"]

    unknown = _inference("--policy", "nope")
    assert unknown.returncode == 2 and "unknown policy 'nope'" in unknown.stderr


def test_amc_task_id_names_the_default_task_of_inference_and_of_the_server():
    one = _inference("--policy", "random", env={"AMC_TASK_ID": "mandate_drift"})
    assert one.returncode == 0, one.stderr
    assert re.findall(r"^\[START\] task=(\w+)-", one.stdout, flags=re.M) == ["mandate_drift"]

    with serve("memex.committee.server", "--host", "127.0.0.1", "--log-level", "warning",
               env={"AMC_TASK_ID": "regime_shift_recovery"}) as server, \
            httpx.Client(base_url=server.url, timeout=60) as http:
        assert http.get("/info").json()["default_task"] == "regime_shift_recovery"
        reset = http.post("/reset", json={}).json()
        assert reset["observation"]["task"] == "regime_shift_recovery"
        named = http.post("/reset", json={"task": "guided_allocation"}).json()
        assert named["observation"]["task"] == "guided_allocation"  # a named task wins

    refused = serve("memex.committee.server", "--host", "127.0.0.1", timeout_s=120,
                    env={"AMC_TASK_ID": "no_such_task"})
    with pytest.raises(RuntimeError, match="AMC_TASK_ID='no_such_task' is not a task"), refused:
        pass


def test_the_glass_box_reads_the_agents_belief_and_the_reference_from_the_server():
    with serve("memex.committee.server", "--host", "127.0.0.1", "--log-level",
               "warning") as server, httpx.Client(base_url=server.url, timeout=60) as http:
        episode = http.post("/reset", json={"task": "research_risk_conflict",
                                            "seed": 1_100_000}).json()["episode_id"]
        step = http.post(f"/episodes/{episode}/agent-step", json={"policy": "heuristic"}).json()
        belief = step["insight"]["regime_belief"]
        assert sum(belief.values()) == pytest.approx(1, abs=1e-3)
        random_step = http.post(f"/episodes/{episode}/agent-step",
                                json={"policy": "random"}).json()
        assert random_step["insight"] is None  # a probe has no belief to show

        reference = http.get("/reference", params={"task": "research_risk_conflict",
                                                   "seed": 1_100_000}).json()
        played = run_episode(Heuristic(), "research_risk_conflict", 1_100_000)
        assert reference["periods"] == list(range(21)) and len(reference["nav"]) == 21
        assert reference["nav"][-1] == pytest.approx(played.metrics["final_nav"], abs=1e-3)
        assert reference["score"] == pytest.approx(played.score)
        assert http.get("/reference", params={"task": "nope"}).status_code == 422
        page = http.get("/web")
        assert page.status_code in (200, 404)  # the page when the Glass Box is built
        if page.status_code == 200:
            assert '<div id="root">' in page.text
        assert json.loads(http.get("/info").text)["glass_box"] == (page.status_code == 200)
