import type { PushConfigRecord, Storage } from "../storage/types.js";

/**
 * The A2A push notification configs set on runs: HTTP's way to them in storage. The caller has
 * checked the run is the caller's (the A2A face reads the task first).
 */
export class PushConfigService {
  constructor(private readonly storage: Storage) {}

  put(config: PushConfigRecord): Promise<void> {
    return this.storage.putPushConfig(config);
  }

  ofRun(runId: string): Promise<PushConfigRecord[]> {
    return this.storage.getPushConfigs(runId);
  }

  delete(runId: string, configId: string): Promise<boolean> {
    return this.storage.deletePushConfig(runId, configId);
  }
}
