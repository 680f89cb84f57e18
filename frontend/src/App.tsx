import { useCallback, useEffect, useMemo, useReducer, useState } from "react";
import { MemexApi } from "./api/client";
import { ActionLog } from "./components/ActionLog";
import { AlertPanel } from "./components/AlertPanel";
import { DiskPanel } from "./components/DiskPanel";
import { ErrorBanner } from "./components/ErrorBanner";
import { EvidenceGraph } from "./components/EvidenceGraph";
import { JobsPanel } from "./components/JobsPanel";
import { KernelPanel } from "./components/KernelPanel";
import { LiveControls } from "./components/LiveControls";
import { ManualStep } from "./components/ManualStep";
import { RamPanel } from "./components/RamPanel";
import { ReplayControls } from "./components/ReplayControls";
import { RewardTimeline } from "./components/RewardTimeline";
import { Scrubber } from "./components/Scrubber";
import { StepInspector } from "./components/StepInspector";
import { TokenField } from "./components/TokenField";
import { type Mode, TopBar } from "./components/TopBar";
import { TerminalPanel } from "./components/TerminalPanel";
import { TruthPanel } from "./components/TruthPanel";
import { describeError, useErrors } from "./hooks/useErrors";
import { memexFrames, useLiveEpisode } from "./hooks/useLiveEpisode";
import { useReplay } from "./hooks/useReplay";
import { buildEvidenceGraph, emptyContext } from "./model/graph";
import { evictedPages, evictedSections, freshInFrame } from "./model/memory";
import { rewardSeries, terminalOf } from "./model/rewards";
import { parseTrace } from "./model/trace";
import { initialTimeline, isEnded, timelineReducer } from "./model/timeline";
import type { ServerInfo, ToolDeclaration } from "./model/types";



