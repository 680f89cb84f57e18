import { useCallback, useEffect, useMemo, useReducer, useState } from "react";
import type { MemexApi, ReferencePath } from "../api/client";
import { AgentTransport } from "../components/AgentTransport";
import { ErrorBanner } from "../components/ErrorBanner";
import { ManualStep } from "../components/ManualStep";
import { Panel } from "../components/Panel";
import { ReplayControls } from "../components/ReplayControls";
import { Scrubber } from "../components/Scrubber";
import { TokenField } from "../components/TokenField";
import { type Mode, TopBar } from "../components/TopBar";
import { describeError, useErrors } from "../hooks/useErrors";
import { useLiveEpisode } from "../hooks/useLiveEpisode";
import { useReplay } from "../hooks/useReplay";
import { emptyTimeline, isEnded, timelineReducer } from "../model/timeline";
import { parseTraceWith } from "../model/trace";
import type { Action, JsonObject, ServerInfo, ToolDeclaration } from "../model/types";
import {
  type CommitteeFrame,
  type CommitteeResetOptions,
  beliefAt,
  cashNav,
  committeeFrames,
  fundNav,
  notesUpTo,
  readCommitteeStep,
  referenceNav,
} from "./model";
import { NavChart } from "./NavChart";
import { BeliefPanel, BookPanel, CommitteeSetup, MonthInspector, MonthLog, NotesPanel, RiskPanel, ScorePanel } from "./panels";

const REPLAY_DELAY_MS = 500;
const TRACE_ENV = "committee";
const parseCommitteeTrace = (text: string) => parseTraceWith(text, TRACE_ENV, readCommitteeStep);


/** The investment committee's Glass Box: a live episode on this server (the built-in agents or
 * actions by hand) or the replay of a `memex-trace/1` file — the book, the regime belief when the
 * agent exposes one, the Research Analyst's and the Risk Officer's notes, and the NAV month by
 * month against cash and the reference PM. */
