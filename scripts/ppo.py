"""The classic-RL signal check (`make ppo`): does maskable PPO learn Memex's reward through the
Gymnasium face, independently of any LLM formatting?

sb3-contrib's `MaskablePPO` (an MLP over `envkit.gym.GymEnv`'s numeric observation, its action
masks read from the vector env) (two hidden layers, `--width` units)
trains on train-split episodes of a gym id (default
`memex/AML-CashEasy-v0`: the cash rule at easy, structuring against its benign look-alike) for a
wall-clock budget. Every `--eval-every` steps the greedy policy plays the same held-out
test-split episodes (half of each task of the slice); before training, the untrained policy
plays them too. Once training ends, the masked-uniform random policy and the heuristic
investigator (`policies.heuristic`, through the environment directly) play the same episodes.

Reported with bootstrap 95% intervals (percentile, 5,000 resamples): the mean episode return,
decision accuracy, and the PPO - heuristic paired difference; the learning curve (return against
environment steps and wall-clock minutes) goes to `--docs`/training/ppo_curve.{csv,json,png}
and the results to `--docs`/training.md between its `ppo-results` markers; the trained policy
is saved as `--out`/ppo_curve.zip (`ppo_NAME_curve.zip` with `--name`; `MaskablePPO.load` reads
it, `scripts/models.py` plays it in the model table).

    .venv/bin/python scripts/ppo.py                    # the run in docs/training.md
    .venv/bin/python scripts/ppo.py --minutes 1 --eval-episodes 20 --docs /tmp/ppo-docs
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_vec_env

from memex.envkit.episodes import EpisodeSpec
from memex.envkit.gym import GymEnv
from memex.evaluation.report import replace_section
from memex.registry import GYM_ENVS, get_adapter, register_gym

ROOT = Path(__file__).resolve().parents[1]
BAR = 0.8  # the share of the heuristic's return the check asks for


def interval(values: list[float], seed: int = 0) -> dict[str, float]:
    """Mean and percentile-bootstrap 95% interval."""
    x = np.asarray(values, float)
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, len(x), (5000, len(x)))].mean(axis=1)
    return {"n": len(x), "mean": float(x.mean()), "lo": float(np.percentile(means, 2.5)),
            "hi": float(np.percentile(means, 97.5))}


def held_out(gym_id: str, episodes: int) -> list[EpisodeSpec]:
    """`episodes` test-split episodes of the gym id's slice, split evenly over its tasks."""
    kwargs = GYM_ENVS[gym_id]
    adapter = get_adapter("memex")
    tasks = kwargs.get("tasks") or adapter.tasks
    difficulties = kwargs.get("difficulties") or adapter.difficulties
    per_cell = max(1, episodes // (len(tasks) * len(difficulties)))
    return adapter.grid("test", tasks=tasks, difficulties=difficulties, episodes=per_cell)


def play_gym(env: GymEnv, specs: list[EpisodeSpec], choose) -> list[dict[str, Any]]:
    """Play each spec through the gym face with `choose(obs, mask) -> index`."""
    rows = []
    for spec in specs:
        obs, info = env.reset(options={"episode": spec})
        total, done = 0.0, False
        while not done:
            obs, reward, terminated, truncated, info = env.step(choose(obs, info["action_mask"]))
            total += reward
            done = terminated or truncated
        outcome = (env.obs.metadata or {}).get("terminal", {}).get("outcome", "unfinished")
        rows.append({"key": spec.key, "return": total, "outcome": outcome,
                     "correct": float(outcome in ("TP", "TN")), "steps": env._steps})
    return rows


def play_heuristic(specs: list[EpisodeSpec], last: int = 0) -> list[dict[str, Any]]:
    """The heuristic on each spec; with `last`, its return and steps over its last `last`
    actions (what a takeover agent plays)."""
    adapter = get_adapter("memex")
    rows = []
    for spec in specs:
        episode = adapter.play(adapter.open(), adapter.make_policy("heuristic"), spec)
        outcome = adapter.outcome(episode)
        rewards = episode.rewards[-last:] if last else episode.rewards
        rows.append({"key": spec.key, "return": sum(rewards), "outcome": outcome,
                     "correct": float(outcome in ("TP", "TN")), "steps": len(rewards)})
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"return": interval([r["return"] for r in rows]),
            "accuracy": interval([r["correct"] for r in rows]),
            "steps": float(np.mean([r["steps"] for r in rows]))}


def greedy(model: MaskablePPO):
    def choose(obs, mask):
        action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        return int(action)
    return choose


def uniform(seed: int):
    rng = np.random.default_rng(seed)
    return lambda obs, mask: int(rng.choice(np.flatnonzero(mask)))


