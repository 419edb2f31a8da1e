import { useEffect, useState } from "preact/hooks";
import { forgetAgents } from "./lib/agents";
import { api, inspectorApi } from "./lib/api";
import { auth } from "./lib/auth";
import { href, type Route, useRoute } from "./lib/router";
import type { Overview } from "./lib/types";
import { AgentsView } from "./views/agents";
import { KeyDialog } from "./views/key-dialog";
import { RunView } from "./views/run-view";
import { RunsView } from "./views/runs";
import { ServerView } from "./views/server";
import { ThreadsView } from "./views/threads";

const SECTIONS = [
  { id: "agents", label: "Agents" },
  { id: "threads", label: "Threads" },
  { id: "runs", label: "Runs" },
  { id: "server", label: "Server" },
] as const;

export function App() {
  const route = useRoute();
  const [, setAuthTick] = useState(0);
  useEffect(
    () =>
      auth.subscribe(() => {
        forgetAgents();
        setAuthTick((t) => t + 1);
      }),
    [],
  );
  // Whether this server wants a key at all (a 401 says so too, and opens the dialog).
  useEffect(() => {
    api<Overview>(inspectorApi("/overview")).then(
      (overview) => auth.learned(overview.server.auth.keys || overview.server.auth.tokens),
      () => undefined,
    );
  }, [auth.version]);
  const section = route.parts[0] ?? "agents";
  return (
    <div class="app">
      <header class="topbar">
        <a class="brand" href={href("/agents")}>
          <span class="brand-mark">A</span>
          <span>
            acp-agui <span class="muted">inspector</span>
          </span>
        </a>
        <nav class="nav">
          {SECTIONS.map((s) => (
            <a
              key={s.id}
              href={href(`/${s.id}`)}
              class={`nav-link${section === s.id ? " active" : ""}`}
            >
              {s.label}
            </a>
          ))}
        </nav>
        <div class="topbar-end">
          {auth.key ? (
            <button type="button" class="button small ghost" onClick={() => auth.set(null)}>
              Forget API key
            </button>
          ) : auth.required ? (
            <button type="button" class="button small ghost" onClick={() => auth.refused()}>
              API key…
            </button>
          ) : auth.required === false ? (
            <span
              class="muted small"
              data-testid="no-key-needed"
              title="server.auth has no keys and no token issuer"
            >
              no API key needed
            </span>
          ) : null}
        </div>
      </header>
      <main class="main">
        <Page route={route} />
      </main>
      {auth.needed && <KeyDialog />}
    </div>
  );
}

function Page({ route }: { route: Route }) {
  const [section, id, sub, subId] = route.parts;
  switch (section) {
    case "threads":
      if (id && sub === "runs" && subId) return <RunView runId={subId} />;
      return <ThreadsView threadId={id} route={route} />;
    case "runs":
      return id ? <RunView runId={id} /> : <RunsView />;
    case "server":
      return <ServerView />;
    default:
      return <AgentsView agentId={id} route={route} />;
  }
}
