import { useState } from "preact/hooks";
import { ErrorNote } from "../components/common";
import { JsonField, SchemaForm } from "../components/schema-form";
import { uuid } from "../lib/format";
import { RunSession } from "../lib/run-session";
import type { AcpDescriptor, JsonSchema } from "../lib/types";
import { AdvancedOptions, RequestPreview } from "./run-form-options";

interface Props {
  agentId: string;
  descriptor: AcpDescriptor;
  /** Run on this thread (the thread page's "next turn"). */
  threadId?: string;
  onStarted(session: RunSession): void;
}

interface ChatMessage {
  role: string;
  content: string;
}

const ROLES = ["user", "assistant", "system", "developer"];

/** Input keys the form renders itself: messages as a chat box, state as JSON. */
const OWN_INPUT_KEYS = new Set(["messages", "state"]);

/**
 * Starts a run of one agent: a form generated from the descriptor (messages as a chat box,
 * state as JSON, the rest of the input and `config.configurable` from their schemas), stream
 * modes, stateless or on a thread, and the exact request shown as JSON and as curl.
 */
export function RunForm({ agentId, descriptor, threadId, onStarted }: Props) {
  const { specs } = descriptor;
  const inputSchema = specs.input ?? {};
  const inputProps = (inputSchema.properties ?? {}) as Record<string, JsonSchema>;
  const takesMessages = "messages" in inputProps || !inputSchema.properties;
  const takesState = "state" in inputProps;
  const restSchema: JsonSchema = {
    type: "object",
    properties: Object.fromEntries(
      Object.entries(inputProps).filter(([name]) => !OWN_INPUT_KEYS.has(name)),
    ),
    required: ((inputSchema.required ?? []) as string[]).filter((n) => !OWN_INPUT_KEYS.has(n)),
  };
  const hasRest = Object.keys(restSchema.properties as object).length > 0;
  const configSchema = specs.config ?? {};
  const declaredModes = Object.entries(specs.capabilities?.streaming ?? {})
    .filter(([, on]) => on)
    .map(([mode]) => mode);
  const threads = specs.capabilities?.threads !== false;

  const [messages, setMessages] = useState<ChatMessage[]>([{ role: "user", content: "" }]);
  const [state, setState] = useState<unknown>(undefined);
  const [rest, setRest] = useState<Record<string, unknown>>({});
  const [configurable, setConfigurable] = useState<unknown>(undefined);
  const [modes, setModes] = useState<string[]>(declaredModes);
  const [where, setWhere] = useState<"stateless" | "new-thread" | "thread">(
    threadId ? "thread" : threads ? "new-thread" : "stateless",
  );
  const [thread, setThread] = useState(threadId ?? "");
  const [newThreadId, setNewThreadId] = useState(uuid);
  const [advanced, setAdvanced] = useState<Record<string, unknown>>({});
  const [more, setMore] = useState(false);
  const [invalid, setInvalid] = useState<Set<string>>(new Set());
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const validity = (field: string) => (valid: boolean) =>
    setInvalid((previous) => {
      const next = new Set(previous);
      if (valid) next.delete(field);
      else next.add(field);
      return next;
    });

  const input: Record<string, unknown> = { ...rest };
  const sent = messages.filter((m) => m.content.trim() !== "");
  if (takesMessages && sent.length > 0) input.messages = sent;
  if (takesState && state !== undefined) input.state = state;
  const body: Record<string, unknown> = { agent_id: agentId, input };
  const config: Record<string, unknown> = {};
  if (configurable !== undefined) config.configurable = configurable;
  if (typeof advanced.tags === "string" && advanced.tags.trim() !== "") {
    config.tags = advanced.tags
      .split(",")
      .map((t) => t.trim())
      .filter(Boolean);
  }
  if (typeof advanced.recursion_limit === "number")
    config.recursion_limit = advanced.recursion_limit;
  if (Object.keys(config).length > 0) body.config = config;
  if (advanced.metadata !== undefined) body.metadata = advanced.metadata;
  body.stream_mode = modes;
  for (const key of ["on_disconnect", "after_seconds", "webhook"] as const) {
    if (advanced[key] !== undefined && advanced[key] !== "") body[key] = advanced[key];
  }
  let path = "/runs/stream";
  if (where === "stateless") {
    if (advanced.on_completion) body.on_completion = advanced.on_completion;
  } else {
    const id = where === "new-thread" ? newThreadId : thread.trim();
    path = `/threads/${id}/runs/stream`;
    if (where === "new-thread") body.if_not_exists = "create";
    if (modes.includes("custom")) body.stream_subgraphs = advanced.stream_subgraphs !== false;
    if (advanced.multitask_strategy) body.multitask_strategy = advanced.multitask_strategy;
  }
  const missingThread = where === "thread" && !/^[0-9a-f-]{36}$/i.test(thread.trim());

  const start = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const session = await RunSession.start(path, body);
      setNewThreadId(uuid());
      setMessages([{ role: "user", content: "" }]);
      onStarted(session);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const setMessage = (index: number, patch: Partial<ChatMessage>) =>
    setMessages(messages.map((m, i) => (i === index ? { ...m, ...patch } : m)));

  return (
    <form class="card run-form" onSubmit={start}>
      <header class="card-head">
        <h2>Start a run</h2>
      </header>
      <div class="card-body stack">
        {takesMessages && (
          <div class="chat-box">
            <div class="form-label">Messages</div>
            {messages.map((message, index) => (
              <div class="chat-line" key={index}>
                <select
                  class="input role"
                  aria-label="role"
                  value={message.role}
                  onChange={(e) => setMessage(index, { role: e.currentTarget.value })}
                >
                  {ROLES.map((r) => (
                    <option key={r}>{r}</option>
                  ))}
                </select>
                <textarea
                  class="input"
                  name={`message-${index}`}
                  rows={2}
                  placeholder={index === 0 ? placeholderFor(descriptor) : "Message"}
                  value={message.content}
                  onInput={(e) => setMessage(index, { content: e.currentTarget.value })}
                  onKeyDown={(e) => {
                    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
                      (e.currentTarget.form as HTMLFormElement).requestSubmit();
                    }
                  }}
                />
                {messages.length > 1 && (
                  <button
                    type="button"
                    class="button small ghost"
                    aria-label="remove message"
                    onClick={() => setMessages(messages.filter((_, i) => i !== index))}
                  >
                    ✕
                  </button>
                )}
              </div>
            ))}
            <button
              type="button"
              class="link small"
              onClick={() => setMessages([...messages, { role: "user", content: "" }])}
            >
              + another message
            </button>
          </div>
        )}

        {takesState && (
          <div>
            <div class="form-label">
              State <span class="muted small">JSON; seeds a new thread's state</span>
            </div>
            <JsonField
              value={state}
              onChange={setState}
              onValid={validity("state")}
              name="state"
              rows={2}
              placeholder='{"key": "value"}'
            />
          </div>
        )}

        <div class="row wrap">
          <fieldset class="fieldset">
            <legend>Where</legend>
            {threads && (
              <label class="check">
                <input
                  type="radio"
                  name="where"
                  checked={where === "new-thread"}
                  onChange={() => setWhere("new-thread")}
                />
                <span>on a new thread</span>
              </label>
            )}
            {threads && (
              <label class="check">
                <input
                  type="radio"
                  name="where"
                  checked={where === "thread"}
                  onChange={() => setWhere("thread")}
                />
                <span>on thread</span>
                <input
                  class="input inline mono"
                  name="thread-id"
                  placeholder="thread_id"
                  value={thread}
                  onFocus={() => setWhere("thread")}
                  onInput={(e) => setThread(e.currentTarget.value)}
                />
              </label>
            )}
            <label class="check">
              <input
                type="radio"
                name="where"
                checked={where === "stateless"}
                onChange={() => setWhere("stateless")}
              />
              <span>stateless</span>
            </label>
          </fieldset>
          <fieldset class="fieldset">
            <legend>Stream modes</legend>
            {declaredModes.map((mode) => (
              <label class="check" key={mode}>
                <input
                  type="checkbox"
                  name={`mode-${mode}`}
                  checked={modes.includes(mode)}
                  onChange={(e) =>
                    setModes(
                      e.currentTarget.checked ? [...modes, mode] : modes.filter((m) => m !== mode),
                    )
                  }
                />
                <span>{mode}</span>
                <span class="muted small">
                  {mode === "custom" ? "every AG-UI event" : "state and messages"}
                </span>
              </label>
            ))}
          </fieldset>
        </div>

        <button type="button" class="link small" onClick={() => setMore(!more)}>
          {more ? "▾" : "▸"} More: {hasRest ? "tools, context, " : ""}config, metadata, options
        </button>
        {more && (
          <div class="stack more">
            {hasRest && (
              <div>
                <div class="form-label">Other input</div>
                <SchemaForm
                  schema={restSchema}
                  value={rest}
                  onChange={(v) => setRest((v ?? {}) as Record<string, unknown>)}
                  path="input"
                />
              </div>
            )}
            <div>
              <div class="form-label">
                config.configurable{" "}
                <span class="muted small">from the descriptor's config schema</span>
              </div>
              <SchemaForm
                schema={configSchema}
                value={configurable}
                onChange={setConfigurable}
                path="configurable"
              />
            </div>
            <AdvancedOptions
              where={where}
              value={advanced}
              onChange={setAdvanced}
              onValid={validity("metadata")}
            />
          </div>
        )}

        <RequestPreview path={path} body={body} />
        <ErrorNote error={error} />
        <div class="row end">
          <button
            type="submit"
            class="button primary"
            disabled={busy || invalid.size > 0 || missingThread || modes.length === 0}
          >
            {busy ? "Starting…" : "Run"}
          </button>
        </div>
      </div>
    </form>
  );
}

function placeholderFor(descriptor: AcpDescriptor): string {
  const name = descriptor.metadata.ref.name;
  return name.includes("echo") ? "Say something; start with /approve to be asked first" : "Message";
}
