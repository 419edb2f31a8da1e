import { auth } from "./auth";

/** An answer other than 2xx. The server's errors are JSON strings naming the problem. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export function authHeaders(): Record<string, string> {
  return auth.key ? { authorization: `Bearer ${auth.key}` } : {};
}

export interface ApiRequest {
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** Sends a request to the server the page came from, with the API key when one is set. */
export async function send(path: string, request: ApiRequest = {}): Promise<Response> {
  const headers: Record<string, string> = { ...authHeaders(), ...request.headers };
  if (request.body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(path, {
    method: request.method ?? (request.body === undefined ? "GET" : "POST"),
    headers,
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
    signal: request.signal,
  });
  if (response.status === 401) auth.refused();
  if (!response.ok) throw new ApiError(response.status, await errorMessage(response));
  return response;
}

/** Like `send`, and parses the JSON answer (`undefined` for an empty one, e.g. 204). */
export async function api<T = unknown>(path: string, request: ApiRequest = {}): Promise<T> {
  const response = await send(path, request);
  const text = await response.text();
  return (text === "" ? undefined : JSON.parse(text)) as T;
}

async function errorMessage(response: Response): Promise<string> {
  const text = await response.text().catch(() => "");
  try {
    const parsed = JSON.parse(text);
    if (typeof parsed === "string") return parsed;
    if (parsed && typeof parsed.message === "string") return parsed.message;
  } catch {
    // Not JSON: fall through to the text itself.
  }
  return text || `${response.status} ${response.statusText}`;
}

/** Where the inspector's own JSON API lives: beside the page, wherever the page is mounted. */
export function inspectorApi(path: string): string {
  const url = new URL(`api${path}`, document.baseURI);
  return url.pathname + url.search;
}
