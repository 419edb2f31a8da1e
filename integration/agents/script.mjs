/**
 * What the scripted model of every stack says next. Each framework's own fake model (LangChain's
 * FakeStreamingChatModel, the AI SDK's MockLanguageModelV3) turns its prompt into this neutral
 * conversation and plays the answer, so the same user message gets the same behaviour
 * everywhere and the tests can state what to expect:
 *
 * - "weather in <city>": calls the server-side tool `get_weather`, then reports its result;
 * - "remember <note>": adds the note to the agent's state, then confirms;
 * - "deploy <target>": asks for approval (an interrupt), then reports the answer;
 * - "tell me a long story": a reply long and slow enough to be cancelled half-way;
 * - anything else: repeats every user message of the conversation, which shows the history
 *   the agent was given.
 *
 * A conversation is a list of `{role: "user" | "assistant" | "tool", text?, toolName?, result?}`.
 */

export const LONG_STORY = `${"Once upon a time, ".repeat(30)}the end.`;

/** Milliseconds between the streamed pieces of a reply: short, except for the long story. */
export const QUICK_DELAY_MS = 2;
export const STORY_DELAY_MS = 40;

/**
 * One move of the model: exactly one of `say` (with `delayMs`), `call` or `remember` is set.
 * @typedef {{say?: string, delayMs?: number, call?: {name: string, args: Record<string, unknown>}, remember?: string}} Move
 * @typedef {{role: string, text?: string, toolName?: string, result?: unknown}} Turn
 * @param {Turn[]} conversation
 * @returns {Move}
 */
export function nextMove(conversation) {
  const last = conversation.at(-1);
  if (last?.role === "tool") return afterTool(last);
  const said = conversation.filter((turn) => turn.role === "user").map((turn) => turn.text ?? "");
  const latest = (said.at(-1) ?? "").trim();
  const weather = /^weather in (.+)$/i.exec(latest);
  if (weather) return { call: { name: "get_weather", args: { city: weather[1].trim() } } };
  const note = /^remember (.+)$/i.exec(latest);
  if (note) return { remember: note[1].trim() };
  const deploy = /^deploy (.+)$/i.exec(latest);
  if (deploy) return { call: { name: "approve_deploy", args: { target: deploy[1].trim() } } };
  if (/long story/i.test(latest)) return { say: LONG_STORY, delayMs: STORY_DELAY_MS };
  return { say: `You said: ${said.join(" / ")}`, delayMs: QUICK_DELAY_MS };
}

/** @param {Turn} turn @returns {Move} */
function afterTool(turn) {
  const result = parse(turn.result);
  if (turn.toolName === "get_weather") {
    return { say: `It is ${result.forecast} in ${result.city}, ${result.celsius} °C.`, delayMs: 0 };
  }
  if (turn.toolName === "approve_deploy") {
    return { say: deploymentAnswer(result), delayMs: 0 };
  }
  return { say: "Noted.", delayMs: 0 };
}

/** The reply to an approval, whatever shape the framework hands the answer back in. */
/** @param {unknown} answer */
export function deploymentAnswer(answer) {
  return parse(answer)?.approved === true ? "Deployment approved." : "Deployment rejected.";
}

/** The server-side tool every stack registers. */
/** @param {{city: string}} args */
export function getWeather({ city }) {
  return { city, forecast: "sunny", celsius: 21 };
}

/** The JSON Schema every stack's approval asks its answer to match. */
export const APPROVAL_SCHEMA = {
  type: "object",
  properties: { approved: { type: "boolean" } },
  required: ["approved"],
  additionalProperties: false,
};

/** @param {unknown} value @returns {any} */
function parse(value) {
  if (typeof value !== "string") return value ?? {};
  try {
    return JSON.parse(value);
  } catch {
    return { text: value };
  }
}
