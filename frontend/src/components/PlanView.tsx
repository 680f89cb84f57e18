import type { JsonValue } from "../model/types";

/** The plan an adversary-made case was built from (scenarios/plan.py), shown with the ground
 * truth once the episode has ended: the story, the failing check and every knob it set. */
export function PlanView({ plan }: { plan: Record<string, JsonValue> }) {
  const knobs = Object.entries(plan).filter(([k]) => !["version", "kind", "variant"].includes(k));
  return (
    <div data-testid="truth-plan">
      <h3 className="subhead">Adversary's plan</h3>
      <div className="muted small">{String(plan.kind)} · {String(plan.variant)}</div>
      <ul className="truth-list">
        {knobs.map(([k, v]) => (
          <li key={k} data-testid="plan-knob"><code>{k}</code> {Array.isArray(v) ? v.join(", ") : String(v)}</li>
        ))}
      </ul>
    </div>
  );
}
