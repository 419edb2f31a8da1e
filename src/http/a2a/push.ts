import { type Principal, SYSTEM } from "../../auth/principal.js";
import {
  A2aError,
  FINAL_STATES,
  invalidParams,
  type TaskPushNotificationConfig,
  taskStateOf,
} from "../../bridge/a2a/index.js";
import type { PushConfigService } from "../../engine/push-config-service.js";
import type { PushConfigRecord } from "../../storage/types.js";
import { newId } from "../../util/ids.js";
import type { WebhookDeliverer } from "../../webhooks/deliverer.js";
import type { A2aTasks, TaskHandle } from "./tasks.js";

type Rec = Record<string, unknown>;
const isRecord = (value: unknown): value is Rec =>
  typeof value === "object" && value !== null && !Array.isArray(value);

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

/**
 * A client's TaskPushNotificationConfig, checked but for its URL, which the webhook guard
 * checks (`A2aPush.check`, with DNS), and again at delivery.
 */
export function checkPushConfig(params: unknown, taskId?: string): TaskPushNotificationConfig {
  if (!isRecord(params)) throw invalidParams("the push notification config must be an object");
  const url = text(params, "url", 2048, true)!;
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
 * What push needs of the webhook deliverer: its check of a config's URL, deliveries to store,
 * and a wake-up after.
 */
export type PushDeliverer = Pick<WebhookDeliverer, "checkTarget" | "delivery" | "wake">;

/** The headers a notification carries for a config: its token and its authorization. */
function headersOf(config: PushConfigRecord): Record<string, string> {
  // The media type of A2A's HTTP messages (specification §4.3.3, §14.1.1).
  const headers: Record<string, string> = {
    "x-acp-event": PUSH_EVENT,
    "content-type": "application/a2a+json",
  };
  if (config.token) headers["x-a2a-notification-token"] = config.token;
  const auth = config.authentication;
  if (auth) {
    headers.authorization = auth.credentials ? `${auth.scheme} ${auth.credentials}` : auth.scheme;
  }
  return headers;
}

/** How many relays behind one sweep looks for. */
const SWEEP_LIMIT = 100;

/**
 * A2A push notifications: configs stored with the task's run, and every stream event of a task
 * that has configs handed to the webhook deliverer once per config, with the config's token in
 * `X-A2A-Notification-Token` and its authorization as the `Authorization` header.
 *
 * Durable: a task's relay records in storage how far it has queued the task's events (its
 * cursor, moved in the same transaction as the deliveries it queues, only from where this
 * relay read it, and only over frames already stored). A relay that stops (the server closes or dies) leaves the cursor where it got
 * to; a sweep, at start-up and then periodically, restarts the relays that are behind — a
 * finished or paused task's on any replica, a running task's on the replica executing it —
 * and they carry on from the cursor. Two relays of one task never queue an event twice: the
 * one that finds the cursor moved stops.
 */
export class A2aPush {
  /** The runs whose events this process relays. */
  private readonly relaying = new Set<string>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly configs: PushConfigService,
    private readonly deliverer: PushDeliverer,
    private readonly signal: AbortSignal,
    /** Configs one task may have at once (`server.a2a.maxPushConfigsPerTask`). */
    private readonly maxConfigsPerTask: number,
  ) {
    signal.addEventListener("abort", () => clearInterval(this.sweeper), { once: true });
  }

  /**
   * Restarts the relays behind now and every `everyMs`: `owner` is this replica's engine (the
   * running tasks it executes are its to relay), `agentIds` the agents configured here (the
   * tasks of an agent no longer configured are not relayed), `tasksOf` the face of one.
   */
  startSweeps(
    owner: string,
    agentIds: readonly string[],
    tasksOf: (agentId: string) => A2aTasks | undefined,
    everyMs: number,
    onError: (err: unknown) => void,
  ): void {
    const sweep = async () => {
      try {
        for (const { run_id, agent_id } of await this.configs.backlog(
          owner,
          agentIds,
          SWEEP_LIMIT,
        )) {
          const tasks = tasksOf(agent_id);
          if (tasks) this.relay(tasks, run_id);
        }
      } catch (err) {
        if (!this.signal.aborted) onError(err);
      }
    };
    if (this.signal.aborted) return;
    void sweep();
    this.sweeper = setInterval(sweep, everyMs);
    this.sweeper.unref();
  }

  /**
   * A client's config, checked, its URL too: a target delivery would refuse (a private
   * address, unless allowed) is InvalidParams naming the rule, at once.
   */
  async check(params: unknown, taskId?: string): Promise<TaskPushNotificationConfig> {
    const config = checkPushConfig(params, taskId);
    await this.deliverer.checkTarget(config.url);
    return config;
  }

  async create(tasks: A2aTasks, who: Principal, params: unknown, taskId?: string) {
    const config = await this.check(params, taskId);
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
    if (!(await this.configs.put(record, this.maxConfigsPerTask))) {
      throw invalidParams(
        `task ${JSON.stringify(record.run_id)} has ${this.maxConfigsPerTask} push notification configs already, the most a task may have (server.a2a.maxPushConfigsPerTask): delete one first`,
      );
    }
    const final = FINAL_STATES.has(taskStateOf(handle.view));
    // The task's first config starts its cursor where the task stands: what comes after is
    // relayed (a later config joins the relay where it is).
    const start = { seq: handle.run.last_seq, closed: final };
    await this.configs.advance(handle.run.run_id, null, start, []);
    if (!final) this.relay(tasks, handle.run.run_id);
    return toWire(record);
  }

  /** A resumed task relays again when it has configs (its relay ended when it paused). */
  async resumed(tasks: A2aTasks, handle: TaskHandle): Promise<void> {
    if ((await this.configs.ofRun(handle.run.run_id)).length > 0) {
      this.relay(tasks, handle.run.run_id);
    }
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

  /**
   * Follows the task's run from its cursor and queues each event once per config, moving the
   * cursor with them; stops when the task finishes or pauses, when the server closes, or when
   * another relay moved the cursor first.
   */
  private relay(tasks: A2aTasks, runId: string): void {
    if (this.relaying.has(runId) || this.signal.aborted) return;
    this.relaying.add(runId);
    void (async () => {
      try {
        let cursor = await this.configs.cursor(runId);
        if (!cursor) return;
        const handle = await tasks.get(SYSTEM, runId);
        const { run } = handle;
        if (cursor.closed && cursor.seq >= run.last_seq && run.status !== "pending") return;
        for await (const step of tasks.followSteps(handle, cursor.seq, this.signal)) {
          const configs = await this.configs.ofRun(runId);
          const deliveries = step.events.flatMap((event) =>
            configs.map((config) =>
              // One stream per config: in order for each receiver, none waits for another.
              this.deliverer.delivery(
                runId,
                config.url,
                event,
                headersOf(config),
                `${runId}/push/${config.config_id}`,
              ),
            ),
          );
          // The cursor covers stored frames only: a replica that reruns the task after this
          // one died numbers its frames on from what is stored.
          if (!(await tasks.stored(runId, step.seq, this.signal))) return;
          const to = { seq: step.seq, closed: step.closing };
          if (!(await this.configs.advance(runId, cursor, to, deliveries))) return;
          cursor = to;
          this.deliverer.wake();
        }
      } catch {
        // The run was deleted meanwhile, or the server is closing: the sweep takes it from here.
      } finally {
        this.relaying.delete(runId);
      }
    })();
  }
}
