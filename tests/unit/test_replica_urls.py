"""Spreading sessions over replicas: the typed client's URL list and rotation."""

from __future__ import annotations

import pytest

from memex.client import MemexEnv
from memex.envkit.client import next_replica, split_urls
from memex.openenv_server import _without_flags, replica_urls

pytestmark = pytest.mark.unit


def test_a_comma_list_or_a_list_names_the_replicas():
    assert split_urls(" http://a:1/, http://a:2 ,") == ["http://a:1", "http://a:2"]
    assert split_urls(["http://a:1", "http://a:2/"]) == ["http://a:1", "http://a:2"]
    with pytest.raises(ValueError):
        split_urls(" , ")
    assert replica_urls("127.0.0.1", 7860, 3) == [
        "http://127.0.0.1:7860", "http://127.0.0.1:7861", "http://127.0.0.1:7862"]


def test_each_new_client_takes_the_next_replica_in_turn():
    urls = "http://r:1,http://r:2,http://r:3"
    picks = [next_replica(urls) for _ in range(6)]
    assert picks[:3] == picks[3:] and sorted(picks[:3]) == split_urls(urls)
    clients = [MemexEnv(base_url=urls) for _ in range(3)]  # no connection until first use
    assert sorted(c.replica for c in clients) == split_urls(urls)
    assert MemexEnv(base_url="http://one:1").replica == "http://one:1"


def test_the_replicas_parent_passes_every_other_flag_to_its_children():
    argv = ["--replicas", "2", "--port=7000", "--host", "0.0.0.0", "--sealed"]
    assert _without_flags(argv, ("--replicas", "--port")) == ["--host", "0.0.0.0", "--sealed"]
