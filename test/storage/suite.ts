/**
 * The storage contract suite: every backend runs these same tests (the langgraphjs
 * checkpoint-validation pattern). A backend's test file calls `describeStorageContract` with a
 * factory that returns a fresh, opened, empty storage; the suite closes it after each test.
 */
import { describe } from "vitest";
import type { Storage } from "../../src/storage/types.js";
import { describeCheckpoints } from "./contract/checkpoints.js";
import { describeClaims } from "./contract/claims.js";
import { describeFencing } from "./contract/fencing.js";
import { describeFramesAndWebhooks } from "./contract/frames-webhooks.js";
import { describeHeldInserts } from "./contract/held-inserts.js";
import { describeNewThreadRuns } from "./contract/new-thread-runs.js";
import { describePushConfigs } from "./contract/push-configs.js";
import { describeRetention } from "./contract/retention.js";
import { describeRunEnds } from "./contract/run-ends.js";
import { describeRunExpiries } from "./contract/run-expiries.js";
import { describeRunSearch } from "./contract/run-search.js";
import { describeRuns } from "./contract/runs.js";
import { describeThreads } from "./contract/threads.js";
import { describeWebhookStreams } from "./contract/webhook-streams.js";

export function describeStorageContract(name: string, factory: () => Promise<Storage>): void {
  describe(`${name} storage contract`, () => {
    describe("threads", () => describeThreads(factory));
    describe("checkpoints", () => describeCheckpoints(factory));
    describe("runs", () => describeRuns(factory));
    describe("the run search in update order", () => describeRunSearch(factory));
    describe("run claims and leases", () => describeClaims(factory));
    describe("fenced writes", () => describeFencing(factory));
    describe("a run in two commits", () => describeRunEnds(factory));
    describe("held inserts", () => describeHeldInserts(factory));
    describe("a new thread with its first run", () => describeNewThreadRuns(factory));
    describe("frames and webhooks", () => describeFramesAndWebhooks(factory));
    describe("retention", () => describeRetention(factory));
    describe("run expiries", () => describeRunExpiries(factory));
    describe("A2A push configs", () => describePushConfigs(factory));
    describe("webhook streams", () => describeWebhookStreams(factory));
  });
}
