import { describe, expect, it } from "vitest";
import { buildArguments, fieldsFor } from "./schemaForm";
import type { JsonSchema } from "./types";

// Shapes copied from GET /schema (server/tools.py ToolSpec.json_schema).
const queryTransactions: JsonSchema = {
  type: "object", additionalProperties: false, required: ["account_id"],
  properties: {
    account_id: { type: "string", description: "ID of the account (ACC-...)." },
    start_date: { anyOf: [{ type: "string" }, { type: "null" }], default: null, description: "Earliest date to include, YYYY-MM-DD." },
    channel: { anyOf: [{ enum: ["cash", "wire", "ach", "card", "cheque"], type: "string" }, { type: "null" }], default: null, description: "Only this channel." },
    min_amount_usd: { anyOf: [{ type: "number" }, { type: "null" }], default: null, description: "Minimum." },
    limit: { type: "integer", default: 30, description: "Maximum number of lines to return (1-100)." },
  },
};
const fileSar: JsonSchema = {
  type: "object", required: ["subjects", "typology", "findings", "cited_sections", "narrative"],
  properties: {
    subjects: { type: "array", items: { type: "string" }, description: "Entity IDs." },
    typology: { type: "string", enum: ["structuring", "layering", "trade_based"] },
    findings: { type: "array", items: { type: "object", properties: { code: { type: "string", enum: ["CASH_BELOW_CTR_THRESHOLD"] }, evidence_ids: { type: "array", items: { type: "string" } } } } },
    cited_sections: { type: "array", items: { type: "string" } },
    narrative: { type: "string" },
  },
};

// The committee's `allocate` (committee/tools.py): weights are an object of fractions.
const allocate: JsonSchema = {
  type: "object", additionalProperties: false, required: ["weights"],
  properties: {
    weights: { type: "object", description: "Target weight per ticker, e.g. {\"NOVA\": 0.2}." },
    reason: { type: "string", default: "", description: "The rationale." },
  },
};

describe("manual-step form from the tool schema", () => {
  it("test_object_parameters_are_json_fields", () => {
    const fields = fieldsFor(allocate);
    expect(fields.map((f) => [f.name, f.kind, f.required])).toEqual([["weights", "json", true], ["reason", "textarea", false]]);
    expect(buildArguments(fields, { weights: '{"NOVA": 0.2, "GOVT": 0.3}' }))
      .toEqual({ ok: true, arguments: { weights: { NOVA: 0.2, GOVT: 0.3 } } });
  });

  it("test_field_kinds_follow_the_json_schema", () => {
    const fields = fieldsFor(queryTransactions);
    expect(fields.map((f) => [f.name, f.kind, f.required])).toEqual([
      ["account_id", "text", true], ["start_date", "text", false], ["channel", "enum", false],
      ["min_amount_usd", "number", false], ["limit", "integer", false],
    ]);
    expect(fields[0]?.idPrefix).toBe("ACC");
    expect(fields[2]?.options).toEqual(["cash", "wire", "ach", "card", "cheque"]);
    expect(fields[4]?.placeholder).toBe("default 30");
    const sar = fieldsFor(fileSar);
    expect(sar.map((f) => f.kind)).toEqual(["list", "enum", "json", "list", "textarea"]);
    expect(JSON.parse(sar[2]?.placeholder ?? "")).toEqual([{ code: "CASH_BELOW_CTR_THRESHOLD", evidence_ids: [""] }]);
  });

  it("test_empty_optional_fields_are_left_to_server_defaults", () => {
    const result = buildArguments(fieldsFor(queryTransactions), { account_id: " ACC-00000A ", channel: "cash", limit: "" });
    expect(result).toEqual({ ok: true, arguments: { account_id: "ACC-00000A", channel: "cash" } });
  });

  it("test_values_are_converted_to_the_declared_types", () => {
    const result = buildArguments(fieldsFor(fileSar), {
      subjects: "ENT-000001, ENT-000002\nENT-000003", typology: "layering",
      findings: '[{"code":"CASH_BELOW_CTR_THRESHOLD","evidence_ids":["TXN-000001"]}]', cited_sections: "", narrative: "why",
    });
    expect(result).toEqual({ ok: true, arguments: {
      subjects: ["ENT-000001", "ENT-000002", "ENT-000003"], typology: "layering",
      findings: [{ code: "CASH_BELOW_CTR_THRESHOLD", evidence_ids: ["TXN-000001"] }], cited_sections: [], narrative: "why" } });
  });

  it("test_form_errors_name_each_bad_field", () => {
    const q = buildArguments(fieldsFor(queryTransactions), { min_amount_usd: "lots", limit: "2.5", channel: "pigeon" });
    expect(q).toEqual({ ok: false, errors: { account_id: "required", min_amount_usd: "not a number", limit: "not an integer", channel: "must be one of cash, wire, ach, card, cheque" } });
    const s = buildArguments(fieldsFor(fileSar), { typology: "layering", findings: "[{", narrative: "x" });
    expect(s.ok).toBe(false);
    if (!s.ok) expect(s.errors.findings).toMatch(/^invalid JSON/);
  });
});
