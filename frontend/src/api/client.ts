/**
 * The Glass Box's client of an environment server: the same HTTP episode protocol every client
 * uses (`POST /reset`, `POST /step`), plus the built-in agent's step, the post-episode truth
 * (AML) and the reference PM's NAV path (committee). Every non-2xx answer becomes an `ApiError`
 * carrying the server's own message.
 */
import type { Envelope, GroundTruth, JsonObject, ServerInfo, ToolDeclaration } from "../model/types";
import { authHeaders, currentToken } from "./auth";

export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: number,
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/** FastAPI's `detail` is a string or a list of `{loc, msg}`; render either as one line. */
export function describeDetail(body: unknown): string | null {
  if (typeof body !== "object" || body === null) return null;
  const detail = (body as { detail?: unknown }).detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail
      .map((d) => {
        if (typeof d !== "object" || d === null) return String(d);
        const { loc, msg } = d as { loc?: unknown; msg?: unknown };
        const where = Array.isArray(loc) ? loc.join(".") : "";
        return where ? `${where}: ${String(msg)}` : String(msg);
      })
      .join("; ");
  }
  if (typeof detail === "object" && detail !== null && typeof (detail as { message?: unknown }).message === "string") {
    return (detail as { message: string }).message; // a typed refusal: {code, message}
  }
  return detail === undefined ? null : JSON.stringify(detail);
}

/** `GET /reference` of the committee server (committee/server/reference.py). */
export interface ReferencePath {
  policy: string;
  task: string;
  seed: number;
  periods: number[];
  nav: number[];
  rewards: number[];
  score: number;
}

export class MemexApi {
  /** `token`: the server's bearer token (`MEMEX_API_TOKEN`), if it has one (see `./auth`). */
  constructor(
    private readonly baseUrl = "",
    private readonly token: string | null = currentToken(),
  ) {}

  private async request<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(this.baseUrl + path, {
        method,
        headers: { ...authHeaders(this.token), ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? null : JSON.stringify(body),
      });
    } catch (err) {
      throw new ApiError(0, path, `cannot reach the server (${(err as Error).message})`);
    }
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      if (response.ok) throw new ApiError(response.status, path, `invalid JSON from ${path}`);
    }
    if (!response.ok) {
      const message = describeDetail(parsed) ?? (text.slice(0, 300) || response.statusText);
      throw new ApiError(response.status, path, message);
    }
    return parsed as T;
  }

  health(): Promise<{ status: string }> {
    return this.request("GET", "/health");
  }

  info(): Promise<ServerInfo> {
    return this.request("GET", "/info");
  }

  /** The declared tools (AML: `action.tools`; committee: `action.actions`). */
  async tools(): Promise<ToolDeclaration[]> {
    const schema = await this.request<{ action?: { tools?: ToolDeclaration[]; actions?: ToolDeclaration[] } }>("GET", "/schema");
    const tools = schema.action?.tools ?? schema.action?.actions;
    if (!Array.isArray(tools)) throw new ApiError(200, "/schema", "the schema lists no tools (action.tools or action.actions)");
    return tools;
  }

  reset(options: object): Promise<Envelope> {
    return this.request("POST", "/reset", options);
  }

  step(episodeId: string, action: object): Promise<Envelope> {
    return this.request("POST", "/step", { episode_id: episodeId, action });
  }

  state(episodeId: string): Promise<JsonObject> {
    return this.request("GET", `/state?episode_id=${encodeURIComponent(episodeId)}`);
  }

  /** The committee's reference PM on a world (`GET /reference`): its NAV after each period. */
  reference(task: string, seed: number | null): Promise<ReferencePath> {
    const query = new URLSearchParams({ task, ...(seed === null ? {} : { seed: String(seed) }) });
    return this.request("GET", `/reference?${query.toString()}`);
  }

  agentStep(episodeId: string, policy: string): Promise<Envelope> {
    return this.request("POST", `/episodes/${encodeURIComponent(episodeId)}/agent-step`, { policy });
  }

  /** Free an HTTP episode's server slot (`DELETE /episodes/{id}`): fire-and-forget, and with
   * `keepalive` so it still goes out while the page unloads. */
  release(episodeId: string): void {
    void fetch(`${this.baseUrl}/episodes/${encodeURIComponent(episodeId)}`, {
      method: "DELETE",
      keepalive: true,
      ...(this.token ? { headers: authHeaders(this.token) } : {}),
    }).catch(() => undefined);
  }

  truth(episodeId: string): Promise<GroundTruth> {
    return this.request("GET", `/episodes/${encodeURIComponent(episodeId)}/truth`);
  }
}
