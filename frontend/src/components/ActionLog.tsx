import { useEffect, useRef } from "react";
import { formatReward, summariseArguments } from "../model/format";
import type { Frame } from "../model/types";
import { Panel } from "./Panel";

/** Every step of the timeline: who acted, which tool, its arguments, reward, errors, events. */
export function ActionLog({ frames, cursor, onSeek }: { frames: Frame[]; cursor: number; onSeek: (i: number) => void }) {
  const box = useRef<HTMLDivElement>(null);
  const current = useRef<HTMLTableRowElement>(null);
  // Keep the current row in view by scrolling the log itself, never the page.
  useEffect(() => {
    const row = current.current;
    const container = box.current;
    if (!row || !container) return;
    const header = container.querySelector("thead")?.clientHeight ?? 0;
    const top = row.getBoundingClientRect().top - container.getBoundingClientRect().top + container.scrollTop;
    if (top - header < container.scrollTop) container.scrollTop = top - header;
    else if (top + row.clientHeight > container.scrollTop + container.clientHeight) {
      container.scrollTop = top + row.clientHeight - container.clientHeight;
    }
  }, [cursor, frames.length]);
  return (
    <Panel title="Action log" testId="action-log" badge={`${Math.max(0, frames.length - 1)} actions`}>
      <div className="log-scroll" ref={box}>
        <table className="log">
          <thead>
            <tr>
              <th>step</th><th>by</th><th>tool</th><th>arguments</th><th className="num">reward</th><th>outcome</th>
            </tr>
          </thead>
          <tbody>
            {frames.map((f) => {
              const o = f.observation;
              const note = o.error ? `${o.error.code}: ${o.error.message}` : o.events.join(" · ");
              return (
                <tr key={f.index} ref={f.index === cursor ? current : undefined} data-testid="log-row"
                  className={`${f.index === cursor ? "current" : ""} ${o.error ? "has-error" : ""} ${f.index > cursor ? "future" : ""}`}
                  onClick={() => onSeek(f.index)}>
                  <td className="num">{o.step}</td>
                  <td><span className={`actor ${f.actor}`}>{f.actor}</span></td>
                  <td className="tool-name">{f.action?.tool ?? "reset"}</td>
                  <td className="args" title={JSON.stringify(f.action?.arguments ?? {})}>{summariseArguments(f.action?.arguments)}</td>
                  <td className={`num ${(o.reward ?? 0) < 0 ? "neg" : (o.reward ?? 0) > 0 ? "pos" : ""}`}>{formatReward(o.reward)}</td>
                  <td className={o.error ? "error-text" : "muted"} title={note}>
                    {o.done && o.metadata.terminal ? `${o.metadata.terminal.outcome} · ` : ""}{note}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </Panel>
  );
}
