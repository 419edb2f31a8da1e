/**
 * CopilotKit's own client (`@copilotkit/core`) in Node, against a server over a real socket.
 * The core only starts its runtime connection in a browser, so a minimal `window` (an event
 * target with a location) stands in for one. Run requests go through a fetch that a test can
 * drop, as a reloaded page drops its connection.
 */
import type { CopilotKitCore as Core } from "@copilotkit/core";

/** An agent as the CopilotKit client holds it (its own @ag-ui/client's AbstractAgent). */
export type CopilotAgent = NonNullable<ReturnType<Core["getAgent"]>>;

type Window = EventTarget & { location: URL };
const global = globalThis as unknown as { window?: Window; fetch: typeof fetch };
global.window ??= Object.assign(new EventTarget(), { location: new URL("http://localhost/") });

/** Run requests (`…/agent/x/run`) since the last drop, by the test's own abort controller. */
const openRuns = new Set<AbortController>();
const realFetch = global.fetch;
global.fetch = ((input: string | URL | Request, init: RequestInit = {}) => {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  if (!/\/agent\/[^/]+\/run$/.test(new URL(url).pathname)) return realFetch(input, init);
  const controller = new AbortController();
  init.signal?.addEventListener("abort", () => controller.abort(init.signal?.reason), {
    once: true,
  });
  openRuns.add(controller);
  return realFetch(input, { ...init, signal: controller.signal });
}) as typeof fetch;

/** Drops every run request in flight from the client side (the socket closes mid-reply). */
export function dropRunConnections(): void {
  for (const controller of openRuns) controller.abort(new DOMException("dropped", "AbortError"));
  openRuns.clear();
}

const { CopilotKitCore } = await import("@copilotkit/core");

export interface Client {
  core: Core;
  /** Errors the core reported (code and message), in order. */
  errors: Array<{ code: string; message: string }>;
  agent(name: string, threadId: string): CopilotAgent;
}

/** A CopilotKit client whose runtime is `runtimeUrl`, once its `/info` discovery is done. */
export async function copilotClient(
  runtimeUrl: string,
  headers: Record<string, string> = {},
): Promise<Client> {
  const core = new CopilotKitCore({ runtimeUrl, headers });
  const errors: Client["errors"] = [];
  core.subscribe({
    onError: ({ code, error }) => {
      errors.push({ code: String(code), message: error.message });
    },
  });
  const deadline = Date.now() + 10_000;
  while (core.runtimeConnectionStatus !== "connected") {
    if (core.runtimeConnectionStatus === "error") {
      throw new Error(`the client could not discover ${runtimeUrl}: ${JSON.stringify(errors)}`);
    }
    if (Date.now() > deadline) throw new Error(`no runtime info from ${runtimeUrl}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    core,
    errors,
    agent(name, threadId) {
      const agent = core.getAgent(name);
      if (!agent) throw new Error(`the client knows no agent "${name}"`);
      agent.threadId = threadId;
      return agent;
    },
  };
}

/** Role and text of each message, the way a chat shows them. */
export function transcript(agent: CopilotAgent): Array<[string, unknown]> {
  return agent.messages.map((m) => [m.role, (m as { content?: unknown }).content]);
}

export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
