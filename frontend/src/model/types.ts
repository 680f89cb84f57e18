/**
 * The wire contract as the Glass Box reads it: the Memex observation (models.MemexObservation),
 * the HTTP episode envelope (envkit/http_episodes.py), the action schema (GET /schema) and the
 * `memex-trace/1` JSONL format (envkit/traces.py). Nothing here is filled in by the UI itself.
 */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export interface ToolError {
  code: string;
  message: string;
}

export interface PageView {
  page_id: number;
  step: number;
  tool: string;
  arguments: JsonObject;
  content: JsonValue;
  ids: string[];
}

export interface NoteView {
  note_id: number;
  step: number;
  text: string;
  ids: string[];
}

export interface SectionView {
  section_id: string;
  title: string;
  text: string;
}

export type JobStatus = "pending" | "ready" | "retrieved";

export interface JobView {
  job_id: string;
  /** A wire trace's transaction; null for a request for information. */
  transaction_id: string | null;
  /** A request for information's customer and topic. */
  entity_id?: string | null;
  topic?: string | null;
  requested_step: number;
  ready_at_step: number;
  status: JobStatus;
}

export interface ContextView {
  kernel: SectionView[];
  ram: PageView[];
  disk: NoteView[];
  jobs: JobView[];
  ram_capacity: number;
  kernel_capacity: number;
}

/** `metadata.terminal` of the final observation. */
export interface TerminalScore {
  outcome: string;
  score: number;
  components: Record<string, number>;
  measures: Record<string, number>;
  range: [number, number];
}

export interface ObservationMetadata {
  terminal?: TerminalScore;
  episode_return?: number;
  [key: string]: unknown;
}

/** One observation with its reward and done flag folded in (as a trace stores it). */
export interface Observation {
  tool: string | null;
  result: JsonValue;
  error: ToolError | null;
  events: string[];
  context: ContextView;
  step: number;
  step_budget: number;
  reward_breakdown: Record<string, number>;
  reward: number | null;
  done: boolean;
  metadata: ObservationMetadata;
}

export interface Action {
  tool: string;
  arguments: JsonObject;
}

/** Who chose the action of a frame. */
export type Actor = "reset" | "heuristic" | "random" | "manual" | "trace";

/** One point of an episode's timeline: the action taken (null for the reset) and what came back. */
export interface Frame {
  index: number;
  action: Action | null;
  actor: Actor;
  observation: Observation;
}

/** `POST /reset`, `POST /step` and `POST /episodes/{id}/agent-step` responses, for any
 * environment (each environment's frame reader validates `observation`). An agent step also
 * carries the action the built-in agent chose and, when that agent exposes one, its `insight`
 * (what it believes, e.g. the committee heuristic's regime belief). */
export interface Envelope {
  episode_id: string;
  observation: JsonObject;
  reward: number | null;
  done: boolean;
  metadata: ObservationMetadata | null;
  action?: JsonObject;
  policy?: string;
  insight?: JsonObject | null;
}

export interface RedFlag {
  code: string;
  evidence_ids: string[];
}

/** Ground truth of a finished case (GET /episodes/{id}/truth or a trace footer). */
export interface GroundTruth {
  kind: string;
  variant: string | null;
  suspicious: boolean;
  decision: string;
  typology: string | null;
  subject_ids: string[];
  red_flags: RedFlag[];
  justifying_sections: string[];
  ubo_id: string | null;
  /** The case plan, for an adversary-made case (served with the truth, after the end). */
  plan?: Record<string, JsonValue>;
}

export interface ToolDeclaration {
  name: string;
  category: string;
  description: string;
  parameters: JsonSchema;
}

/** The subset of JSON Schema the tool declarations use (server/tools.py ToolSpec.json_schema). */
export interface JsonSchema {
  type?: string;
  description?: string;
  enum?: JsonValue[];
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  default?: JsonValue;
  minItems?: number;
  maxItems?: number;
  additionalProperties?: boolean;
}

export interface ResetOptions {
  seed?: number;
  /** One of the difficulties the server reports in /info. */
  difficulty: string;
  kind?: string;
  case?: string;
  ram_pages?: number;
  kernel_capacity?: number;
  /** "adversarial/INDEX": an adversary-made case from the server's adversarial split. */
  plan?: string;
}

export interface ServerInfo {
  env: string;
  reveal_truth_after_done: boolean;
  agent_policies: string[];
  glass_box: boolean;
  /** Case kinds the generator accepts, by class, and the fixed cases (server/app.py /info). */
  kinds?: { suspicious: string[]; benign: string[] };
  difficulties?: string[];
  fixed_cases?: string[];
  /** Entries of the adversarial split, opened by index (their plans stay on the server). */
  adversarial_cases?: number;
  [key: string]: unknown;
}
