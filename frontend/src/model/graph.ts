/**
 * The evidence graph: every entity, account, transaction and related record that tool results
 * have revealed up to a point of the timeline, with the relations the results state (who owns
 * which account, which account paid which, ownership links, wire-trace hops, trade documents,
 * logins, watchlist hits, source-of-funds records).
 *
 * Residency follows the environment's memory model (state_manager.py): an ID is "on disk" if a
 * case-file note holds it, "in RAM" if a resident RAM page holds it (alert IDs are always
 * resident), and "evicted" if it was revealed earlier but is resident no longer.
 */
import type { ContextView, Frame, JsonValue } from "./types";

export type NodeKind =
  | "entity"
  | "person"
  | "company"
  | "account"
  | "transaction"
  | "hop"
  | "invoice"
  | "customs"
  | "lading"
  | "login"
  | "watchlist"
  | "source"
  | "document"
  | "price"
  | "alert";

export type Residency = "disk" | "ram" | "evicted";

export interface EvidenceNode {
  id: string;
  kind: NodeKind;
  label: string;
  details: string[];
  firstFrame: number;
  state: Residency;
  fresh: boolean;
}

export interface EvidenceEdge {
  id: string;
  source: string;
  target: string;
  relation: string;
  label: string;
  /** The case ID the edge itself is (ownership links, OWN-...), if any. */
  recordId: string | null;
  firstFrame: number;
  state: Residency;
}

export interface EvidenceGraph {
  nodes: EvidenceNode[];
  edges: EvidenceEdge[];
}

const ID_RE = /^(ENT|ACC|TXN|OWN|WL|LOG|INV|CUS|BOL|MKT|SOF|DOC|HOP|ALR|CASE)-[0-9A-F]{6}$/;

export function isCaseId(value: unknown): value is string {
  return typeof value === "string" && ID_RE.test(value);
}

export function idPrefix(id: string): string {
  return id.split("-", 1)[0] ?? "";
}

const KIND_BY_PREFIX: Record<string, NodeKind> = {
  ACC: "account",
  TXN: "transaction",
  HOP: "hop",
  INV: "invoice",
  CUS: "customs",
  BOL: "lading",
  LOG: "login",
  WL: "watchlist",
  SOF: "source",
  DOC: "document",
  MKT: "price",
  ALR: "alert",
};

type Obj = { [key: string]: JsonValue };

function isObj(value: JsonValue | undefined): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function str(value: JsonValue | undefined): string | null {
  return typeof value === "string" ? value : null;
}

function num(value: JsonValue | undefined): number | null {
  return typeof value === "number" ? value : null;
}

function list(value: JsonValue | undefined): JsonValue[] {
  return Array.isArray(value) ? value : [];
}

export function formatUsd(amount: number): string {
  const abs = Math.abs(amount);
  const sign = amount < 0 ? "-" : "";
  if (abs >= 1e6) return `${sign}$${(abs / 1e6).toFixed(abs >= 1e7 ? 1 : 2)}M`;
  if (abs >= 1e3) return `${sign}$${(abs / 1e3).toFixed(abs >= 1e5 ? 0 : 1)}k`;
  return `${sign}$${abs.toFixed(0)}`;
}

function normName(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9 ]/g, " ").split(/\s+/).filter(Boolean).join(" ");
}

interface Ctx {
  entity: string | null;
  account: string | null;
}

/** Accumulates nodes and edges over frames; the first frame that reveals a record wins. */
class GraphBuilder {
  readonly nodes = new Map<string, Omit<EvidenceNode, "state" | "fresh">>();
  readonly edges = new Map<string, Omit<EvidenceEdge, "state">>();
  private readonly names = new Map<string, string>();
  private readonly watchHits: Array<{ entry: string; query: string; frame: number }> = [];
  private readonly commodityOf = new Map<string, string>();
  private readonly prices: Array<{ id: string; commodity: string; frame: number }> = [];
  frame = 0;

  node(id: string, kind: NodeKind, label?: string | null, details: string[] = []): void {
    const existing = this.nodes.get(id);
    if (existing === undefined) {
      this.nodes.set(id, { id, kind, label: label ?? id, details: [...details], firstFrame: this.frame });
      return;
    }
    // A record first seen by bare ID (e.g. an account number in a ledger line) gains its name
    // and facts when a later result describes it.
    if (label && existing.label === existing.id) existing.label = label;
    // Ledger lines name a party without saying whether it is a person or a company.
    if (existing.kind === "entity" && (kind === "person" || kind === "company")) existing.kind = kind;
    for (const d of details) if (!existing.details.includes(d)) existing.details.push(d);
  }

