import { type FormEvent, Fragment, useRef, useState } from "react";
import { Empty, Panel } from "../components/Panel";
import { useRowInView } from "../hooks/useRowInView";
import { formatReward, humanise, prettyJson } from "../model/format";
import type { ServerInfo } from "../model/types";
import {
  type BookRow,
  type CommitteeFrame,
  type CommitteeObservation,
  type CommitteeResetOptions,
  type NoteView,
  bookRows,
} from "./model";

const pct = (x: number, digits = 1) => `${(x * 100).toFixed(digits)}%`;

/** Choose a task and a seed and start a live episode. */
export function CommitteeSetup({ info, busy, active, onStart }: {
  info: ServerInfo | null; busy: boolean; active: boolean; onStart: (options: CommitteeResetOptions) => void;
}) {
  const tasks = Array.isArray(info?.tasks) ? (info.tasks as string[]) : [];
  const [task, setTask] = useState("");
  const [seed, setSeed] = useState("1100000");
  const sealed = info?.sealed === true;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const options: CommitteeResetOptions = {};
    if (task) options.task = task;
    if (seed.trim() !== "" && !sealed) options.seed = Number(seed);
    onStart(options);
  };
  return (
    <form className="setup" onSubmit={submit} noValidate>
      <div className="row">
        <label>
          Task
          <select value={task} onChange={(e) => setTask(e.target.value)} data-testid="task-select">
            <option value="">{`server default${typeof info?.default_task === "string" ? ` (${info.default_task})` : ""}`}</option>
            {tasks.map((t) => <option key={t} value={t}>{humanise(t)}</option>)}
          </select>
        </label>
        <label>
          Seed
          <input type="number" min={0} value={seed} placeholder="canonical" disabled={sealed}
            onChange={(e) => setSeed(e.target.value)} data-testid="seed-input" />
        </label>
      </div>
      <button type="submit" className="primary" disabled={busy} data-testid="start-episode">
        {active ? "Start a new episode" : "Start episode"}
      </button>
    </form>
  );
}

function conviction(c: number | null) {
  if (c === null) return <span className="muted">—</span>;
  return <span className={c > 0 ? "pos" : c < 0 ? "neg" : ""}>{c > 0 ? "+" : ""}{c.toFixed(2)}</span>;
}

/** The book on screen: weights by asset (bars), the research conviction held, NAV and drawdown. */
export function BookPanel({ obs }: { obs: CommitteeObservation | undefined }) {
  if (!obs) {
    return (
      <Panel title="The book" testId="book-panel">
        <Empty>No episode yet.</Empty>
      </Panel>
    );
  }
  const rows: BookRow[] = bookRows(obs);
  const p = obs.portfolio;
  return (
    <Panel title="The book" testId="book-panel" badge={`NAV ${p.nav.toFixed(2)}`}>
      <dl className="facts">
        <dt>return</dt><dd className="figure">{p.cumulative_return_pct.toFixed(2)}% <span className="muted small">(month {p.period_return_pct.toFixed(2)}%)</span></dd>
        <dt>drawdown</dt><dd className="figure">{p.drawdown_pct.toFixed(2)}% <span className="muted small">(max {p.max_drawdown_pct.toFixed(2)}%)</span></dd>
        <dt>queries left</dt><dd className="figure">{obs.queries_left} of {obs.query_budget}</dd>
      </dl>
      <table className="book">
        <thead><tr><th>asset</th><th>sector</th><th className="num">weight</th><th /><th className="num">research</th></tr></thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.ticker} data-testid="book-row" data-ticker={r.ticker} data-weight={r.weight}>
              <td title={r.name}><code>{r.ticker}</code></td>
              <td className="muted small">{r.sector}</td>
              <td className="num">{pct(r.weight)}</td>
              <td className="bar-cell"><span className={`weight-bar ${r.ticker === "CASH" ? "cash" : ""}`} style={{ width: `${Math.min(100, r.weight * 100)}%` }} /></td>
              <td className="num">{conviction(r.conviction)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Panel>
  );
}

