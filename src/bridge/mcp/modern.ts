/**
 * MCP 2026-07-28, the stateless revision: each request carries its protocol version, client
 * capabilities and client info in `_meta` (no initialize), the `Mcp-Method` / `Mcp-Name`
 * headers mirror the body, every result says its `resultType`, and an interrupted run asks its
 * caller with an `InputRequiredResult` the client answers by retrying the same request with
 * `inputResponses` and the server's `requestState`. Pure mapping; the face does the HTTP.
 */
import type { Interrupt } from "@ag-ui/core";
import { isObject } from "../acp/values.js";
import { elicitationMessageOf, requestedSchemaOf } from "./elicitation.js";

/** The stateless revision this server answers. */
export const MODERN_VERSION = "2026-07-28";

/** The reserved `_meta` keys of 2026-07-28 (Base Protocol, `_meta`). */
export const META = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientInfo: "io.modelcontextprotocol/clientInfo",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  serverInfo: "io.modelcontextprotocol/serverInfo",
  subscriptionId: "io.modelcontextprotocol/subscriptionId",
} as const;

/** The 2026-07-28 error codes (Base Protocol, "Error codes"). */
export const MODERN_ERROR = {
  headerMismatch: -32020,
  missingCapability: -32021,
  unsupportedVersion: -32022,
} as const;

/** Why a request cannot be served, as the JSON-RPC error and HTTP status that say so. */
export class ModernRequestError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly status = 400,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** What a 2026-07-28 request says about itself. */
export interface ModernRequest {
  id: string | number;
  method: string;
  params: Record<string, unknown>;
  version: string;
  clientCapabilities: Record<string, unknown>;
}

/** Whether a POST body (and its headers) is of the stateless revision rather than 2025's. */
export function isModernMessage(body: unknown, methodHeader: unknown): boolean {
  if (typeof methodHeader === "string") return true;
  if (!isObject(body) || !isObject(body.params)) return false;
  const meta = body.params._meta;
  return isObject(meta) && META.protocolVersion in meta;
}

/** A `Mcp-Name` value, decoded when the client sent it in the Base64 sentinel form. */
function decodedHeader(value: string): string {
  const sentinel = /^=\?base64\?(.*)\?=$/.exec(value);
  return sentinel ? Buffer.from(sentinel[1]!, "base64").toString("utf8") : value;
}

/**
 * A 2026-07-28 request, checked as the revision asks: one JSON-RPC request; `_meta` with the
 * protocol version and client capabilities (InvalidParams otherwise); a version this server
 * speaks (UnsupportedProtocolVersion); `MCP-Protocol-Version`, `Mcp-Method` and, for
 * `tools/call`, `Mcp-Name` headers that match the body (HeaderMismatch).
 */
