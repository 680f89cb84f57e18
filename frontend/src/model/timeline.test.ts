import { describe, expect, it } from "vitest";
import { frame } from "../test/factories";
import { type TimelineState, initialTimeline, isEnded, timelineReducer } from "./timeline";
import type { GroundTruth } from "./types";

const truth: GroundTruth = { kind: "structuring", variant: null, suspicious: true, decision: "file_sar", typology: "structuring",
  subject_ids: ["ENT-000001"], red_flags: [], justifying_sections: [], ubo_id: null };
const start = (): TimelineState => timelineReducer(initialTimeline, { type: "live-started", episodeId: "abc", options: { difficulty: "easy" }, frame: frame(0, {}) });

describe("timeline reducer", () => {
  it("test_live_cursor_follows_new_frames_only_while_at_the_end", () => {
    let s = start();
    s = timelineReducer(s, { type: "frame-appended", frame: frame(1, {}, "review_alert") });
    expect(s.cursor).toBe(1);
    s = timelineReducer(s, { type: "seek", index: 0 });
    s = timelineReducer(s, { type: "frame-appended", frame: frame(2, {}, "review_alert") });
    expect([s.frames.length, s.cursor]).toEqual([3, 0]);
    expect(s.frames.map((f) => f.index)).toEqual([0, 1, 2]);
  });

  it("test_seek_is_clamped_to_the_timeline", () => {
    const s = start();
    expect(timelineReducer(s, { type: "seek", index: 99 }).cursor).toBe(0);
    expect(timelineReducer(s, { type: "seek", index: -3 }).cursor).toBe(0);
  });

  it("test_no_frames_are_appended_after_the_end_or_to_a_replay", () => {
    let s = timelineReducer(start(), { type: "frame-appended", frame: frame(1, { done: true }, "file_sar") });
    expect(isEnded(s)).toBe(true);
    s = timelineReducer(s, { type: "frame-appended", frame: frame(2, {}, "review_alert") });
    expect(s.frames).toHaveLength(2);
    const replay = timelineReducer(initialTimeline, { type: "trace-loaded", fileName: "x.jsonl", frames: [frame(0, {})], footer: null,
      header: { format: "memex-trace/1", env: "memex", policy: "heuristic", seed: 1, difficulty: "easy", case: null, reset: {} } });
    expect(timelineReducer(replay, { type: "frame-appended", frame: frame(1, {}, "x") }).frames).toHaveLength(1);
  });

  it("test_ground_truth_is_accepted_only_after_the_episode_ended", () => {
    let s = start();
    expect(timelineReducer(s, { type: "truth-requested" }).truth.status).toBe("hidden");
    expect(timelineReducer(s, { type: "truth-received", truth }).truth.status).toBe("error");
    s = timelineReducer(s, { type: "frame-appended", frame: frame(1, { done: true }, "close_alert") });
    s = timelineReducer(s, { type: "truth-requested" });
    expect(s.truth.status).toBe("loading");
    s = timelineReducer(s, { type: "truth-received", truth });
    expect(s.truth).toEqual({ status: "shown", truth });
    expect(timelineReducer(s, { type: "truth-hidden" }).truth.status).toBe("hidden");
  });

  it("test_a_new_episode_resets_truth_and_cursor", () => {
    let s = timelineReducer(start(), { type: "frame-appended", frame: frame(1, { done: true }, "close_alert") });
    s = timelineReducer(s, { type: "truth-received", truth });
    s = timelineReducer(s, { type: "live-started", episodeId: "def", options: { difficulty: "hard" }, frame: frame(0, {}) });
    expect([s.frames.length, s.cursor, s.truth.status]).toEqual([1, 0, "hidden"]);
    expect(s.source).toMatchObject({ kind: "live", episodeId: "def" });
  });
});
