import type { Residency } from "../model/graph";
import type { TruthState } from "../model/timeline";
import type { Action, JsonValue } from "../model/types";
import { Empty, Panel } from "./Panel";
import { PlanView } from "./PlanView";

interface Props {
  ended: boolean;
  truth: TruthState;
  /** Residency of each record in the evidence graph at the final frame. */
  seen: Map<string, Residency>;
  decision: Action | null;
  kernel: string[];
  onReveal: () => void;
  onHide: () => void;
}

function stringList(v: JsonValue | undefined): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

function findingCodes(decision: Action | null): Set<string> {
  const findings = decision?.arguments.findings;
  const codes = new Set<string>();
  if (Array.isArray(findings)) {
    for (const f of findings) {
      if (f && typeof f === "object" && !Array.isArray(f) && typeof f.code === "string") codes.add(f.code);
    }
  }
  return codes;
}

function Mark({ ok, yes, no }: { ok: boolean; yes: string; no: string }) {
  return <span className={`mark ${ok ? "ok" : "miss"}`}>{ok ? `✓ ${yes}` : `✗ ${no}`}</span>;
}

/** The post-episode overlay: the case's ground truth next to what the agent did. Offered only
 * after the episode has ended; the server serves it only then (and only when enabled). */
export function TruthPanel({ ended, truth, seen, decision, kernel, onReveal, onHide }: Props) {
  const actions = ended ? (
    truth.status === "shown" ? (
      <button type="button" className="ghost" onClick={onHide}>Hide</button>
    ) : (
      <button type="button" data-testid="reveal-truth" onClick={onReveal} disabled={truth.status === "loading"}>
        {truth.status === "loading" ? "Loading…" : "Reveal ground truth"}
      </button>
    )
  ) : null;
  return (
    <Panel title="Ground truth" testId="truth-panel" actions={actions} className={truth.status === "shown" ? "truth-on" : ""}>
      {!ended && <Empty>Available after the episode ends — never during it.</Empty>}
      {ended && truth.status === "hidden" && <Empty>Hidden. Reveal it to overlay subjects and true red flags on the graph.</Empty>}
      {truth.status === "error" && <div className="tool-error" data-testid="truth-error">{truth.message}</div>}
      {truth.status === "shown" && <TruthBody truth={truth.truth} seen={seen} decision={decision} kernel={kernel} />}
    </Panel>
  );
}

function TruthBody({ truth, seen, decision, kernel }: Pick<Props, "seen" | "decision" | "kernel"> & { truth: import("../model/types").GroundTruth }) {
  const named = new Set(stringList(decision?.arguments.subjects));
  const codes = findingCodes(decision);
  const decided = decision && (decision.tool === "file_sar" || decision.tool === "close_alert") ? decision.tool : "timeout";
  return (
    <div className="truth-body" data-testid="truth-body">
      <div className="truth-verdict">
        <span className={`outcome ${truth.suspicious ? "bad" : "good"}`}>{truth.suspicious ? "suspicious" : "benign"}</span>
        <span>{truth.kind}{truth.variant ? ` · ${truth.variant}` : ""}</span>
        <span className="spacer" />
        <span className="muted">correct: <strong>{truth.decision}</strong> · agent: <strong>{decided}</strong></span>
      </div>
      {truth.typology && <div className="muted small">typology {truth.typology}{decision?.arguments.typology ? ` · agent said ${String(decision.arguments.typology)}` : ""}</div>}
      <h3 className="subhead">Subjects</h3>
      <ul className="truth-list">
        {truth.subject_ids.length === 0 && <li className="muted">none (benign case)</li>}
        {truth.subject_ids.map((id) => (
          <li key={id} data-testid="truth-subject">
            <code className="id-chip subject">{id}</code>
            <Mark ok={seen.has(id)} yes="seen" no="never seen" />
            <Mark ok={named.has(id)} yes="named" no="not named" />
          </li>
        ))}
        {truth.ubo_id && <li className="muted small">ultimate beneficial owner <code className="id-chip">{truth.ubo_id}</code></li>}
      </ul>
      <h3 className="subhead">True red flags</h3>
      <ul className="truth-list">
        {truth.red_flags.length === 0 && <li className="muted">none</li>}
        {truth.red_flags.map((flag) => {
          const onDisk = flag.evidence_ids.filter((id) => seen.get(id) === "disk").length;
          const found = flag.evidence_ids.filter((id) => seen.has(id)).length;
          return (
            <li key={flag.code} data-testid="truth-flag">
              <strong className="flag-code">{flag.code}</strong>
              <Mark ok={codes.has(flag.code)} yes="reported" no="not reported" />
              <span className="muted small"> evidence {found}/{flag.evidence_ids.length} seen · {onDisk} on disk</span>
            </li>
          );
        })}
      </ul>
      {truth.plan && <PlanView plan={truth.plan} />}
      <h3 className="subhead">Justifying sections</h3>
      <div className="chips">
        {truth.justifying_sections.map((s) => (
          <span key={s} className={`chip ${kernel.includes(s) ? "pos" : "neg"}`}>§{s} {kernel.includes(s) ? "loaded" : "not loaded"}</span>
        ))}
      </div>
    </div>
  );
}
