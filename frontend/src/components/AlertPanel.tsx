import { formatFigure, humanise } from "../model/format";
import type { JsonValue } from "../model/types";
import { Empty, Panel } from "./Panel";

type Obj = { [k: string]: JsonValue };
const isObj = (v: JsonValue | undefined): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The alert under investigation, as the reset observation's first page shows it. */
export function AlertPanel({ alert }: { alert: JsonValue | null }) {
  if (!isObj(alert) || typeof alert.alert_id !== "string") {
    return (
      <Panel title="Alert" testId="alert-panel">
        <Empty>Start an episode or open a trace to see its alert.</Empty>
      </Panel>
    );
  }
  const rule = isObj(alert.rule) ? alert.rule : {};
  const subject = isObj(alert.subject) ? alert.subject : {};
  const window = isObj(alert.window) ? alert.window : {};
  const figures = isObj(alert.figures) ? alert.figures : {};
  const kase = isObj(alert.case) ? alert.case : {};
  const txns = Array.isArray(alert.transactions) ? alert.transactions : [];
  const accounts = Array.isArray(alert.account_ids) ? alert.account_ids : [];
  return (
    <Panel title="Alert" testId="alert-panel" badge={String(alert.alert_id)}>
      <div className="alert-rule">
        <span className="rule-code">{String(rule.code ?? "")}</span>
        <strong>{String(rule.name ?? "")}</strong>
      </div>
      <p className="muted small">{String(rule.description ?? "")}</p>
      <dl className="facts">
        <dt>Subject</dt>
        <dd data-testid="alert-subject">
          {String(subject.name ?? "")} <span className="muted">· {String(subject.kind ?? "")} · {String(subject.country ?? "")}</span>
          <br />
          <code className="id-chip">{String(subject.entity_id ?? "")}</code>
        </dd>
        <dt>Window</dt>
        <dd>{String(window.start ?? "?")} → {String(window.end ?? "?")}</dd>
        <dt>Accounts</dt>
        <dd>{accounts.map((a) => <code key={String(a)} className="id-chip">{String(a)}</code>)}</dd>
        {Object.entries(figures).map(([k, v]) => (
          <FigureRow key={k} name={k} value={v} />
        ))}
        <dt>Triggering</dt>
        <dd>{txns.length} transaction{txns.length === 1 ? "" : "s"}</dd>
        <dt>Case</dt>
        <dd>
          {String(kase.case_id ?? "")} <span className="muted">· {String(kase.bank ?? "")} · as of {String(kase.as_of ?? "")} · budget {String(kase.step_budget ?? "?")} steps</span>
        </dd>
      </dl>
    </Panel>
  );
}

function FigureRow({ name, value }: { name: string; value: JsonValue }) {
  return (
    <>
      <dt>{humanise(name)}</dt>
      <dd className="figure">{formatFigure(name, value)}</dd>
    </>
  );
}
