import { useRef } from "react";
import { useRowInView } from "../hooks/useRowInView";
import { formatReward, summariseArguments } from "../model/format";
import type { Frame } from "../model/types";
import { Panel } from "./Panel";

/** Every step of the timeline: who acted, which tool, its arguments, reward, errors, events. */
export function ActionLog({ frames, cursor, onSeek }: { frames: Frame[]; cursor: number; onSeek: (i: number) => void }) {
  const box = useRef<HTMLDivElement>(null);
  const current = useRef<HTMLTableRowElement>(null);
  useRowInView(box, current, `${cursor}/${frames.length}`);
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
