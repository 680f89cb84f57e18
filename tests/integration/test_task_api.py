"""OpenEnv's Task API and the seed-compatible reset calls, on the real servers: the splits
(train / validation / test and the AML adversarial split, every difficulty x kind; the
committee's tasks) at `/{env}/splits` and friends, a task reset by `split` + `index` or by its
id as the same case the task names, `task_id` and `parameters` accepted as the prototypes sent
them, and the AML prototype's README curl sequence, run with curl."""

from __future__ import annotations

import json
import shutil
import subprocess

import httpx
import pytest

from memex.committee.world.tasks import SPLITS as COMMITTEE_SPLITS
from memex.committee.world.tasks import TASK_NAMES
from memex.envkit.servers import serve
from memex.envkit.tasks import MAX_TASK_RANGE, TASK_PREVIEW
from memex.scenarios import DIFFICULTIES, KINDS, SPLITS
from memex.scenarios.splits import load_split


@pytest.fixture(scope="module")
def committee_server():
    with serve("memex.committee.server", "--host", "127.0.0.1", "--log-level",
               "warning") as server:
        yield server


def _observation(http: httpx.Client, body: dict) -> dict:
    answer = http.post("/reset", json=body)
    assert answer.status_code == 200, (body, answer.text)
    return answer.json()["observation"]


def test_aml_splits_are_served_through_openenvs_task_api(memex_server):
    with httpx.Client(base_url=memex_server.url, timeout=60) as http:
        splits = {s["name"]: s for s in http.get("/memex/splits").json()}
        assert list(splits) == [*SPLITS, "adversarial"]
        cells = len(DIFFICULTIES) * len(KINDS)
        for name, seeds in SPLITS.items():
            assert splits[name]["type"] == name
            assert splits[name]["axes"] == {"difficulty": list(DIFFICULTIES), "kind": list(KINDS)}
            assert splits[name]["num_tasks"] == len(seeds) * cells
            assert http.post("/memex/num_tasks", json={"split": name}).json()["num_tasks"] == \
                len(seeds) * cells
        assert splits["adversarial"]["num_tasks"] == len(load_split())

        # Seed-major: the first cells tasks are every difficulty x kind on the first seed.
        first = http.post("/memex/task_range", json={"split": "test", "start": 0,
                                                     "stop": cells}).json()["tasks"]
        assert {(t["reset"]["difficulty"], t["reset"]["kind"]) for t in first} == \
            {(d, k) for d in DIFFICULTIES for k in KINDS}
        assert {t["reset"]["seed"] for t in first} == {SPLITS["test"].start}
        task = http.post("/memex/task", json={"split": "test", "index": cells + 1}).json()["task"]
        assert task["id"] == f"test/{cells + 1}" and task["reset"]["seed"] == \
            SPLITS["test"].start + 1
        assert len(http.post("/memex/tasks", json={"split": "train"}).json()["tasks"]) == \
            TASK_PREVIEW
        assert len(http.post("/memex/task_range", json={"split": "train"}).json()["tasks"]) == \
            MAX_TASK_RANGE
        adversarial = http.post("/memex/task", json={"split": "adversarial",
                                                     "index": 2}).json()["task"]
        assert adversarial["reset"] == {"plan": "adversarial/2"}

        # A task resets to the case it names: by split + index, by its id, by its options.
        by_fields = _observation(http, task["reset"])
        assert _observation(http, {"split": "test", "index": cells + 1}) == by_fields
        assert _observation(http, {"task_id": task["id"]}) == by_fields
        assert _observation(http, {"task_id": "adversarial/2"}) == \
            _observation(http, {"plan": "adversarial/2"})

        # Typed refusals, never a 5xx.
        assert http.post("/memex/num_tasks", json={"split": "nope"}).status_code == 404
        assert http.post("/memex/task", json={"split": "test", "index": 10**9}).status_code \
            == 400
        for body in ({"split": "test"}, {"task_id": "test/999999999"}, {"parameters": 5},
                     {"task_id": "easy", "difficulty": "hard"}):
            answer = http.post("/reset", json=body)
            assert answer.status_code == 422, (body, answer.text)


def test_the_prototypes_reset_calls_are_accepted(memex_server):
    with httpx.Client(base_url=memex_server.url, timeout=60) as http:
        easy = _observation(http, {"task_id": "easy", "seed": 11})
        assert easy == _observation(http, {"difficulty": "easy", "seed": 11})
        assert easy["step_budget"] == _observation(http, {"difficulty": "easy",
                                                          "seed": 12})["step_budget"]
        assert _observation(http, {"parameters": {"difficulty": "hard", "seed": 5,
                                                  "kind": "layering"}}) == \
            _observation(http, {"difficulty": "hard", "seed": 5, "kind": "layering"})
        assert _observation(http, {"task_id": "layering", "seed": 5, "difficulty": "hard"}) == \
            _observation(http, {"difficulty": "hard", "seed": 5, "kind": "layering"})
        assert _observation(http, {"task_id": "1mdb"})["result"] == \
            _observation(http, {"case": "1mdb"})["result"]


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_prototype_readme_curl_sequence(memex_server):
    """The prototype's quick start, command for command: health, a reset by task_id, the
    visualizer's page."""
    def curl(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["curl", "-s", "-w", "\n%{http_code}", *args],
                              capture_output=True, text=True, timeout=60, check=True)

    health = curl(f"{memex_server.url}/health").stdout.rsplit("\n", 1)
    assert health[1] == "200" and json.loads(health[0]) == {"status": "healthy"}
    reset = curl("-X", "POST", f"{memex_server.url}/reset", "-H",
                 "Content-Type: application/json", "-d", '{"task_id": "easy"}').stdout
    body, code = reset.rsplit("\n", 1)
    assert code == "200"
    episode = json.loads(body)
    assert episode["episode_id"] and episode["observation"]["result"]["alert_id"]
    state = httpx.get(f"{memex_server.url}/state",
                      params={"episode_id": episode["episode_id"]}, timeout=30).json()
    assert state["step_count"] == 0
    page = curl(f"{memex_server.url}/").stdout.rsplit("\n", 1)
    assert page[1] in ("200", "404")  # the Glass Box, once it is built (make run builds it)
    info = httpx.get(f"{memex_server.url}/info", timeout=30).json()
    assert (page[1] == "200") == info["glass_box"]


def test_committee_tasks_and_aliases(committee_server):
    with httpx.Client(base_url=committee_server.url, timeout=60) as http:
        splits = {s["name"]: s for s in http.get("/memex-committee/splits").json()}
        assert list(splits) == list(COMMITTEE_SPLITS)
        assert splits["test"]["axes"] == {"task": list(TASK_NAMES)}
        assert splits["test"]["num_tasks"] == len(COMMITTEE_SPLITS["test"]) * len(TASK_NAMES)
        task = http.post("/memex-committee/task", json={"split": "test",
                                                        "index": 5}).json()["task"]
        assert task["reset"] == {"task": TASK_NAMES[1], "seed": COMMITTEE_SPLITS["test"].start
                                 + 1}
        by_fields = _observation(http, task["reset"])
        assert _observation(http, {"split": "test", "index": 5}) == by_fields
        assert _observation(http, {"task_id": "test/5"}) == by_fields
        assert _observation(http, {"parameters": task["reset"]}) == by_fields
        assert _observation(http, {"task_id": "mandate_drift"})["task"] == "mandate_drift"
        assert http.post("/reset", json={"task_id": "nope"}).status_code == 422
        assert http.post("/memex-committee/task", json={"split": "nope",
                                                        "index": 0}).status_code == 404
