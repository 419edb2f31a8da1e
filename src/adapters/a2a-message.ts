/** AG-UI → A2A: the parts of the message a run segment sends. */
import type { Message } from "@a2a-js/sdk";
import type { RunAgentInput } from "@ag-ui/core";

type A2aPart = Message["parts"][number];

function textPart(value: string): A2aPart {
  return { content: { $case: "text", value }, metadata: undefined, filename: "", mediaType: "" };
}

/** The user messages after the thread's last other message: what this run adds. */
export function userParts(messages: RunAgentInput["messages"]): A2aPart[] {
  const parts: A2aPart[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]?.role === "user"; i--) {
    const content: unknown = (messages[i] as { content?: unknown }).content;
    const text =
      typeof content === "string"
        ? content
        : Array.isArray(content)
          ? content
              .map((p: { type?: unknown; text?: unknown }) =>
                p?.type === "text" && typeof p.text === "string" ? p.text : "",
              )
              .join("")
          : "";
    if (text !== "") parts.unshift(textPart(text));
  }
  return parts;
}

/**
 * An interrupt's answer: a string, or an object's string `text`, is a text part; anything else
 * is a data part.
 */
export function answerParts(payload: unknown): A2aPart[] {
  if (typeof payload === "string") return [textPart(payload)];
  const text = (payload as { text?: unknown } | null)?.text;
  if (typeof text === "string") return [textPart(text)];
  if (payload === undefined || payload === null) return [textPart("")];
  return [
    {
      content: { $case: "data", value: payload },
      metadata: undefined,
      filename: "",
      mediaType: "",
    },
  ];
}
