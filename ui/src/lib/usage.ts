import type { Entry } from "./run-entry";

/** Token counts of one provider and model (AG-UI `TokenUsage`), added up over a run. */
export interface ModelUsage {
  provider?: string;
  model?: string;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  reasoningTokens: number;
  cachedInputTokens: number;
}

export interface RunUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  byModel: ModelUsage[];
}

const COUNTS = [
  "inputTokens",
  "outputTokens",
  "totalTokens",
  "reasoningTokens",
  "cachedInputTokens",
] as const;

/**
 * The run's token usage: each segment's terminal event (RUN_FINISHED, or RUN_ERROR) may carry
 * `usage`, one entry per provider and model. A resumed segment reports only its own calls, so
 * the run's usage is the sum over its segments, kept apart by provider and model. Null when no
 * event carried any.
 */
export function runUsage(entries: readonly Entry[]): RunUsage | null {
  const byModel = new Map<string, ModelUsage>();
  for (const entry of entries) {
    if (entry.type !== "RUN_FINISHED" && entry.type !== "RUN_ERROR") continue;
    const usage = entry.event?.usage;
    if (!Array.isArray(usage)) continue;
    for (const item of usage as Array<Record<string, unknown>>) {
      const provider = typeof item.provider === "string" ? item.provider : undefined;
      const model = typeof item.model === "string" ? item.model : undefined;
      const key = `${provider ?? ""}\n${model ?? ""}`;
      let sum = byModel.get(key);
      if (!sum) {
        sum = { provider, model, ...Object.fromEntries(COUNTS.map((c) => [c, 0])) } as ModelUsage;
        byModel.set(key, sum);
      }
      for (const count of COUNTS) {
        if (typeof item[count] === "number") sum[count] += item[count] as number;
      }
      // totalTokens is the two totals summed; a producer may leave it out.
      if (typeof item.totalTokens !== "number") {
        sum.totalTokens +=
          ((item.inputTokens as number) ?? 0) + ((item.outputTokens as number) ?? 0);
      }
    }
  }
  if (byModel.size === 0) return null;
  const models = [...byModel.values()];
  const add = (count: "inputTokens" | "outputTokens" | "totalTokens") =>
    models.reduce((n, m) => n + m[count], 0);
  return {
    inputTokens: add("inputTokens"),
    outputTokens: add("outputTokens"),
    totalTokens: add("totalTokens"),
    byModel: models,
  };
}
