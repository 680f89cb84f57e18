import { StrictMode, useEffect, useMemo, useState } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { MemexApi } from "./api/client";
import { CommitteeApp } from "./committee/CommitteeApp";
import type { ServerInfo } from "./model/types";
import "./styles.css";

const COMMITTEE = "memex-committee";

/** One build for every environment server: `GET /info` says which one serves this page, and
 * that environment's view is shown (the AML view when the server does not answer, so its own
 * error and token handling show). */
function Root() {
  const api = useMemo(() => new MemexApi(), []);
  const [info, setInfo] = useState<ServerInfo | null | "unknown">(null);
  useEffect(() => {
    api.info().then(setInfo, () => setInfo("unknown"));
  }, [api]);
  if (info === null) return <p className="muted loading">connecting to the server…</p>;
  if (info !== "unknown" && info.env === COMMITTEE) return <CommitteeApp api={api} info={info} />;
  return <App />;
}

const root = document.getElementById("root");
if (!root) throw new Error("index.html has no #root element");
createRoot(root).render(
  <StrictMode>
    <Root />
  </StrictMode>,
);
