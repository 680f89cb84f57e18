import { describe, expect, it } from "vitest";
import { TraceError, parseTrace } from "./trace";

const header = { type: "header", format: "memex-trace/1", env: "memex", policy: "heuristic", seed: 5, difficulty: "hard", case: null, reset: { seed: 5 } };
const obs = (step: number, extra: Record<string, unknown> = {}) => ({
  done: false, reward: step === 0 ? null : -0.005, metadata: {}, tool: step === 0 ? null : "review_alert", result: { step },
  error: null, events: [], context: { kernel: [], ram: [], disk: [], jobs: [], ram_capacity: 2, kernel_capacity: 3 },
  step, step_budget: 34, reward_breakdown: {}, ...extra,
});
const lines = (...xs: unknown[]) => xs.map((x) => JSON.stringify(x)).join("\n") + "\n";

describe("memex-trace/1 parsing", () => {
  it("test_parses_header_steps_and_footer_with_truth", () => {
    const truth = { kind: "structuring", variant: "smurfing", suspicious: true, decision: "file_sar", typology: "structuring",
      subject_ids: ["ENT-000001"], red_flags: [{ code: "CASH_BELOW_CTR_THRESHOLD", evidence_ids: ["TXN-000001"] }], justifying_sections: ["2.1"], ubo_id: null };
    const text = lines(
      header,
      { type: "step", step: 0, action: null, observation: obs(0) },
      { type: "step", step: 1, action: { tool: "review_alert", arguments: {} }, observation: obs(1) },
      { type: "footer", episode_return: 0.9, outcome: "TP", terminal: { outcome: "TP", score: 0.9, components: {}, measures: {}, range: [-1, 1] }, truth },
    );
    const trace = parseTrace(text);
    expect(trace.header).toMatchObject({ policy: "heuristic", seed: 5, difficulty: "hard" });
    expect(trace.frames.map((f) => [f.index, f.actor, f.action?.tool ?? null, f.observation.reward])).toEqual([
      [0, "reset", null, null],
      [1, "trace", "review_alert", -0.005],
    ]);
    expect(trace.footer?.outcome).toBe("TP");
    expect(trace.footer?.truth?.subject_ids).toEqual(["ENT-000001"]);
  });

  it("test_a_trace_without_footer_is_an_unfinished_episode", () => {
    const trace = parseTrace(lines(header, { type: "step", step: 0, action: null, observation: obs(0) }));
    expect(trace.footer).toBeNull();
    expect(trace.frames).toHaveLength(1);
  });

  it("test_rejects_files_that_are_not_traces_with_a_useful_message", () => {
    expect(() => parseTrace("")).toThrow(/empty/);
    expect(() => parseTrace(lines({ type: "header", format: "other/2" }))).toThrow(/not a memex-trace\/1 trace/);
    expect(() => parseTrace(lines(header) + "{oops\n")).toThrow(/line 2: not valid JSON/);
    expect(() => parseTrace(lines(header, { type: "step", step: 1, action: { tool: "x", arguments: {} }, observation: obs(1) })))
      .toThrow(/first step must be the reset/);
    expect(() => parseTrace(lines(header, { type: "step", step: 0, action: null, observation: { step: 0 } })))
      .toThrow(TraceError);
    expect(() => parseTrace(lines(header, { type: "banana" }))).toThrow(/unknown line type/);
    expect(() => parseTrace(lines({ ...header, env: "committee" }))).toThrow(/trace of the committee environment/);
    expect(() => parseTrace(lines(header))).toThrow(/no steps/);
  });
});
