import { Empty, Panel } from "../components/Panel";
import type { NavPoint } from "./model";

const WIDTH = 620;
const HEIGHT = 230;
const PAD = { left: 44, right: 12, top: 12, bottom: 22 };

interface Series {
  key: string;
  label: string;
  points: NavPoint[];
}

/** NAV month by month: the fund, cash (the opening NAV at the cash rate) and the reference PM
 * on the same world, up to the month on screen. Click a month to jump to it. */
export function NavChart({ fund, cash, reference, horizon, cursorPeriod, onSeekPeriod, referenceNote }: {
  fund: NavPoint[];
  cash: NavPoint[];
  reference: NavPoint[];
  horizon: number;
  cursorPeriod: number;
  onSeekPeriod: (period: number) => void;
  referenceNote: string | null;
}) {
  if (fund.length === 0) {
    return (
      <Panel title="NAV by month" testId="nav-chart">
        <Empty>Start an episode or open a trace.</Empty>
      </Panel>
    );
  }
  const series: Series[] = [
    { key: "cash", label: "cash", points: cash },
    { key: "reference", label: "reference (heuristic)", points: reference },
    { key: "fund", label: "fund", points: fund },
  ];
  const values = series.flatMap((s) => s.points.map((p) => p.nav));
  const lo = Math.floor(Math.min(...values) - 0.5);
  const hi = Math.ceil(Math.max(...values) + 0.5);
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const months = Math.max(horizon, 1);
  const x = (period: number) => PAD.left + (period / months) * plotW;
  const y = (nav: number) => PAD.top + (1 - (nav - lo) / Math.max(hi - lo, 1e-9)) * plotH;
  const ticks = Array.from({ length: 5 }, (_, i) => lo + ((hi - lo) * i) / 4);
  const last = fund.at(-1);
  return (
    <Panel title="NAV by month" testId="nav-chart"
      badge={last ? `month ${last.period} · NAV ${last.nav.toFixed(2)}` : undefined}>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} className="nav-chart" role="img" aria-label="NAV by month">
        {ticks.map((t) => (
          <g key={t}>
            <line x1={PAD.left} x2={WIDTH - PAD.right} y1={y(t)} y2={y(t)} className="axis" />
            <text x={PAD.left - 4} y={y(t) + 3} className="tick" textAnchor="end">{t.toFixed(1)}</text>
          </g>
        ))}
        {Array.from({ length: months + 1 }, (_, p) => (
          <rect key={p} x={x(p) - plotW / months / 2} y={PAD.top} width={plotW / months} height={plotH}
            className={`month-slot ${p === cursorPeriod ? "current" : ""}`} onClick={() => onSeekPeriod(p)}>
            <title>{`month ${p}`}</title>
          </rect>
        ))}
        {series.map((s) => s.points.length > 0 && (
          <polyline key={s.key} points={s.points.map((p) => `${x(p.period)},${y(p.nav)}`).join(" ")}
            className={`nav-line ${s.key}`} data-testid={`nav-${s.key}`} data-points={s.points.length}
            data-last={s.points.at(-1)?.nav.toFixed(4)} />
        ))}
        <text x={WIDTH - PAD.right} y={HEIGHT - 5} className="tick" textAnchor="end">month →</text>
      </svg>
      <div className="nav-legend">
        {series.map((s) => (
          <span key={s.key} className={`legend-item ${s.key}`}>
            <span className="swatch" /> {s.label}
            {s.points.length > 0 && <b> {s.points.at(-1)?.nav.toFixed(2)}</b>}
          </span>
        ))}
      </div>
      {referenceNote && <p className="muted small" data-testid="reference-note">{referenceNote}</p>}
    </Panel>
  );
}