  edge(source: string, target: string, relation: string, label = "", recordId: string | null = null): void {
    if (source === target) return;
    const id = recordId ?? `${source}|${relation}|${target}`;
    if (!this.edges.has(id)) {
      this.edges.set(id, { id, source, target, relation, label, recordId, firstFrame: this.frame });
    }
  }

  entity(brief: Obj): string | null {
    const id = str(brief.entity_id);
    if (!isCaseId(id)) return null;
    const name = str(brief.name);
    const kind: NodeKind =
      brief.kind === "person" ? "person" : brief.kind === "company" ? "company" : "entity";
    const details: string[] = [];
    if (str(brief.country)) details.push(`country ${brief.country}`);
    if (str(brief.business_type)) details.push(String(brief.business_type));
    if (str(brief.occupation)) details.push(String(brief.occupation));
    if (str(brief.risk_rating)) details.push(`KYC risk ${brief.risk_rating}`);
    if (isObj(brief.pep)) details.push(`PEP: ${str(brief.pep.position) ?? "yes"}`);
    this.node(id, kind, name, details);
    if (name) this.names.set(normName(name), id);
    return id;
  }

  party(id: string | null, name: string | null): string | null {
    if (!isCaseId(id)) return null;
    this.node(id, "entity", name);
    if (name) this.names.set(normName(name), id);
    return id;
  }

  account(id: string, owner: string | null, bank: string | null = null): void {
    this.node(id, "account", id, bank ? [bank] : []);
    if (owner && isCaseId(owner)) {
      if (!this.nodes.has(owner)) this.node(owner, "entity");
      this.edge(owner, id, "owns", "owns");
    }
  }

  txn(line: Obj, ctx: Ctx): void {
    const id = str(line.id);
    if (!isCaseId(id)) return;
    const amount = num(line.amount_usd);
    const channel = str(line.channel) ?? "";
    const details = [str(line.timestamp), str(line.memo), str(line.branch)].filter(
      (x): x is string => x !== null,
    );
    this.node(id, "transaction", `${amount === null ? "" : formatUsd(amount)} ${channel}`.trim(), details);
    let from: string | null = null;
    let to: string | null = null;
    if ("from_account" in line || "to_account" in line) {
      from = str(line.from_account);
      to = str(line.to_account);
      if (from) this.account(from, this.party(str(line.from_party_id), str(line.from_party)));
      if (to) this.account(to, this.party(str(line.to_party_id), str(line.to_party)));
    } else if (ctx.account && str(line.direction)) {
      const other = str(line.counterparty_account);
      const party = this.party(str(line.counterparty_id), str(line.counterparty));
      if (other) this.account(other, party);
      [from, to] = line.direction === "in" ? [other, ctx.account] : [ctx.account, other];
    }
    if (from && isCaseId(from)) this.edge(from, id, "debit");
    if (to && isCaseId(to)) this.edge(id, to, "credit");
    const by = str(line.conducted_by);
    if (isCaseId(by)) {
      this.node(by, "entity");
      this.edge(by, id, "conducted", "deposited");
    }
    const ref = str(line.reference);
    if (isCaseId(ref)) {
      this.node(ref, KIND_BY_PREFIX[idPrefix(ref)] ?? "document");
      this.edge(id, ref, "pays", "pays");
    }
  }

