import { useState } from "react";
import type { EvictedSection } from "../model/memory";
import type { SectionView } from "../model/types";
import { Empty, Panel } from "./Panel";

function Section({ section, fresh }: { section: SectionView; fresh: boolean }) {
  const [open, setOpen] = useState(false);
  return (
    <li className={`section ${fresh ? "fresh" : ""}`} data-testid="kernel-section" data-section-id={section.section_id}>
      <button type="button" className="row-button" onClick={() => setOpen(!open)} aria-expanded={open}>
        <span className="section-id">§{section.section_id}</span>
        <span className="section-title">{section.title}</span>
      </button>
      {open && <p className="section-text">{section.text}</p>}
    </li>
  );
}

/** The kernel: compliance-manual sections loaded into the system prompt. */
export function KernelPanel({ sections, capacity, evicted, freshSections }: {
  sections: SectionView[]; capacity: number; evicted: EvictedSection[]; freshSections: Set<string>;
}) {
  return (
    <Panel title="Kernel · manual sections" testId="kernel-panel" badge={`${sections.length}/${capacity} loaded`}>
      {sections.length === 0 ? (
        <Empty>No manual section loaded.</Empty>
      ) : (
        <ol className="sections">
          {sections.map((s) => (
            <Section key={s.section_id} section={s} fresh={freshSections.has(s.section_id)} />
          ))}
        </ol>
      )}
      {evicted.length > 0 && (
        <div className="muted small">
          Evicted: {evicted.map((e) => `§${e.section.section_id} (step ${e.evictedAtStep})`).join(", ")}
        </div>
      )}
    </Panel>
  );
}
