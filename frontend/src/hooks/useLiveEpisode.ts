import { type Dispatch, useCallback, useEffect, useRef, useState } from "react";
import type { MemexApi } from "../api/client";
import { frameFromEnvelope } from "../model/frames";
import { type TimelineAction, type TimelineFrame, type TimelineState, isEnded } from "../model/timeline";
import type { Action, Actor, Envelope, Frame, ResetOptions } from "../model/types";

export interface LiveEpisode<O extends object = ResetOptions, A extends object = Action> {
  busy: boolean;
  playing: boolean;
  delayMs: number;
  setDelayMs: (ms: number) => void;
  start: (options: O) => Promise<void>;
  agentStep: () => Promise<void>;
  manualStep: (action: A) => Promise<boolean>;
  play: () => void;
  pause: () => void;
}

/** How one environment's view reads the server's envelopes into its frames. `actor` is
 * "reset", "manual" or the built-in agent's policy name; `action` is the hand-built action of
 * a manual step (the agent's comes in the envelope). */
export interface FrameReader<F, A> {
  read: (envelope: Envelope, index: number, actor: string, action: A | null) => F;
  /** A short name of an action, for error titles. */
  label: (action: A) => string;
}

/** The AML frames (`model/frames.ts`). */
export const memexFrames: FrameReader<Frame, Action> = {
  read: (envelope, index, actor, action) => {
    const who: Actor = actor === "reset" || actor === "manual" || actor === "random" ? actor : "heuristic";
    return frameFromEnvelope(envelope, index, who, action);
  },
  label: (action) => action.tool,
};

/**
 * Drives a live HTTP episode of any environment: `POST /reset`, then either the built-in agent
 * (`POST /episodes/{id}/agent-step`, the play/step buttons) or a hand-built action
 * (`POST /step`). One request at a time; any failure stops playback and is reported.
 */
export function useLiveEpisode<F extends TimelineFrame, O extends object, A extends object>(
  api: MemexApi,
  state: TimelineState<F, O>,
  dispatch: Dispatch<TimelineAction<F, O>>,
  policy: string,
  report: (title: string, err: unknown) => void,
  frames: FrameReader<F, A>,
): LiveEpisode<O, A> {
  const [busy, setBusy] = useState(false);
  const [playing, setPlaying] = useState(false);
  const [delayMs, setDelayMs] = useState(350);
  const inFlight = useRef(false);
  const episodeId = state.source.kind === "live" ? state.source.episodeId : null;
  const ended = isEnded(state);

  const exclusive = useCallback(async <T,>(title: string, fn: () => Promise<T>): Promise<T | null> => {
    if (inFlight.current) return null;
    inFlight.current = true;
    setBusy(true);
    try {
      return await fn();
    } catch (err) {
      setPlaying(false);
      report(title, err);
      return null;
    } finally {
      inFlight.current = false;
      setBusy(false);
    }
  }, [report]);

  const start = useCallback(async (options: O) => {
    setPlaying(false);
    await exclusive("Could not start the episode", async () => {
      const envelope = await api.reset(options);
      dispatch({ type: "live-started", episodeId: envelope.episode_id, options, frame: frames.read(envelope, 0, "reset", null) });
    });
  }, [api, dispatch, exclusive, frames]);

  const agentStep = useCallback(async () => {
    if (!episodeId || ended) return;
    await exclusive("The agent step failed", async () => {
      const envelope = await api.agentStep(episodeId, policy);
      dispatch({ type: "frame-appended", frame: frames.read(envelope, state.frames.length, policy, null) });
    });
  }, [api, dispatch, episodeId, ended, exclusive, policy, state.frames.length, frames]);

  const manualStep = useCallback(async (action: A) => {
    if (!episodeId || ended) return false;
    const ok = await exclusive(`${frames.label(action)} was rejected`, async () => {
      const envelope = await api.step(episodeId, action);
      dispatch({ type: "frame-appended", frame: frames.read(envelope, state.frames.length, "manual", action) });
      return true;
    });
    return ok === true;
  }, [api, dispatch, episodeId, ended, exclusive, state.frames.length, frames]);

  useEffect(() => {
    if (ended) setPlaying(false);
  }, [ended]);

  // Leaving an unfinished episode (a new episode, a loaded trace, closing the page) frees its
  // server slot at once; a finished one has already freed it.
  const endedRef = useRef(ended);
  endedRef.current = ended;
  useEffect(() => {
    if (!episodeId) return;
    const release = () => {
      if (!endedRef.current) api.release(episodeId);
    };
    window.addEventListener("pagehide", release);
    return () => {
      window.removeEventListener("pagehide", release);
      release();
    };
  }, [api, episodeId]);

  useEffect(() => {
    if (!playing || busy || ended || !episodeId) return;
    const timer = setTimeout(() => void agentStep(), delayMs);
    return () => clearTimeout(timer);
  }, [playing, busy, ended, episodeId, agentStep, delayMs, state.frames.length]);

  return {
    busy, playing, delayMs, setDelayMs, start, agentStep, manualStep,
    play: () => setPlaying(true),
    pause: () => setPlaying(false),
  };
}
