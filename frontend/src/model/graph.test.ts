import { describe, expect, it } from "vitest";
import { ALERT, ALERT_IDS, context, frame, page } from "../test/factories";
import { alertIds, buildEvidenceGraph, countByState, isCaseId } from "./graph";
import type { Frame, JsonObject } from "./types";

const resetFrame = frame(0, { result: ALERT, context: context({ ram: [page(1, "review_alert", ALERT, [...ALERT_IDS, "ACC-00000B", "ENT-00000B"])] }) });

function nodeIds(frames: Frame[], cursor = frames.length - 1): string[] {
  return buildEvidenceGraph(frames, cursor).nodes.map((n) => n.id).sort();
}

describe("evidence graph from tool results", () => {
  it("test_alert_reveals_subject_accounts_and_transactions", () => {
    const g = buildEvidenceGraph([resetFrame], 0);
    expect(nodeIds([resetFrame])).toEqual(
      ["ACC-00000A", "ACC-00000B", "ALR-000001", "ENT-00000A", "ENT-00000B", "TXN-000001", "TXN-000002"],
    );
    const rel = (s: string, t: string) => g.edges.find((e) => e.source === s && e.target === t)?.relation;
    expect(rel("ENT-00000A", "ACC-00000A")).toBe("owns");
    expect(rel("ACC-00000A", "TXN-000002")).toBe("debit");
    expect(rel("TXN-000002", "ACC-00000B")).toBe("credit");
    expect(rel("ENT-00000B", "ACC-00000B")).toBe("owns");
    expect(rel("ENT-00000A", "TXN-000001")).toBe("conducted");
    expect(g.nodes.find((n) => n.id === "ENT-00000A")?.kind).toBe("person");
    expect(g.nodes.find((n) => n.id === "ENT-00000B")?.label).toBe("Brompton Ltd");
    expect(g.nodes.find((n) => n.id === "TXN-000001")?.label).toBe("$9.8k cash");
  });

  it("test_ledger_lines_are_oriented_by_direction_relative_to_the_queried_account", () => {
    const ledger = {
      account_id: "ACC-00000A",
      owner: { entity_id: "ENT-00000A", name: "Samuel Ferreira", kind: "person", country: "US" },
      bank: "First Meridian Bank",
      lines: [
        { id: "TXN-0000A1", amount_usd: 5000, channel: "wire", direction: "in", counterparty: "Acme Payroll",
          counterparty_account: "ACC-0000C1", counterparty_id: "ENT-0000C1" },
        { id: "TXN-0000A2", amount_usd: 250, channel: "card", direction: "out", counterparty: "Grocer",
          counterparty_account: "ACC-0000C2", counterparty_id: "ENT-0000C2" },
      ],
    };
    const frames = [resetFrame, frame(1, { result: ledger }, "query_transactions")];
    const g = buildEvidenceGraph(frames, 1);
    const has = (s: string, t: string) => g.edges.some((e) => e.source === s && e.target === t);
    expect(has("ACC-0000C1", "TXN-0000A1") && has("TXN-0000A1", "ACC-00000A")).toBe(true);
    expect(has("ACC-00000A", "TXN-0000A2") && has("TXN-0000A2", "ACC-0000C2")).toBe(true);
    expect(has("ENT-0000C1", "ACC-0000C1")).toBe(true);
    expect(g.nodes.find((n) => n.id === "ENT-0000C1")?.label).toBe("Acme Payroll");
  });

  it("test_graph_grows_with_the_cursor_and_shrinks_when_scrubbing_back", () => {
    const profile = {
      entity_id: "ENT-00000A", name: "Samuel Ferreira", kind: "person", country: "US", customer: true,
      accounts: [{ account_id: "ACC-00000C", bank: "First Meridian Bank", country: "US", kind: "savings", opened: "2019-01-01" }],
    };
    const frames = [resetFrame, frame(1, { result: profile }, "get_customer_profile")];
    expect(nodeIds(frames, 0)).not.toContain("ACC-00000C");
    expect(nodeIds(frames, 1)).toContain("ACC-00000C");
    const g = buildEvidenceGraph(frames, 1);
    expect(g.edges.some((e) => e.source === "ENT-00000A" && e.target === "ACC-00000C" && e.relation === "owns")).toBe(true);
    expect(g.nodes.find((n) => n.id === "ACC-00000C")?.fresh).toBe(true);
    expect(g.nodes.find((n) => n.id === "ENT-00000A")?.fresh).toBe(false);
  });

  it("test_ownership_links_are_edges_named_by_their_record_id", () => {
    const ownership = {
      entity: { entity_id: "ENT-00000B", name: "Brompton Ltd", kind: "company", country: "VG" },
      owners: [{ link_id: "OWN-000001", layer: 1, company: { entity_id: "ENT-00000B", name: "Brompton Ltd", kind: "company", country: "VG" },
        owner: { entity_id: "ENT-00000D", name: "Nominee Services", kind: "company", country: "SC" }, percent: 100, nominee: true }],
      directors: [{ entity_id: "ENT-00000E", name: "Jane Roe", kind: "person", country: "SC" }],
      holdings: [{ link_id: "OWN-000002", company: { entity_id: "ENT-00000F", name: "Sub Co", kind: "company", country: "US" }, percent: 60, nominee: false }],
    };
    const frames = [resetFrame, frame(1, { result: ownership }, "query_beneficial_ownership")];
    const g = buildEvidenceGraph(frames, 1);
    const link = g.edges.find((e) => e.id === "OWN-000001");
    expect(link).toMatchObject({ source: "ENT-00000D", target: "ENT-00000B", relation: "nominee", label: "100% nominee", recordId: "OWN-000001" });
    expect(g.edges.find((e) => e.id === "OWN-000002")).toMatchObject({ source: "ENT-00000B", target: "ENT-00000F", label: "60%" });
    expect(g.edges.some((e) => e.source === "ENT-00000E" && e.target === "ENT-00000B" && e.relation === "director")).toBe(true);
  });

  it("test_wire_trace_hops_chain_from_the_traced_transaction", () => {
    const trace = {
      job_id: "JOB-1", transaction_id: "TXN-000002",
      hops: [
        { id: "HOP-000002", hop_id: "HOP-000002", sequence: 2, direction: "onward", from_bank: "B", to_bank: "C", party_name: "Far Away SA", party_id: "ENT-000010", party_country: "SC", amount_usd: 9000 },
        { id: "HOP-000001", hop_id: "HOP-000001", sequence: 1, direction: "onward", from_bank: "A", to_bank: "B", party_name: "Middle Ltd", party_id: null, party_country: "AE", amount_usd: 9500 },
      ],
    };
    const frames = [resetFrame, frame(1, { result: trace }, "retrieve_async_result")];
    const g = buildEvidenceGraph(frames, 1);
    const has = (s: string, t: string) => g.edges.some((e) => e.source === s && e.target === t);
    expect(has("TXN-000002", "HOP-000001")).toBe(true);
    expect(has("HOP-000001", "HOP-000002")).toBe(true);
    expect(has("HOP-000002", "ENT-000010")).toBe(true);
    expect(g.nodes.find((n) => n.id === "HOP-000001")?.label).toBe("hop 1 · $9.5k");
  });

  it("test_watchlist_hits_attach_to_the_screened_entity_by_name", () => {
    const screening = { query: "Samuel Ferreira", hits: [
      { entry_id: "WL-000001", list: "adverse_media", name: "Samuel Ferreira", country: "US", similarity: 1.0 },
      { entry_id: "WL-000002", list: "sanctions", name: "Samuel Pereira", country: "VE", similarity: 0.82 },
    ] };
    const frames = [resetFrame, frame(1, { result: screening }, "check_watchlist")];
    const g = buildEvidenceGraph(frames, 1);
    expect(g.edges.filter((e) => e.relation === "screened").map((e) => [e.source, e.target])).toEqual([
      ["ENT-00000A", "WL-000001"],
      ["ENT-00000A", "WL-000002"],
    ]);
  });

  it("test_trade_documents_link_exporter_invoice_importer_and_market_band", () => {
    const recon: JsonObject = {
      shipment_ref: "SHP-1",
      exporter: { entity_id: "ENT-0000E1", name: "Exporter SARL", kind: "company", country: "CM" },
      importer: { entity_id: "ENT-00000A", name: "Samuel Ferreira", kind: "person", country: "US" },
      documents: [
        { id: "INV-000001", document_id: "INV-000001", kind: "invoice", commodity: "cocoa beans", unit_price_usd: 9000, unit: "t" },
        { id: "BOL-000001", document_id: "BOL-000001", kind: "bill_of_lading", commodity: "cocoa beans" },
      ],
      payments: [{ id: "TXN-000002", amount_usd: 9700, channel: "wire", from_account: "ACC-00000A", to_account: "ACC-00000B", reference: "INV-000001" }],
    };
    const price = { price_id: "MKT-000001", commodity: "cocoa beans", unit: "t", low_usd: 2000, high_usd: 3000 };
    const frames = [resetFrame, frame(1, { result: recon }, "verify_customs_invoice"), frame(2, { result: price }, "check_market_price")];
    const g = buildEvidenceGraph(frames, 2);
    const rel = (s: string, t: string) => g.edges.find((e) => e.source === s && e.target === t)?.relation;
    expect(rel("ENT-0000E1", "INV-000001")).toBe("exporter");
    expect(rel("INV-000001", "ENT-00000A")).toBe("importer");
    expect(rel("BOL-000001", "INV-000001")).toBe("shipment");
    expect(rel("TXN-000002", "INV-000001")).toBe("pays");
    expect(rel("INV-000001", "MKT-000001")).toBe("priced");
    expect(buildEvidenceGraph(frames, 1).nodes.some((n) => n.id === "MKT-000001")).toBe(false);
  });
});

