import { formatReward, humanise } from "../model/format";
import type { TerminalScore } from "../model/types";
import { Empty, Panel } from "./Panel";

const GOOD = new Set(["TP", "TN"]);

/** The terminal score and its named components, shown once the episode has ended. */
export function TerminalPanel({ terminal, episodeReturn }: { terminal: TerminalScore | null; episodeReturn: number | null }) {
  if (!terminal) {
    return (
      <Panel title="Terminal score" testId="terminal-panel">
        <Empty>The breakdown appears when the episode ends (file_sar, close_alert or timeout).</Empty>
      </Panel>
    );
  }
  const [lo, hi] = terminal.range;
  const span = Math.max(Math.abs(lo), Math.abs(hi), 1e-9);
  return (
    <Panel title="Terminal score" testId="terminal-panel" badge={`range ${lo} … ${hi}`}>
      <div className="terminal-head">
        <span className={`outcome ${GOOD.has(terminal.outcome) ? "good" : "bad"}`} data-testid="terminal-outcome">{terminal.outcome}</span>
        <span className="score" data-testid="terminal-score">{formatReward(terminal.score)}</span>
        {episodeReturn !== null && <span className="muted">episode return {formatReward(episodeReturn)}</span>}
      </div>
      <ul className="components">
        {Object.entries(terminal.components).map(([name, value]) => (
          <li key={name} data-testid="terminal-component" data-name={name}>
            <span className="component-name">{humanise(name)}</span>
            <span className="component-bar">
              <span className="zero" />
              <span className={`fill ${value < 0 ? "neg" : "pos"}`}
                style={value < 0
                  ? { right: "50%", width: `${(Math.abs(value) / span) * 50}%` }
                  : { left: "50%", width: `${(value / span) * 50}%` }} />
            </span>
            <span className="num">{formatReward(value)}</span>
          </li>
        ))}
      </ul>
      {Object.keys(terminal.measures).length > 0 && (
        <dl className="measures">
          {Object.entries(terminal.measures).map(([k, v]) => (
            <div key={k}>
              <dt>{humanise(k)}</dt>
              <dd>{Number.isInteger(v) ? v : v.toFixed(2)}</dd>
            </div>
          ))}
        </dl>
      )}
    </Panel>
  );
}