export function App() {
  const api = useMemo(() => new MemexApi(), []);
  const [mode, setMode] = useState<Mode>("live");
  const [state, dispatch] = useReducer(timelineReducer, initialTimeline);
  const [tools, setTools] = useState<ToolDeclaration[]>([]);
  const [info, setInfo] = useState<ServerInfo | null>(null);
  const [policy, setPolicy] = useState("heuristic");

  const { errors, report, dismiss, needsToken } = useErrors();

  useEffect(() => {
    api.info().then(setInfo, (e: unknown) => report("Server info unavailable", e));
    api.tools().then(setTools, (e: unknown) => report("Tool schema unavailable", e));
  }, [api, report]);

  const live = useLiveEpisode(api, state, dispatch, policy, report, memexFrames);
  const replay = useReplay(state, dispatch, live.pause, report, parseTrace);
  const { frames, cursor, source } = state;
  const frame = frames[cursor];
  const ended = isEnded(state);
  const seek = useCallback((index: number) => dispatch({ type: "seek", index }), []);

  // ---- derived views of the frame on screen --------------------------------------------
  const graph = useMemo(() => buildEvidenceGraph(frames, cursor), [frames, cursor]);
  const evicted = useMemo(() => evictedPages(frames, cursor), [frames, cursor]);
  const evictedKernel = useMemo(() => evictedSections(frames, cursor), [frames, cursor]);
  const fresh = useMemo(() => freshInFrame(frames, cursor), [frames, cursor]);
  const rewards = useMemo(() => rewardSeries(frames.slice(0, cursor + 1)), [frames, cursor]);
  const terminal = useMemo(() => terminalOf(frames.slice(0, cursor + 1)), [frames, cursor]);
  const context = frame?.observation.context ?? emptyContext();
  const step = frame?.observation.step ?? 0;
  const seenIds = useMemo(() => {
    const ids = new Set<string>();
    for (const f of frames) for (const p of f.observation.context.ram) for (const id of p.ids) ids.add(id);
    return [...ids].sort();
  }, [frames]);
  const lastFrame = frames.at(-1);
  const finalResidency = useMemo(() => {
    if (state.truth.status !== "shown") return new Map();
    const final = buildEvidenceGraph(frames, frames.length - 1);
    const states = new Map(final.nodes.map((n) => [n.id, n.state]));
    for (const e of final.edges) if (e.recordId) states.set(e.recordId, e.state);
    return states;
  }, [frames, state.truth.status]);
  const shownTruth = state.truth.status === "shown" ? state.truth.truth : null;
  const sessionKey = source.kind === "live" ? source.episodeId : source.kind === "replay" ? `replay:${source.fileName}:${frames.length}` : "none";


  const revealTruth = useCallback(async () => {
    dispatch({ type: "truth-requested" });
    if (source.kind === "live") {
      try {
        dispatch({ type: "truth-received", truth: await api.truth(source.episodeId) });
      } catch (err) {
        dispatch({ type: "truth-failed", message: describeError(err) });
        report("Ground truth unavailable", err);
      }
    } else if (source.kind === "replay") {
      if (source.footer?.truth) dispatch({ type: "truth-received", truth: source.footer.truth });
      else dispatch({ type: "truth-failed", message: "This trace was written without ground truth (footer.truth is null)." });
    }
  }, [api, report, source]);

  const outcome = lastFrame?.observation.metadata.terminal?.outcome;
  return (
    <div className="app">
      <TopBar tagline="an AML investigation under OS constraints, step by step" mode={mode} onMode={setMode} source={source}
        status={ended && <span className={`outcome small ${outcome === "TP" || outcome === "TN" ? "good" : "bad"}`} data-testid="episode-done">ended · {outcome ?? "done"}</span>}
        server={
          <div className={`server ${info ? "ok" : "down"}`} data-testid="server-status"
            title={info ? `sessions: ${String(info.http_episodes ?? "?")}` : "no answer from /info yet"}>
            <span className="dot" /> {info ? `server ${info.env}` : "server?"}
            {info && <span className="muted small"> · truth overlay {info.reveal_truth_after_done ? "on" : "off"}</span>}
          </div>
        } />
      <ErrorBanner errors={errors} onDismiss={dismiss} />
      {needsToken && <TokenField />}
      <main className="layout">
        <aside className="col left">
          {mode === "live" ? (
            <LiveControls live={live} active={source.kind === "live"} ended={ended}
              policies={info?.agent_policies ?? ["heuristic"]} policy={policy} onPolicy={setPolicy} info={info} />
          ) : (
            <ReplayControls loaded={source.kind === "replay" ? source : null} steps={Math.max(0, frames.length - 1)} onFile={(f) => void replay.openTrace(f)} />
          )}
          <AlertPanel alert={frames[0]?.observation.result ?? null} />
          {mode === "live" && (
            <ManualStep tools={tools} knownIds={seenIds} jobIds={(lastFrame?.observation.context.jobs ?? []).map((j) => j.job_id)}
              disabled={source.kind !== "live" || ended || live.busy || live.playing} onRun={live.manualStep} />
          )}
        </aside>
        <section className="col center">
          <EvidenceGraph graph={graph} sessionKey={sessionKey} truth={shownTruth}
            stepOfFrame={(i) => frames[i]?.observation.step ?? i} />
          <Scrubber count={frames.length} cursor={cursor} step={frame?.observation.step ?? 0}
            budget={frame?.observation.step_budget ?? "?"} onSeek={seek} playing={replay.playing}
            onPlayToggle={source.kind === "replay" ? replay.toggle : null} />
          <div className="pair">
            <RewardTimeline points={rewards} cursorFrame={cursor} budget={frame?.observation.step_budget ?? 0} onSeek={seek} />
            <TerminalPanel terminal={terminal} episodeReturn={terminal ? rewards.at(-1)?.cumulative ?? null : null} />
          </div>
          <TruthPanel ended={ended} truth={state.truth} seen={finalResidency} decision={lastFrame?.action ?? null}
            kernel={(lastFrame?.observation.context.kernel ?? []).map((s) => s.section_id)}
            onReveal={() => void revealTruth()} onHide={() => dispatch({ type: "truth-hidden" })} />
          <ActionLog frames={frames} cursor={cursor} onSeek={seek} />
        </section>
        <aside className="col right">
          <RamPanel context={context} evicted={evicted} freshPages={fresh.pages} events={frame?.observation.events ?? []} />
          <DiskPanel notes={context.disk} freshNotes={fresh.notes} />
          <JobsPanel jobs={context.jobs} step={step} events={frame?.observation.events ?? []} freshJobs={fresh.jobs} />
          <KernelPanel sections={context.kernel} capacity={context.kernel_capacity} evicted={evictedKernel} freshSections={fresh.sections} />
          <StepInspector frame={frame} />
        </aside>
      </main>
    </div>
  );
}
