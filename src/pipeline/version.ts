/**
 * The AG-UI protocol version this server speaks: what it sends as
 * `RunAgentInput.protocolVersion` and states in its own RUN_STARTED. It is the version
 * segment of the bundled schema's `$id` (https://ag-ui.com/spec/1.0/schema.json).
 */
export const AGUI_PROTOCOL_VERSION = "1.0";

/**
 * A producer's RUN_STARTED `protocolVersion` judged against ours. The grammar is exactly
 * MAJOR.MINOR; anything else cannot be compared and is treated like a newer version.
 */
export function compareDeclaredProtocol(
  declared: string,
  spoken: string = AGUI_PROTOCOL_VERSION,
): "same" | "older" | "newer" | "uninterpretable" {
  const d = /^(\d+)\.(\d+)$/.exec(declared);
  const s = /^(\d+)\.(\d+)$/.exec(spoken);
  if (!d || !s) return "uninterpretable";
  const diff = Number(d[1]) - Number(s[1]) || Number(d[2]) - Number(s[2]);
  return diff === 0 ? "same" : diff < 0 ? "older" : "newer";
}

/**
 * The warning a consumer owes for a producer's declaration, or undefined when there is
 * nothing to say (absent, the same version, or older — a downgrade is noticed quietly).
 */
export function producerVersionWarning(declared: unknown): string | undefined {
  if (typeof declared !== "string") return undefined;
  switch (compareDeclaredProtocol(declared)) {
    case "uninterpretable":
      return `the producer declared protocol version '${declared}', which this server cannot interpret; proceeding as AG-UI ${AGUI_PROTOCOL_VERSION}`;
    case "newer":
      return `the producer speaks AG-UI ${declared}; this server speaks ${AGUI_PROTOCOL_VERSION}, so material it does not recognise is stripped with warnings`;
    default:
      return undefined;
  }
}
