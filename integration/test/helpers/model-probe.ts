import type { probeFile } from "./services.js";
import { eventually } from "./services.js";

/**
 * `sawStop` for stacks whose model is the scripted AI SDK model (`agents/ai-sdk-model.mjs`):
 * the last long reply the model started must end `aborted` (the framework passed the stop on
 * to the model's stream), not `finished`.
 */
export function modelSawStop(probe: ReturnType<typeof probeFile>, model: string) {
  return async (): Promise<void> => {
    const ending = await eventually(
      `the ${model} model's long reply to end`,
      () => {
        const seen = probe.read().filter((o) => o.model === model);
        const started = seen.map((o) => o.event).lastIndexOf("started");
        return started === -1 ? undefined : seen[started + 1]?.event;
      },
      (event) => event !== undefined,
    );
    if (ending !== "aborted") {
      throw new Error(`the ${model} model was never told to stop: its reply ${ending}`);
    }
  };
}