export function CommitteeApp({ api, info }: { api: MemexApi; info: ServerInfo }) {
  const [mode, setMode] = useState<Mode>("live");
  const [state, dispatch] = useReducer(timelineReducer<CommitteeFrame, CommitteeResetOptions>,
    emptyTimeline<CommitteeFrame, CommitteeResetOptions>());
  const [tools, setTools] = useState<ToolDeclaration[]>([]);
  const [policy, setPolicy] = useState("heuristic");
  const [reference, setReference] = useState<ReferencePath | null>(null);
  const [referenceNote, setReferenceNote] = useState<string | null>(null);

  const { errors, report, dismiss, needsToken } = useErrors();

  useEffect(() => {
    api.tools().then(setTools, (e: unknown) => report("Action schema unavailable", e));
  }, [api, report]);

  const live = useLiveEpisode(api, state, dispatch, policy, report, committeeFrames);
  const replay = useReplay(state, dispatch, live.pause, report, parseCommitteeTrace, REPLAY_DELAY_MS);
  const { frames, cursor, source } = state;
  const frame = frames[cursor];
  const first = frames[0]?.observation;
  const ended = isEnded(state);
  const seek = useCallback((index: number) => dispatch({ type: "seek", index }), []);

  // The reference PM on the same world: the live episode's task and seed (from /state), or the
  // trace header's. A sealed server serves none (its seeds are secret).
  const world = useMemo(() => {
    if (source.kind === "replay") {
      const task = typeof source.header.reset.task === "string" ? source.header.reset.task : first?.task ?? null;
      return task ? { task, seed: source.header.seed } : null;
    }
    return null;
  }, [source, first?.task]);
  useEffect(() => {
    setReference(null);
    setReferenceNote(null);
    if (info.sealed === true) {
      setReferenceNote("Sealed server: no reference (its worlds are secret).");
      return;
    }
    let cancelled = false;
    const load = async () => {
      let target = world;
      if (source.kind === "live") {
        const st = await api.state(source.episodeId);
        target = { task: String(st.task), seed: typeof st.seed === "number" ? st.seed : null };
      }
      if (!target) return;
      const path = await api.reference(target.task, target.seed);
      if (!cancelled) setReference(path);
    };
    load().catch((err: unknown) => {
      if (!cancelled) setReferenceNote(`No reference: ${describeError(err)}`);
    });
    return () => {
      cancelled = true;
    };
  }, [api, info.sealed, source, world]);

  // ---- derived views of the frame on screen ----------------------------------------------
  const period = frame?.observation.period ?? 0;
  const horizon = first?.horizon ?? 0;
  const fund = useMemo(() => fundNav(frames, cursor), [frames, cursor]);
  const cash = useMemo(() => (first ? cashNav(first.portfolio.nav, first.cash_rate_pct, period) : []), [first, period]);
  const refLine = useMemo(() => referenceNav(reference, period), [reference, period]);
  const notes = useMemo(() => notesUpTo(frames, cursor), [frames, cursor]);
  const belief = useMemo(() => beliefAt(frames, cursor), [frames, cursor]);
  const seekPeriod = useCallback((p: number) => {
    const index = frames.findIndex((f) => f.observation.period === p);
    if (index >= 0) seek(index);
  }, [frames, seek]);


  // The manual form builds `{tool, arguments}`; the committee's wire action is flat.
  const runManual = useCallback((action: Action) => live.manualStep({ action_type: action.tool, ...action.arguments } as JsonObject), [live]);

  const score = frames.at(-1)?.observation.done ? frames.at(-1)?.observation.metadata.score : undefined;
  return (
    <div className="app committee">
      <TopBar tagline="the investment committee, month by month" mode={mode} onMode={setMode} source={source}
        status={<>
          {first && <span className="muted"> · {first.task}</span>}
          {ended && <span className={`outcome small ${typeof score === "number" && score > 0 ? "good" : "bad"}`} data-testid="episode-done">ended · score {typeof score === "number" ? score.toFixed(3) : "—"}</span>}
        </>}
        server={<div className="server ok" data-testid="server-status"><span className="dot" /> server {info.env}</div>} />
      <ErrorBanner errors={errors} onDismiss={dismiss} />
      {needsToken && <TokenField />}
      <main className="layout">
        <aside className="col left">
          {mode === "live" ? (
            <Panel title="Live episode" testId="live-controls">
              <CommitteeSetup info={info} busy={live.busy} active={source.kind === "live"} onStart={(o) => void live.start(o)} />
              <AgentTransport live={live} active={source.kind === "live"} ended={ended} sealed={info.sealed === true}
                policies={info.agent_policies ?? ["heuristic"]} policy={policy} onPolicy={setPolicy} />
            </Panel>
          ) : (
            <ReplayControls loaded={source.kind === "replay" ? source : null} steps={Math.max(0, frames.length - 1)} onFile={(f) => void replay.openTrace(f)} />
          )}
          <BookPanel obs={frame?.observation} />
          {mode === "live" && (
            <ManualStep tools={tools} knownIds={[]} jobIds={[]}
              disabled={source.kind !== "live" || ended || live.busy || live.playing} onRun={runManual} />
          )}
        </aside>
        <section className="col center">
          <NavChart fund={fund} cash={cash} reference={refLine} horizon={horizon} cursorPeriod={period}
            onSeekPeriod={seekPeriod} referenceNote={referenceNote} />
          <Scrubber count={frames.length} cursor={cursor} step={period} budget={horizon || "?"} unit="month" onSeek={seek}
            playing={replay.playing} onPlayToggle={source.kind === "replay" ? replay.toggle : null} />
          <div className="pair">
            <NotesPanel title="Research Analyst" testId="research-notes" notes={notes.research} currentPeriod={period} />
            <NotesPanel title="Risk Officer's notes" testId="risk-notes" notes={notes.risk} currentPeriod={period} />
          </div>
          <MonthLog frames={frames} cursor={cursor} onSeek={seek} />
        </section>
        <aside className="col right">
          <ScorePanel obs={frames.at(-1)?.observation} referenceScore={ended && reference ? reference.score : null} />
          <BeliefPanel belief={belief} agent={frames.at(-1)?.actor ?? "reset"} />
          <RiskPanel obs={frame?.observation} />
          <MonthInspector frame={frame} />
        </aside>
      </main>
    </div>
  );
}
