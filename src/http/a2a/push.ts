import type { Principal } from "../../auth/principal.js";
import {
  A2aError,
  FINAL_STATES,
  invalidParams,
  type StreamResponse,
  type TaskPushNotificationConfig,
  taskStateOf,
} from "../../bridge/a2a/index.js";
import type { PushConfigService } from "../../engine/push-config-service.js";
import { newId } from "../../ids.js";
import type { PushConfigRecord } from "../../storage/types.js";
import type { A2aTasks, TaskHandle } from "./tasks.js";

type Rec = Record<string, unknown>;
const isRecord = (value: unknown): value is Rec =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Stores one notification for delivery (the webhook deliverer: retries, the target guard). */
export type Deliver = (
  runId: string,
  url: string,
  body: StreamResponse,
  headers: Record<string, string>,
) => Promise<void>;

/** The event name a push notification's `x-acp-event` header carries. */
export const PUSH_EVENT = "a2a.stream_response";

function text(params: Rec, key: string, max: number, required: boolean): string | undefined {
  const value = params[key];
  if (value === undefined || value === null || value === "") {
    if (required) throw invalidParams(`${key} is required`);
    return undefined;
  }
  if (typeof value !== "string" || value.length > max) {
    throw invalidParams(`${key} must be a string of at most ${max} characters`);
  }
  return value;
}

/** A client's TaskPushNotificationConfig, checked (the target itself is checked at delivery). */
export function checkPushConfig(params: unknown, taskId?: string): TaskPushNotificationConfig {
  if (!isRecord(params)) throw invalidParams("the push notification config must be an object");
  const url = text(params, "url", 2048, true)!;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidParams("url must be an absolute http(s) URL");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw invalidParams("url must be an absolute http(s) URL");
  }
  const config: TaskPushNotificationConfig = { url };
  const id = text(params, "id", 200, false);
  if (id) config.id = id;
  const task = taskId ?? text(params, "taskId", 1000, false);
  if (task) config.taskId = task;
  const token = text(params, "token", 4096, false);
  if (token) config.token = token;
  if (params.authentication !== undefined && params.authentication !== null) {
    if (!isRecord(params.authentication)) throw invalidParams("authentication must be an object");
    const scheme = text(params.authentication, "scheme", 100, true)!;
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(scheme)) {
      throw invalidParams("authentication.scheme must be an HTTP authentication scheme name");
    }
    const credentials = text(params.authentication, "credentials", 4096, false);
    if (credentials && /[\r\n]/.test(credentials)) {
      throw invalidParams("authentication.credentials must be one line");
    }
    config.authentication = { scheme, ...(credentials ? { credentials } : {}) };
  }
  return config;
}

const toWire = (record: PushConfigRecord): TaskPushNotificationConfig => ({
  id: record.config_id,
  taskId: record.run_id,
  url: record.url,
  ...(record.token ? { token: record.token } : {}),
  ...(record.authentication ? { authentication: record.authentication } : {}),
});

/**
 * A2A push notifications: configs stored with the task's run, and every stream event of a task
 * that has configs handed to the webhook deliverer once per config (stored first, so retried
 * and delivered even after a restart), with the config's token in `X-A2A-Notification-Token`
 * and its authentication as the `Authorization` header.
 */
export class A2aPush {
  /** The runs whose events this process relays. */
  private readonly relaying = new Set<string>();

  constructor(
    private readonly configs: PushConfigService,
    private readonly deliver: Deliver,
    private readonly signal: AbortSignal,
  ) {}

  async create(tasks: A2aTasks, who: Principal, params: unknown, taskId?: string) {
    const config = checkPushConfig(params, taskId);
    if (!config.taskId) throw invalidParams("taskId is required");
    const handle = await tasks.get(who, config.taskId);
    return this.attach(tasks, handle, config);
  }

  /** Stores a config on the task and relays the task's events from now on. */
  async attach(tasks: A2aTasks, handle: TaskHandle, config: TaskPushNotificationConfig) {
    const record: PushConfigRecord = {
      run_id: handle.run.run_id,
      config_id: config.id ?? newId(),
      url: config.url,
      token: config.token ?? null,
      authentication: config.authentication ?? null,
      created_at: new Date().toISOString(),
    };
    await this.configs.put(record);
    if (!FINAL_STATES.has(taskStateOf(handle.view))) this.relay(tasks, handle);
    return toWire(record);
  }

  /** A resumed task relays again when it has configs (its relay ended when it paused). */
  async resumed(tasks: A2aTasks, handle: TaskHandle): Promise<void> {
    if ((await this.configs.ofRun(handle.run.run_id)).length > 0) this.relay(tasks, handle);
  }

  async get(tasks: A2aTasks, who: Principal, params: unknown) {
    const { taskId, id } = this.ids(params, true);
    await tasks.get(who, taskId);
    const found = (await this.configs.ofRun(taskId)).find((c) => c.config_id === id);
    if (!found) throw this.missing(taskId, id!);
    return toWire(found);
  }

  async list(tasks: A2aTasks, who: Principal, params: unknown) {
    const { taskId } = this.ids(params, false);
    await tasks.get(who, taskId);
    return { configs: (await this.configs.ofRun(taskId)).map(toWire), nextPageToken: "" };
  }

  async delete(tasks: A2aTasks, who: Principal, params: unknown) {
    const { taskId, id } = this.ids(params, true);
    await tasks.get(who, taskId);
    if (!(await this.configs.delete(taskId, id!))) throw this.missing(taskId, id!);
    return {};
  }

  private ids(params: unknown, withId: boolean) {
    if (!isRecord(params)) throw invalidParams("params must be an object");
    const taskId = text(params, "taskId", 1000, true)!;
    const id = withId ? text(params, "id", 200, true) : undefined;
    return { taskId, id };
  }

  private missing(taskId: string, id: string) {
    return new A2aError(
      "TaskNotFound",
      `task ${JSON.stringify(taskId)} has no push notification config ${JSON.stringify(id)}`,
      { taskId },
    );
  }

  /** Follows the task's run and hands each event to the deliverer, once per config. */
  private relay(tasks: A2aTasks, handle: TaskHandle): void {
    const runId = handle.run.run_id;
    if (this.relaying.has(runId)) return;
    this.relaying.add(runId);
    void (async () => {
      try {
        for await (const event of tasks.follow(handle, handle.run.last_seq, this.signal)) {
          for (const config of await this.configs.ofRun(runId)) {
            const headers: Record<string, string> = { "x-acp-event": PUSH_EVENT };
            if (config.token) headers["x-a2a-notification-token"] = config.token;
            const auth = config.authentication;
            if (auth) {
              headers.authorization = auth.credentials
                ? `${auth.scheme} ${auth.credentials}`
                : auth.scheme;
            }
            await this.deliver(runId, config.url, event, headers);
          }
        }
      } catch {
        // The run was deleted meanwhile, or the server is closing: nothing more to relay.
      } finally {
        this.relaying.delete(runId);
      }
    })();
  }
}