  visit(value: JsonValue, ctx: Ctx): void {
    if (Array.isArray(value)) {
      for (const item of value) this.visit(item, ctx);
      return;
    }
    if (!isObj(value)) return;
    const o = value;
    const inner: Ctx = { ...ctx };
    if (isCaseId(o.entity_id) && str(o.name)) this.entity(o);

    // Whose result is this? (profile / per-entity result / per-account ledger)
    if (isObj(o.entity)) inner.entity = this.entity(o.entity) ?? inner.entity;
    if (isCaseId(o.entity_id) && ("accounts" in o || "customer" in o || "address" in o)) {
      inner.entity = this.entity(o) ?? inner.entity;
    }
    if (isObj(o.entity) && typeof o.score === "number" && str(o.band)) {
      const subject = str(o.entity.entity_id);
      if (isCaseId(subject)) this.node(subject, "entity", null, [`risk score ${o.score} (${o.band})`]);
    }
    if (isCaseId(o.account_id) && "opened" in o && !("login_id" in o)) {
      this.account(o.account_id, isCaseId(o.entity_id) ? o.entity_id : ctx.entity, str(o.bank));
    }
    if (isCaseId(o.account_id) && isObj(o.owner) && !("link_id" in o)) {
      const owner = this.entity(o.owner);
      this.account(o.account_id, owner, str(o.bank));
      inner.account = o.account_id;
      inner.entity = owner ?? inner.entity;
    }

    this.record(o, inner);

    for (const [key, child] of Object.entries(o)) {
      if (key === "entity" || key === "owner" || key === "company") continue;
      if (key === "directors") {
        for (const d of list(child)) {
          if (!isObj(d)) continue;
          const director = this.entity(d);
          if (director && inner.entity) this.edge(director, inner.entity, "director", "director");
        }
        continue;
      }
      if (key === "counterparties" && inner.entity) {
        for (const row of list(child)) {
          if (!isObj(row)) continue;
          const other = this.entity(row);
          if (!other) continue;
          if (isCaseId(row.account_id)) this.account(row.account_id, other, str(row.bank));
          const usdIn = num(row.usd_in) ?? 0;
          const usdOut = num(row.usd_out) ?? 0;
          if (usdIn > 0) this.edge(other, inner.entity, "flow", formatUsd(usdIn));
          if (usdOut > 0) this.edge(inner.entity, other, "flow", formatUsd(usdOut));
        }
        continue;
      }
      if (key === "hops") {
        this.hops(list(child), str(o.transaction_id));
        continue;
      }
      if (key === "shared_with" && inner.entity) {
        for (const row of list(child)) {
          if (!isObj(row)) continue;
          const other = this.entity(row);
          if (!other) continue;
          this.edge(other, inner.entity, "shared", "shared device/IP");
          for (const login of list(row.login_ids)) {
            if (isCaseId(login)) {
              this.node(login, "login", login);
              this.edge(other, login, "login");
            }
          }
        }
        continue;
      }
      if (key === "hits") {
        const query = str(o.query);
        for (const hit of list(child)) {
          if (isObj(hit)) this.record(hit, inner);
          if (isObj(hit) && isCaseId(hit.entry_id) && query) {
            this.watchHits.push({ entry: hit.entry_id, query, frame: this.frame });
          }
        }
        continue;
      }
      this.visit(child, inner);
    }

    // Trade documents: exporter -> invoice -> importer; other documents join their invoice.
    if (isObj(o.exporter) && isObj(o.importer) && Array.isArray(o.documents)) {
      const exporter = this.entity(o.exporter);
      const importer = this.entity(o.importer);
      const docs = o.documents.filter(isObj).map((d) => str(d.document_id) ?? str(d.id));
      const invoices = docs.filter((d): d is string => isCaseId(d) && idPrefix(d) === "INV");
      for (const inv of invoices) {
        if (exporter) this.edge(exporter, inv, "exporter", "exporter");
        if (importer) this.edge(inv, importer, "importer", "importer");
      }
      for (const doc of docs) {
        if (isCaseId(doc) && idPrefix(doc) !== "INV" && invoices[0]) {
          this.edge(doc, invoices[0], "shipment", "same shipment");
        }
      }
    }
  }

