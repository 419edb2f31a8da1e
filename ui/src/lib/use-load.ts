import { useCallback, useEffect, useState } from "preact/hooks";
import { auth } from "./auth";

export interface Loaded<T> {
  data?: T;
  error?: Error;
  loading: boolean;
  reload(): void;
}

/**
 * Loads data for a view; loads again when `deps` change, when the API key changes, and on
 * `reload()`. A late answer for an older request is dropped.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({
    loading: true,
  });
  const [tick, setTick] = useState(0);
  const [keyVersion, setKeyVersion] = useState(auth.version);
  useEffect(() => auth.subscribe(() => setKeyVersion(auth.version)), []);
  useEffect(() => {
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error: Error) => current && setState({ error, loading: false }),
    );
    return () => {
      current = false;
    };
  }, [...deps, tick, keyVersion]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}
