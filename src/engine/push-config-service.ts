import type {
  PushBacklogEntry,
  PushConfigRecord,
  PushCursor,
  Storage,
  WebhookDelivery,
} from "../storage/types.js";

/**
 * The A2A push notification configs set on runs, and their relays' cursors: HTTP's way to
 * them in storage. The caller has
 * checked the run is the caller's (the A2A face reads the task first).
 */
export class PushConfigService {
  constructor(private readonly storage: Storage) {}

  /** False (nothing stored) when the run has `maxPerRun` other configs already. */
  put(config: PushConfigRecord, maxPerRun?: number): Promise<boolean> {
    return this.storage.putPushConfig(config, maxPerRun);
  }

  ofRun(runId: string): Promise<PushConfigRecord[]> {
    return this.storage.getPushConfigs(runId);
  }

  delete(runId: string, configId: string): Promise<boolean> {
    return this.storage.deletePushConfig(runId, configId);
  }

  /** How far the run's relay has queued its events (see `Storage.advancePushCursor`). */
  cursor(runId: string): Promise<PushCursor | null> {
    return this.storage.getPushCursor(runId);
  }

  advance(
    runId: string,
    from: PushCursor | null,
    to: PushCursor,
    deliveries: WebhookDelivery[],
  ): Promise<boolean> {
    return this.storage.advancePushCursor(runId, from, to, deliveries);
  }

  backlog(owner: string, agentIds: readonly string[], limit: number): Promise<PushBacklogEntry[]> {
    return this.storage.pushBacklog(owner, agentIds, limit);
  }
}
