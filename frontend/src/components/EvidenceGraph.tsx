import cytoscape, { type Core, type ElementDefinition, type StylesheetJson } from "cytoscape";
import { useEffect, useMemo, useRef, useState } from "react";
import { countByState, type EvidenceGraph as Graph, type EvidenceNode, type NodeKind } from "../model/graph";
import type { GroundTruth } from "../model/types";
import { Empty, Panel } from "./Panel";

/** Fill colour and shape per record kind; residency is drawn with the border (see STYLE). */
const KINDS: Record<NodeKind, { color: string; shape: string; size: number; label: string }> = {
  alert: { color: "#ef4444", shape: "star", size: 40, label: "alert" },
  person: { color: "#c084fc", shape: "ellipse", size: 38, label: "person" },
  company: { color: "#818cf8", shape: "round-rectangle", size: 38, label: "company" },
  entity: { color: "#a5b4fc", shape: "ellipse", size: 32, label: "party" },
  account: { color: "#2dd4bf", shape: "barrel", size: 28, label: "account" },
  transaction: { color: "#fbbf24", shape: "diamond", size: 22, label: "transaction" },
  hop: { color: "#fb923c", shape: "triangle", size: 26, label: "trace hop" },
  invoice: { color: "#f472b6", shape: "tag", size: 26, label: "invoice" },
  customs: { color: "#f9a8d4", shape: "tag", size: 22, label: "customs" },
  lading: { color: "#f9a8d4", shape: "tag", size: 22, label: "bill of lading" },
  login: { color: "#94a3b8", shape: "hexagon", size: 20, label: "login" },
  watchlist: { color: "#f87171", shape: "octagon", size: 26, label: "watchlist" },
  source: { color: "#a3e635", shape: "round-tag", size: 26, label: "source of funds" },
  document: { color: "#bef264", shape: "round-tag", size: 20, label: "document" },
  price: { color: "#e2e8f0", shape: "rhomboid", size: 22, label: "market price" },
};

const STYLE: StylesheetJson = [
  {
    selector: "node",
    style: {
      "background-color": "data(color)",
      shape: "data(shape)" as never,
      width: "data(size)",
      height: "data(size)",
      label: "data(label)",
      color: "#dbe4f3",
      "font-size": 11,
      "font-family": "Inter, system-ui, sans-serif",
      "text-valign": "bottom",
      "text-margin-y": 4,
      "text-wrap": "ellipsis",
      "text-max-width": "110px",
      "text-outline-color": "#0b1220",
      "text-outline-width": 2,
      "min-zoomed-font-size": 5,
      "border-width": 3,
      "border-color": "#38bdf8",
      "border-style": "solid",
      "underlay-shape": "ellipse",
    },
  },
  { selector: "node.state-disk", style: { "border-color": "#4ade80", "border-width": 6, "border-style": "double" } },
  {
    selector: "node.state-evicted",
    style: { opacity: 0.32, "border-color": "#64748b", "border-style": "dashed", "border-width": 2, color: "#8391a7" },
  },
  { selector: "node.fresh", style: { "underlay-color": "#e0f2fe", "underlay-opacity": 0.22, "underlay-padding": 7 } },
  { selector: "node.truth-evidence", style: { "underlay-color": "#facc15", "underlay-opacity": 0.5, "underlay-padding": 6 } },
  {
    selector: "node.truth-subject",
    style: { "underlay-color": "#ef4444", "underlay-opacity": 0.6, "underlay-padding": 11, "font-weight": "bold", color: "#fecaca" },
  },
  { selector: "node:selected", style: { "overlay-color": "#38bdf8", "overlay-opacity": 0.25, "overlay-padding": 6 } },
  {
    selector: "edge",
    style: {
      width: 1.4,
      "line-color": "#475569",
      "target-arrow-color": "#475569",
      "target-arrow-shape": "triangle",
      "arrow-scale": 0.7,
      "curve-style": "bezier",
      label: "data(label)",
      "font-size": 8,
      color: "#94a3b8",
      "text-rotation": "autorotate",
      "text-outline-color": "#0b1220",
      "text-outline-width": 2,
      "min-zoomed-font-size": 6,
    },
  },
  { selector: "edge.rel-owns", style: { "line-color": "#2dd4bf", "target-arrow-color": "#2dd4bf", label: "", width: 1 } },
  { selector: "edge.rel-conducted", style: { "line-color": "#7c6f9f", "target-arrow-color": "#7c6f9f", label: "", width: 1 } },
  { selector: "edge.rel-debit, edge.rel-credit", style: { "line-color": "#b45309", "target-arrow-color": "#f59e0b", label: "" } },
  { selector: "edge.rel-flow", style: { "line-color": "#d97706", "target-arrow-color": "#f59e0b", width: 2 } },
  { selector: "edge.rel-ownership", style: { "line-color": "#a78bfa", "target-arrow-color": "#a78bfa", width: 2 } },
  { selector: "edge.rel-nominee", style: { "line-color": "#f87171", "target-arrow-color": "#f87171", "line-style": "dashed", width: 2 } },
  { selector: "edge.rel-hop, edge.rel-beneficiary", style: { "line-color": "#fb923c", "target-arrow-color": "#fb923c", width: 2 } },
  { selector: "edge.rel-shared", style: { "line-color": "#f43f5e", "target-arrow-shape": "none", "line-style": "dotted", width: 2 } },
  { selector: "edge.rel-screened", style: { "line-color": "#f87171", "line-style": "dotted", "target-arrow-shape": "none" } },
  { selector: "edge.state-evicted", style: { opacity: 0.2 } },
];

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return (h >>> 0) / 4294967296;
}

