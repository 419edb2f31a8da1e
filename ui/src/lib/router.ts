import { useEffect, useState } from "preact/hooks";

/**
 * Hash routes (`#/agents/…`): the server serves one page at one path, and every view is
 * bookmarkable and survives a reload.
 */
export interface Route {
  path: string;
  parts: string[];
  query: URLSearchParams;
}

function current(): Route {
  const hash = location.hash.replace(/^#/, "") || "/agents";
  const [path = "/agents", search = ""] = hash.split("?");
  return {
    path,
    parts: path.split("/").filter(Boolean).map(decodeURIComponent),
    query: new URLSearchParams(search),
  };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(current);
  useEffect(() => {
    const update = () => setRoute(current());
    addEventListener("hashchange", update);
    return () => removeEventListener("hashchange", update);
  }, []);
  return route;
}

export function href(path: string, query?: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, v);
  const search = params.toString();
  return `#${path}${search ? `?${search}` : ""}`;
}

export function navigate(path: string, query?: Record<string, string | undefined>): void {
  location.hash = href(path, query);
}