describe("residency of graph nodes", () => {
  const profile = {
    entity_id: "ENT-00000B", name: "Brompton Ltd", kind: "company", country: "VG", customer: false,
    accounts: [{ account_id: "ACC-00000B", bank: "Tortola Bank", country: "VG", kind: "business", opened: "2023-01-01" }],
  };
  const writeNote = { note_id: 1, ids_on_disk: ["ENT-00000B"], notes_on_disk: 1 };
  const search = { query: "shell", results: [] };
  const frames: Frame[] = [
    resetFrame,
    frame(1, { result: profile, context: context({ ram: [page(1, "review_alert", ALERT, ALERT_IDS), page(2, "get_customer_profile", profile, ["ENT-00000B", "ACC-00000B"])] }) }, "get_customer_profile"),
    frame(2, { result: writeNote, context: context({
      ram: [page(2, "get_customer_profile", profile, ["ENT-00000B", "ACC-00000B"]), page(3, "write_to_case_file", writeNote, ["ENT-00000B"])],
      disk: [{ note_id: 1, step: 2, text: "shell", ids: ["ENT-00000B"] }] }) }, "write_to_case_file"),
    frame(3, { result: search, context: context({
      ram: [page(3, "write_to_case_file", writeNote, ["ENT-00000B"]), page(4, "search_compliance_manual", search, [])],
      disk: [{ note_id: 1, step: 2, text: "shell", ids: ["ENT-00000B"] }] }) }, "search_compliance_manual"),
  ];

  it("test_disk_beats_ram_and_alert_ids_stay_resident", () => {
    const g = buildEvidenceGraph(frames, 3);
    const state = (id: string) => g.nodes.find((n) => n.id === id)?.state;
    expect(state("ENT-00000B")).toBe("disk");
    expect(state("ACC-00000A")).toBe("ram"); // alert account: always resident
    expect(state("TXN-000001")).toBe("ram");
    expect(state("ACC-00000B")).toBe("evicted"); // profile page left RAM, never written down
  });

  it("test_the_same_node_changes_state_as_the_cursor_moves", () => {
    const at = (cursor: number) => buildEvidenceGraph(frames, cursor).nodes.find((n) => n.id === "ACC-00000B")?.state;
    expect([at(1), at(2), at(3)]).toEqual(["ram", "ram", "evicted"]);
    expect(countByState(buildEvidenceGraph(frames, 3))).toEqual({ disk: 1, ram: 5, evicted: 1 });
  });

  it("test_edges_touching_evicted_nodes_are_evicted", () => {
    const g = buildEvidenceGraph(frames, 3);
    expect(g.edges.find((e) => e.source === "ENT-00000B" && e.target === "ACC-00000B")?.state).toBe("evicted");
    expect(g.edges.find((e) => e.source === "ENT-00000A" && e.target === "ACC-00000A")?.state).toBe("ram");
  });

  it("test_alert_ids_match_the_server_definition", () => {
    expect([...alertIds(ALERT)].sort()).toEqual([...ALERT_IDS].sort());
    expect(isCaseId("ENT-00000A")).toBe(true);
    expect(isCaseId("JOB-1")).toBe(false);
    expect(isCaseId("ENT-00000a")).toBe(false);
  });
});