interface TruthMarks {
  subjects: Set<string>;
  evidence: Set<string>;
}

function nodeClasses(n: EvidenceNode, truth: TruthMarks | null): string {
  const c = [`kind-${n.kind}`, `state-${n.state}`];
  if (n.fresh) c.push("fresh");
  if (truth?.subjects.has(n.id)) c.push("truth-subject");
  else if (truth?.evidence.has(n.id)) c.push("truth-evidence");
  return c.join(" ");
}

function nodeData(n: EvidenceNode) {
  const k = KINDS[n.kind];
  return { id: n.id, label: n.label, color: k.color, shape: k.shape, size: k.size };
}

/** Bring the cytoscape instance in line with `graph`; returns whether nodes or edges changed. */
function sync(cy: Core, graph: Graph, truth: TruthMarks | null): boolean {
  const nodeIds = new Set(graph.nodes.map((n) => n.id));
  const edgeIds = new Set(graph.edges.map((e) => e.id));
  let changed = false;
  cy.batch(() => {
    cy.edges().forEach((e) => {
      if (!edgeIds.has(e.id())) {
        e.remove();
        changed = true;
      }
    });
    cy.nodes().forEach((n) => {
      if (!nodeIds.has(n.id())) {
        n.remove();
        changed = true;
      }
    });
    const neighbours = new Map<string, string[]>();
    for (const e of graph.edges) {
      neighbours.set(e.source, [...(neighbours.get(e.source) ?? []), e.target]);
      neighbours.set(e.target, [...(neighbours.get(e.target) ?? []), e.source]);
    }
    const extent = cy.nodes().length > 0 ? cy.nodes().boundingBox({}) : { x1: 0, y1: 0, w: 0, h: 0 };
    const added: ElementDefinition[] = [];
    for (const n of graph.nodes) {
      const el = cy.getElementById(n.id);
      if (el.nonempty()) {
        el.data(nodeData(n));
        el.classes(nodeClasses(n, truth));
        continue;
      }
      // Start a new node next to a node it is related to, so the layout only has to nudge.
      const anchor = (neighbours.get(n.id) ?? []).map((id) => cy.getElementById(id)).find((x) => x.nonempty());
      const angle = hash(n.id) * Math.PI * 2;
      const base = anchor ? anchor.position() : { x: extent.x1 + extent.w / 2, y: extent.y1 + extent.h / 2 };
      const r = anchor ? 70 : 40 + hash(`${n.id}r`) * 120;
      added.push({
        group: "nodes",
        data: nodeData(n),
        classes: nodeClasses(n, truth),
        position: { x: base.x + Math.cos(angle) * r, y: base.y + Math.sin(angle) * r },
      });
    }
    if (added.length > 0) {
      cy.add(added);
      changed = true;
    }
    const addedEdges: ElementDefinition[] = [];
    for (const e of graph.edges) {
      const el = cy.getElementById(e.id);
      const classes = `rel-${e.relation} state-${e.state}`;
      if (el.nonempty()) el.classes(classes);
      else addedEdges.push({ group: "edges", data: { id: e.id, source: e.source, target: e.target, label: e.label }, classes });
    }
    if (addedEdges.length > 0) {
      cy.add(addedEdges);
      changed = true;
    }
  });
  return changed;
}

const MAX_FIT_ZOOM = 1.35;

function runLayout(cy: Core, randomize: boolean): void {
  if (cy.nodes().length === 0) return;
  const layout = cy.layout({
    name: "cose",
    animate: false,
    randomize,
    fit: true,
    padding: 28,
    nodeDimensionsIncludeLabels: false,
    idealEdgeLength: () => 38,
    nodeRepulsion: () => 5500,
    edgeElasticity: () => 100,
    nodeOverlap: 24,
    gravity: 1.2,
    numIter: 1500,
    componentSpacing: 40,
  } as cytoscape.LayoutOptions);
  // A handful of records should not fill the canvas at giant size.
  layout.one("layoutstop", () => {
    if (cy.zoom() > MAX_FIT_ZOOM) {
      cy.zoom(MAX_FIT_ZOOM);
      cy.center();
    }
  });
  layout.run();
}

