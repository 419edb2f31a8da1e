/**
 * A CopilotKit app as its users write one: the CopilotKit provider and its chat component,
 * with `runtimeUrl` pointing at an acp-agui server. The runtime URL, the agent and the thread
 * come from the page's query string, so that a reload rejoins the same thread.
 */
import { CopilotKit } from "@copilotkit/react-core";
import { CopilotChat } from "@copilotkit/react-ui";
import "@copilotkit/react-ui/styles.css";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";

const query = new URLSearchParams(window.location.search);
const runtimeUrl = query.get("runtime") ?? "";
const agent = query.get("agent") ?? "echo";
const threadId = query.get("thread") ?? undefined;

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <CopilotKit runtimeUrl={runtimeUrl} agent={agent} threadId={threadId}>
      <CopilotChat labels={{ title: "acp-agui" }} />
    </CopilotKit>
  </StrictMode>,
);
