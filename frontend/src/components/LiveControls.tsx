import { type FormEvent, useState } from "react";
import type { LiveEpisode } from "../hooks/useLiveEpisode";
import { difficultyOptions, kindGroups } from "../model/kinds";
import type { ResetOptions, ServerInfo } from "../model/types";
import { AgentTransport } from "./AgentTransport";
import { Panel } from "./Panel";

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
  // A sealed server draws every case and runs no built-in agent: only the agent plays.
  const sealed = info?.sealed === true;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (sealed) {
      void live.start({ difficulty });
      return;
    }
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
      <AgentTransport live={live} active={active} ended={ended} policies={policies} policy={policy} onPolicy={onPolicy} sealed={sealed} />
    </Panel>
  );
}
