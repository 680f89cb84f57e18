/**
 * Derived views of the OS panels: which RAM pages and kernel sections were evicted and when,
 * what is new in this frame, and each async job's countdown. All computed from the frames'
 * `context` — the UI never simulates the environment's memory itself.
 */
import type { Frame, JobView, PageView, SectionView } from "./types";

export interface EvictedPage {
  page: PageView;
  evictedAtStep: number;
}

export interface EvictedSection {
  section: SectionView;
  evictedAtStep: number;
}

/** RAM pages that were resident at some frame up to `cursor` and are not resident at `cursor`,
 * most recently evicted first. */
export function evictedPages(frames: Frame[], cursor: number): EvictedPage[] {
  const out = new Map<number, EvictedPage>();
  let previous: PageView[] = [];
  for (let i = 0; i <= cursor && i < frames.length; i++) {
    const frame = frames[i];
    if (frame === undefined) continue;
    const ram = frame.observation.context.ram;
    if (ram.length === 0 && frame.observation.error !== null) continue;
    const resident = new Set(ram.map((p) => p.page_id));
    for (const page of previous) {
      if (!resident.has(page.page_id) && !out.has(page.page_id)) {
        out.set(page.page_id, { page, evictedAtStep: frame.observation.step });
      }
    }
    previous = ram;
  }
  return [...out.values()].sort((a, b) => b.evictedAtStep - a.evictedAtStep || b.page.page_id - a.page.page_id);
}

/** Kernel sections loaded earlier and since evicted (oldest-first eviction at capacity). */
export function evictedSections(frames: Frame[], cursor: number): EvictedSection[] {
  const out = new Map<string, EvictedSection>();
  let previous: SectionView[] = [];
  for (let i = 0; i <= cursor && i < frames.length; i++) {
    const frame = frames[i];
    if (frame === undefined) continue;
    const kernel = frame.observation.context.kernel;
    const loaded = new Set(kernel.map((s) => s.section_id));
    for (const section of previous) {
      if (!loaded.has(section.section_id)) {
        out.set(section.section_id, { section, evictedAtStep: frame.observation.step });
      }
    }
    for (const id of loaded) out.delete(id);
    if (kernel.length > 0 || frame.observation.error === null) previous = kernel;
  }
  return [...out.values()].sort((a, b) => b.evictedAtStep - a.evictedAtStep);
}

/** Steps left until a job is ready (0 once ready) and its progress in [0, 1]. */
export function jobCountdown(job: JobView, step: number): { stepsLeft: number; progress: number } {
  const span = Math.max(1, job.ready_at_step - job.requested_step);
  const stepsLeft = Math.max(0, job.ready_at_step - step);
  const progress = job.status === "pending" ? Math.min(1, Math.max(0, (step - job.requested_step) / span)) : 1;
  return { stepsLeft, progress };
}

/** IDs of the things that appeared in this frame and were not there in the previous one. */
export function freshInFrame(frames: Frame[], cursor: number): {
  pages: Set<number>;
  notes: Set<number>;
  sections: Set<string>;
  jobs: Set<string>;
} {
  const now = frames[cursor]?.observation.context;
  const before = cursor > 0 ? frames[cursor - 1]?.observation.context : undefined;
  const diff = <T, K>(a: T[] | undefined, b: T[] | undefined, key: (x: T) => K): Set<K> => {
    const old = new Set((b ?? []).map(key));
    return new Set((a ?? []).map(key).filter((k) => !old.has(k)));
  };
  return {
    pages: cursor === 0 ? new Set() : diff(now?.ram, before?.ram, (p) => p.page_id),
    notes: diff(now?.disk, before?.disk, (n) => n.note_id),
    sections: diff(now?.kernel, before?.kernel, (s) => s.section_id),
    jobs: diff(now?.jobs, before?.jobs, (j) => j.job_id),
  };
}
