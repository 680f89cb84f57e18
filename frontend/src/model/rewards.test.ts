import { describe, expect, it } from "vitest";
import { frame } from "../test/factories";
import { dominantPart, rewardSeries, symlog, terminalOf } from "./rewards";

const terminal = { outcome: "TP", score: 0.9, components: { decision: 0.3 }, measures: {}, range: [-1, 1] as [number, number] };
const frames = [
  frame(0, { reward: null }),
  frame(1, { reward: -0.005, reward_breakdown: { action_cost: -0.005 } }, "get_customer_profile"),
  frame(2, { reward: -0.035, reward_breakdown: { action_cost: -0.005, page_fault: -0.03 } }, "write_to_case_file"),
  frame(3, { reward: 0.9, done: true, reward_breakdown: { terminal: 0.9 }, metadata: { terminal } }, "file_sar"),
];

describe("reward timeline", () => {
  it("test_series_skips_the_reset_and_accumulates_the_return", () => {
    const series = rewardSeries(frames);
    expect(series.map((p) => [p.step, p.reward, p.cumulative, p.terminal])).toEqual([
      [1, -0.005, -0.005, false], [2, -0.035, -0.04, false], [3, 0.9, 0.86, true],
    ]);
  });

  it("test_terminal_score_comes_from_the_final_metadata", () => {
    expect(terminalOf(frames)).toEqual(terminal);
    expect(terminalOf(frames.slice(0, 3))).toBeNull();
  });

  it("test_symlog_keeps_sign_and_order", () => {
    expect(symlog(0)).toBe(0);
    expect(symlog(-0.005)).toBeCloseTo(-symlog(0.005));
    expect(symlog(0.9)).toBeGreaterThan(symlog(0.05));
    expect(symlog(0.05)).toBeGreaterThan(symlog(0.005));
  });

  it("test_dominant_part_names_the_biggest_component", () => {
    expect(dominantPart({ action_cost: -0.005, page_fault: -0.03 })).toBe("page_fault");
    expect(dominantPart({})).toBeNull();
  });
});
