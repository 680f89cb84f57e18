"""L3 recall of ground-truth case facts after a hard investigation evicted its early pages.

    .venv/bin/python benchmarks/bench_memory.py [--cases 12] [--l1-tokens 1000]

For each hard, suspicious case (structuring, layering, trade-based; test-split seeds) the
heuristic investigator plays in-process while a `MemoryManager` with a small L1 evicts its
early turns into L2 and the L3 LanceDB archive. A *fact* is a ground-truth evidence record or
subject entity of the case that the agent saw and that left L1. Each fact is queried two ways:

- by ID ("TXN-4F9A2C"): how the agent asks when it still knows the identifier;
- by description, without any ID: the record's fields from the case data (amounts, dates,
  channel, names...), as an agent that remembers *what* but not *which* would ask.

recall@5 is the share of facts with a top-5 hit that names the fact's ID (goal ≥ 95%).
Latency is one `L3Index.search` (query embedding + three LanceDB rankings + fusion), p50/p95.
The run also calibrates the relevance gate's similarity threshold (the highest that keeps 95% of
the asked-for records) and prints what share of the other top-20 candidates it lets through,
next to the configured default.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from tqdm import tqdm

from memex.agent_os_core.l3_index import (
    DEFAULT_SIMILARITY_THRESHOLD,
    L3Index,
    calibrate_threshold,
    get_embedder,
)
from memex.agent_os_core.memory_manager import MemoryManager, TokenCounter
from memex.scenarios.ids import ID_PATTERN
from memex.testing.episodes import play_into_memory

KINDS = ("structuring", "layering", "trade_based")
GOAL_RECALL_AT_5 = 0.95
SEED_START = 1_100_000  # the test split


def records_by_id(case) -> dict[str, dict]:
    pub = case.public
    out: dict[str, dict] = {}
    for group in (pub.entities, pub.accounts, pub.transactions, pub.ownership, pub.watchlist,
                  pub.devices, pub.trade_documents, pub.market_prices, pub.source_of_funds,
                  pub.correspondent_hops):
        for item in group:
            out[item.id] = item.model_dump(mode="json")
    return out


def describe(record: dict) -> str:
    """The record's own fields, without any ID: what an agent may remember of it. Amounts are
    written as the tools print them (thousands separators, two decimals)."""
    parts = []
    for key, value in record.items():
        if key == "id" or value in (None, "", [], {}):
            continue
        if isinstance(value, str) and ID_PATTERN.search(value):
            continue
        if isinstance(value, list):
            continue
        if isinstance(value, dict):
            value = " ".join(str(v) for v in value.values() if v is not None)
        elif isinstance(value, float):
            value = f"{value:,.2f}"
        parts.append(f"{key.replace('_', ' ')} {value}")
    return " ".join(parts)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=12)
    p.add_argument("--l1-tokens", type=int, default=1_000)
    p.add_argument("--k", type=int, default=5)
    args = p.parse_args(argv)

    get_embedder()  # model load outside the timings
    counter = TokenCounter()
    by_id = {"id": [], "description": []}
    latencies: list[float] = []
    positives: list[float] = []
    negatives: list[float] = []
    facts_total = evicted_turns = chunks = 0
    with L3Index() as l3:
        for i in tqdm(range(args.cases), desc="hard cases", file=sys.stderr):
            kind = KINDS[i % len(KINDS)]
            key = f"case{i}"
            mem = MemoryManager(key, counter, l3=l3, l1_tokens=args.l1_tokens)
            case = play_into_memory(mem, seed=SEED_START + i, difficulty="hard",
                                    kind=kind).current_case
            evicted_turns += mem.stats.evicted
            chunks += mem.stats.archived_chunks
            in_l1 = {x for t in mem.l1 for c in t.chunks("") for x in c.ids}
            records = records_by_id(case)
            truth = case.truth
            wanted = list(dict.fromkeys([e for f in truth.red_flags for e in f.evidence_ids]
                                        + list(truth.subject_ids)))
            archived = {x for h in l3.search(" ".join(wanted), k=10_000, episode=key)
                        for x in h.chunk.ids} if wanted else set()
            facts = [f for f in wanted if f in archived and f not in in_l1 and f in records]
            facts_total += len(facts)
            for fact in facts:
                for mode, query in (("id", fact), ("description", describe(records[fact]))):
                    started = time.perf_counter()
                    hits = l3.search(query, k=max(args.k, 20), episode=key)
                    latencies.append(time.perf_counter() - started)
                    top = hits[:args.k]
                    by_id[mode].append(any(fact in h.chunk.ids for h in top))
                    if mode == "description":
                        for h in hits:
                            (positives if fact in h.chunk.ids else negatives).append(
                                h.similarity)

    print(f"\nL3 recall after eviction: {args.cases} hard cases ({', '.join(KINDS)}), "
          f"L1 = {args.l1_tokens} tokens; {evicted_turns} turns evicted, {chunks} chunks "
          f"archived, {facts_total} ground-truth facts left L1\n")
    print(f"{'query':<14}{'facts':>7}{f'recall@{args.k}':>11}")
    for mode, hits in by_id.items():
        print(f"{mode:<14}{len(hits):>7}{sum(hits) / max(1, len(hits)):>11.3f}")
    lat = sorted(latencies)
    print(f"\nL3 query latency: p50 {statistics.median(lat) * 1e3:.1f} ms, "
          f"p95 {lat[int(0.95 * (len(lat) - 1))] * 1e3:.1f} ms over {len(lat)} queries")
    if positives and negatives:
        t, recall, passed = calibrate_threshold(positives, negatives, min_recall=0.95)
        d_recall = sum(x >= DEFAULT_SIMILARITY_THRESHOLD for x in positives) / len(positives)
        d_passed = sum(x >= DEFAULT_SIMILARITY_THRESHOLD for x in negatives) / len(negatives)
        print(f"gate calibration (description queries vs their records): threshold {t:.3f} "
              f"keeps {recall:.0%} of asked-for records and {passed:.0%} of other top-20 "
              f"candidates; the configured {DEFAULT_SIMILARITY_THRESHOLD:.3f} keeps "
              f"{d_recall:.0%} and {d_passed:.0%}")
    overall = sum(by_id["description"]) / max(1, len(by_id["description"]))
    id_recall = sum(by_id["id"]) / max(1, len(by_id["id"]))
    print(f"\ngoal recall@{args.k} ≥ {GOAL_RECALL_AT_5:.0%}: by ID {id_recall:.1%} "
          f"({'met' if id_recall >= GOAL_RECALL_AT_5 else 'missed'}), by description "
          f"{overall:.1%} ({'met' if overall >= GOAL_RECALL_AT_5 else 'missed'})")


if __name__ == "__main__":
    main()
