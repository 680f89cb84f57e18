import { type Dispatch, useCallback, useEffect, useRef, useState } from "react";
import type { MemexApi } from "../api/client";
import { frameFromEnvelope } from "../model/frames";
import { type TimelineAction, type TimelineState, isEnded } from "../model/timeline";
import type { Action, ResetOptions } from "../model/types";

export interface LiveEpisode {
  busy: boolean;
  playing: boolean;
  delayMs: number;
  setDelayMs: (ms: number) => void;
  start: (options: ResetOptions) => Promise<void>;
  agentStep: () => Promise<void>;
  manualStep: (action: Action) => Promise<boolean>;
  play: () => void;
  pause: () => void;
}

/**
 * Drives a live HTTP episode: `POST /reset`, then either the built-in agent
 * (`POST /episodes/{id}/agent-step`, the play/step buttons) or a hand-built action
 * (`POST /step`). One request at a time; any failure stops playback and is reported.
 */
export function useLiveEpisode(
  api: MemexApi,
  state: TimelineState,
  dispatch: Dispatch<TimelineAction>,
  policy: string,
  report: (title: string, err: unknown) => void,
): LiveEpisode {
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

  const start = useCallback(async (options: ResetOptions) => {
    setPlaying(false);
    await exclusive("Could not start the episode", async () => {
      const envelope = await api.reset(options);
      dispatch({ type: "live-started", episodeId: envelope.episode_id, options, frame: frameFromEnvelope(envelope, 0, "reset", null) });
    });
  }, [api, dispatch, exclusive]);

  const agentStep = useCallback(async () => {
    if (!episodeId || ended) return;
    await exclusive("The agent step failed", async () => {
      const envelope = await api.agentStep(episodeId, policy);
      const actor = policy === "random" ? "random" : "heuristic";
      dispatch({ type: "frame-appended", frame: frameFromEnvelope(envelope, state.frames.length, actor, null) });
    });
  }, [api, dispatch, episodeId, ended, exclusive, policy, state.frames.length]);

  const manualStep = useCallback(async (action: Action) => {
    if (!episodeId || ended) return false;
    const ok = await exclusive(`${action.tool} was rejected`, async () => {
      const envelope = await api.step(episodeId, action);
      dispatch({ type: "frame-appended", frame: frameFromEnvelope(envelope, state.frames.length, "manual", action) });
      return true;
    });
    return ok === true;
  }, [api, dispatch, episodeId, ended, exclusive, state.frames.length]);

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
