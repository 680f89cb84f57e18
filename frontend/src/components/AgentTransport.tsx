import { Icon } from "./Icon";

const SPEEDS: Array<[number, string]> = [[1000, "slow"], [350, "normal"], [80, "fast"], [0, "max"]];

/** What the transport needs of a live episode (`useLiveEpisode`), whatever the environment. */
interface Playback {
  busy: boolean;
  playing: boolean;
  delayMs: number;
  setDelayMs: (ms: number) => void;
  agentStep: () => Promise<void>;
  play: () => void;
  pause: () => void;
}

interface Props {
  live: Playback;
  active: boolean;
  ended: boolean;
  policies: string[];
  policy: string;
  onPolicy: (p: string) => void;
  /** A sealed server runs no built-in agent. */
  sealed?: boolean;
}

/** The built-in agent's playback: which agent, play / pause / one step, speed, and status. */
export function AgentTransport({ live, active, ended, policies, policy, onPolicy, sealed = false }: Props) {
  return (
    <>
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
          <button type="button" className="primary" onClick={live.play} disabled={sealed || !active || ended} data-testid="play"><Icon name="play" /> Play</button>
        )}
        <button type="button" onClick={() => void live.agentStep()} disabled={sealed || !active || ended || live.busy || live.playing} data-testid="agent-step">
          <Icon name="step" /> Step
        </button>
        <label className="inline">
          Speed
          <select value={live.delayMs} onChange={(e) => live.setDelayMs(Number(e.target.value))} data-testid="speed-select">
            {SPEEDS.map(([ms, label]) => <option key={ms} value={ms}>{label}</option>)}
          </select>
        </label>
      </div>
      {sealed && (
        <p className="muted small" data-testid="sealed-note">
          Sealed evaluation: the server draws every case and built-in agents are off — only your agent plays (POST /step).
        </p>
      )}
      <div className="muted small busy" aria-live="polite">
        {live.busy ? <span data-testid="busy">waiting for the server…</span>
          : live.playing ? "playing" : ended ? "episode ended" : active ? "paused" : "no episode yet"}
      </div>
    </>
  );
}
