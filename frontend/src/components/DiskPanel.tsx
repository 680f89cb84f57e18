import type { NoteView } from "../model/types";
import { Empty, Panel } from "./Panel";

/** The disk case file: the agent's notes; every ID in them stays resident. */
export function DiskPanel({ notes, freshNotes }: { notes: NoteView[]; freshNotes: Set<number> }) {
  const ids = new Set(notes.flatMap((n) => n.ids));
  return (
    <Panel title="Disk · case file" testId="disk-panel" badge={`${notes.length} notes · ${ids.size} IDs`}>
      {notes.length === 0 ? (
        <Empty>Nothing written to the case file yet.</Empty>
      ) : (
        <ol className="notes">
          {notes.map((n) => (
            <li key={n.note_id} className={`note ${freshNotes.has(n.note_id) ? "fresh" : ""}`} data-testid="disk-note">
              <div className="note-head">
                <span className="page-no">#{n.note_id}</span>
                <span className="muted">step {n.step}</span>
              </div>
              <p className="note-text">{n.text}</p>
              <div className="id-chips">
                {n.ids.map((id) => (
                  <code key={id} className="id-chip">{id}</code>
                ))}
              </div>
            </li>
          ))}
        </ol>
      )}
    </Panel>
  );
}
