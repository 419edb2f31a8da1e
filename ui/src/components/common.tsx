import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";

/** A button that copies `text` and says so for a moment. */
export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Clipboard refused (plain HTTP on a remote host): fall back to a selection copy.
      const area = document.createElement("textarea");
      area.value = text;
      document.body.append(area);
      area.select();
      document.execCommand("copy");
      area.remove();
    }
    setDone(true);
    setTimeout(() => setDone(false), 1200);
  };
  return (
    <button type="button" class="button small" onClick={copy}>
      {done ? "Copied" : label}
    </button>
  );
}

/**
 * Each status its own look: only a failure is red. A cancelled run is grey (someone stopped
 * it), an interrupted one waits for an answer, a timed-out one ran out of its time limit.
 */
const STATUS_CLASS: Record<string, string> = {
  success: "ok",
  idle: "ok",
  ready: "ok",
  pending: "live",
  busy: "live",
  interrupted: "ask",
  timeout: "warn",
  cancelled: "neutral",
  error: "bad",
};

export function StatusBadge({ status }: { status: string }) {
  return (
    <span class={`badge ${STATUS_CLASS[status] ?? ""}`} data-status={status}>
      {status}
    </span>
  );
}

export function Tabs<T extends string>(props: {
  tabs: Array<{ id: NoInfer<T>; label: ComponentChildren }>;
  active: T;
  onChange(tab: NoInfer<T>): void;
}) {
  return (
    <div class="tabs" role="tablist">
      {props.tabs.map((tab) => (
        <button
          type="button"
          role="tab"
          key={tab.id}
          aria-selected={tab.id === props.active}
          class={`tab${tab.id === props.active ? " active" : ""}`}
          onClick={() => props.onChange(tab.id)}
        >
          {tab.label}
        </button>
      ))}
    </div>
  );
}

export function ErrorNote({ error }: { error: Error | string | null | undefined }) {
  if (!error) return null;
  return (
    <div class="note error" role="alert">
      {typeof error === "string" ? error : error.message}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty">{children}</div>;
}

export function Section(props: {
  title: ComponentChildren;
  actions?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <section class="card">
      <header class="card-head">
        <h2>{props.title}</h2>
        {props.actions && <div class="card-actions">{props.actions}</div>}
      </header>
      <div class="card-body">{props.children}</div>
    </section>
  );
}

/** Pre-formatted code with a copy button. */
export function CodeBlock({ code, label }: { code: string; label?: string }) {
  return (
    <div class="code-block">
      <div class="code-head">
        <span>{label}</span>
        <CopyButton text={code} />
      </div>
      <pre>{code}</pre>
    </div>
  );
}
