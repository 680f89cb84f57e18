import { type Dispatch, useCallback, useEffect, useState } from "react";
import type { TimelineAction, TimelineFrame, TimelineState } from "../model/timeline";
import type { Trace } from "../model/trace";

const REPLAY_DELAY_MS = 700;

export interface Replay {
  playing: boolean;
  /** Play from the start when at the end; pause when playing. */
  toggle: () => void;
  openTrace: (file: File) => Promise<void>;
}

/**
 * A timeline's replay: playback (one frame every `delayMs`), ← / → scrubbing (outside form
 * fields), and opening a trace file with the environment's `parse` (errors are reported, the
 * live episode paused).
 */
export function useReplay<F extends TimelineFrame, O>(
  state: TimelineState<F, O>,
  dispatch: Dispatch<TimelineAction<F, O>>,
  pauseLive: () => void,
  report: (title: string, err: unknown) => void,
  parse: (text: string) => Trace<F>,
  delayMs = REPLAY_DELAY_MS,
): Replay {
  const [playing, setPlaying] = useState(false);
  const { cursor, frames, source } = state;
  const seek = useCallback((index: number) => dispatch({ type: "seek", index }), [dispatch]);

  useEffect(() => {
    if (!playing) return;
    if (source.kind !== "replay" || cursor >= frames.length - 1) {
      setPlaying(false);
      return;
    }
    const timer = setTimeout(() => seek(cursor + 1), delayMs);
    return () => clearTimeout(timer);
  }, [playing, source.kind, cursor, frames.length, seek, delayMs]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement | null;
      if (target && /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName)) return;
      if (e.key === "ArrowLeft") seek(cursor - 1);
      if (e.key === "ArrowRight") seek(cursor + 1);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [cursor, seek]);

  const toggle = useCallback(() => {
    if (!playing && cursor >= frames.length - 1) seek(0);
    setPlaying(!playing);
  }, [playing, cursor, frames.length, seek]);

  const openTrace = useCallback(async (file: File) => {
    setPlaying(false);
    try {
      const trace = parse(await file.text());
      pauseLive();
      dispatch({ type: "trace-loaded", fileName: file.name, header: trace.header, frames: trace.frames, footer: trace.footer });
    } catch (err) {
      report(`Could not open ${file.name}`, err);
    }
  }, [dispatch, pauseLive, report, parse]);

  return { playing, toggle, openTrace };
}
