/** The shapes of the server's answers the inspector reads (ACP 0.2.1, and its own API). */

export type JsonSchema = Record<string, unknown>;

export interface AcpAgent {
  agent_id: string;
  metadata: {
    ref: { name: string; version: string; url?: string };
    description: string;
  };
}

export interface AcpDescriptor {
  metadata: AcpAgent["metadata"];
  specs: {
    input: JsonSchema;
    output: JsonSchema;
    config: JsonSchema;
    thread_state?: JsonSchema;
    custom_streaming_update?: JsonSchema;
    interrupts?: Array<{
      interrupt_type: string;
      interrupt_payload: JsonSchema;
      resume_payload: JsonSchema;
    }>;
    capabilities: {
      threads?: boolean;
      interrupts?: boolean;
      callbacks?: boolean;
      streaming?: { values?: boolean; custom?: boolean };
    };
  };
}

export interface AcpMessage {
  role: string;
  content: string | Array<Record<string, unknown>>;
  id?: string;
  [key: string]: unknown;
}

export interface AcpThread {
  thread_id: string;
  created_at: string;
  updated_at: string;
  metadata: Record<string, unknown>;
  status: string;
  values?: Record<string, unknown>;
  messages?: AcpMessage[];
}

export interface AcpThreadState {
  checkpoint: { checkpoint_id: string };
  values: Record<string, unknown>;
  messages?: AcpMessage[];
  metadata?: Record<string, unknown>;
}

export interface AcpRun {
  run_id: string;
  thread_id?: string;
  agent_id: string;
  created_at: string;
  updated_at: string;
  status: string;
  creation: Record<string, unknown>;
}

/** An AG-UI resume entry: the answer to one interrupt. */
export interface ResumeEntry {
  interruptId: string;
  status: "resolved" | "cancelled";
  payload?: unknown;
  [key: string]: unknown;
}

/** A segment of a run: its start, and each resume's, with the answers that resume gave. */
export interface RunSegment {
  agui_run_id: string;
  started_at: string;
  ended_at: string | null;
  resume?: ResumeEntry[];
}

/**
 * A run as the inspector API describes it: the ACP run plus kind, the face it came through
 * (null for runs from before faces were recorded), segments and output (in lists, only its
 * type and an error's code and description).
 */
export interface RunInfo extends AcpRun {
  kind: "stateful" | "stateless";
  face: string | null;
  segments: RunSegment[];
  last_seq: number;
  output: Record<string, unknown> | null;
}

export interface StoredFrames {
  run: RunInfo;
  frames: Array<{
    seq: number;
    mode: "custom" | "subagent" | "values" | "final";
    data: Record<string, unknown>;
  }>;
}

export interface AgentMetrics {
  agent: string;
  pending: number;
  executing: number;
  created: number;
  stopped: Record<string, number>;
  events: number;
  events_rejected: number;
}

export interface Overview {
  server: {
    version: string;
    storage: string;
    ready: boolean;
    /** What a caller must present: an API key, an end user's token (either will do). */
    auth: { keys: boolean; tokens: boolean };
    started_at: string;
    uptime_seconds: number;
  };
  metrics:
    | { enabled: boolean; available: false; reason: string }
    | {
        enabled: true;
        available: true;
        agents: AgentMetrics[];
        open_streams: number;
        webhooks: Record<string, number>;
      };
}
