/**
 * The Glass Box's state: one timeline of frames (a live episode as it grows, or a loaded trace),
 * the frame on screen, and the ground-truth overlay. A pure reducer, so the rules — the cursor
 * follows a live episode only while it sits at the end; truth is accepted only once the episode
 * has ended — are unit-tested without a browser.
 */
import type { TraceFooter, TraceHeader } from "./trace";
import type { Frame, GroundTruth, ResetOptions } from "./types";

export type Source =
  | { kind: "none" }
  | { kind: "live"; episodeId: string; options: ResetOptions }
  | { kind: "replay"; fileName: string; header: TraceHeader; footer: TraceFooter | null };

export type TruthState =
  | { status: "hidden" }
  | { status: "loading" }
  | { status: "shown"; truth: GroundTruth }
  | { status: "error"; message: string };

export interface TimelineState {
  source: Source;
  frames: Frame[];
  cursor: number;
  truth: TruthState;
}

export type TimelineAction =
  | { type: "live-started"; episodeId: string; options: ResetOptions; frame: Frame }
  | { type: "frame-appended"; frame: Frame }
  | { type: "trace-loaded"; fileName: string; header: TraceHeader; frames: Frame[]; footer: TraceFooter | null }
  | { type: "seek"; index: number }
  | { type: "truth-requested" }
  | { type: "truth-received"; truth: GroundTruth }
  | { type: "truth-failed"; message: string }
  | { type: "truth-hidden" }
  | { type: "cleared" };

export const initialTimeline: TimelineState = {
  source: { kind: "none" },
  frames: [],
  cursor: 0,
  truth: { status: "hidden" },
};

export function isEnded(state: TimelineState): boolean {
  return state.frames.at(-1)?.observation.done === true;
}

function clamp(index: number, frames: Frame[]): number {
  return Math.max(0, Math.min(index, frames.length - 1));
}

export function timelineReducer(state: TimelineState, action: TimelineAction): TimelineState {
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
      return initialTimeline;
  }
}
