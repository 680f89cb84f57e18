/**
 * Frames: the one shape the UI renders, built from either source — a live HTTP envelope or a
 * step line of a recorded trace. Validation is deliberately shallow but loud: a payload that
 * lacks the observation fields the panels read is rejected with a message naming the field.
 */
import type {
  Action,
  Actor,
  ContextView,
  Envelope,
  Frame,
  JsonObject,
  JsonValue,
  Observation,
  ObservationMetadata,
} from "./types";

export class PayloadError extends Error {
  override name = "PayloadError";
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `source[key]` as a list (absent: empty); anything else is a `PayloadError` naming it. */
export function arrayField<T>(source: Record<string, unknown>, key: string, where: string): T[] {
  const value = source[key];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new PayloadError(`${where}.${key} is not a list`);
  return value as T[];
}

function normaliseContext(raw: unknown, where: string): ContextView {
  if (!isObject(raw)) throw new PayloadError(`${where}.context is missing`);
  const ctx = `${where}.context`;
  return {
    kernel: arrayField(raw, "kernel", ctx),
    ram: arrayField(raw, "ram", ctx),
    disk: arrayField(raw, "disk", ctx),
    jobs: arrayField(raw, "jobs", ctx),
    ram_capacity: typeof raw.ram_capacity === "number" ? raw.ram_capacity : 2,
    kernel_capacity: typeof raw.kernel_capacity === "number" ? raw.kernel_capacity : 3,
  };
}

/** Validate an observation object and fold in reward/done/metadata given separately. */
export function normaliseObservation(
  raw: unknown,
  where: string,
  extra: { reward?: number | null; done?: boolean; metadata?: ObservationMetadata | null } = {},
): Observation {
  if (!isObject(raw)) throw new PayloadError(`${where} is not an observation object`);
  if (typeof raw.step !== "number") throw new PayloadError(`${where}.step is missing`);
  const error = raw.error;
  if (error !== null && error !== undefined && !isObject(error)) {
    throw new PayloadError(`${where}.error is not an object`);
  }
  const metadata = (isObject(raw.metadata) ? raw.metadata : {}) as ObservationMetadata;
  const reward = extra.reward !== undefined ? extra.reward : raw.reward;
  const done = extra.done !== undefined ? extra.done : raw.done;
  return {
    tool: typeof raw.tool === "string" ? raw.tool : null,
    result: (raw.result ?? null) as JsonValue,
    error: isObject(error)
      ? { code: String(error.code ?? "error"), message: String(error.message ?? "") }
      : null,
    events: arrayField<string>(raw, "events", where).map(String),
    context: normaliseContext(raw.context, where),
    step: raw.step,
    step_budget: typeof raw.step_budget === "number" ? raw.step_budget : 0,
    reward_breakdown: (isObject(raw.reward_breakdown) ? raw.reward_breakdown : {}) as Record<
      string,
      number
    >,
    reward: typeof reward === "number" ? reward : null,
    done: done === true,
    metadata: { ...metadata, ...(extra.metadata ?? {}) },
  };
}

export function normaliseAction(raw: unknown, where: string): Action | null {
  if (raw === null || raw === undefined) return null;
  if (!isObject(raw) || typeof raw.tool !== "string") {
    throw new PayloadError(`${where}.action has no tool name`);
  }
  return { tool: raw.tool, arguments: (isObject(raw.arguments) ? raw.arguments : {}) as JsonObject };
}

/** A frame from a server envelope (reset, step or agent-step response). */
export function frameFromEnvelope(
  envelope: Envelope,
  index: number,
  actor: Actor,
  action: Action | null,
): Frame {
  const observation = normaliseObservation(envelope.observation, "response.observation", {
    reward: envelope.reward,
    done: envelope.done,
    metadata: envelope.metadata,
  });
  return { index, action: normaliseAction(envelope.action, "response") ?? action, actor, observation };
}
