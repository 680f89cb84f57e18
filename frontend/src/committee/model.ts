/**
 * The investment committee as the Glass Box reads it: the observation
 * (committee/models.py `CommitteeObservation`), frames built from a live envelope or a trace's
 * step line, and the pure views the panels draw — the NAV path against cash and the reference
 * PM, the notes by author, the book, the agent's regime belief. Unit-tested without a browser.
 */
import type { FrameReader } from "../hooks/useLiveEpisode";
import { PayloadError, arrayField as list, isObject } from "../model/frames";
import type { StepReader } from "../model/trace";
import type { Envelope, JsonObject, JsonValue } from "../model/types";

export interface AssetView {
  ticker: string;
  name: string;
  sector: string;
  asset_class: string;
  cost_bps: number;
}

export interface PortfolioView {
  nav: number;
  weights: Record<string, number>;
  period_return_pct: number;
  cumulative_return_pct: number;
  drawdown_pct: number;
  max_drawdown_pct: number;
  turnover: number;
}

export interface LimitView {
  limit: string;
  value: number;
  cap: number;
  usage: number | null;
  level: "ok" | "watch" | "breach" | "escalated";
}

export interface RiskView {
  vol_annual_pct: number;
  vol_cap_annual_pct: number;
  drawdown_pct: number;
  drawdown_discipline: boolean;
  flags: LimitView[];
  market_stress: string;
  stress_ratio: number;
  position_alerts: Record<string, number>;
}

export interface ResearchView {
  name: string;
  level: "asset" | "sector";
  conviction: number;
  stance: string;
  period: number;
}

export type NoteAuthor = "research" | "risk" | "committee" | "pm";

export interface NoteView {
  period: number;
  author: NoteAuthor;
  kind: string;
  text: string;
}

export interface CommitteeObservation {
  task: string;
  period: number;
  horizon: number;
  action_type: string | null;
  result: JsonValue;
  error: { code: string; message: string } | null;
  events: string[];
  universe: AssetView[];
  cash_rate_pct: number;
  portfolio: PortfolioView;
  risk: RiskView;
  research: ResearchView[];
  notes: NoteView[];
  queries_left: number;
  query_budget: number;
  reward_breakdown: Record<string, number>;
  reward: number | null;
  done: boolean;
  /** At the end: `score`, `score_components`, `metrics` (committee/scoring.py). */
  metadata: Record<string, JsonValue>;
}

/** What the agent said it believed when it chose the action (`Policy.insight`), if anything. */
export type Insight = JsonObject | null;

export interface CommitteeFrame {
  index: number;
  /** The wire action (`{action_type, query_target?, weights?, reason?}`); null for the reset. */
  action: JsonObject | null;
  actor: string;
  observation: CommitteeObservation;
  insight: Insight;
}

/** The reset body (committee/models.py `CommitteeResetRequest`). */
export interface CommitteeResetOptions {
  task?: string;
  seed?: number;
}

/** Validate a committee observation; reward/done/metadata given apart (an envelope) win. */
export function normaliseCommittee(
  raw: unknown,
  where: string,
  extra: { reward?: number | null; done?: boolean; metadata?: JsonObject | null } = {},
): CommitteeObservation {
  if (!isObject(raw)) throw new PayloadError(`${where} is not an observation object`);
  if (typeof raw.period !== "number") throw new PayloadError(`${where}.period is missing (not a committee observation?)`);
  if (!isObject(raw.portfolio) || typeof raw.portfolio.nav !== "number") throw new PayloadError(`${where}.portfolio is missing`);
  const risk = isObject(raw.risk) ? raw.risk : {};
  const market = isObject(raw.market) ? raw.market : {};
  const error = isObject(raw.error) ? { code: String(raw.error.code ?? "error"), message: String(raw.error.message ?? "") } : null;
  const reward = extra.reward !== undefined ? extra.reward : raw.reward;
  const done = extra.done !== undefined ? extra.done : raw.done;
  return {
    task: String(raw.task ?? ""),
    period: raw.period,
    horizon: typeof raw.horizon === "number" ? raw.horizon : 0,
    action_type: typeof raw.action_type === "string" ? raw.action_type : null,
    result: (raw.result ?? null) as JsonValue,
    error,
    events: list<string>(raw, "events", where).map(String),
    universe: list<AssetView>(raw, "universe", where),
    cash_rate_pct: typeof market.cash_rate_pct === "number" ? market.cash_rate_pct : 0,
    portfolio: raw.portfolio as unknown as PortfolioView,
    risk: {
      vol_annual_pct: Number(risk.vol_annual_pct ?? 0),
      vol_cap_annual_pct: Number(risk.vol_cap_annual_pct ?? 0),
      drawdown_pct: Number(risk.drawdown_pct ?? 0),
      drawdown_discipline: risk.drawdown_discipline === true,
      flags: list<LimitView>(risk, "flags", `${where}.risk`),
      market_stress: String(risk.market_stress ?? "normal"),
      stress_ratio: Number(risk.stress_ratio ?? 1),
      position_alerts: (isObject(risk.position_alerts) ? risk.position_alerts : {}) as Record<string, number>,
    },
    research: list<ResearchView>(raw, "research", where),
    notes: list<NoteView>(raw, "notes", where),
    queries_left: Number(raw.queries_left ?? 0),
    query_budget: Number(raw.query_budget ?? 0),
    reward_breakdown: (isObject(raw.reward_breakdown) ? raw.reward_breakdown : {}) as Record<string, number>,
    reward: typeof reward === "number" ? reward : null,
    done: done === true,
    metadata: { ...(isObject(raw.metadata) ? raw.metadata : {}), ...(extra.metadata ?? {}) } as Record<string, JsonValue>,
  };
}

