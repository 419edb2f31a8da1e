import type { probeFile } from "./services.js";
import { eventually } from "./services.js";

/**
 * `stopSeen` for stacks whose model is the scripted AI SDK model (`agents/ai-sdk-model.mjs`):
 * how the last long reply the model started ended, "stopped" when its stream was aborted.
 */
export function modelStopSeen(probe: ReturnType<typeof probeFile>, model: string) {
  return async (): Promise<string> => {
    const ending = await eventually(
      `the ${model} model's long reply to end`,
      () => {
        const seen = probe.read().filter((o) => o.model === model);
        const started = seen.map((o) => o.event).lastIndexOf("started");
        return started === -1 ? undefined : seen[started + 1]?.event;
      },
      (event) => event !== undefined,
    );
    return ending === "aborted" ? "stopped" : String(ending);
  };
}
