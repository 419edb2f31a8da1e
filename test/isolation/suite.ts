import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Storage } from "../../src/storage/types.js";
import type { TestApp } from "../helpers/app.js";
import { startIssuer, type TestIssuer } from "../helpers/jwt-issuer.js";
import { buildServing, echoAgent } from "../security/helpers.js";

const KEY_A = "app-a-key-0123456789abcdef";
const KEY_B = "app-b-key-0123456789abcdef";
const ADMIN = "admin-key-0123456789abcdef";
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const userSays = (text: string) => ({ messages: [{ role: "user", content: text }] });

interface Owned {
  thread: string;
  run: string;
  stateless: string;
}

/**
 * Two API keys, two token users and an admin key against one server: nothing of one principal
 * is visible, changeable or streamable by another, through every ACP endpoint and the AG-UI
 * face. Run once per storage backend.
 */
export function describeIsolation(backend: string, openStorage: () => Promise<Storage>): void {
  describe(`isolation between principals (${backend})`, () => {
    let t: TestApp;
    let issuer: TestIssuer;
    let storage: Storage;
    const as: Record<string, Record<string, string>> = {};
    const owned: Record<string, Owned> = {};

    beforeAll(async () => {
      issuer = await startIssuer();
      storage = await openStorage();
      t = await buildServing(
        {
          server: {
            auth: {
              keys: [
                { key: KEY_A, name: "app-a" },
                { key: KEY_B, name: "app-b" },
                { key: ADMIN, name: "ops", admin: true },
              ],
              jwt: { issuer: issuer.issuer, audience: issuer.audience, jwksUrl: issuer.jwksUrl },
            },
          },
          agents: [echoAgent("echo")],
        },
        { storage },
      );
      as.a = bearer(KEY_A);
      as.b = bearer(KEY_B);
      as.admin = bearer(ADMIN);
      as.alice = bearer(await issuer.token("alice"));
      as.bob = bearer(await issuer.token("bob"));
      for (const who of ["a", "b", "alice", "bob"]) owned[who] = await makeOwned(who);
    });
    afterAll(async () => {
      await t?.close();
      await storage?.close();
      await issuer?.close();
    });

    async function makeOwned(who: string): Promise<Owned> {
      const headers = as[who]!;
      const thread = await t.call("POST", "/threads", { metadata: { team: "shared" } }, headers);
      expect(thread.status).toBe(200);
      const threadId = (thread.body as { thread_id: string }).thread_id;
      const run = await t.call(
        "POST",
        `/threads/${threadId}/runs/wait`,
        { input: userSays(`hello from ${who}`) },
        headers,
      );
      expect(run.status).toBe(200);
      const stateless = await t.call(
        "POST",
        "/runs/wait",
        { input: userSays(`alone ${who}`), on_completion: "keep", metadata: { team: "shared" } },
        headers,
      );
      expect(stateless.status).toBe(200);
      return {
        thread: threadId,
        run: (run.body as { run: { run_id: string } }).run.run_id,
        stateless: (stateless.body as { run: { run_id: string } }).run.run_id,
      };
    }

    /** Every operation by id, on one principal's thread, thread run and stateless run. */
    function byId(o: Owned): Array<[string, string, unknown?]> {
      const th = `/threads/${o.thread}`;
      const tr = `${th}/runs/${o.run}`;
      const sr = `/runs/${o.stateless}`;
      const create = { input: userSays("let me in") };
      return [
        ["GET", th],
        ["PATCH", th, { metadata: { stolen: true } }],
        ["PATCH", th, { values: { stolen: true } }],
        ["POST", `${th}/copy`],
        ["GET", `${th}/history`],
        ["GET", `${th}/runs`],
        ["POST", `${th}/runs`, create],
        ["POST", `${th}/runs`, { ...create, if_not_exists: "create" }],
        ["POST", `${th}/runs/wait`, create],
        ["POST", `${th}/runs/stream`, create],
        ["GET", tr],
        ["POST", tr, { resume: [] }],
        ["GET", `${tr}/stream`],
        ["GET", `${tr}/wait`],
        ["POST", `${tr}/cancel`],
        ["DELETE", tr],
        ["GET", sr],
        ["POST", sr, { resume: [] }],
        ["GET", `${sr}/stream`],
        ["GET", `${sr}/wait`],
        ["POST", `${sr}/cancel?action=rollback`],
        ["DELETE", sr],
        ["DELETE", th],
      ];
    }

    const pairs: Array<[string, string]> = [
      ["a", "b"],
      ["b", "a"],
      ["alice", "bob"],
      ["bob", "alice"],
      ["a", "alice"],
      ["alice", "a"],
    ];

    it.each(pairs)(
      "%s's thread and runs are 404 to %s on every operation by id",
      async (owner, other) => {
        for (const [method, url, body] of byId(owned[owner]!)) {
          const res = await t.call(method, url, body, as[other]);
          expect(res.status, `${method} ${url}`).toBe(404);
        }
        // Nothing changed: the owner still has all of it, as it was.
        const o = owned[owner]!;
        const thread = await t.call("GET", `/threads/${o.thread}`, undefined, as[owner]);
        expect(thread.status).toBe(200);
        expect((thread.body as { metadata: unknown }).metadata).toEqual({ team: "shared" });
        const runs = await t.call("GET", `/threads/${o.thread}/runs`, undefined, as[owner]);
        expect((runs.body as Array<{ run_id: string }>).map((r) => r.run_id)).toEqual([o.run]);
        const stateless = await t.call("GET", `/runs/${o.stateless}`, undefined, as[owner]);
        expect((stateless.body as { status: string }).status).toBe("success");
      },
    );

    it("the owner reaches its own thread and runs through the same endpoints", async () => {
      const o = owned.bob!;
      for (const url of [
        `/threads/${o.thread}`,
        `/threads/${o.thread}/history`,
        `/threads/${o.thread}/runs/${o.run}`,
        `/threads/${o.thread}/runs/${o.run}/wait`,
        `/runs/${o.stateless}`,
        `/runs/${o.stateless}/wait`,
      ]) {
        expect((await t.call("GET", url, undefined, as.bob)).status, url).toBe(200);
      }
      const stream = await t.call("GET", `/runs/${o.stateless}/stream`, undefined, as.bob);
      expect(stream.status).toBe(200);
      expect(stream.raw).toContain("event: ");
    });

    it("thread and run searches return the caller's items only, in full pages", async () => {
      // Interleaved: paging first and filtering after would leave b's pages short.
      for (let i = 0; i < 3; i++) {
        await t.call("POST", "/threads", { metadata: { page: true } }, as.a);
        await t.call("POST", "/threads", { metadata: { page: true } }, as.b);
      }
      const page = await t.call(
        "POST",
        "/threads/search",
        { metadata: { page: true }, limit: 3 },
        as.b,
      );
      expect((page.body as unknown[]).length).toBe(3);
      for (const who of ["a", "b", "alice", "bob"]) {
        const threads = await t.call("POST", "/threads/search", { limit: 100 }, as[who]);
        const ids = (threads.body as Array<{ thread_id: string }>).map((x) => x.thread_id);
        expect(ids).toContain(owned[who]!.thread);
        for (const other of ["a", "b", "alice", "bob"].filter((x) => x !== who)) {
          expect(ids).not.toContain(owned[other]!.thread);
        }
        const runs = await t.call("POST", "/runs/search", { limit: 100 }, as[who]);
        expect((runs.body as Array<{ run_id: string }>).map((r) => r.run_id)).toEqual([
          owned[who]!.stateless,
        ]);
        const shared = await t.call(
          "POST",
          "/threads/search",
          { metadata: { team: "shared" }, limit: 100 },
          as[who],
        );
        expect((shared.body as Array<{ thread_id: string }>).map((x) => x.thread_id)).toEqual([
          owned[who]!.thread,
        ]);
      }
      const all = await t.call(
        "POST",
        "/threads/search",
        { metadata: { team: "shared" } },
        as.admin,
      );
      expect((all.body as unknown[]).length).toBe(4);
    });

    it("a thread id someone else holds is a conflict on create, never their thread", async () => {
      const taken = owned.a!.thread;
      for (const if_exists of ["raise", "do_nothing"]) {
        const res = await t.call("POST", "/threads", { thread_id: taken, if_exists }, as.b);
        expect(res.status, if_exists).toBe(409);
        expect(JSON.stringify(res.body)).not.toContain("shared");
      }
      const own = await t.call(
        "POST",
        "/threads",
        { thread_id: taken, if_exists: "do_nothing" },
        as.a,
      );
      expect(own.status).toBe(200);
    });

    it("copy creates a thread owned by the caller: an admin's copy is the admin's", async () => {
      const copy = await t.call(
        "POST",
        `/threads/${owned.alice!.thread}/copy`,
        undefined,
        as.admin,
      );
      expect(copy.status).toBe(200);
      const copyId = (copy.body as { thread_id: string }).thread_id;
      expect((await t.call("GET", `/threads/${copyId}`, undefined, as.alice)).status).toBe(404);
      const own = await t.call("POST", `/threads/${owned.bob!.thread}/copy`, undefined, as.bob);
      const ownId = (own.body as { thread_id: string }).thread_id;
      expect((await t.call("GET", `/threads/${ownId}`, undefined, as.bob)).status).toBe(200);
      expect((await t.call("GET", `/threads/${ownId}`, undefined, as.alice)).status).toBe(404);
    });

    it("an admin key reaches everyone's data; data without an owner is the admin's only", async () => {
      for (const who of ["a", "alice"]) {
        const o = owned[who]!;
        expect((await t.call("GET", `/threads/${o.thread}`, undefined, as.admin)).status).toBe(200);
        expect((await t.call("GET", `/runs/${o.stateless}`, undefined, as.admin)).status).toBe(200);
      }
      const { thread } = await storage.createThread({
        thread_id: crypto.randomUUID(),
        metadata: { legacy: true },
        if_exists: "raise",
      });
      for (const who of ["a", "b", "alice", "bob"]) {
        const res = await t.call("GET", `/threads/${thread.thread_id}`, undefined, as[who]);
        expect(res.status, who).toBe(404);
        const found = await t.call(
          "POST",
          "/threads/search",
          { metadata: { legacy: true } },
          as[who],
        );
        expect(found.body, who).toEqual([]);
      }
      expect(
        (await t.call("GET", `/threads/${thread.thread_id}`, undefined, as.admin)).status,
      ).toBe(200);
    });

    it("assigning ownerless data gives it to that principal, and to no one else", async () => {
      const { thread } = await storage.createThread({
        thread_id: crypto.randomUUID(),
        metadata: { before: "ownership" },
        if_exists: "raise",
      });
      const assigned = await storage.assignUnowned("key:app-b");
      expect(assigned.threads).toBeGreaterThanOrEqual(1);
      expect((await t.call("GET", `/threads/${thread.thread_id}`, undefined, as.b)).status).toBe(
        200,
      );
      expect((await t.call("GET", `/threads/${thread.thread_id}`, undefined, as.a)).status).toBe(
        404,
      );
      // Owned data is left alone.
      expect((await storage.getThread(owned.a!.thread))?.principal).toBe("key:app-a");
      expect(await storage.assignUnowned("key:app-b")).toEqual({ threads: 0, runs: 0 });
    });

    it("guessed and fuzzed ids never reach anything of anyone else", async () => {
      const known = Object.values(owned).flatMap((o) => [o.thread, o.run, o.stateless]);
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.uuid(),
            fc.constantFrom(...known),
            fc.string({ minLength: 1, maxLength: 40 }),
          ),
          fc.constantFrom("b", "bob"),
          async (guess, who) => {
            const id = encodeURIComponent(guess);
            const mine = new Set([owned[who]!.thread, owned[who]!.run, owned[who]!.stateless]);
            for (const url of [`/threads/${id}`, `/runs/${id}`, `/threads/${id}/history`]) {
              const res = await t.app.inject({ method: "GET", url, headers: as[who] });
              if (mine.has(guess)) continue;
              expect([404, 422], url).toContain(res.statusCode);
            }
          },
        ),
        { numRuns: 60 },
      );
    });

    it("the AG-UI face: users' same threadId are two threads; another's UUID thread is a new one of the caller's", async () => {
      const input = (threadId: string, text: string) => ({
        threadId,
        runId: crypto.randomUUID(),
        messages: [{ id: crypto.randomUUID(), role: "user", content: text }],
        tools: [],
        context: [],
      });
      const say = (who: string, threadId: string, text: string) =>
        t.app.inject({
          method: "POST",
          url: "/ag-ui/echo",
          payload: input(threadId, text),
          headers: { ...as[who], accept: "text/event-stream" },
        });
      const alice = await say("alice", "main", "alice's secret");
      const bob = await say("bob", "main", "bob's secret");
      expect(alice.statusCode).toBe(200);
      expect(bob.statusCode).toBe(200);
      expect(bob.body).not.toContain("alice's secret");
      const aliceThreads = await t.call("POST", "/threads/search", { limit: 100 }, as.alice);
      const bobThreads = await t.call("POST", "/threads/search", { limit: 100 }, as.bob);
      const messagesOf = (list: unknown) => JSON.stringify(list);
      expect(messagesOf(aliceThreads.body)).toContain("alice's secret");
      expect(messagesOf(aliceThreads.body)).not.toContain("bob's secret");
      expect(messagesOf(bobThreads.body)).not.toContain("alice's secret");

      const uuidThread = owned.a!.thread;
      // Answered as a UUID nobody used: a new conversation of bob's own, nothing of a's in it.
      const intruder = await say("bob", uuidThread, "let me in");
      expect(intruder.statusCode).toBe(200);
      expect(intruder.body).not.toContain("hello from a");
      const resume = await t.app.inject({
        method: "POST",
        url: "/ag-ui/echo",
        payload: {
          ...input(uuidThread, "x"),
          resume: [{ interruptId: "any", status: "resolved", payload: {} }],
        },
        headers: as.bob,
      });
      expect(resume.statusCode).toBe(409);
      expect(resume.body).not.toContain("hello from a");
    });

    it("forged, expired, not-yet-valid, wrongly signed and mis-addressed tokens are refused with 401", async () => {
      const valid = await issuer.token("mallory");
      const [header, payload] = valid.split(".");
      const forgedPayload = Buffer.from(
        JSON.stringify({
          ...JSON.parse(Buffer.from(payload!, "base64url").toString()),
          sub: "alice",
        }),
      ).toString("base64url");
      const unsigned = `${Buffer.from(JSON.stringify({ alg: "none" })).toString("base64url")}.${payload}.`;
      const refused = {
        forged: `${header}.${forgedPayload}.${valid.split(".")[2]}`,
        unsigned,
        expired: await issuer.token("alice", {}, { expiresIn: Math.floor(Date.now() / 1000) - 60 }),
        "not yet valid": await issuer.token("alice", {}, { notBefore: "10m" }),
        "wrong key": await issuer.token("alice", {}, { foreignKey: true }),
        "wrong audience": await issuer.token("alice", { aud: "someone-else" }),
        "wrong issuer": await issuer.token("alice", { iss: "https://evil.example/" }),
        "no subject": await issuer.token(undefined),
        garbage: "a.b.c",
      };
      for (const [what, token] of Object.entries(refused)) {
        const res = await t.call("POST", "/threads/search", {}, bearer(token));
        expect(res.status, what).toBe(401);
        expect(res.headers["www-authenticate"], what).toBe("Bearer");
      }
      expect((await t.call("POST", "/threads/search", {}, bearer(valid))).status).toBe(200);
    });
  });
}
