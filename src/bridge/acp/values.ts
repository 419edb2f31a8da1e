/**
 * AG-UI state ⇄ ACP `values`. ACP values must be an object; AG-UI state may be anything (or
 * absent). State that is not an object is stored wrapped as `{ "$state": <value> }` (see
 * docs/bridge.md), so records always hold an object or null, and is unwrapped on its way back
 * to an agent or an AG-UI client.
 */

/**
 * AG-UI state as ACP values. `undefined` (no state at all) is `{}`; every other non-object,
 * `null` included, is wrapped so it reaches the client unchanged.
 */
export function asValues(values: unknown): Record<string, unknown> {
  if (values === undefined) return {};
  if (isObject(values)) return values;
  return { $state: values };
}

/** Values as stored: always an object the engine wrote, or null for "never written". */
export function storedValues(values: unknown): Record<string, unknown> {
  return values === null ? {} : asValues(values);
}

/**
 * The state an agent starts from on a thread: the thread's values (unwrapped), or — when the
 * thread has none yet — the state the run's input carries, or `{}`.
 */
export function threadStateForAgent(values: unknown, inputState: unknown): unknown {
  if (values !== null && values !== undefined) {
    if (isObject(values) && Object.keys(values).length === 1 && "$state" in values)
      return values.$state;
    if (!isObject(values) || Object.keys(values).length > 0) return values;
  }
  return inputState !== undefined ? inputState : {};
}

/** Thread values as AG-UI state for a client: `undefined` when there is nothing to restore. */
export function stateForClient(values: unknown): unknown {
  if (values === null || values === undefined) return undefined;
  if (isObject(values)) {
    const keys = Object.keys(values);
    if (keys.length === 0) return undefined;
    if (keys.length === 1 && keys[0] === "$state") return values.$state ?? undefined;
  }
  return values;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
