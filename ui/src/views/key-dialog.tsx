import { useEffect, useRef, useState } from "preact/hooks";
import { auth } from "../lib/auth";

/** Asks for the API key when the server wants one; the page then sends it with every call. */
export function KeyDialog() {
  const [value, setValue] = useState("");
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  return (
    <div class="overlay">
      <form
        class="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          auth.set(value);
        }}
      >
        <h2>API key</h2>
        <p>
          This server needs an API key (<code>server.auth.keys</code> or{" "}
          <code>ACP_AGUI_API_KEYS</code>) or an end user's token. The page sends it as{" "}
          <code>Authorization: Bearer …</code> and keeps it for this tab only.
        </p>
        {auth.key && <p class="note error">The key you gave was refused.</p>}
        <input
          ref={input}
          class="input"
          type="password"
          name="api-key"
          autocomplete="off"
          placeholder="API key"
          value={value}
          onInput={(e) => setValue(e.currentTarget.value)}
        />
        <div class="dialog-actions">
          <button type="button" class="button ghost" onClick={() => auth.dismiss()}>
            Cancel
          </button>
          <button type="submit" class="button primary" disabled={value.trim() === ""}>
            Use this key
          </button>
        </div>
      </form>
    </div>
  );
}
