/**
 * CopilotKit: a CopilotKit runtime (`servers/copilotkit-runtime.mjs`) serving a Vercel AI SDK
 * agent (CopilotKit's BuiltInAgent around `streamText`), reached over `agui-http` at the
 * runtime's AG-UI route `POST <base>/agent/<agent>/run`, under two runtimes: CopilotKit's
 * default runner, which a cancel stops through the runtime's stop route (`stopUrl`), and one
 * that stops a run when its client goes away. Its model, the AI SDK's
 * MockLanguageModelV3, records to a probe file whether a reply was aborted.
 */
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { AcpClient } from "./helpers/acp.js";
import { acpFlows } from "./helpers/acp-flows.js";
import { faceFlows } from "./helpers/face-flows.js";
import { modelStopSeen } from "./helpers/model-probe.js";
import {
  integrationRoot,
  probeFile,
  type Service,
  startAcpAgui,
  startService,
} from "./helpers/services.js";
import type { Stack } from "./helpers/stack.js";

const probe = probeFile();
let runtime: Service;
let server: Service;
let acp: AcpClient;
const ids: Record<string, string> = {};

beforeAll(async () => {
  runtime = await startService(
    "CopilotKit runtime",
    [join(integrationRoot, "servers/copilotkit-runtime.mjs")],
    { env: { INTEGRATION_PROBE_FILE: probe.path } },
  );
  server = await startAcpAgui([
    {
      name: "copilotkit",
      version: "1.0.0",
      description: "A Vercel AI SDK agent served by the CopilotKit runtime",
      adapter: {
        type: "agui-http",
        url: `${runtime.url}/api/copilotkit/agent/assistant/run`,
        // The runtime runs on without its client; its own stop route is what stops a run.
        stopUrl: `${runtime.url}/api/copilotkit/agent/assistant/stop/{threadId}`,
      },
    },
    {
      name: "copilotkit-stopping",
      version: "1.0.0",
      description: "The same agent, its runtime stopping runs whose client went away",
      adapter: {
        type: "agui-http",
        url: `${runtime.url}/api/copilotkit-stopping/agent/assistant/run`,
      },
    },
  ]);
  acp = new AcpClient(server.url);
  ids.copilotkit = await acp.agentId("copilotkit");
  ids["copilotkit-stopping"] = await acp.agentId("copilotkit-stopping");
});

afterAll(async () => {
  await server?.stop();
  await runtime?.stop();
});

const copilotkit: Stack = {
  title: "CopilotKit runtime over agui-http (BuiltInAgent, Vercel AI SDK)",
  server: () => ({ acp, agentId: ids.copilotkit!, agentName: "copilotkit" }),
  // BuiltInAgent's interrupt tools carry the reason they were defined with, and no schema.
  interruptType: "approval",
  approvalHasSchema: false,
  stuckAfterInterrupt: {
    reason:
      "BuiltInAgent hands the resume answer to the model but never sends it as TOOL_CALL_RESULT, so the thread keeps a tool call without a result, which the AI SDK refuses on the next turn",
    error: /Tool result is missing for tool call/,
  },
  upstream: { stopSeen: modelStopSeen(probe, "copilotkit") },
};

const stopping: Stack = {
  ...copilotkit,
  title: "CopilotKit runtime with a runner that stops on disconnect",
  server: () => ({ acp, agentId: ids["copilotkit-stopping"]!, agentName: "copilotkit-stopping" }),
  flows: ["cancel"],
};

for (const stack of [copilotkit, stopping]) {
  acpFlows(stack);
  faceFlows(stack);
}
