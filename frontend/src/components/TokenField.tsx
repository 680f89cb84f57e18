import { useState } from "react";
import { saveToken } from "../api/auth";

/** Shown when the server answers 401: asks for its bearer token, keeps it for this tab
 * (`sessionStorage`) and reloads, so every request from then on carries it. */
export function TokenField() {
  const [value, setValue] = useState("");
  return (
    <form className="token-field" data-testid="token-field"
      onSubmit={(e) => {
        e.preventDefault();
        if (!value.trim()) return;
        saveToken(value.trim());
        window.location.reload();
      }}>
      <label>
        This server needs an access token
        <input type="password" autoComplete="off" value={value} data-testid="token-input"
          onChange={(e) => setValue(e.target.value)} placeholder="MEMEX_API_TOKEN" />
      </label>
      <button type="submit">Use token</button>
    </form>
  );
}
