/**
 * The API key the page sends, kept for the browser tab only (sessionStorage): closing the tab
 * forgets it. Views re-read their data when it changes.
 */
const STORAGE_KEY = "acp-agui.inspector.key";

type Listener = () => void;
const listeners = new Set<Listener>();

let key: string | null = readStored();
/** Set when the server answered 401: the page shows the key dialog. */
let needed = false;
/**
 * Whether the server wants a key (or an end user's token) at all: null until it said, from the
 * inspector's overview or a 401. On a server without keys the page never asks for one.
 */
let required: boolean | null = null;

function readStored(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

function emit(): void {
  for (const listener of [...listeners]) listener();
}

export const auth = {
  get key(): string | null {
    return key;
  },
  get needed(): boolean {
    return needed;
  },
  get required(): boolean | null {
    return required;
  },
  /** What the server's overview says of its authentication. */
  learned(value: boolean): void {
    if (required === value) return;
    required = value;
    emit();
  },
  /** Bumped whenever the key changes, so data hooks can depend on it. */
  version: 0,
  set(value: string | null): void {
    key = value && value.trim() !== "" ? value.trim() : null;
    try {
      if (key) sessionStorage.setItem(STORAGE_KEY, key);
      else sessionStorage.removeItem(STORAGE_KEY);
    } catch {
      // Storage may be off (private mode): the key then lasts until the page reloads.
    }
    needed = false;
    auth.version += 1;
    emit();
  },
  /** The server refused the request for want of a (valid) key. */
  refused(): void {
    if (needed) return;
    needed = true;
    required = true;
    emit();
  },
  dismiss(): void {
    needed = false;
    emit();
  },
  subscribe(listener: Listener): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};
