/**
 * CopilotKit: a CopilotKit runtime (`servers/copilotkit-runtime.mjs`) serving a Vercel AI SDK
 * agent (CopilotKit's BuiltInAgent around `streamText`), reached over `agui-http` at the
 * runtime's AG-UI route `POST <base>/agent/<agent>/run`. Its model, the AI SDK's
 * MockLanguageModelV3, records to a probe file whether a reply was aborted.
 */
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { AcpClient } from "./helpers/acp.js";
import { acpFlows } from "./helpers/acp-flows.js";
import { faceFlows } from "./helpers/face-flows.js";
import { modelSawStop } from "./helpers/model-probe.js";
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
let agentId: string;

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
      adapter: { type: "agui-http", url: `${runtime.url}/agent/assistant/run` },
    },
  ]);
  acp = new AcpClient(server.url);
  agentId = await acp.agentId("copilotkit");
});

afterAll(async () => {
  await server?.stop();
  await runtime?.stop();
});

const stack: Stack = {
  title: "CopilotKit runtime over agui-http (BuiltInAgent, Vercel AI SDK)",
  server: () => ({ acp, agentId, agentName: "copilotkit" }),
  // BuiltInAgent's interrupt tools carry the reason they were defined with, and no schema.
  interruptType: "approval",
  approvalHasSchema: false,
  upstream: { sawStop: modelSawStop(probe, "copilotkit") },
};

acpFlows(stack);
faceFlows(stack);