class Curve(BaseCallback):
    """Evaluates the greedy policy on the held-out episodes every `every` steps and stops
    training when the wall-clock budget is spent."""

    def __init__(self, env: GymEnv, specs: list[EpisodeSpec], every: int, budget_s: float):
        super().__init__()
        self.env, self.specs, self.every, self.budget_s = env, specs, every, budget_s
        self.start = time.perf_counter()
        self.cpu_start = time.process_time()  # this process's CPU time (the machine is shared)
        self.eval_s = 0.0
        self.points: list[dict[str, Any]] = []
        self.next_eval = every

    def evaluate(self) -> None:
        began = time.perf_counter()
        train_minutes = (began - self.start - self.eval_s) / 60
        s = summary(play_gym(self.env, self.specs, greedy(self.model)))
        self.eval_s += time.perf_counter() - began
        point = {"timesteps": int(self.num_timesteps), "train_minutes": round(train_minutes, 3),
                 "cpu_minutes": round((time.process_time() - self.cpu_start) / 60, 3),
                 "return": s["return"]["mean"], "lo": s["return"]["lo"],
                 "hi": s["return"]["hi"], "accuracy": s["accuracy"]["mean"],
                 "steps": s["steps"]}
        self.points.append(point)
        print(json.dumps(point), flush=True)

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.next_eval:
            self.next_eval += self.every
            self.evaluate()
        return time.perf_counter() - self.start - self.eval_s < self.budget_s