function actionOf(raw: unknown, where: string): JsonObject | null {
  if (raw === null || raw === undefined) return null;
  if (!isObject(raw) || typeof raw.action_type !== "string") throw new PayloadError(`${where}.action has no action_type`);
  return raw as JsonObject;
}

function insightOf(raw: unknown): Insight {
  return isObject(raw) ? (raw as JsonObject) : null;
}

/** Live frames: the envelope of a reset, an agent step (its action and insight) or a manual step. */
export const committeeFrames: FrameReader<CommitteeFrame, JsonObject> = {
  read: (envelope: Envelope, index, actor, action) => ({
    index,
    action: actionOf(envelope.action, "response") ?? action,
    actor,
    observation: normaliseCommittee(envelope.observation, "response.observation", {
      reward: envelope.reward, done: envelope.done, metadata: envelope.metadata as JsonObject | null,
    }),
    insight: insightOf(envelope.insight),
  }),
  label: (action) => String(action.action_type ?? "the action"),
};

/** Trace step lines (`memex-trace/1`, env "committee"). */
export const readCommitteeStep: StepReader<CommitteeFrame> = (entry, where, index) => {
  const action = actionOf(entry.action, where);
  return {
    index,
    action,
    actor: action ? "trace" : "reset",
    observation: normaliseCommittee(entry.observation, `${where}: observation`),
    insight: insightOf(entry.insight),
  };
};

// ---- views -------------------------------------------------------------------------------

export interface NavPoint {
  period: number;
  nav: number;
}

/** The fund's NAV after each period, up to the frame on screen (one frame per period; a step
 * after the end, answered with an error, adds none). */
export function fundNav(frames: CommitteeFrame[], cursor: number): NavPoint[] {
  const out: NavPoint[] = [];
  for (const f of frames.slice(0, cursor + 1)) {
    const p = f.observation.period;
    if (out.length === 0 || p > (out.at(-1)?.period ?? -1)) out.push({ period: p, nav: f.observation.portfolio.nav });
  }
  return out;
}

/** Cash: the opening NAV compounding at the cash rate, period 0 to `horizon`. */
export function cashNav(openingNav: number, ratePct: number, horizon: number): NavPoint[] {
  return Array.from({ length: horizon + 1 }, (_, t) => ({ period: t, nav: openingNav * (1 + ratePct / 100) ** t }));
}

/** The reference PM's NAV path up to `period` (what has happened by the frame on screen). */
export function referenceNav(reference: { periods: number[]; nav: number[] } | null, period: number): NavPoint[] {
  if (!reference) return [];
  return reference.periods.flatMap((p, i) => (p <= period ? [{ period: p, nav: reference.nav[i] ?? 0 }] : []));
}

/** Every note seen up to the frame on screen (each observation shows the last few), once,
 * oldest first, by author. */
export function notesUpTo(frames: CommitteeFrame[], cursor: number): Record<NoteAuthor, NoteView[]> {
  const seen = new Set<string>();
  const out: Record<NoteAuthor, NoteView[]> = { research: [], risk: [], committee: [], pm: [] };
  for (const f of frames.slice(0, cursor + 1)) {
    for (const n of f.observation.notes) {
      const key = `${n.period}|${n.author}|${n.kind}|${n.text}`;
      if (seen.has(key)) continue;
      seen.add(key);
      (out[n.author] ?? out.committee).push(n);
    }
  }
  return out;
}

export interface BookRow {
  ticker: string;
  name: string;
  sector: string;
  weight: number;
  conviction: number | null;
}

/** The book on screen: every asset of the universe with its weight and the latest research
 * conviction held on it; cash last. */
export function bookRows(obs: CommitteeObservation): BookRow[] {
  const views = new Map(obs.research.filter((v) => v.level === "asset").map((v) => [v.name, v.conviction]));
  const rows: BookRow[] = obs.universe.map((a) => ({
    ticker: a.ticker, name: a.name, sector: a.sector, weight: obs.portfolio.weights[a.ticker] ?? 0,
    conviction: views.get(a.ticker) ?? null,
  }));
  rows.push({ ticker: "CASH", name: "cash", sector: "", weight: obs.portfolio.weights.CASH ?? 0, conviction: null });
  return rows;
}

/** The regime belief the agent exposed with its latest action up to the frame on screen
 * (`insight.regime_belief`: regime -> probability), and the frame it came with. */
export function beliefAt(frames: CommitteeFrame[], cursor: number): { frame: number; belief: Record<string, number> } | null {
  for (let i = Math.min(cursor, frames.length - 1); i >= 0; i--) {
    const belief = frames[i]?.insight?.regime_belief;
    if (isObject(belief)) return { frame: i, belief: belief as Record<string, number> };
  }
  return null;
}

/** The episode's score once it has ended (`metadata.score`), else null. */
export function scoreOf(obs: CommitteeObservation | undefined): number | null {
  const score = obs?.done ? obs.metadata.score : undefined;
  return typeof score === "number" ? score : null;
}
