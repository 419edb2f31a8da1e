/**
 * `@ag-ui/langgraph`'s LangGraphAgent, in-process (the `module` adapter's export `assistant`),
 * driving graph `assistant` of the LangGraph API server at LANGGRAPH_URL. `emitInterruptOutcome`
 * makes LangGraph interrupts AG-UI interrupts (RUN_FINISHED with outcome `interrupt`), which
 * the server turns into ACP interrupts.
 */
import { LangGraphAgent } from "@ag-ui/langgraph";

const deploymentUrl = process.env.LANGGRAPH_URL;
if (!deploymentUrl) throw new Error("LANGGRAPH_URL must name the LangGraph API server");

export const assistant = new LangGraphAgent({
  deploymentUrl,
  graphId: "assistant",
  emitInterruptOutcome: true,
});
