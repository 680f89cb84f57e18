import type { ChangeEvent } from "react";
import type { TraceFooter, TraceHeader } from "../model/trace";
import { formatReward } from "../model/format";
import { Panel } from "./Panel";

interface Props {
  loaded: { fileName: string; header: TraceHeader; footer: TraceFooter | null } | null;
  steps: number;
  onFile: (file: File) => void;
}

/** Replay mode: open a memex-trace/1 JSONL written by the evaluation harness or the demo. */
export function ReplayControls({ loaded, steps, onFile }: Props) {
  const pick = (e: ChangeEvent<HTMLInputElement>) => {
    const file = e.target.files?.[0];
    if (file) onFile(file);
    e.target.value = "";
  };
  return (
    <Panel title="Replay a trace" testId="replay-controls">
      <label className="file-drop">
        <input type="file" accept=".jsonl,.json,application/x-ndjson,application/json" onChange={pick} data-testid="trace-file" />
        <span>Open a <code>memex-trace/1</code> JSONL file…</span>
      </label>
      {loaded && (
        <dl className="facts" data-testid="trace-info">
          <dt>File</dt><dd>{loaded.fileName}</dd>
          <dt>Policy</dt><dd>{loaded.header.policy}</dd>
          <dt>Case</dt>
          <dd>{loaded.header.case ?? `seed ${loaded.header.seed ?? "?"}`} · {loaded.header.difficulty ?? "?"}{typeof loaded.header.reset.kind === "string" ? ` · ${loaded.header.reset.kind}` : ""}</dd>
          <dt>Steps</dt><dd>{steps}</dd>
          <dt>Outcome</dt>
          <dd>{loaded.footer ? `${loaded.footer.outcome} · return ${formatReward(loaded.footer.episode_return)}` : "unfinished (no footer)"}</dd>
        </dl>
      )}
    </Panel>
  );
}
