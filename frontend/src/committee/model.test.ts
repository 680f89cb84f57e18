import { describe, expect, it } from "vitest";
import { PayloadError } from "../model/frames";
import { TraceError, parseTraceWith } from "../model/trace";
import {
  beliefAt,
  bookRows,
  cashNav,
  committeeFrames,
  fundNav,
  normaliseCommittee,
  notesUpTo,
  readCommitteeStep,
  referenceNav,
  scoreOf,
} from "./model";

// Shaped as committee/models.py CommitteeObservation dumps it (fields the view does not read
// left out).
const obs = (period: number, nav: number, extra: Record<string, unknown> = {}) => ({
  task: "research_risk_conflict", period, horizon: 20, action_type: period === 0 ? null : "hold", result: null, error: null,
  events: [], done: false, reward: period === 0 ? null : nav - 100, metadata: {},
  universe: [
    { ticker: "NOVA", name: "Nova Semiconductors", sector: "TECH", asset_class: "equity", cost_bps: 10 },
    { ticker: "GOVT", name: "Government bonds", sector: "BONDS", asset_class: "bond", cost_bps: 3 },
  ],
  market: { prices: {}, returns_pct: {}, cash_rate_pct: 0.25 },
  portfolio: { nav, weights: { NOVA: 0.42, GOVT: 0.3, CASH: 0.28 }, period_return_pct: 0, cumulative_return_pct: nav - 100,
    high_water_mark: nav, drawdown_pct: 0, max_drawdown_pct: 0, turnover: 0 },
  risk: { vol_annual_pct: 9.8, vol_cap_annual_pct: 8, flags: [{ limit: "asset:NOVA", value: 0.42, cap: 0.35, usage: 1.2, level: "breach" }],
    market_stress: "normal", stress_ratio: 1, position_alerts: {}, drawdown_pct: 0, drawdown_discipline: false },
  research: [{ name: "NOVA", level: "asset", conviction: 0.6, stance: "buy", period: 1 }, { name: "TECH", level: "sector", conviction: 0.5, stance: "buy", period: 1 }],
  notes: [{ period: 0, author: "risk", kind: "breach", text: "Risk Officer: asset NOVA at 42.0% vs cap 35.0%." }],
  query_budget: 10, queries_used: 0, queries_left: 10, reward_breakdown: {}, reward_totals: {},
  ...extra,
});
const header = { type: "header", format: "memex-trace/1", env: "committee", policy: "heuristic", seed: 1100000, difficulty: "standard", case: null,
  reset: { task: "research_risk_conflict", seed: 1100000 } };
const lines = (...xs: unknown[]) => xs.map((x) => JSON.stringify(x)).join("\n") + "\n";
const belief = { regime_belief: { tech_boom: 0.8, tech_correction: 0.2 } };

function trace() {
  return parseTraceWith(lines(
    header,
    { type: "step", step: 0, action: null, observation: obs(0, 100) },
    { type: "step", step: 1, action: { action_type: "query_research", query_target: "SECTOR" }, observation: obs(1, 101, {
      notes: [{ period: 0, author: "risk", kind: "breach", text: "Risk Officer: asset NOVA at 42.0% vs cap 35.0%." },
        { period: 1, author: "research", kind: "note", text: "Research: TECH +0.5." }] }), insight: belief },
    { type: "step", step: 2, action: { action_type: "hold", reason: "wait" }, observation: obs(2, 99.5, { done: true,
      metadata: { score: 0.42, score_components: { utility_pts: 6.1 } } }) },
    { type: "footer", episode_return: -0.5, outcome: "below_cash", terminal: {}, truth: null },
  ), "committee", readCommitteeStep);
}

