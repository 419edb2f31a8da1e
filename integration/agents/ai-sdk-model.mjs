/**
 * The Vercel AI SDK's MockLanguageModelV3 (from `ai/test`) playing `script.mjs`: used by the
 * Mastra agent and the CopilotKit runtime's BuiltInAgent. Like a real provider it streams its
 * answer, honours the call's abort signal (the stream errors with an AbortError), and it
 * records to the probe whether a long reply was finished or aborted.
 */
import { MockLanguageModelV3 } from "ai/test";
import { observe } from "./probe.mjs";
import { nextMove } from "./script.mjs";

/**
 * @param {object} options
 * @param {string} options.name the probe's label for this model
 * @param {(note: string, system: string) => {name: string, args: unknown}} options.remember
 *   how this framework's model records a note in the agent's state (the tool it calls)
 */
export function scriptedModel({ name, remember }) {
  let calls = 0;
  return new MockLanguageModelV3({
    provider: "mock",
    modelId: "scripted",
    doStream: async ({ prompt, abortSignal }) => {
      const system = prompt
        .filter((message) => message.role === "system")
        .map((message) => message.content)
        .join("\n");
      const move = nextMove(conversationOf(prompt));
      const id = `${name}-${++calls}`;
      if (move.call || move.remember) {
        const { name: toolName, args } = move.call ?? remember(move.remember ?? "", system);
        return {
          stream: streamOf(
            [
              { type: "stream-start", warnings: [] },
              {
                type: "tool-call",
                toolCallId: `call-${id}`,
                toolName,
                input: JSON.stringify(args),
              },
              finish("tool-calls"),
            ],
            0,
            abortSignal,
          ),
        };
      }
      const text = move.say ?? "";
      const long = (move.delayMs ?? 0) > 10;
      if (long) observe({ model: name, event: "started" });
      const pieces = text.match(/.{1,8}/gs) ?? [];
      return {
        stream: streamOf(
          [
            { type: "stream-start", warnings: [] },
            { type: "text-start", id },
            ...pieces.map((delta) => ({ type: "text-delta", id, delta })),
            { type: "text-end", id },
            finish("stop"),
          ],
          move.delayMs ?? 0,
          abortSignal,
          long ? (event) => observe({ model: name, event }) : undefined,
        ),
      };
    },
  });
}

/** @param {"stop" | "tool-calls"} reason */
function finish(reason) {
  return {
    type: "finish",
    finishReason: { unified: reason, raw: reason },
    usage: {
      inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 5, text: 5, reasoning: 0 },
    },
  };
}

/**
 * The parts, one every `delayMs`; an abort errors the stream, as a provider's aborted fetch
 * would. `onEnd` hears "finished" or "aborted".
 * @param {unknown[]} parts @param {number} delayMs @param {AbortSignal | undefined} signal
 * @param {(event: string) => void} [onEnd]
 */
function streamOf(parts, delayMs, signal, onEnd) {
  let index = 0;
  return new ReadableStream({
    async pull(controller) {
      if (signal?.aborted) {
        onEnd?.("aborted");
        controller.error(signal.reason ?? new DOMException("aborted", "AbortError"));
        return;
      }
      if (index >= parts.length) {
        onEnd?.("finished");
        controller.close();
        return;
      }
      if (delayMs > 0 && index > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      controller.enqueue(parts[index++]);
    },
    cancel() {
      onEnd?.("aborted");
    },
  });
}

/**
 * The AI SDK prompt as the script's conversation.
 * @param {Array<{role: string, content: any}>} prompt
 */
function conversationOf(prompt) {
  const turns = [];
  for (const message of prompt) {
    if (message.role === "system") continue;
    const parts =
      typeof message.content === "string"
        ? [{ type: "text", text: message.content }]
        : message.content;
    if (message.role === "tool") {
      for (const part of parts) {
        if (part.type !== "tool-result") continue;
        turns.push({ role: "tool", toolName: part.toolName, result: part.output?.value });
      }
      continue;
    }
    const text = parts
      .filter((part) => part.type === "text")
      .map((part) => part.text)
      .join("");
    turns.push({ role: message.role, text });
  }
  return turns;
}

/**
 * The notes the agent's state holds, read from the system prompt where the framework put the
 * state (both Mastra's working memory and CopilotKit's application state are JSON there).
 * @param {string} system @returns {string[]}
 */
export function notesIn(system) {
  // The last one: a framework may show an empty example before the data itself.
  const match = [...system.matchAll(/"notes"\s*:\s*(\[[^\]]*\])/g)].at(-1);
  if (!match) return [];
  try {
    return JSON.parse(match[1]);
  } catch {
    return [];
  }
}