  /** Records identified by their own ID key. */
  private record(o: Obj, ctx: Ctx): void {
    if (isCaseId(o.alert_id)) {
      const rule = isObj(o.rule) ? str(o.rule.code) : null;
      this.node(o.alert_id, "alert", rule ? `ALERT ${rule}` : o.alert_id, isObj(o.rule) ? [String(o.rule.name ?? "")] : []);
      const subject = isObj(o.subject) ? this.entity(o.subject) : null;
      if (subject) {
        this.edge(o.alert_id, subject, "alert", "alert");
        for (const acct of list(o.account_ids)) if (isCaseId(acct)) this.account(acct, subject);
      }
    }
    if (isCaseId(o.id) && idPrefix(o.id) === "TXN") this.txn(o, ctx);
    if (isCaseId(o.link_id)) {
      const company = isObj(o.company) ? this.entity(o.company) : null;
      const owner = isObj(o.owner) ? this.entity(o.owner) : ctx.entity;
      const pct = num(o.percent);
      const label = `${pct === null ? "" : `${pct}%`}${o.nominee === true ? " nominee" : ""}`.trim();
      if (company && owner) this.edge(owner, company, o.nominee === true ? "nominee" : "ownership", label, o.link_id);
    }
    if (isCaseId(o.login_id)) {
      const who = isObj(o.by) ? this.entity(o.by) : null;
      this.node(o.login_id, "login", str(o.device_id) ?? o.login_id, [str(o.ip_address), str(o.timestamp)].filter((x): x is string => x !== null));
      if (who) this.edge(who, o.login_id, "login");
      if (isCaseId(o.account_id)) {
        this.account(o.account_id, null);
        this.edge(o.login_id, o.account_id, "login");
      }
    }
    if (isCaseId(o.entry_id)) {
      const similarity = num(o.similarity);
      this.node(o.entry_id, "watchlist", `${str(o.list) ?? "list"}: ${str(o.name) ?? o.entry_id}`, [
        str(o.detail) ?? "",
        similarity === null ? "" : `similarity ${similarity}`,
      ].filter(Boolean));
    }
    if (isCaseId(o.price_id)) {
      const commodity = str(o.commodity) ?? "";
      this.node(o.price_id, "price", `${commodity} band`, [`$${o.low_usd}–$${o.high_usd} per ${str(o.unit) ?? "unit"}`]);
      this.prices.push({ id: o.price_id, commodity: commodity.toLowerCase(), frame: this.frame });
    }
    if (isCaseId(o.source_id) && "declared_source" in o) {
      this.node(o.source_id, "source", "source of funds", [str(o.declared_source) ?? ""]);
      const owner = isCaseId(o.entity_id) ? o.entity_id : ctx.entity;
      if (owner) this.edge(owner, o.source_id, "declares", "declares");
      for (const doc of list(o.documents)) {
        if (!isObj(doc) || !isCaseId(doc.id)) continue;
        const amount = num(doc.amount_usd);
        this.node(doc.id, "document", str(doc.kind) ?? doc.id, [
          amount === null ? "" : formatUsd(amount),
          str(doc.date) ?? "",
          str(doc.counterparty) ?? "",
        ].filter(Boolean));
        this.edge(o.source_id, doc.id, "supports", "supports");
      }
    }
    const docId = str(o.document_id);
    if (isCaseId(docId)) {
      const kind = KIND_BY_PREFIX[idPrefix(docId)] ?? "document";
      const commodity = str(o.commodity);
      const unit = num(o.unit_price_usd);
      this.node(docId, kind, `${str(o.kind)?.replace(/_/g, " ") ?? kind}`, [
        commodity ?? "",
        unit === null ? "" : `$${unit} per ${str(o.unit) ?? "unit"}`,
        str(o.date) ?? "",
      ].filter(Boolean));
      if (commodity) this.commodityOf.set(docId, commodity.toLowerCase());
    }
  }

  private hops(hops: JsonValue[], transactionId: string | null): void {
    const ordered = hops
      .filter(isObj)
      .filter((h) => isCaseId(str(h.hop_id) ?? str(h.id)))
      .sort((a, b) => (num(a.sequence) ?? 0) - (num(b.sequence) ?? 0));
    let previous = isCaseId(transactionId) ? transactionId : null;
    if (previous) this.node(previous, "transaction");
    for (const h of ordered) {
      const id = (str(h.hop_id) ?? str(h.id)) as string;
      const amount = num(h.amount_usd);
      this.node(id, "hop", `hop ${num(h.sequence) ?? "?"}${amount === null ? "" : ` · ${formatUsd(amount)}`}`, [
        `${str(h.from_bank) ?? "?"} → ${str(h.to_bank) ?? "?"}`,
        `${str(h.party_name) ?? ""} (${str(h.party_country) ?? "?"})`,
        str(h.value_date) ?? "",
      ].filter(Boolean));
      if (previous) this.edge(previous, id, "hop", str(h.direction) ?? "");
      const party = str(h.party_id);
      if (isCaseId(party)) {
        this.node(party, "entity", str(h.party_name), [`country ${str(h.party_country) ?? "?"}`]);
        this.edge(id, party, "beneficiary", "to");
      }
      previous = id;
    }
  }

