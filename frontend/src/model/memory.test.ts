import { describe, expect, it } from "vitest";
import { context, frame, page } from "../test/factories";
import { evictedPages, evictedSections, freshInFrame, jobCountdown } from "./memory";
import type { Frame, JobView, SectionView } from "./types";

const p1 = page(1, "review_alert", {}, []);
const p2 = page(2, "get_customer_profile", {}, []);
const p3 = page(3, "query_transactions", {}, []);
const s = (id: string): SectionView => ({ section_id: id, title: `Section ${id}`, text: "..." });

const frames: Frame[] = [
  frame(0, { context: context({ ram: [p1] }) }),
  frame(1, { context: context({ ram: [p1, p2], kernel: [s("2.1")] }) }, "get_customer_profile"),
  frame(2, { context: context({ ram: [p2, p3], kernel: [s("2.1"), s("2.2")] }) }, "query_transactions"),
  frame(3, { context: context({ ram: [p3, page(4, "update_system_prompt", {}, [])], kernel: [s("2.2"), s("2.3")] }) }, "update_system_prompt"),
];

describe("RAM and kernel evictions", () => {
  it("test_evicted_pages_are_listed_newest_first_with_their_eviction_step", () => {
    expect(evictedPages(frames, 1)).toEqual([]);
    expect(evictedPages(frames, 3).map((e) => [e.page.page_id, e.evictedAtStep])).toEqual([[2, 3], [1, 2]]);
  });

  it("test_evicted_kernel_sections_are_tracked", () => {
    expect(evictedSections(frames, 2)).toEqual([]);
    expect(evictedSections(frames, 3).map((e) => [e.section.section_id, e.evictedAtStep])).toEqual([["2.1", 3]]);
  });

  it("test_fresh_items_are_those_new_in_this_frame", () => {
    const fresh = freshInFrame(frames, 3);
    expect([...fresh.pages]).toEqual([4]);
    expect([...fresh.sections]).toEqual(["2.3"]);
    expect(freshInFrame(frames, 0).pages.size).toBe(0);
  });
});

describe("async job countdown", () => {
  const job: JobView = { job_id: "JOB-1", transaction_id: "TXN-000001", requested_step: 2, ready_at_step: 6, status: "pending" };
  it("test_countdown_reaches_zero_at_the_ready_step", () => {
    expect(jobCountdown(job, 2)).toEqual({ stepsLeft: 4, progress: 0 });
    expect(jobCountdown(job, 4)).toEqual({ stepsLeft: 2, progress: 0.5 });
    expect(jobCountdown({ ...job, status: "ready" }, 6)).toEqual({ stepsLeft: 0, progress: 1 });
    expect(jobCountdown({ ...job, status: "retrieved" }, 9).stepsLeft).toBe(0);
  });
});
