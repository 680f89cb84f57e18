/**
 * Reading `memex-trace/1` files (see traces.py): a header line, one step line per observation
 * (starting with the reset observation), and an optional footer with the terminal score and,
 * when the writer had it, the case's ground truth.
 */
import { PayloadError, normaliseAction, normaliseObservation } from "./frames";
import type { Frame, GroundTruth, TerminalScore } from "./types";

export const TRACE_FORMAT = "memex-trace/1";

export interface TraceHeader {
  format: string;
  env: string;
  policy: string;
  seed: number | null;
  difficulty: string | null;
  case: string | null;
  reset: Record<string, unknown>;
}

export interface TraceFooter {
  episode_return: number;
  outcome: string;
  terminal: TerminalScore | null;
  truth: GroundTruth | null;
}

export interface Trace<F = Frame> {
  header: TraceHeader;
  frames: F[];
  footer: TraceFooter | null;
}

/** Reads one step line of a trace into a frame (`index`: its position); throws `PayloadError`
 * for a line whose observation lacks what the panels read. */
export type StepReader<F> = (entry: Record<string, unknown>, where: string, index: number) => F;

/** The AML environment's step lines. */
export const readMemexStep: StepReader<Frame> = (entry, where, index) => {
  const action = normaliseAction(entry.action, where);
  const observation = normaliseObservation(entry.observation, `${where}: observation`);
  return { index, action, actor: action ? "trace" : "reset", observation };
};

export class TraceError extends Error {
  override name = "TraceError";
}

function parseLine(line: string, lineNo: number): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    throw new TraceError(`line ${lineNo}: not valid JSON (${(err as Error).message})`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TraceError(`line ${lineNo}: expected a JSON object`);
  }
  return value as Record<string, unknown>;
}

/** Parse the text of an AML trace file; throws `TraceError` naming the offending line. */
export function parseTrace(text: string): Trace {
  return parseTraceWith(text, "memex", readMemexStep);
}

/** Parse the text of a trace of environment `env` (the header's `env`) with that environment's
 * step reader; throws `TraceError` naming the offending line, or the environment the trace is
 * of when it is another's. The first step must be the reset observation (no action). */
export function parseTraceWith<F>(text: string, env: string, readStep: StepReader<F>): Trace<F> {
  const lines = text
    .split(/\r?\n/)
    .map((line, i) => ({ line: line.trim(), no: i + 1 }))
    .filter((x) => x.line !== "");
  const first = lines[0];
  if (first === undefined) throw new TraceError("the file is empty");
  const head = parseLine(first.line, first.no);
  if (head.type !== "header" || head.format !== TRACE_FORMAT) {
    throw new TraceError(`not a ${TRACE_FORMAT} trace: the first line must be its header`);
  }
  const header: TraceHeader = {
    format: TRACE_FORMAT,
    env: String(head.env ?? "memex"),
    policy: String(head.policy ?? "unknown"),
    seed: typeof head.seed === "number" ? head.seed : null,
    difficulty: typeof head.difficulty === "string" ? head.difficulty : null,
    case: typeof head.case === "string" ? head.case : null,
    reset: (typeof head.reset === "object" && head.reset !== null ? head.reset : {}) as Record<
      string,
      unknown
    >,
  };
  if (header.env !== env) {
    throw new TraceError(`this is a trace of the ${header.env} environment; open it in that environment's Glass Box (this one shows ${env})`);
  }
  const frames: F[] = [];
  let footer: TraceFooter | null = null;
  for (const { line, no } of lines.slice(1)) {
    const entry = parseLine(line, no);
    if (footer !== null) throw new TraceError(`line ${no}: content after the footer`);
    if (entry.type === "step") {
      if (frames.length === 0 && entry.action !== null && entry.action !== undefined) {
        throw new TraceError("the first step must be the reset observation (no action)");
      }
      try {
        frames.push(readStep(entry, `line ${no}`, frames.length));
      } catch (err) {
        if (err instanceof PayloadError) throw new TraceError(err.message);
        throw err;
      }
    } else if (entry.type === "footer") {
      footer = {
        episode_return: Number(entry.episode_return ?? 0),
        outcome: String(entry.outcome ?? ""),
        terminal: (entry.terminal ?? null) as TerminalScore | null,
        truth: (entry.truth ?? null) as GroundTruth | null,
      };
    } else {
      throw new TraceError(`line ${no}: unknown line type ${JSON.stringify(entry.type)}`);
    }
  }
  if (frames.length === 0) throw new TraceError("the trace has no steps");
  return { header, frames, footer };
}
