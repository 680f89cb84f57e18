import { useCallback, useRef, useState } from "react";
import { ApiError } from "../api/client";
import type { ShownError } from "../components/ErrorBanner";

/** One line for any error: an `ApiError` with its path and HTTP status, else its message. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) {
    return err.status === 0 ? err.message : `${err.path} → HTTP ${err.status}: ${err.message}`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** The errors on screen (the last four), how to report one, and whether the server asked for
 * its bearer token (a 401). Nothing is swallowed: every failure a view sees goes through here. */
export function useErrors() {
  const [errors, setErrors] = useState<ShownError[]>([]);
  const [needsToken, setNeedsToken] = useState(false);
  const errorId = useRef(0);
  const report = useCallback((title: string, err: unknown) => {
    if (err instanceof ApiError && err.status === 401) setNeedsToken(true);
    errorId.current += 1;
    const shown = { id: errorId.current, title, message: describeError(err) };
    setErrors((es) => [...es.slice(-3), shown]);
  }, []);
  const dismiss = useCallback((id: number) => setErrors((es) => es.filter((e) => e.id !== id)), []);
  return { errors, report, dismiss, needsToken };
}