describe("committee frames", () => {
  it("test_a_committee_trace_replays_with_actions_and_insights", () => {
    const t = trace();
    expect(t.frames.map((f) => [f.index, f.actor, f.action?.action_type ?? null, f.observation.period])).toEqual([
      [0, "reset", null, 0], [1, "trace", "query_research", 1], [2, "trace", "hold", 2],
    ]);
    expect(t.frames[1]?.insight).toEqual(belief);
    expect(t.frames[2]?.insight).toBeNull();
    expect(scoreOf(t.frames[2]?.observation)).toBe(0.42);
    expect(scoreOf(t.frames[1]?.observation)).toBeNull();
  });

  it("test_other_environments_traces_and_observations_are_refused", () => {
    expect(() => parseTraceWith(lines({ ...header, env: "memex" }), "committee", readCommitteeStep)).toThrow(TraceError);
    expect(() => normaliseCommittee({ step: 0, context: {} }, "x")).toThrow(/period is missing/);
    expect(() => normaliseCommittee({ period: 0 }, "x")).toThrow(PayloadError);
    expect(() => parseTraceWith(lines(header, { type: "step", step: 0, action: { tool: "review_alert" }, observation: obs(0, 100) }),
      "committee", readCommitteeStep)).toThrow(/first step must be the reset/);
  });

  it("test_an_agent_step_envelope_carries_the_agents_action_and_insight", () => {
    const frame = committeeFrames.read({ episode_id: "e", observation: obs(1, 100.5), reward: 0.5, done: false, metadata: null,
      action: { action_type: "allocate", weights: { NOVA: 0.3 } }, insight: belief }, 1, "heuristic", null);
    expect(frame).toMatchObject({ index: 1, actor: "heuristic", action: { action_type: "allocate" }, insight: belief });
    expect(frame.observation.reward).toBe(0.5);
    const manual = committeeFrames.read({ episode_id: "e", observation: obs(2, 100), reward: 0, done: false, metadata: null }, 2, "manual",
      { action_type: "hold" });
    expect(manual.action).toEqual({ action_type: "hold" });
    expect(committeeFrames.label({ action_type: "hold" })).toBe("hold");
  });
});

describe("committee views", () => {
  it("test_nav_lines_follow_the_month_on_screen", () => {
    const frames = trace().frames;
    expect(fundNav(frames, 1)).toEqual([{ period: 0, nav: 100 }, { period: 1, nav: 101 }]);
    expect(fundNav(frames, 2).map((p) => p.nav)).toEqual([100, 101, 99.5]);
    const cash = cashNav(100, 0.25, 20);
    expect(cash).toHaveLength(21);
    expect(cash[20]?.nav).toBeCloseTo(105.12, 2); // committee/README.md: 100 x 1.0025^20
    const reference = { periods: [0, 1, 2, 3], nav: [100, 100.4, 101, 102] };
    expect(referenceNav(reference, 1)).toEqual([{ period: 0, nav: 100 }, { period: 1, nav: 100.4 }]);
    expect(referenceNav(null, 3)).toEqual([]);
  });

  it("test_notes_are_kept_once_each_by_author_up_to_the_cursor", () => {
    const frames = trace().frames;
    const at0 = notesUpTo(frames, 0);
    expect(at0.risk).toHaveLength(1);
    expect(at0.research).toHaveLength(0);
    const at2 = notesUpTo(frames, 2);
    expect(at2.risk).toHaveLength(1); // repeated in every observation, kept once
    expect(at2.research.map((n) => n.text)).toEqual(["Research: TECH +0.5."]);
  });

  it("test_the_book_has_every_asset_with_its_weight_and_conviction_and_cash_last", () => {
    const rows = bookRows(normaliseCommittee(obs(1, 100), "x"));
    expect(rows.map((r) => [r.ticker, r.weight, r.conviction])).toEqual([["NOVA", 0.42, 0.6], ["GOVT", 0.3, null], ["CASH", 0.28, null]]);
  });

  it("test_the_belief_shown_is_the_latest_up_to_the_cursor", () => {
    const frames = trace().frames;
    expect(beliefAt(frames, 0)).toBeNull();
    expect(beliefAt(frames, 1)).toEqual({ frame: 1, belief: belief.regime_belief });
    expect(beliefAt(frames, 2)).toEqual({ frame: 1, belief: belief.regime_belief }); // the hold exposed none
  });
});
