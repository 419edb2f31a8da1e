/**
 * The preset dictionary a deflated frame page (frame-pages.ts) is compressed with: the JSON
 * around the AG-UI events and the server's own frames, so that a page's first event of each
 * kind is a back-reference too, not only its repeats. A trivial run's page (the echo agent's
 * 1.3 KB) deflates to 0.31 KB with it, 0.48 KB without.
 *
 * Part of the stored format: every deflated page was written with exactly these bytes, so they
 * never change (another dictionary would need a format byte of its own). The most common
 * fragments come last, where DEFLATE's distances to them are shortest.
 */
export const FRAME_DICTIONARY = Buffer.from(
  [
    '{"type":"RUN_ERROR","message":"',
    '{"type":"TOOL_CALL_START","toolCallId":"","toolCallName":"","parentMessageId":"',
    '{"type":"TOOL_CALL_ARGS","toolCallId":"","delta":"',
    '{"type":"TOOL_CALL_END","toolCallId":"',
    '{"type":"TOOL_CALL_RESULT","messageId":"","toolCallId":"","content":"',
    '{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/',
    '{"type":"MESSAGES_SNAPSHOT","messages":[',
    '{"type":"CUSTOM","name":"","value":',
    '{"type":"RAW","event":',
    '{"type":"values","run_id":"","status":"success","output":"run"}',
    '{"rebuild":"events","state":{},"messages":[{"id":"","role":"user","content":"',
    '{"type":"STATE_SNAPSHOT","snapshot":{"',
    '{"type":"RUN_FINISHED","threadId":"","runId":"","result":{"',
    '{"type":"TEXT_MESSAGE_END","messageId":"',
    '{"type":"TEXT_MESSAGE_START","messageId":"","role":"assistant"}',
    '{"type":"TEXT_MESSAGE_CONTENT","messageId":"","delta":"',
    '{"type":"RUN_STARTED","threadId":"","runId":"',
  ].join(""),
  "utf8",
);