interface Props {
  graph: Graph;
  /** Changes when a different episode or trace is shown: the layout starts afresh. */
  sessionKey: string;
  truth: GroundTruth | null;
  stepOfFrame: (frame: number) => number;
}

/** The evidence graph: records revealed so far, coloured by kind, bordered by residency. */
export function EvidenceGraph({ graph, sessionKey, truth, stepOfFrame }: Props) {
  const container = useRef<HTMLDivElement>(null);
  const cyRef = useRef<Core | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const counts = countByState(graph);
  const marks = useMemo<TruthMarks | null>(
    () => (truth ? { subjects: new Set(truth.subject_ids), evidence: new Set(truth.red_flags.flatMap((f) => f.evidence_ids)) } : null),
    [truth],
  );

  useEffect(() => {
    if (!container.current) return;
    const cy = cytoscape({ container: container.current, style: STYLE, minZoom: 0.15, maxZoom: 3, wheelSensitivity: 0.25 });
    cy.on("tap", "node", (evt) => setSelected(evt.target.id() as string));
    cy.on("tap", (evt) => {
      if (evt.target === cy) setSelected(null);
    });
    cyRef.current = cy;
    return () => {
      cy.destroy();
      cyRef.current = null;
    };
  }, []);

  useEffect(() => {
    const cy = cyRef.current;
    if (!cy) return;
    cy.elements().remove();
    setSelected(null);
  }, [sessionKey]);

  useEffect(() => {
    const cy = cyRef.current;
    if (!cy) return;
    const wasEmpty = cy.nodes().length === 0;
    if (sync(cy, graph, marks)) runLayout(cy, wasEmpty);
  }, [graph, marks]);

  const node = selected ? graph.nodes.find((n) => n.id === selected) : undefined;
  const truthCount = marks ? graph.nodes.filter((n) => marks.subjects.has(n.id)).length : 0;
  const kindsPresent = [...new Set(graph.nodes.map((n) => n.kind))];
  return (
    <Panel
      title="Evidence graph"
      testId="graph-panel"
      className="graph-panel"
      badge={`${graph.nodes.length} records · ${graph.edges.length} links`}
      actions={
        <>
          <button type="button" className="ghost" onClick={() => cyRef.current?.fit(undefined, 28)}>Fit</button>
          <button type="button" className="ghost" onClick={() => cyRef.current && runLayout(cyRef.current, true)}>Re-layout</button>
        </>
      }
    >
      <div
        className="graph-wrap"
        data-testid="graph"
        data-nodes={graph.nodes.length}
        data-edges={graph.edges.length}
        data-disk={counts.disk}
        data-ram={counts.ram}
        data-evicted={counts.evicted}
        data-truth-subjects={truthCount}
      >
        <div ref={container} className="graph-canvas" />
        {graph.nodes.length === 0 && <div className="graph-empty"><Empty>Records appear here as tools reveal them.</Empty></div>}
        <div className="legend">
          <div className="legend-states">
            <span className="state-swatch ram" /> in RAM <b data-testid="count-ram">{counts.ram}</b>
            <span className="state-swatch disk" /> on disk <b data-testid="count-disk">{counts.disk}</b>
            <span className="state-swatch evicted" /> evicted <b data-testid="count-evicted">{counts.evicted}</b>
            {marks && (
              <>
                <span className="state-swatch truth" /> true subject
                <span className="state-swatch evidence" /> true evidence
              </>
            )}
          </div>
          <div className="legend-kinds">
            {kindsPresent.map((k) => (
              <span key={k} className="legend-kind">
                <i style={{ background: KINDS[k].color }} /> {KINDS[k].label}
              </span>
            ))}
          </div>
        </div>
        {node && (
          <div className="node-card" data-testid="node-card">
            <div className="node-card-head">
              <code className="id-chip">{node.id}</code>
              <span className={`state-pill ${node.state}`}>{node.state === "ram" ? "in RAM" : node.state === "disk" ? "on disk" : "evicted"}</span>
              <button type="button" className="ghost" aria-label="Close" onClick={() => setSelected(null)}>✕</button>
            </div>
            <strong>{node.label}</strong>
            <div className="muted small">{KINDS[node.kind].label} · first revealed at step {stepOfFrame(node.firstFrame)}</div>
            <ul className="small">
              {node.details.map((d) => <li key={d}>{d}</li>)}
            </ul>
          </div>
        )}
      </div>
    </Panel>
  );
}
