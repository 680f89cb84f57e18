import { Icon } from "./Icon";

interface Props {
  /** Frames on the timeline, the one on screen, and its step (or month) out of the budget. */
  count: number;
  cursor: number;
  step: number;
  budget: number | string;
  unit?: string;
  onSeek: (index: number) => void;
  playing: boolean;
  onPlayToggle: (() => void) | null;
}

/** Step through the timeline: first / previous / slider / next / last (← and → keys too). */
export function Scrubber({ count, cursor, step, budget, unit = "step", onSeek, playing, onPlayToggle }: Props) {
  const last = Math.max(0, count - 1);
  return (
    <div className="scrubber" data-testid="scrubber">
      <button type="button" className="ghost" onClick={() => onSeek(0)} disabled={cursor === 0} aria-label="First step"><Icon name="first" /></button>
      <button type="button" className="ghost" onClick={() => onSeek(cursor - 1)} disabled={cursor === 0} aria-label="Previous step" data-testid="prev-step"><Icon name="prev" /></button>
      {onPlayToggle && (
        <button type="button" onClick={onPlayToggle} disabled={count < 2} data-testid="replay-play" aria-label={playing ? "Pause replay" : "Play replay"}>
          <Icon name={playing ? "pause" : "play"} />
        </button>
      )}
      <input type="range" min={0} max={last} value={cursor} onChange={(e) => onSeek(Number(e.target.value))}
        disabled={count < 2} aria-label="Timeline position" data-testid="timeline-range" />
      <button type="button" className="ghost" onClick={() => onSeek(cursor + 1)} disabled={cursor >= last} aria-label="Next step" data-testid="next-step"><Icon name="next" /></button>
      <button type="button" className="ghost" onClick={() => onSeek(last)} disabled={cursor >= last} aria-label="Last step" data-testid="last-step"><Icon name="last" /></button>
      <span className="scrub-label" data-testid="step-indicator" data-step={step} data-frame={cursor}>
        {unit} <b>{step}</b> / {budget}
        <span className="muted"> · frame {cursor + 1} of {count}</span>
      </span>
    </div>
  );
}
