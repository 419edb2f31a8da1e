import { auth } from "./auth";

/** Quotes for a POSIX shell: single quotes, with embedded ones closed and escaped. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export interface CurlRequest {
  method: string;
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  stream?: boolean;
}

/**
 * The request as a curl command a user can paste. The key itself is never shown: when one is
 * in use the command reads it from `$ACP_API_KEY`.
 */
export function toCurl(request: CurlRequest): string {
  const url = new URL(request.path, location.origin).toString();
  const parts = ["curl"];
  if (request.stream) parts.push("-N");
  if (request.method !== "GET") parts.push("-X", request.method);
  parts.push(shellQuote(url));
  if (auth.key) parts.push("-H", '"authorization: Bearer $ACP_API_KEY"');
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    parts.push("-H", shellQuote(`${name}: ${value}`));
  }
  if (request.body !== undefined) {
    parts.push("-H", shellQuote("content-type: application/json"));
    parts.push("-d", shellQuote(JSON.stringify(request.body)));
  }
  return parts.join(" ");
}
