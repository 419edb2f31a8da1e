import { useState } from "preact/hooks";
import { CopyButton } from "../components/common";
import { JsonField } from "../components/schema-form";
import { toCurl } from "../lib/curl";
import { pretty } from "../lib/format";

/** The run form's options beyond input and config: metadata, tags, ACP's run options. */
export function AdvancedOptions(props: {
  where: string;
  value: Record<string, unknown>;
  onChange(value: Record<string, unknown>): void;
  onValid(valid: boolean): void;
}) {
  const { where, value, onChange } = props;
  const set = (key: string, next: unknown) => {
    const copy = { ...value };
    if (next === undefined || next === "") delete copy[key];
    else copy[key] = next;
    onChange(copy);
  };
  const choice = (key: string, options: string[], note: string) => (
    <label class="form-field">
      <span class="form-label">
        <code>{key}</code> <span class="muted small">{note}</span>
      </span>
      <select
        class="input"
        name={key}
        value={String(value[key] ?? "")}
        onChange={(e) => set(key, e.currentTarget.value)}
      >
        <option value="">(server default)</option>
        {options.map((o) => (
          <option key={o}>{o}</option>
        ))}
      </select>
    </label>
  );
  return (
    <div class="grid-2">
      <div class="form-field">
        <span class="form-label">
          <code>metadata</code> <span class="muted small">JSON object</span>
        </span>
        <JsonField
          value={value.metadata}
          onChange={(v) => set("metadata", v)}
          onValid={props.onValid}
          name="metadata"
          rows={2}
        />
      </div>
      <label class="form-field">
        <span class="form-label">
          <code>config.tags</code> <span class="muted small">comma-separated</span>
        </span>
        <input
          class="input"
          name="tags"
          value={String(value.tags ?? "")}
          onInput={(e) => set("tags", e.currentTarget.value)}
        />
      </label>
      {choice("on_disconnect", ["cancel", "continue"], "when this page goes away")}
      <label class="form-field">
        <span class="form-label">
          <code>after_seconds</code> <span class="muted small">delay the start</span>
        </span>
        <input
          class="input"
          type="number"
          min={0}
          name="after_seconds"
          value={value.after_seconds === undefined ? "" : String(value.after_seconds)}
          onInput={(e) =>
            set(
              "after_seconds",
              e.currentTarget.value === "" ? undefined : Number(e.currentTarget.value),
            )
          }
        />
      </label>
      {where === "stateless"
        ? choice("on_completion", ["delete", "keep"], "the run's hidden thread")
        : choice(
            "multitask_strategy",
            ["reject", "enqueue", "interrupt", "rollback"],
            "when the thread is busy",
          )}
      {where !== "stateless" && (
        <label class="check">
          <input
            type="checkbox"
            checked={value.stream_subgraphs !== false}
            onChange={(e) => set("stream_subgraphs", e.currentTarget.checked ? undefined : false)}
          />
          <span>
            <code>stream_subgraphs</code> <span class="muted small">subagents' events too</span>
          </span>
        </label>
      )}
      <label class="form-field">
        <span class="form-label">
          <code>webhook</code> <span class="muted small">URL told of each status change</span>
        </span>
        <input
          class="input"
          name="webhook"
          value={String(value.webhook ?? "")}
          onInput={(e) => set("webhook", e.currentTarget.value)}
        />
      </label>
    </div>
  );
}

/** The exact request the form sends, as JSON and as curl. */
export function RequestPreview({ path, body }: { path: string; body: Record<string, unknown> }) {
  const [open, setOpen] = useState(false);
  const curl = toCurl({ method: "POST", path, body, stream: true });
  return (
    <div class="request-preview">
      <div class="row between">
        <button type="button" class="link small" onClick={() => setOpen(!open)}>
          {open ? "▾" : "▸"} Request <code>POST {path}</code>
        </button>
        <CopyButton text={curl} label="Copy as curl" />
      </div>
      {open && (
        <div class="stack">
          <pre class="code" data-testid="request-body">
            {pretty(body)}
          </pre>
          <pre class="code small">{curl}</pre>
        </div>
      )}
    </div>
  );
}