def plot(points: list[dict[str, Any]], random_mean: float, heuristic_mean: float,
         path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    x = [p["timesteps"] for p in points]
    ax.plot(x, [p["return"] for p in points], marker="o", label="MaskablePPO (greedy)")
    ax.fill_between(x, [p["lo"] for p in points], [p["hi"] for p in points], alpha=0.2)
    ax.axhline(heuristic_mean, color="green", ls="--", label="heuristic")
    ax.axhline(BAR * heuristic_mean, color="green", ls=":", label=f"{BAR} x heuristic")
    ax.axhline(random_mean, color="red", ls="--", label="random (masked)")
    ax.set_xlabel("environment steps")
    ax.set_ylabel("mean return, held-out episodes")
    ax.legend(loc="center right", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def fmt(s: dict[str, float]) -> str:
    return f"{s['mean']:+.3f} [{s['lo']:+.3f}, {s['hi']:+.3f}]"


def report(args: argparse.Namespace, result: dict[str, Any]) -> str:
    r = result
    lines = [
        f"`make ppo` — `{r['command']}` on {r['gym_id']} ({r['menu']} menu slots, observation "
        f"of {r['obs_size']}), {r['n_envs']} envs, {r['torch_threads']} torch thread(s); "
        f"{r['timesteps']:,} environment steps in {r['train_minutes']:.1f} min of training "
        f"({r['wall_minutes']:.1f} min wall clock with evaluations) on this machine's CPU.",
        "",
        f"Held-out: {r['episodes']} test-split episodes "
        f"({', '.join(r['tasks'])}; seeds from {r['first_seed']}), the same for every row; "
        "bootstrap 95% intervals.",
        "",
        *([f"Takeover: each episode starts where the heuristic has {r['takeover_last']} "
           "actions left; returns and steps count from there (the heuristic's row: its own "
           f"last {r['takeover_last']} actions).", ""] if r.get("takeover_last") else []),
        "| policy | mean return | decision accuracy | steps |",
        "|---|---|---|---|",
    ]
    for name in ("random", "untrained", "ppo", "heuristic"):
        s = r["policies"][name]
        lines.append(f"| {name} | {fmt(s['return'])} | {fmt(s['accuracy'])} | "
                     f"{s['steps']:.1f} |")
    ratio = r["ratio"]
    lines += [
        "",
        f"PPO - heuristic (paired): {fmt(r['ppo_minus_heuristic'])}. PPO reaches "
        f"{ratio:.2f} of the heuristic's return (bar: {BAR}) — "
        + ("**met**." if r["met"] else "**missed**.")
        + (f" First evaluation at or above the bar: {r['first_at_bar']}."
           if r["first_at_bar"] else ""),
        "",
        f"![PPO learning curve](training/{r['stem']}.png)",
        "",
        f"Curve: `docs/training/{r['stem']}.csv` (one row per evaluation; `.json` adds the "
        "table's numbers).",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gym-id", default="memex/AML-CashEasy-v0")
    p.add_argument("--minutes", type=float, default=13.0, help="training budget (wall clock, "
                   "evaluations excluded)")
    p.add_argument("--n-envs", type=int, default=8)
    p.add_argument("--eval-episodes", type=int, default=100)
    p.add_argument("--eval-every", type=int, default=16_384)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument("--lr", type=float, default=7e-4)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--gamma", type=float, default=0.999)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--n-steps", type=int, default=256, help="steps per env per update")
    p.add_argument("--target-kl", type=float, default=0.05)
    p.add_argument("--width", type=int, default=128, help="hidden units per layer (2 layers)")
    p.add_argument("--docs", type=Path, default=ROOT / "docs")
    p.add_argument("--out", type=Path, default=ROOT / "runs" / "ppo",
                   help="where the trained policy is saved")
    p.add_argument("--no-doc", action="store_true", help="write the curve, not training.md")
    p.add_argument("--name", default="", help="a run name: files ppo_NAME_curve.*, the "
                   "doc section ppo-NAME-results (default: ppo_curve.*, ppo-results)")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    register_gym()
    wall = time.perf_counter()

    specs = held_out(args.gym_id, args.eval_episodes)
    eval_env: GymEnv = gymnasium.make(args.gym_id).unwrapped
    venv = make_vec_env(lambda: gymnasium.make(args.gym_id), n_envs=args.n_envs, seed=args.seed)
    model = MaskablePPO("MlpPolicy", venv, n_steps=args.n_steps, batch_size=256,
                        n_epochs=args.epochs, learning_rate=args.lr, gamma=args.gamma,
                        gae_lambda=0.95, ent_coef=args.ent_coef, clip_range=0.2,
                        target_kl=args.target_kl,
                        policy_kwargs={"net_arch": [args.width, args.width]},
                        seed=args.seed, verbose=0, device="cpu")
    curve = Curve(eval_env, specs, args.eval_every, args.minutes * 60)
    curve.init_callback(model)
    curve.evaluate()
    untrained = play_gym(eval_env, specs, greedy(model))
    model.learn(total_timesteps=10**9, callback=curve)
    curve.evaluate()
    train_minutes = (time.perf_counter() - curve.start - curve.eval_s) / 60

    rows = {"random": play_gym(eval_env, specs, uniform(args.seed)),
            "untrained": untrained,
            "ppo": play_gym(eval_env, specs, greedy(model)),
            "heuristic": play_heuristic(specs, GYM_ENVS[args.gym_id].get("takeover_last", 0))}
    policies = {name: summary(r) for name, r in rows.items()}
    heur = {r["key"]: r["return"] for r in rows["heuristic"]}
    diff = interval([r["return"] - heur[r["key"]] for r in rows["ppo"]])
    ratio = policies["ppo"]["return"]["mean"] / policies["heuristic"]["return"]["mean"]
    bar = BAR * policies["heuristic"]["return"]["mean"]
    first = next((f"{p['timesteps']:,} steps, {p['train_minutes']:.1f} min"
                  for p in curve.points if p["return"] >= bar), None)
    kwargs = GYM_ENVS[args.gym_id]
    stem = f"ppo_{args.name}_curve" if args.name else "ppo_curve"
    args.out.mkdir(parents=True, exist_ok=True)
    model.save(args.out / f"{stem}.zip")
    result = {"stem": stem, "takeover_last": kwargs.get("takeover_last", 0),
        "command": " ".join(["scripts/ppo.py", *(sys.argv[1:] if argv is None else argv)]),
        "gym_id": args.gym_id, "menu": eval_env.menu_size,
        "obs_size": int(eval_env.observation_space.shape[0]), "n_envs": args.n_envs,
        "torch_threads": args.threads, "timesteps": int(model.num_timesteps),
        "train_minutes": train_minutes, "wall_minutes": (time.perf_counter() - wall) / 60,
        "episodes": len(specs), "tasks": list(kwargs.get("tasks") or ["all"]),
        "first_seed": specs[0].seed, "policies": policies, "ppo_minus_heuristic": diff,
        "ratio": ratio, "met": ratio >= BAR, "first_at_bar": first, "curve": curve.points,
    }
    out = args.docs / "training"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(result, indent=1) + "\n")
    with (out / f"{stem}.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(curve.points[0]))
        writer.writeheader()
        writer.writerows(curve.points)
    plot(curve.points, policies["random"]["return"]["mean"],
         policies["heuristic"]["return"]["mean"], out / f"{stem}.png")
    if not args.no_doc:
        name = f"ppo-{args.name}-results" if args.name else "ppo-results"
        replace_section(args.docs / "training.md", name, report(args, result))
    print(report(args, result))
    return result


if __name__ == "__main__":
    main()