  /** Relations that need the whole picture: watchlist hits to the screened entity, and market
   * price bands to the invoices of that commodity. */
  finish(): void {
    for (const hit of this.watchHits) {
      const entity = this.names.get(normName(hit.query));
      if (entity) {
        this.frame = hit.frame;
        this.edge(entity, hit.entry, "screened", "name hit");
      }
    }
    for (const price of this.prices) {
      for (const [doc, commodity] of this.commodityOf) {
        if (commodity === price.commodity && idPrefix(doc) === "INV") {
          this.frame = Math.max(price.frame, this.nodes.get(doc)?.firstFrame ?? 0);
          this.edge(doc, price.id, "priced", "market band");
        }
      }
    }
  }
}

/** The IDs an alert makes permanently resident: the alert, its subject, accounts and
 * triggering transactions (state_manager.OSState.alert_ids). */
export function alertIds(alert: JsonValue): Set<string> {
  const ids = new Set<string>();
  if (!isObj(alert)) return ids;
  if (isCaseId(alert.alert_id)) ids.add(alert.alert_id);
  if (isObj(alert.subject) && isCaseId(alert.subject.entity_id)) ids.add(alert.subject.entity_id);
  for (const a of list(alert.account_ids)) if (isCaseId(a)) ids.add(a);
  for (const t of list(alert.transactions)) if (isObj(t) && isCaseId(t.id)) ids.add(t.id);
  return ids;
}

export interface ResidentSets {
  disk: Set<string>;
  ram: Set<string>;
}

export function residentSets(context: ContextView, alert: Set<string>): ResidentSets {
  const disk = new Set<string>();
  for (const note of context.disk) for (const id of note.ids) disk.add(id);
  const ram = new Set<string>(alert);
  for (const page of context.ram) for (const id of page.ids) ram.add(id);
  return { disk, ram };
}

export function residency(id: string, sets: ResidentSets): Residency {
  if (sets.disk.has(id)) return "disk";
  if (sets.ram.has(id)) return "ram";
  return "evicted";
}

/**
 * The evidence graph as of `frames[cursor]`: records revealed by results of frames 0..cursor,
 * residency from that frame's context. A frame whose context is empty (an error before any
 * episode state) keeps the residency of the latest frame that has one.
 */
export function buildEvidenceGraph(frames: Frame[], cursor: number): EvidenceGraph {
  const last = Math.min(cursor, frames.length - 1);
  if (last < 0) return { nodes: [], edges: [] };
  const builder = new GraphBuilder();
  for (let i = 0; i <= last; i++) {
    const frame = frames[i];
    if (frame === undefined) continue;
    builder.frame = i;
    builder.visit(frame.observation.result, { entity: null, account: null });
  }
  builder.finish();
  const alert = alertIds(frames[0]?.observation.result ?? null);
  let contextFrame = frames[last];
  for (let i = last; i >= 0 && contextFrame; i--) {
    const f = frames[i];
    if (f && (f.observation.context.ram.length > 0 || f.observation.context.disk.length > 0)) {
      contextFrame = f;
      break;
    }
  }
  const sets = residentSets(contextFrame?.observation.context ?? emptyContext(), alert);
  const nodes = [...builder.nodes.values()].map((n) => ({
    ...n,
    state: residency(n.id, sets),
    fresh: n.firstFrame === last && last > 0,
  }));
  const stateOf = new Map(nodes.map((n) => [n.id, n.state]));
  const edges: EvidenceEdge[] = [];
  for (const e of builder.edges.values()) {
    if (!stateOf.has(e.source) || !stateOf.has(e.target)) continue;
    let state: Residency;
    if (e.recordId) state = residency(e.recordId, sets);
    else state = stateOf.get(e.source) === "evicted" || stateOf.get(e.target) === "evicted" ? "evicted" : "ram";
    edges.push({ ...e, state });
  }
  return { nodes, edges };
}

export function emptyContext(): ContextView {
  return { kernel: [], ram: [], disk: [], jobs: [], ram_capacity: 0, kernel_capacity: 0 };
}

export function countByState(graph: EvidenceGraph): Record<Residency, number> {
  const counts: Record<Residency, number> = { disk: 0, ram: 0, evicted: 0 };
  for (const n of graph.nodes) counts[n.state] += 1;
  return counts;
}
