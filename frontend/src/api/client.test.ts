import { afterEach, describe, expect, it, vi } from "vitest";
import { currentToken, saveToken } from "./auth";
import { ApiError, MemexApi, describeDetail } from "./client";

afterEach(() => vi.unstubAllGlobals());

function respond(status: number, body: unknown) {
  const fetchMock = vi.fn(async () => new Response(typeof body === "string" ? body : JSON.stringify(body), { status }));
  vi.stubGlobal("fetch", fetchMock);
  return fetchMock;
}

describe("server client", () => {
  it("test_fastapi_details_are_rendered_as_one_line", () => {
    expect(describeDetail({ detail: "unknown or expired episode_id 'x'" })).toBe("unknown or expired episode_id 'x'");
    expect(describeDetail({ detail: [{ loc: ["difficulty"], msg: "Input should be 'easy'" }, { loc: [], msg: "bad" }] }))
      .toBe("difficulty: Input should be 'easy'; bad");
    expect(describeDetail("nope")).toBeNull();
  });

  it("test_a_typed_refusal_is_rendered_as_its_message", () => {
    const refusal = { detail: { code: "sealed_policy_route", message: "sealed evaluation: only the agent plays" } };
    expect(describeDetail(refusal)).toBe("sealed evaluation: only the agent plays");
  });

  it("test_http_errors_carry_status_path_and_the_servers_message", async () => {
    respond(404, { detail: "unknown or expired episode_id 'zz'; start one with POST /reset" });
    const err = await new MemexApi().step("zz", { tool: "review_alert", arguments: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 404, path: "/step", message: expect.stringContaining("unknown or expired") });
  });

  it("test_requests_use_the_session_protocol", async () => {
    const fetchMock = respond(200, { episode_id: "e1", observation: {}, reward: null, done: false, metadata: null });
    await new MemexApi("http://x").step("e1", { tool: "review_alert", arguments: {} });
    expect(fetchMock).toHaveBeenCalledWith("http://x/step", expect.objectContaining({
      method: "POST", body: JSON.stringify({ episode_id: "e1", action: { tool: "review_alert", arguments: {} } }) }));
    await new MemexApi().agentStep("e/1", "heuristic");
    expect(fetchMock).toHaveBeenLastCalledWith("/episodes/e%2F1/agent-step", expect.objectContaining({ body: '{"policy":"heuristic"}' }));
  });

  it("test_release_deletes_the_episode_with_keepalive_and_never_throws", async () => {
    const fetchMock = respond(404, { detail: "gone" });
    new MemexApi("http://x").release("e/1");
    expect(fetchMock).toHaveBeenCalledWith("http://x/episodes/e%2F1", { method: "DELETE", keepalive: true });
    vi.stubGlobal("fetch", vi.fn(async () => { throw new TypeError("Failed to fetch"); }));
    expect(() => new MemexApi().release("e1")).not.toThrow();
  });

  it("test_unreachable_server_and_non_json_errors_are_reported", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => { throw new TypeError("Failed to fetch"); }));
    await expect(new MemexApi().health()).rejects.toMatchObject({ status: 0, message: expect.stringContaining("cannot reach") });
    respond(502, "Bad Gateway");
    await expect(new MemexApi().info()).rejects.toMatchObject({ status: 502, message: "Bad Gateway" });
    respond(200, { action: {} });
    await expect(new MemexApi().tools()).rejects.toThrow(/lists no tools/);
  });
});

/** The browser's address bar and this tab's sessionStorage (the unit tests run under node). */
function stubBrowser(href: string) {
  const items = new Map<string, string>();
  const location = { href };
  vi.stubGlobal("sessionStorage", {
    getItem: (k: string) => items.get(k) ?? null,
    setItem: (k: string, v: string) => void items.set(k, v),
    removeItem: (k: string) => void items.delete(k),
  });
  vi.stubGlobal("window", { location, history: { state: null, replaceState: (_s: unknown, _t: string, url: string) => { location.href = url; } } });
  return { location, items };
}

describe("bearer token", () => {
  it("test_the_token_is_sent_on_every_request_and_on_release", async () => {
    const fetchMock = respond(200, { status: "healthy" });
    const api = new MemexApi("http://x", "s3cret");
    await api.health();
    expect(fetchMock).toHaveBeenCalledWith("http://x/health", expect.objectContaining({
      headers: expect.objectContaining({ authorization: "Bearer s3cret" }) }));
    api.release("e1");
    expect(fetchMock).toHaveBeenLastCalledWith("http://x/episodes/e1", expect.objectContaining({
      method: "DELETE", headers: { authorization: "Bearer s3cret" } }));
  });

  it("test_a_token_in_the_address_is_kept_for_the_tab_and_removed_from_the_bar", async () => {
    const { location, items } = stubBrowser("http://h/?token=abc&x=1");
    expect(currentToken()).toBe("abc");
    expect(location.href).toBe("http://h/?x=1");
    expect(items.get("memex.token")).toBe("abc");
    expect(currentToken()).toBe("abc"); // from this tab's storage now
    const fetchMock = respond(200, { status: "healthy" });
    await new MemexApi().health();
    expect(fetchMock).toHaveBeenCalledWith("/health", expect.objectContaining({
      headers: expect.objectContaining({ authorization: "Bearer abc" }) }));
    saveToken(null);
    expect(currentToken()).toBeNull();
  });
});
