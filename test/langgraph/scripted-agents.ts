/** Scripted agents of the LangGraph stream tests: one reports progress then answers, one fails. */
export const REPORTER_AGENTS = `
agents:
  - name: reporter
    version: 1.0.0
    description: Reports progress with custom events, then answers.
    adapter:
      type: scripted
      script:
        - { type: RUN_STARTED, threadId: t, runId: r }
        - { type: CUSTOM, name: progress, value: { done: 1, of: 2 } }
        - { type: CUSTOM, name: progress, value: { done: 2, of: 2 } }
        - { type: TEXT_MESSAGE_START, messageId: m-1, role: assistant }
        - { type: TEXT_MESSAGE_CONTENT, messageId: m-1, delta: "all done" }
        - { type: TEXT_MESSAGE_END, messageId: m-1 }
        - { type: RUN_FINISHED, threadId: t, runId: r }
  - name: failing
    version: 1.0.0
    description: Fails.
    adapter:
      type: scripted
      script:
        - { type: RUN_STARTED, threadId: t, runId: r }
        - { type: RUN_ERROR, message: "the model is down" }
`;
