import type { Principal } from "../../auth/principal.js";
import { A2aError } from "../../bridge/a2a/index.js";
import { a2aOptionsOf } from "../../config/agent-a2a.js";
import type { AgentRegistry, RegisteredAgent } from "../../config/registry.js";
import type { RunService } from "../../engine/run-service.js";
import type { ThreadService } from "../../engine/thread-service.js";
import { A2aFace } from "./face.js";
import type { A2aPush } from "./push.js";

/**
 * The A2A operations layer every binding calls (JSON-RPC and HTTP+JSON here; any other binding
 * the same way): the agent an interface names, checked against the caller, and that agent's
 * face, whose operations take ProtoJSON params and answer ProtoJSON results (see face.ts and
 * operations.ts). Nothing here knows HTTP.
 */
export class A2aAgents {
  private readonly faces = new Map<string, A2aFace>();

  constructor(
    private readonly registry: AgentRegistry,
    private readonly runs: RunService,
    private readonly threads: ThreadService,
    /** Push notifications (none: the operations answer PushNotificationNotSupported). */
    private readonly push?: A2aPush,
  ) {}

  /** The agent `ref` names (`name`, its highest version, or `name@version`), or AgentNotFound. */
  agent(ref: string): RegisteredAgent {
    const at = ref.indexOf("@");
    const agent =
      at === -1
        ? this.registry.getByName(ref)
        : this.registry.getByName(ref.slice(0, at), ref.slice(at + 1));
    if (!agent) {
      throw new A2aError("AgentNotFound", `agent ${JSON.stringify(ref.slice(0, 300))} not found`);
    }
    return agent;
  }

  /** The face of the agent `ref` names, for a caller allowed to use it (else PermissionDenied). */
  faceOf(ref: string, caller: Principal): A2aFace {
    const agent = this.agent(ref);
    if (caller.agentIds && !caller.agentIds.has(agent.agentId)) {
      throw new A2aError("PermissionDenied", `${caller.label} may not use agent ${agent.name}`);
    }
    return this.faceFor(agent);
  }

  /** An agent's face (one per agent, made on first use). */
  faceFor(agent: RegisteredAgent): A2aFace {
    let face = this.faces.get(agent.agentId);
    if (!face) {
      face = new A2aFace(this.runs, this.threads, agent, a2aOptionsOf(agent.config), this.push);
      this.faces.set(agent.agentId, face);
    }
    return face;
  }

  /** Every configured agent. */
  list(): readonly RegisteredAgent[] {
    return this.registry.list();
  }
}
