import type { ReactNode } from "react";
import type { Source } from "../model/timeline";

export type Mode = "live" | "replay";

interface Props<O> {
  tagline: string;
  mode: Mode;
  onMode: (mode: Mode) => void;
  source: Source<O>;
  /** After the source label: what the view adds (the task, the episode's end). */
  status: ReactNode;
  /** The server's badge, at the right. */
  server: ReactNode;
}

/** The Glass Box's top bar, whatever the environment: brand, Live/Replay tabs, what is on
 * screen, and the server. */
export function TopBar<O>({ tagline, mode, onMode, source, status, server }: Props<O>) {
  return (
    <header className="topbar">
      <div className="brand">
        <span className="logo" aria-hidden>◈</span>
        <div>
          <h1>Memex <span className="thin">Glass Box</span></h1>
          <div className="tagline">{tagline}</div>
        </div>
      </div>
      <nav className="tabs" role="tablist">
        {(["live", "replay"] as const).map((m) => (
          <button key={m} type="button" role="tab" aria-selected={mode === m} className={mode === m ? "tab active" : "tab"}
            onClick={() => onMode(m)} data-testid={`mode-${m}`}>
            {m === "live" ? "Live" : "Replay"}
          </button>
        ))}
      </nav>
      <div className="source" data-testid="source-label">
        {source.kind === "live" && <>live episode <code>{source.episodeId}</code></>}
        {source.kind === "replay" && <>replay of <code>{source.fileName}</code></>}
        {source.kind === "none" && <span className="muted">nothing loaded</span>}
        {status}
      </div>
      {server}
    </header>
  );
}