/** The Risk Officer's headline figures and flags for the book on screen. */
export function RiskPanel({ obs }: { obs: CommitteeObservation | undefined }) {
  if (!obs) return null;
  const r = obs.risk;
  return (
    <Panel title="Risk Officer" testId="risk-panel" badge={`stress ${r.market_stress}`}>
      <dl className="facts">
        <dt>volatility</dt><dd className="figure">{r.vol_annual_pct.toFixed(2)}% / {r.vol_cap_annual_pct.toFixed(1)}% a year</dd>
        <dt>drawdown</dt><dd className="figure">{r.drawdown_pct.toFixed(2)}%{r.drawdown_discipline ? " · discipline on" : ""}</dd>
      </dl>
      {r.flags.length === 0 ? <Empty>Nothing at watch level.</Empty> : (
        <ul className="flags">
          {r.flags.map((f) => (
            <li key={f.limit} className={`flag ${f.level}`} data-testid="risk-flag" data-level={f.level}>
              <code>{f.limit}</code> {f.value.toFixed(3)} / {f.cap.toFixed(3)} <b>{f.level}</b>
            </li>
          ))}
        </ul>
      )}
    </Panel>
  );
}

/** One author's notes (the Research Analyst's or the Risk Officer's), newest first. */
export function NotesPanel({ title, testId, notes, currentPeriod }: {
  title: string; testId: string; notes: NoteView[]; currentPeriod: number;
}) {
  return (
    <Panel title={title} testId={testId} badge={`${notes.length} notes`}>
      {notes.length === 0 ? <Empty>No notes yet.</Empty> : (
        <ol className="notes">
          {[...notes].reverse().map((n) => (
            <li key={`${n.period}-${n.kind}-${n.text}`} data-testid="note" className={n.period === currentPeriod ? "fresh" : ""}>
              <span className="note-head">month {n.period} · {n.kind}</span>
              <span className="note-text">{n.text}</span>
            </li>
          ))}
        </ol>
      )}
    </Panel>
  );
}

/** The agent's regime belief with its latest action (probabilities), when the agent exposes one. */
export function BeliefPanel({ belief, agent }: { belief: { frame: number; belief: Record<string, number> } | null; agent: string }) {
  if (!belief) {
    return (
      <Panel title="Regime belief" testId="belief-panel">
        <Empty>{agent === "reset" ? "No action yet." : `No belief exposed by ${agent === "manual" ? "actions taken by hand" : `the ${agent} agent`} (the market regime itself is never shown).`}</Empty>
      </Panel>
    );
  }
  const entries = Object.entries(belief.belief).sort((a, b) => b[1] - a[1]);
  return (
    <Panel title="Regime belief" testId="belief-panel" badge={`after frame ${belief.frame}`}>
      <p className="muted small">What the agent believes the coming month's hidden regime is (its own filter, not the truth).</p>
      <ul className="belief">
        {entries.map(([regime, p]) => (
          <li key={regime} data-testid="belief-row" data-regime={regime} data-p={p}>
            <span className="belief-name">{humanise(regime)}</span>
            <span className="belief-bar"><span style={{ width: `${Math.min(100, p * 100)}%` }} /></span>
            <span className="num">{pct(p, 0)}</span>
          </li>
        ))}
      </ul>
    </Panel>
  );
}

function describeAction(f: CommitteeFrame): string {
  const a = f.action;
  if (!a) return "reset";
  const parts = [String(a.action_type)];
  if (typeof a.query_target === "string") parts.push(a.query_target);
  if (a.weights && typeof a.weights === "object") parts.push(`${Object.keys(a.weights).length} weights`);
  return parts.join(" ");
}

