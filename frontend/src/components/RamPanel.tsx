import { useState } from "react";
import type { EvictedPage } from "../model/memory";
import { summariseArguments } from "../model/format";
import type { ContextView, PageView } from "../model/types";
import { Empty, Panel } from "./Panel";

interface Props {
  context: ContextView;
  evicted: EvictedPage[];
  freshPages: Set<number>;
  events: string[];
}

function PageCard({ page, fresh }: { page: PageView; fresh: boolean }) {
  const [open, setOpen] = useState(false);
  return (
    <li className={`ram-page ${fresh ? "fresh" : ""}`} data-testid="ram-page" data-page-id={page.page_id}>
      <button type="button" className="row-button" onClick={() => setOpen(!open)} aria-expanded={open}>
        <span className="page-no">p{page.page_id}</span>
        <span className="tool-name">{page.tool}</span>
        <span className="muted">step {page.step}</span>
        <span className="spacer" />
        <span className="chip">{page.ids.length} IDs</span>
      </button>
      <div className="muted small args">{summariseArguments(page.arguments)}</div>
      {open && <pre className="json small">{JSON.stringify(page.content, null, 2)}</pre>}
    </li>
  );
}

/** RAM: the resident pages in their slots (capacity from the server) and the pages evicted. */
export function RamPanel({ context, evicted, freshPages, events }: Props) {
  const slots = Math.max(context.ram_capacity, context.ram.length);
  const evictionEvents = events.filter((e) => /evicted|page fault/.test(e));
  return (
    <Panel title="RAM" testId="ram-panel" badge={`${context.ram.length}/${context.ram_capacity} pages`}>
      <ol className="slots">
        {context.ram.map((p) => (
          <PageCard key={p.page_id} page={p} fresh={freshPages.has(p.page_id)} />
        ))}
        {Array.from({ length: Math.max(0, slots - context.ram.length) }, (_, i) => (
          <li key={`free-${i}`} className="ram-page free">free slot</li>
        ))}
      </ol>
      {evictionEvents.length > 0 && (
        <ul className="events" data-testid="ram-events">
          {evictionEvents.map((e) => (
            <li key={e} className={/fault/.test(e) ? "event fault" : "event"}>{e}</li>
          ))}
        </ul>
      )}
      <h3 className="subhead">Evicted <span className="muted">({evicted.length})</span></h3>
      {evicted.length === 0 ? (
        <Empty>No page has left RAM yet.</Empty>
      ) : (
        <ul className="evicted-list">
          {evicted.slice(0, 8).map(({ page, evictedAtStep }) => (
            <li key={page.page_id} data-testid="evicted-page">
              <span className="page-no">p{page.page_id}</span> {page.tool}
              <span className="muted"> · out at step {evictedAtStep}</span>
            </li>
          ))}
          {evicted.length > 8 && <li className="muted">… {evicted.length - 8} more</li>}
        </ul>
      )}
    </Panel>
  );
}
