/**
 * The Glass Box's state: one timeline of frames (a live episode as it grows, or a loaded trace),
 * the frame on screen, and the ground-truth overlay. A pure reducer, so the rules — the cursor
 * follows a live episode only while it sits at the end; truth is accepted only once the episode
 * has ended — are unit-tested without a browser.
 */
import type { TraceFooter, TraceHeader } from "./trace";
import type { Frame, GroundTruth, ResetOptions } from "./types";

/** What a timeline needs of a frame (every environment's frames have it). */
export interface TimelineFrame {
  index: number;
  observation: { done: boolean };
}

export type Source<O = ResetOptions> =
  | { kind: "none" }
  | { kind: "live"; episodeId: string; options: O }
  | { kind: "replay"; fileName: string; header: TraceHeader; footer: TraceFooter | null };

export type TruthState =
  | { status: "hidden" }
  | { status: "loading" }
  | { status: "shown"; truth: GroundTruth }
  | { status: "error"; message: string };

/** One timeline; `F` and `O` are an environment's frames and reset options (the AML ones by
 * default). */
export interface TimelineState<F extends TimelineFrame = Frame, O = ResetOptions> {
  source: Source<O>;
  frames: F[];
  cursor: number;
  truth: TruthState;
}

export type TimelineAction<F extends TimelineFrame = Frame, O = ResetOptions> =
  | { type: "live-started"; episodeId: string; options: O; frame: F }
  | { type: "frame-appended"; frame: F }
  | { type: "trace-loaded"; fileName: string; header: TraceHeader; frames: F[]; footer: TraceFooter | null }
  | { type: "seek"; index: number }
  | { type: "truth-requested" }
  | { type: "truth-received"; truth: GroundTruth }
  | { type: "truth-failed"; message: string }
  | { type: "truth-hidden" }
  | { type: "cleared" };

export function emptyTimeline<F extends TimelineFrame = Frame, O = ResetOptions>(): TimelineState<F, O> {
  return { source: { kind: "none" }, frames: [], cursor: 0, truth: { status: "hidden" } };
}

export const initialTimeline: TimelineState = emptyTimeline();

export function isEnded<F extends TimelineFrame, O>(state: TimelineState<F, O>): boolean {
  return state.frames.at(-1)?.observation.done === true;
}

function clamp(index: number, frames: readonly unknown[]): number {
  return Math.max(0, Math.min(index, frames.length - 1));
}

export function timelineReducer<F extends TimelineFrame = Frame, O = ResetOptions>(
  state: TimelineState<F, O>,
  action: TimelineAction<F, O>,
): TimelineState<F, O> {
  switch (action.type) {
    case "live-started":
      return {
        source: { kind: "live", episodeId: action.episodeId, options: action.options },
        frames: [{ ...action.frame, index: 0 }],
        cursor: 0,
        truth: { status: "hidden" },
      };
    case "frame-appended": {
      if (state.source.kind !== "live" || isEnded(state)) return state;
      const frames = [...state.frames, { ...action.frame, index: state.frames.length }];
      const following = state.cursor >= state.frames.length - 1;
      return { ...state, frames, cursor: following ? frames.length - 1 : state.cursor };
    }
    case "trace-loaded":
      return {
        source: { kind: "replay", fileName: action.fileName, header: action.header, footer: action.footer },
        frames: action.frames.map((f, index) => ({ ...f, index })),
        cursor: 0,
        truth: { status: "hidden" },
      };
    case "seek":
      return state.frames.length === 0 ? state : { ...state, cursor: clamp(action.index, state.frames) };
    case "truth-requested":
      return isEnded(state) ? { ...state, truth: { status: "loading" } } : state;
    case "truth-received":
      // Ground truth belongs to finished episodes only; anything else is a bug upstream.
      if (!isEnded(state)) return { ...state, truth: { status: "error", message: "the episode has not ended" } };
      return { ...state, truth: { status: "shown", truth: action.truth } };
    case "truth-failed":
      return { ...state, truth: { status: "error", message: action.message } };
    case "truth-hidden":
      return { ...state, truth: { status: "hidden" } };
    case "cleared":
      return emptyTimeline();
  }
}
