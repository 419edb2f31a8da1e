/** The agents of the MCP replica tests: a slow echo, and one that asks for approval once. */
export const MCP_REPLICA_CONFIG = `
server:
  keepAliveSeconds: 0
  leaseSeconds: 5
agents:
  - name: slow
    version: 1.0.0
    description: Echo that takes its time.
    adapter: { type: echo, delayMs: 60 }
  - name: approval
    version: 1.0.0
    description: Asks, then finishes.
    adapter:
      type: scripted
      segments:
        - - { type: RUN_STARTED, threadId: t, runId: r }
          - type: RUN_FINISHED
            threadId: t
            runId: r
            outcome:
              type: interrupt
              interrupts: [{ id: ask-1, reason: approval, message: Go ahead? }]
        - - { type: RUN_STARTED, threadId: t, runId: r }
          - { type: TEXT_MESSAGE_START, messageId: m, role: assistant }
          - { type: TEXT_MESSAGE_CONTENT, messageId: m, delta: "Done." }
          - { type: TEXT_MESSAGE_END, messageId: m }
          - { type: RUN_FINISHED, threadId: t, runId: r }
    specs:
      interrupts:
        - interrupt_type: approval
          resume_payload:
            type: object
            required: [approved]
            properties: { approved: { type: boolean } }
`;
