/**
 * Mastra: a Mastra agent (`agents/mastra-agent.mjs`: tools, a suspending approval tool, working
 * memory) served in-process through `@ag-ui/mastra`'s MastraAgent as a `module` agent. Its
 * model, the AI SDK's MockLanguageModelV3, records to a probe file whether a reply was aborted.
 */
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { AcpClient } from "./helpers/acp.js";
import { acpFlows } from "./helpers/acp-flows.js";
import { faceFlows } from "./helpers/face-flows.js";
import { modelStopSeen } from "./helpers/model-probe.js";
import { integrationRoot, probeFile, type Service, startAcpAgui } from "./helpers/services.js";
import type { Stack } from "./helpers/stack.js";

const probe = probeFile();
let server: Service;
let acp: AcpClient;
const ids: Record<string, string> = {};

beforeAll(async () => {
  server = await startAcpAgui(
    [
      {
        name: "mastra",
        version: "1.0.0",
        description: "A Mastra agent through @ag-ui/mastra's MastraAgent, in-process",
        adapter: {
          type: "module",
          path: join(integrationRoot, "agents/mastra-agent.mjs"),
          export: "assistant",
        },
      },
      {
        name: "mastra-stoppable",
        version: "1.0.0",
        description: "The same agent through a MastraAgent that passes the stop on",
        adapter: {
          type: "module",
          path: join(integrationRoot, "agents/mastra-agent.mjs"),
          export: "stoppableAssistant",
        },
      },
    ],
    { INTEGRATION_PROBE_FILE: probe.path },
  );
  acp = new AcpClient(server.url);
  ids.mastra = await acp.agentId("mastra");
  ids["mastra-stoppable"] = await acp.agentId("mastra-stoppable");
});

afterAll(async () => {
  await server?.stop();
});

const mastra: Stack = {
  title: "Mastra in-process (module adapter, MastraAgent)",
  server: () => ({ acp, agentId: ids.mastra!, agentName: "mastra" }),
  // MastraAgent reports a suspended tool as an interrupt with this reason, and the tool's
  // resumeSchema as its responseSchema.
  interruptType: "mastra:tool_suspend",
  approvalHasSchema: true,
  cannotStop: "@ag-ui/mastra 1.1.2's MastraAgent has no abortRun and gives Mastra no abort signal",
  upstream: { stopSeen: modelStopSeen(probe, "mastra") },
};

const stoppable: Stack = {
  ...mastra,
  title: "Mastra in-process through StoppableMastraAgent",
  server: () => ({ acp, agentId: ids["mastra-stoppable"]!, agentName: "mastra-stoppable" }),
  flows: ["cancel"],
  cannotStop: undefined,
};

for (const stack of [mastra, stoppable]) {
  acpFlows(stack);
  faceFlows(stack);
}
