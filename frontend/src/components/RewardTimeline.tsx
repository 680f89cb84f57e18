import { dominantPart, type RewardPoint, symlog } from "../model/rewards";
import { formatReward } from "../model/format";
import { Empty, Panel } from "./Panel";

const HEIGHT = 200;
const PAD = { left: 38, right: 10, top: 10, bottom: 18 };
const TICKS = [1, 0.1, 0.01, 0, -0.01, -0.1, -1];

/** Per-step rewards on a symmetric log scale (shaping is ~0.005, the terminal up to ±1),
 * with the running return as a line. Click a bar to jump to that step. */
export function RewardTimeline({ points, cursorFrame, budget, onSeek }: {
  points: RewardPoint[]; cursorFrame: number; budget: number; onSeek: (frame: number) => void;
}) {
  const last = points.at(-1);
  const badge = last ? `return ${formatReward(last.cumulative)}` : undefined;
  if (points.length === 0) {
    return (
      <Panel title="Reward per step" testId="reward-timeline">
        <Empty>Rewards appear as steps are taken.</Empty>
      </Panel>
    );
  }
  const width = 560;
  const plotW = width - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slots = Math.max(budget, last?.step ?? 1, 1);
  const slotW = plotW / slots;
  const maxLog = symlog(1);
  const y = (v: number) => PAD.top + plotH / 2 - (symlog(v) / maxLog) * (plotH / 2);
  const x = (step: number) => PAD.left + (step - 1) * slotW;
  const line = points.map((p) => `${x(p.step) + slotW / 2},${y(p.cumulative)}`).join(" ");
  return (
    <Panel title="Reward per step" testId="reward-timeline" badge={badge}>
      <svg viewBox={`0 0 ${width} ${HEIGHT}`} className="reward-chart" role="img" aria-label="reward per step">
        {TICKS.map((t) => (
          <g key={t}>
            <line x1={PAD.left} x2={width - PAD.right} y1={y(t)} y2={y(t)} className={t === 0 ? "axis zero" : "axis"} />
            <text x={PAD.left - 4} y={y(t) + 3} className="tick" textAnchor="end">{t === 0 ? "0" : t}</text>
          </g>
        ))}
        {points.map((p) => {
          const top = Math.min(y(0), y(p.reward));
          const h = Math.max(1, Math.abs(y(p.reward) - y(0)));
          const kind = p.terminal ? (p.reward >= 0 ? "terminal-pos" : "terminal-neg") : dominantPart(p.breakdown) ?? "action_cost";
          return (
            <rect key={p.frame} data-testid="reward-bar" data-reward={p.reward} x={x(p.step) + slotW * 0.15} y={top}
              width={Math.max(1.5, slotW * 0.7)} height={h} className={`bar ${kind} ${p.frame === cursorFrame ? "current" : ""}`}
              onClick={() => onSeek(p.frame)}>
              <title>{`step ${p.step} ${p.tool ?? ""}: ${formatReward(p.reward)}\n${Object.entries(p.breakdown).map(([k, v]) => `${k} ${v}`).join("\n")}`}</title>
            </rect>
          );
        })}
        <polyline points={line} className="cumulative" />
        <text x={width - PAD.right} y={HEIGHT - 4} className="tick" textAnchor="end">step →  (symlog scale; line = running return)</text>
      </svg>
    </Panel>
  );
}
