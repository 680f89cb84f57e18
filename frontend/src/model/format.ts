/** Display helpers shared by the panels. */
import type { JsonValue } from "./types";

/** A one-line summary of tool arguments, e.g. `entity_id=ENT-2478E7, limit=100`. */
export function summariseArguments(args: Record<string, JsonValue> | undefined, max = 90): string {
  if (!args) return "";
  const parts = Object.entries(args).map(([k, v]) => {
    let text: string;
    if (typeof v === "string") text = v.length > 40 ? `${v.slice(0, 37)}…` : v;
    else if (Array.isArray(v)) text = `[${v.length}]`;
    else if (v !== null && typeof v === "object") text = "{…}";
    else text = String(v);
    return `${k}=${text}`;
  });
  const line = parts.join(", ");
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export function formatReward(r: number | null | undefined): string {
  if (r === null || r === undefined) return "—";
  const sign = r > 0 ? "+" : r < 0 ? "−" : "";
  return `${sign}${Math.abs(r).toFixed(3)}`;
}

export function humanise(key: string): string {
  return key.replace(/_/g, " ");
}

export function formatFigure(key: string, value: JsonValue): string {
  if (typeof value === "number") {
    if (/usd/.test(key)) return `$${value.toLocaleString("en-US", { maximumFractionDigits: 2 })}`;
    return Number.isInteger(value) ? String(value) : value.toFixed(2);
  }
  return typeof value === "string" ? value : JSON.stringify(value);
}

export function prettyJson(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? "null";
}
