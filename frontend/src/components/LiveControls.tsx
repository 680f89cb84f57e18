import { type FormEvent, useState } from "react";
import type { LiveEpisode } from "../hooks/useLiveEpisode";
import { difficultyOptions, kindGroups } from "../model/kinds";
import type { ResetOptions, ServerInfo } from "../model/types";
import { Icon } from "./Icon";
import { Panel } from "./Panel";

const SPEEDS: Array<[number, string]> = [[1000, "slow"], [350, "normal"], [80, "fast"], [0, "max"]];

interface Props {
  live: LiveEpisode;
  active: boolean;
  ended: boolean;
  policies: string[];
  policy: string;
  onPolicy: (p: string) => void;
  info: ServerInfo | null;
}

/** Live mode: choose a case, start it, and let the built-in agent play or step. */
export function LiveControls({ live, active, ended, policies, policy, onPolicy, info }: Props) {
  const [kind, setKind] = useState("layering");
  const [difficulty, setDifficulty] = useState("medium");
  const [seed, setSeed] = useState("7");
  const [ramPages, setRamPages] = useState("2");
  const [kernelCapacity, setKernelCapacity] = useState("3");

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const options: ResetOptions = { difficulty };
    if (kind.startsWith("case:")) options.case = kind.slice(5);
    else if (kind.startsWith("adv:")) options.plan = kind.slice(4); // the split entry's own seed
    else if (kind) options.kind = kind;
    if (seed.trim() !== "" && !options.plan) options.seed = Number(seed);
    if (ramPages.trim() !== "") options.ram_pages = Number(ramPages);
    if (kernelCapacity.trim() !== "") options.kernel_capacity = Number(kernelCapacity);
    void live.start(options);
  };

  return (
    <Panel title="Live episode" testId="live-controls">
      <form className="setup" onSubmit={submit} noValidate>
        <label>
          Kind
          <select value={kind} onChange={(e) => setKind(e.target.value)} data-testid="kind-select">
            {kindGroups(info).map((g) => (
              <optgroup key={g.label} label={g.label}>
                {g.options.map(([value, label]) => <option key={value} value={value}>{label}</option>)}
              </optgroup>
            ))}
          </select>
        </label>
        <div className="row">
          <label>
            Difficulty
            <select value={difficulty} onChange={(e) => setDifficulty(e.target.value)} data-testid="difficulty-select">
              {difficultyOptions(info, difficulty).map((d) => <option key={d} value={d}>{d}</option>)}
            </select>
          </label>
          <label>
            Seed
            <input type="number" min={0} value={seed} placeholder="random" onChange={(e) => setSeed(e.target.value)} data-testid="seed-input" />
          </label>
        </div>
        <details className="advanced">
          <summary>Memory sizes</summary>
          <div className="row">
            <label>RAM pages<input type="number" min={1} max={16} value={ramPages} onChange={(e) => setRamPages(e.target.value)} /></label>
            <label>Kernel sections<input type="number" min={1} max={16} value={kernelCapacity} onChange={(e) => setKernelCapacity(e.target.value)} /></label>
          </div>
        </details>
        <button type="submit" className="primary" disabled={live.busy} data-testid="start-episode">
          {active ? "Start a new episode" : "Start episode"}
        </button>
      </form>
      <div className="transport" aria-label="agent playback">
        <label className="inline">
          Agent
          <select value={policy} onChange={(e) => onPolicy(e.target.value)} data-testid="policy-select">
            {policies.map((p) => <option key={p} value={p}>{p}</option>)}
          </select>
        </label>
        {live.playing ? (
          <button type="button" onClick={live.pause} data-testid="pause"><Icon name="pause" /> Pause</button>
        ) : (
          <button type="button" className="primary" onClick={live.play} disabled={!active || ended} data-testid="play"><Icon name="play" /> Play</button>
        )}
        <button type="button" onClick={() => void live.agentStep()} disabled={!active || ended || live.busy || live.playing} data-testid="agent-step">
          <Icon name="step" /> Step
        </button>
        <label className="inline">
          Speed
          <select value={live.delayMs} onChange={(e) => live.setDelayMs(Number(e.target.value))} data-testid="speed-select">
            {SPEEDS.map(([ms, label]) => <option key={ms} value={ms}>{label}</option>)}
          </select>
        </label>
      </div>
      <div className="muted small busy" aria-live="polite">
        {live.busy ? <span data-testid="busy">waiting for the server…</span>
          : live.playing ? "playing" : ended ? "episode ended" : active ? "paused" : "no episode yet"}
      </div>
    </Panel>
  );
}
