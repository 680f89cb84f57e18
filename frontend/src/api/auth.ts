/**
 * The bearer token of a server started with `MEMEX_API_TOKEN`. It arrives once in the page's
 * address (`?token=…` or `?access_token=…`, then removed from the address bar) or from the
 * token field, and is kept in `sessionStorage` for this tab only. Every API call sends it as
 * `Authorization: Bearer …`; the page itself and its assets are served without it.
 */
const KEY = "memex.token";

function storage(): Storage | null {
  try {
    return typeof sessionStorage === "undefined" ? null : sessionStorage;
  } catch {
    return null; // storage disabled
  }
}

/** Take a token from the address (and strip it from the bar); else the one this tab kept. */
export function currentToken(): string | null {
  if (typeof window !== "undefined" && window.location) {
    const url = new URL(window.location.href);
    const fromUrl = url.searchParams.get("token") ?? url.searchParams.get("access_token");
    if (fromUrl) {
      saveToken(fromUrl);
      url.searchParams.delete("token");
      url.searchParams.delete("access_token");
      window.history.replaceState(window.history.state, "", url.toString());
      return fromUrl;
    }
  }
  return storage()?.getItem(KEY) ?? null;
}

export function saveToken(token: string | null): void {
  const s = storage();
  if (!s) return;
  if (token) s.setItem(KEY, token);
  else s.removeItem(KEY);
}

export function authHeaders(token: string | null): Record<string, string> {
  return token ? { authorization: `Bearer ${token}` } : {};
}
