/**
 * Builders for unit tests: observations and frames shaped exactly like the server's (fields
 * the tests do not care about get their empty defaults). Test-only; the app never imports this.
 */
import type { ContextView, Frame, JsonObject, JsonValue, Observation, PageView } from "../model/types";

export function context(partial: Partial<ContextView> = {}): ContextView {
  return { kernel: [], ram: [], disk: [], jobs: [], ram_capacity: 2, kernel_capacity: 3, ...partial };
}

export function page(page_id: number, tool: string, content: JsonValue, ids: string[], step = page_id - 1): PageView {
  return { page_id, step, tool, arguments: {}, content, ids };
}

export function observation(partial: Partial<Observation> = {}): Observation {
  return {
    tool: null,
    result: null,
    error: null,
    events: [],
    context: context(),
    step: 0,
    step_budget: 40,
    reward_breakdown: {},
    reward: null,
    done: false,
    metadata: {},
    ...partial,
  };
}

export function frame(index: number, obs: Partial<Observation>, tool: string | null = obs.tool ?? null, args: JsonObject = {}): Frame {
  return {
    index,
    action: tool === null ? null : { tool, arguments: args },
    actor: tool === null ? "reset" : "heuristic",
    observation: observation({ step: index, tool, ...obs }),
  };
}

/** A structuring-shaped alert: one subject, one account, two cash deposits. */
export const ALERT: JsonObject = {
  alert_id: "ALR-000001",
  rule: { code: "TM-CASH-01", name: "Aggregate cash deposits", description: "..." },
  subject: { entity_id: "ENT-00000A", name: "Samuel Ferreira", kind: "person", country: "US" },
  account_ids: ["ACC-00000A"],
  transactions: [
    { id: "TXN-000001", timestamp: "2024-09-21T18:08", amount_usd: 9780, channel: "cash", from_account: null,
      from_party: "cash", from_party_id: null, to_account: "ACC-00000A", to_party: "Samuel Ferreira",
      to_party_id: "ENT-00000A", branch: "Branch 089", conducted_by: "ENT-00000A" },
    { id: "TXN-000002", timestamp: "2024-09-23T08:39", amount_usd: 9700, channel: "wire", from_account: "ACC-00000A",
      from_party: "Samuel Ferreira", from_party_id: "ENT-00000A", to_account: "ACC-00000B", to_party: "Brompton Ltd",
      to_party_id: "ENT-00000B" },
  ],
};

export const ALERT_IDS = ["ALR-000001", "ENT-00000A", "ACC-00000A", "TXN-000001", "TXN-000002"];
