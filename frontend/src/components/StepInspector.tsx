import { formatReward, prettyJson } from "../model/format";
import type { Frame } from "../model/types";
import { Empty, Panel } from "./Panel";

/** The frame on screen in full: action, result or typed error, OS events, reward parts. */
export function StepInspector({ frame }: { frame: Frame | undefined }) {
  if (!frame) {
    return (
      <Panel title="Step inspector" testId="step-inspector">
        <Empty>No step yet.</Empty>
      </Panel>
    );
  }
  const o = frame.observation;
  return (
    <Panel title="Step inspector" testId="step-inspector" badge={`step ${o.step}/${o.step_budget}`}>
      <div className="inspector-head">
        <span className={`actor ${frame.actor}`}>{frame.actor}</span>
        <strong className="tool-name">{frame.action?.tool ?? "reset"}</strong>
        <span className="spacer" />
        <span className={`reward ${(o.reward ?? 0) < 0 ? "neg" : "pos"}`}>{formatReward(o.reward)}</span>
      </div>
      {Object.keys(o.reward_breakdown).length > 0 && (
        <div className="chips">
          {Object.entries(o.reward_breakdown).map(([k, v]) => (
            <span key={k} className={`chip ${v < 0 ? "neg" : "pos"}`}>{k} {formatReward(v)}</span>
          ))}
        </div>
      )}
      {o.error && (
        <div className="tool-error" data-testid="tool-error">
          <strong>{o.error.code}</strong> {o.error.message}
        </div>
      )}
      {o.events.length > 0 && (
        <ul className="events">
          {o.events.map((e) => <li key={e} className={`event ${/fault|timeout/.test(e) ? "fault" : /interrupt/.test(e) ? "interrupt" : ""}`}>{e}</li>)}
        </ul>
      )}
      {frame.action && (
        <details className="json-block">
          <summary>arguments</summary>
          <pre className="json">{prettyJson(frame.action.arguments)}</pre>
        </details>
      )}
      <details className="json-block" open>
        <summary>result</summary>
        <pre className="json" data-testid="step-result">{prettyJson(o.result)}</pre>
      </details>
    </Panel>
  );
}
