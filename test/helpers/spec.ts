import { expect } from "vitest";
import type { AcpSchemaName } from "../../src/validation/index.js";
import { acpOperations, acpValidator, describeErrors } from "../../src/validation/index.js";

type Operation = (typeof acpOperations)[keyof typeof acpOperations];
interface OperationEntry {
  id: string;
  method: string;
  path: string;
  pattern: RegExp;
  responses: Record<string, { schema: string; mediaType: string } | null>;
}

/** Every operation of schemas/acp.openapi.json, with its path template as a regex. */
const operations: OperationEntry[] = Object.entries(acpOperations).map(([id, op]) => {
  const operation = op as Operation & { responses: OperationEntry["responses"] };
  const pattern = new RegExp(`^${operation.path.replace(/\{[^}]+\}/g, "[^/]+")}$`);
  return {
    id,
    method: operation.method,
    path: operation.path,
    pattern,
    responses: operation.responses,
  };
});

export function findOperation(method: string, url: string): OperationEntry | undefined {
  const path = url.split("?")[0]!;
  // Literal segments win over templates (/runs/search before /runs/{run_id}).
  const matches = operations.filter(
    (op) => op.method === method.toUpperCase() && op.pattern.test(path),
  );
  matches.sort((a, b) => countTemplates(a.path) - countTemplates(b.path));
  return matches[0];
}

function countTemplates(path: string): number {
  return (path.match(/\{/g) ?? []).length;
}

/**
 * Client errors the spec does not list for every operation but that any endpoint may answer,
 * always with the spec's string ErrorResponse (e.g. 422 for a malformed path id on an
 * operation that lists only 404).
 */
const GENERIC_ERRORS = new Set([400, 401, 403, 409, 413, 415, 422, 429]);

/**
 * Asserts a response matches what the spec declares for its operation and status: the status
 * is listed (or a generic client error), and the JSON body validates against the declared
 * schema. Returns the parsed body.
 */
export function assertSpecResponse(
  method: string,
  url: string,
  status: number,
  contentType: string | undefined,
  rawBody: string,
): unknown {
  const op = findOperation(method, url);
  expect(op, `${method} ${url} is not an operation of the ACP spec`).toBeDefined();
  expect(status, `${method} ${url} answered ${status}: ${rawBody}`).toBeLessThan(500);
  const declared = op!.responses[String(status)];
  if (status === 204) {
    expect(rawBody).toBe("");
    return undefined;
  }
  if (declared === undefined) {
    expect(
      GENERIC_ERRORS.has(status),
      `${op!.id} does not declare status ${status}: ${rawBody}`,
    ).toBe(true);
  }
  const schemaName = (declared?.schema ?? "ErrorResponse") as AcpSchemaName;
  const mediaType = declared?.mediaType ?? "application/json";
  if (mediaType === "text/event-stream") {
    expect(contentType ?? "").toContain("text/event-stream");
    return rawBody;
  }
  expect(contentType ?? "", `${op!.id} ${status} content type`).toContain("application/json");
  const body = JSON.parse(rawBody) as unknown;
  const validate = acpValidator(schemaName);
  const valid = validate(body);
  expect(
    valid,
    `${op!.id} ${status} body does not match ${schemaName}: ${describeErrors(validate.errors, "response")}\n${rawBody}`,
  ).toBe(true);
  return body;
}

/** Validates one SSE frame (`id`, `event`, parsed `data`) against the spec's RunOutputStream. */
export function assertSpecFrame(frame: { id: string; event: string; data: unknown }): void {
  const validate = acpValidator("RunOutputStream");
  const ok = validate(frame);
  expect(
    ok,
    `frame does not match RunOutputStream: ${describeErrors(validate.errors, "frame")}\n${JSON.stringify(frame)}`,
  ).toBe(true);
}