/** Every month: who acted, the action, its reason, the month's reward; click to jump there. */
export function MonthLog({ frames, cursor, onSeek }: { frames: CommitteeFrame[]; cursor: number; onSeek: (i: number) => void }) {
  const box = useRef<HTMLDivElement>(null);
  const current = useRef<HTMLTableRowElement>(null);
  useRowInView(box, current, `${cursor}/${frames.length}`);
  return (
    <Panel title="Committee minutes" testId="action-log" badge={`${Math.max(0, frames.length - 1)} decisions`}>
      <div className="log-scroll" ref={box}>
        <table className="log">
          <thead><tr><th>month</th><th>by</th><th>action</th><th>reason</th><th className="num">reward</th></tr></thead>
          <tbody>
            {frames.map((f) => {
              const o = f.observation;
              const reason = typeof f.action?.reason === "string" ? f.action.reason : "";
              return (
                <tr key={f.index} ref={f.index === cursor ? current : undefined} data-testid="log-row"
                  className={`${f.index === cursor ? "current" : ""} ${o.error ? "has-error" : ""} ${f.index > cursor ? "future" : ""}`}
                  onClick={() => onSeek(f.index)}>
                  <td className="num">{o.period}</td>
                  <td><span className="actor">{f.actor}</span></td>
                  <td className="tool-name">{describeAction(f)}</td>
                  <td className={o.error ? "error-text" : "muted"} title={o.error ? o.error.message : reason}>
                    {o.error ? `${o.error.code}: ${o.error.message}` : reason}
                  </td>
                  <td className={`num ${(o.reward ?? 0) < 0 ? "neg" : (o.reward ?? 0) > 0 ? "pos" : ""}`}>{formatReward(o.reward)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </Panel>
  );
}

/** The month on screen in full: reward terms, the action's result or typed error. */
export function MonthInspector({ frame }: { frame: CommitteeFrame | undefined }) {
  if (!frame) return null;
  const o = frame.observation;
  return (
    <Panel title="Month inspector" testId="step-inspector" badge={`month ${o.period}/${o.horizon}`}>
      {Object.keys(o.reward_breakdown).length > 0 && (
        <div className="chips">
          {Object.entries(o.reward_breakdown).map(([k, v]) => (
            <span key={k} className={`chip ${v < 0 ? "neg" : "pos"}`}>{humanise(k)} {formatReward(v)}</span>
          ))}
        </div>
      )}
      {o.error && <div className="tool-error" data-testid="tool-error"><strong>{o.error.code}</strong> {o.error.message}</div>}
      {o.events.length > 0 && <ul className="events">{o.events.map((e) => <li key={e} className="event">{e}</li>)}</ul>}
      <details className="json-block" open={o.result !== null}>
        <summary>result</summary>
        <pre className="json" data-testid="step-result">{prettyJson(o.result)}</pre>
      </details>
    </Panel>
  );
}

/** The episode's score and its components, once it has ended (committee/scoring.py). */
export function ScorePanel({ obs, referenceScore }: { obs: CommitteeObservation | undefined; referenceScore: number | null }) {
  const score = obs?.done ? obs.metadata.score : undefined;
  if (typeof score !== "number") {
    return (
      <Panel title="Score" testId="score-panel">
        <Empty>The score (utility of the edge over cash, net of fines; 0 is cash, 1 the regime oracle's mean) appears at the end.</Empty>
      </Panel>
    );
  }
  const parts = (obs?.metadata.score_components ?? {}) as Record<string, number>;
  return (
    <Panel title="Score" testId="score-panel" badge={<span data-testid="score">{score.toFixed(3)}</span>}>
      <dl className="facts">
        {referenceScore !== null && <><dt>reference</dt><dd className="figure">{referenceScore.toFixed(3)}</dd></>}
        {Object.entries(parts).map(([k, v]) => (
          <Fragment key={k}><dt>{humanise(k)}</dt><dd className="figure">{typeof v === "number" ? v.toFixed(3) : String(v)}</dd></Fragment>
        ))}
      </dl>
    </Panel>
  );
}
