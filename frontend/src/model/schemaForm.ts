/**
 * The manual-step form, derived from a tool's parameter schema as `GET /schema` publishes it
 * (server/tools.py `ToolSpec.json_schema`): one field per parameter, its input kind from the
 * JSON Schema type, and conversion of the typed text back into tool arguments. The server
 * remains the validator; this only catches what a form can (missing required values, numbers
 * that are not numbers, JSON that does not parse) before a step is spent.
 */
import type { JsonObject, JsonSchema, JsonValue } from "./types";

export type FieldKind = "text" | "textarea" | "integer" | "number" | "enum" | "list" | "json" | "boolean";

export interface FormField {
  name: string;
  kind: FieldKind;
  required: boolean;
  description: string;
  options: string[];
  placeholder: string;
  /** The record prefix the field expects (ENT, ACC, TXN, INV...), from its description. */
  idPrefix: string | null;
}

const LONG_TEXT = /^(note|narrative|reason)$/;

/** Drop the `{"type": "null"}` branch of an optional parameter. */
export function unwrapNullable(schema: JsonSchema): { schema: JsonSchema; nullable: boolean } {
  if (schema.anyOf) {
    const rest = schema.anyOf.filter((s) => s.type !== "null");
    if (rest.length === 1 && rest[0]) {
      return { schema: { ...rest[0], description: schema.description, default: schema.default }, nullable: true };
    }
  }
  return { schema, nullable: false };
}

function exampleOf(schema: JsonSchema): JsonValue {
  if (schema.enum && schema.enum.length > 0) return schema.enum[0] ?? "";
  switch (schema.type) {
    case "object": {
      const out: JsonObject = {};
      for (const [k, v] of Object.entries(schema.properties ?? {})) out[k] = exampleOf(v);
      return out;
    }
    case "array":
      return schema.items ? [exampleOf(schema.items)] : [];
    case "integer":
    case "number":
      return 0;
    case "boolean":
      return false;
    default:
      return "";
  }
}

export function fieldsFor(parameters: JsonSchema): FormField[] {
  const required = new Set(parameters.required ?? []);
  return Object.entries(parameters.properties ?? {}).map(([name, raw]) => {
    const { schema } = unwrapNullable(raw);
    const description = raw.description ?? schema.description ?? "";
    const prefix = /\(([A-Z]{2,4})-\.\.\.\)/.exec(description)?.[1] ?? null;
    let kind: FieldKind = "text";
    let options: string[] = [];
    let placeholder = raw.default !== undefined && raw.default !== null ? `default ${JSON.stringify(raw.default)}` : "";
    if (schema.enum) {
      kind = "enum";
      options = schema.enum.map(String);
    } else if (schema.type === "integer") kind = "integer";
    else if (schema.type === "number") kind = "number";
    else if (schema.type === "boolean") kind = "boolean";
    else if (schema.type === "array" && schema.items?.type === "object") {
      kind = "json";
      placeholder = JSON.stringify([exampleOf(schema.items)]);
    } else if (schema.type === "object") {
      kind = "json"; // e.g. the committee's weights: {ticker: fraction}
      placeholder = placeholder || "{}";
    } else if (schema.type === "array") {
      kind = "list";
      placeholder = placeholder || "comma- or space-separated";
    } else if (LONG_TEXT.test(name)) kind = "textarea";
    return { name, kind, required: required.has(name), description, options, placeholder, idPrefix: prefix };
  });
}

export type ArgumentsResult =
  | { ok: true; arguments: JsonObject }
  | { ok: false; errors: Record<string, string> };

/** Turn the form's text values into tool arguments. Empty optional fields are left out so the
 * server applies its defaults; empty required lists are sent as `[]`. */
export function buildArguments(fields: FormField[], values: Record<string, string>): ArgumentsResult {
  const args: JsonObject = {};
  const errors: Record<string, string> = {};
  for (const field of fields) {
    const text = (values[field.name] ?? "").trim();
    if (text === "") {
      if (field.kind === "list" && field.required) args[field.name] = [];
      else if (field.required) errors[field.name] = "required";
      continue;
    }
    switch (field.kind) {
      case "integer":
      case "number": {
        const n = Number(text);
        if (!Number.isFinite(n) || (field.kind === "integer" && !Number.isInteger(n))) {
          errors[field.name] = `not ${field.kind === "integer" ? "an integer" : "a number"}`;
        } else args[field.name] = n;
        break;
      }
      case "boolean":
        args[field.name] = text === "true";
        break;
      case "list":
        args[field.name] = text.split(/[\s,]+/).filter(Boolean);
        break;
      case "json":
        try {
          args[field.name] = JSON.parse(text) as JsonValue;
        } catch (err) {
          errors[field.name] = `invalid JSON: ${(err as Error).message}`;
        }
        break;
      case "enum":
        if (!field.options.includes(text)) errors[field.name] = `must be one of ${field.options.join(", ")}`;
        else args[field.name] = text;
        break;
      default:
        args[field.name] = text;
    }
  }
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, arguments: args };
}
