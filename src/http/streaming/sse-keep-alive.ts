/**
 * The keep-alive of every SSE stream (ACP, the AG-UI face, CopilotKit): one comment line and
 * no blank line after it.
 *
 * A comment block (`: keep-alive` and a blank line), the usual form, is what AGNTCY's
 * Python SDK (`agntcy-acp`) cannot survive: its reader dispatches an event at every blank
 * line, whatever the lines before it were, and parses that event's data as a
 * `StreamEventPayload`; the empty data of a comment block fails with "No match found when
 * deserializing the JSON string into StreamEventPayload" and ends the stream. A comment line
 * alone dispatches nothing in that reader (it skips lines starting with ":") nor in a WHATWG
 * EventSource parser (a comment is ignored, and an event is dispatched only at a blank line),
 * nor in `@ag-ui/client`'s (it splits blocks at blank lines and reads only their `data:` lines):
 * the line simply becomes part of the next frame's block, which ends with the frame's own blank
 * line. The HTML standard's advice for proxies is exactly this, "a comment line every 15 seconds
 * or so"; bytes still flow every `keepAliveSeconds`, so an idle proxy (nginx's default read
 * timeout is 60 s) keeps the connection.
 */
export const SSE_KEEP_ALIVE = ": keep-alive\n";