export function modernRequestOf(
  body: unknown,
  headers: Record<string, string | string[] | undefined>,
): ModernRequest {
  if (!isObject(body) || body.jsonrpc !== "2.0" || typeof body.method !== "string") {
    throw new ModernRequestError(-32600, "the body must be one JSON-RPC 2.0 request");
  }
  const id = body.id;
  if (typeof id !== "string" && typeof id !== "number") {
    throw new ModernRequestError(-32600, "a request needs an id (string or number)");
  }
  const params = body.params === undefined ? {} : body.params;
  if (!isObject(params)) throw new ModernRequestError(-32602, "params must be an object");
  const meta = params._meta;
  const version = isObject(meta) ? meta[META.protocolVersion] : undefined;
  const capabilities = isObject(meta) ? meta[META.clientCapabilities] : undefined;
  if (typeof version !== "string" || !isObject(capabilities)) {
    throw new ModernRequestError(
      -32602,
      `params._meta must carry "${META.protocolVersion}" (a string) and "${META.clientCapabilities}" (an object)`,
    );
  }
  if (version !== MODERN_VERSION) {
    throw new ModernRequestError(
      MODERN_ERROR.unsupportedVersion,
      `protocol version ${JSON.stringify(version.slice(0, 50))} is not supported: send ${MODERN_VERSION}, or initialize for 2025-11-25`,
      400,
      { supported: [MODERN_VERSION], requested: version },
    );
  }
  const mismatch = (header: string, expected: string) => {
    const given = headers[header.toLowerCase()];
    if (typeof given !== "string") {
      throw new ModernRequestError(MODERN_ERROR.headerMismatch, `the ${header} header is missing`);
    }
    const value = header === "Mcp-Name" ? decodedHeader(given) : given;
    if (value !== expected) {
      throw new ModernRequestError(
        MODERN_ERROR.headerMismatch,
        `Header mismatch: ${header} header value ${JSON.stringify(value.slice(0, 100))} does not match body value ${JSON.stringify(expected.slice(0, 100))}`,
      );
    }
  };
  mismatch("MCP-Protocol-Version", version);
  mismatch("Mcp-Method", body.method);
  if (body.method === "tools/call") {
    if (typeof params.name !== "string") {
      throw new ModernRequestError(-32602, "params.name must be the tool's name");
    }
    mismatch("Mcp-Name", params.name);
  }
  return { id, method: body.method, params, version, clientCapabilities: capabilities };
}

/** Whether the client declared it can be asked with form elicitation on this request. */
export function canElicitForm(capabilities: Record<string, unknown>): boolean {
  const elicitation = capabilities.elicitation;
  if (!isObject(elicitation)) return false;
  const modes = Object.keys(elicitation);
  return modes.length === 0 || "form" in elicitation;
}

/** The key an interrupt's question has in `inputRequests` (and its answer in `inputResponses`). */
export const inputKeyOf = (interrupt: Pick<Interrupt, "id">) => `interrupt-${interrupt.id}`;

/** An interrupted run's questions as the `inputRequests` of an InputRequiredResult. */
export function inputRequestsOf(
  agentName: string,
  interrupts: readonly Interrupt[],
  expected: (interrupt: Interrupt) => Record<string, unknown> | undefined,
): Record<string, { method: "elicitation/create"; params: Record<string, unknown> }> {
  const requests: Record<
    string,
    { method: "elicitation/create"; params: Record<string, unknown> }
  > = {};
  for (const interrupt of interrupts) {
    const { schema } = requestedSchemaOf(expected(interrupt));
    requests[inputKeyOf(interrupt)] = {
      method: "elicitation/create",
      params: {
        mode: "form",
        message: elicitationMessageOf(agentName, interrupt),
        requestedSchema: schema,
      },
    };
  }
  return requests;
}

/**
 * What `requestState` names: the run a retry resumes, the tool it was called as, and the
 * interrupts it asked about. It carries no authority: the server reads the run as the caller
 * of the retry (another caller's run is not found) and checks it still waits for those
 * interrupts, so a forged or replayed state can only fail.
 */
export interface RequestState {
  runId: string;
  tool: string;
  interruptIds: string[];
}

export const encodeRequestState = (state: RequestState) =>
  Buffer.from(
    JSON.stringify({ v: 1, r: state.runId, t: state.tool, i: state.interruptIds }),
  ).toString("base64url");

/** A requestState this server gave; undefined for anything else. */
export function decodeRequestState(value: unknown): RequestState | undefined {
  if (typeof value !== "string" || value.length > 4096 || !/^[A-Za-z0-9_-]+$/.test(value)) {
    return undefined;
  }
  try {
    const parsed: unknown = JSON.parse(Buffer.from(value, "base64url").toString("utf8"));
    if (!isObject(parsed) || parsed.v !== 1) return undefined;
    const { r, t, i } = parsed;
    if (typeof r !== "string" || typeof t !== "string" || !Array.isArray(i)) return undefined;
    if (!i.every((id) => typeof id === "string")) return undefined;
    return { runId: r, tool: t, interruptIds: i as string[] };
  } catch {
    return undefined;
  }
}
