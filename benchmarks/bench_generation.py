"""Case-generation speed per difficulty, p50 and p99, from one run.

    .venv/bin/python benchmarks/bench_generation.py [--cases 2000]

Also prints each difficulty's p50 as a ratio of `easy` measured in the same run (machines are
noisy; ratios travel better than milliseconds) and against the 2 ms goal at `medium`.
"""

from __future__ import annotations

import argparse
import statistics
import time

from tqdm import tqdm

from memex.scenarios import DIFFICULTIES, generate

GOAL_MEDIUM_P50_MS = 2.0


def measure(difficulty: str, cases: int) -> list[float]:
    times = []
    for seed in tqdm(range(cases), desc=difficulty, leave=False):
        start = time.perf_counter()
        generate(seed, difficulty)
        times.append((time.perf_counter() - start) * 1e3)
    return sorted(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=2_000)
    args = p.parse_args()
    generate(0, "easy")  # warm imports
    rows = {d: measure(d, args.cases) for d in DIFFICULTIES}
    base = statistics.median(rows["easy"])
    print(f"{'difficulty':<10} {'p50 ms':>8} {'p99 ms':>8} {'p50/easy':>9}")
    for d, ts in rows.items():
        p50, p99 = statistics.median(ts), ts[int(len(ts) * 0.99) - 1]
        print(f"{d:<10} {p50:8.2f} {p99:8.2f} {p50 / base:9.2f}")
    med = statistics.median(rows["medium"])
    print(f"medium p50 / goal ({GOAL_MEDIUM_P50_MS} ms): {med / GOAL_MEDIUM_P50_MS:.2f} "
          f"({'met' if med <= GOAL_MEDIUM_P50_MS else 'missed'})")


if __name__ == "__main__":
    main()
