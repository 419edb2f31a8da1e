/**
 * Strings at least this long go to the socket as their UTF-8 bytes instead.
 *
 * Node writes a string to a socket through a buffer sized for the worst case, three bytes per
 * UTF-16 unit: a 10 MB answer held 29 MB of buffers while it was sent (measured with
 * `process.memoryUsage().arrayBuffers`), against 10 MB for the same answer written as a
 * Buffer. Encoding it ourselves costs one pass over the string, which only pays off when the
 * string is large; short ones are written as they are.
 */
const ENCODE_FROM_CHARS = 64 * 1024;

/** The chunk as it is best written to a socket: its bytes when it is a long string. */
export function wireChunk<T extends string | Uint8Array>(chunk: T): T | Buffer {
  return typeof chunk === "string" && chunk.length >= ENCODE_FROM_CHARS
    ? Buffer.from(chunk, "utf8")
    : chunk;
}
