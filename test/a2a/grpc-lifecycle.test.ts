/**
 * The gRPC binding's life with the server: off unless configured (no GRPC interface in the
 * cards), its public address as configured, a port it cannot take stops the start, a server
 * without authentication has no extended card over gRPC either, its streams bounded, one log
 * line per call, and closing the server ends the streams of its runs and the binding with it.
 */

import { Writable } from "node:stream";
import type { StreamResponse } from "@a2a-js/sdk";
import { AgentCard } from "@a2a-js/sdk";
import { GrpcTransportFactory } from "@a2a-js/sdk/client/grpc";
import { decodeErrorInfo, decodeStatus } from "@a2a-js/sdk/errors/grpc";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS } from "../../src/config/settings.js";
import { createLogger } from "../../src/util/logging.js";
import { build, type TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";
import { buildServing, echoAgent } from "../security/helpers.js";
import { grpcClient, grpcOn } from "./grpc-helpers.js";
import { asTask, userMessage } from "./helpers.js";

const YAML = `
agents:
  - name: slow
    version: 1.0.0
    description: Echo that takes its time.
    adapter: { type: echo, delayMs: 50 }
`;

type Interface = { url: string; protocolBinding: string };
const cardOf = async (base: string) =>
  (await (await fetch(`${base}/a2a/slow/.well-known/agent-card.json`)).json()) as {
    supportedInterfaces: Interface[];
  };
const grpcAddress = async (base: string) =>
  (await cardOf(base)).supportedInterfaces.find((i) => i.protocolBinding === "GRPC")?.url;

describe("the A2A gRPC binding's life", () => {
  const apps: TestApp[] = [];
  afterAll(async () => {
    for (const app of apps) await app.close().catch(() => {});
  });
  const start = async (settings = grpcOn()) => {
    const t = await build({ yaml: YAML, unchecked: true, settings });
    apps.push(t);
    return { t, base: await listen(t) };
  };

  it("is off by default: no GRPC interface in the cards", async () => {
    expect(DEFAULT_SETTINGS.a2a.grpc.enabled).toBe(false);
    const { base } = await start({ a2a: DEFAULT_SETTINGS.a2a });
    const card = await cardOf(base);
    expect(card.supportedInterfaces.map((i) => i.protocolBinding)).toEqual([
      "JSONRPC",
      "HTTP+JSON",
      "JSONRPC",
    ]);
  });

  it("gives the public address in the cards when one is configured, and checks it", async () => {
    const server = (grpc: Record<string, unknown>) => ({
      server: { a2a: { grpc: { enabled: true, port: 0, ...grpc } } },
      agents: [echoAgent("slow")],
    });
    const t = await buildServing(server({ publicAddress: "a2a.example.com:443" }), {
      unchecked: true,
    });
    apps.push(t);
    expect(await grpcAddress(await listen(t))).toBe("a2a.example.com:443");
    await expect(
      buildServing(server({ publicAddress: "https://a2a.example.com" }), { unchecked: true }),
    ).rejects.toThrow(/server\.a2a\.grpc\.publicAddress.*host:port/);
  });

  it("does not start on a port it cannot take, and says which", async () => {
    const { base } = await start();
    const taken = Number((await grpcAddress(base))!.split(":").at(-1));
    const settings = grpcOn();
    settings.a2a.grpc.port = taken;
    await expect(build({ yaml: YAML, unchecked: true, settings })).rejects.toThrow(
      `A2A gRPC binding: cannot listen on 127.0.0.1:${taken}`,
    );
  });

  it("has no extended card without authentication: FAILED_PRECONDITION", async () => {
    const { base } = await start();
    const address = (await grpcAddress(base))!;
    const card = AgentCard.fromJSON(
      await (await fetch(`${base}/a2a/slow/.well-known/agent-card.json`)).json(),
    );
    expect(card.capabilities?.extendedAgentCard).toBe(false);
    // The SDK's own gRPC transport, asked directly (its client would not ask).
    const transport = await new GrpcTransportFactory().create(address, card);
    const err = (await transport
      .getExtendedAgentCard({ tenant: "slow" } as never)
      .catch((e: unknown) => e)) as { status: number; statusDetailsBin: Buffer };
    expect(err.status).toBe(9);
    const info = decodeErrorInfo(decodeStatus(err.statusDetailsBin).details[0]!.value);
    expect(info.reason).toBe("UNSUPPORTED_OPERATION");
  });

  it("bounds its open streams by server.limits.maxOpenStreams: RESOURCE_EXHAUSTED", async () => {
    const { base } = await start({
      ...grpcOn(),
      limits: { ...DEFAULT_SETTINGS.limits, maxOpenStreams: 0 },
    } as ReturnType<typeof grpcOn>);
    const client = await grpcClient(base, "slow");
    const refused = (await (async () => {
      for await (const _ of client.sendMessageStream({ message: userMessage("x") } as never)) {
        // Nothing comes: the refusal is the stream's status.
      }
    })().catch((e: unknown) => e)) as { status?: number };
    expect(refused.status).toBe(8);
    // A unary call takes no stream.
    expect(
      asTask(await client.sendMessage({ message: userMessage("x") } as never)).id,
    ).toBeTruthy();
  });

  it("logs one line per call: the method, the agent, how it ended", async () => {
    const lines: Record<string, unknown>[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const t = await build({
      yaml: YAML,
      unchecked: true,
      settings: grpcOn(),
      logger: createLogger("info", destination),
    });
    apps.push(t);
    const client = await grpcClient(await listen(t), "slow");
    await client.sendMessage({ message: userMessage("hi") } as never);
    await client.getTask({ id: "nope" } as never).catch(() => {});
    const calls = lines.filter((line) => line.msg === "gRPC call completed");
    expect(calls).toEqual([
      expect.objectContaining({ grpc: "SendMessage", tenant: "slow", code: "OK" }),
      expect.objectContaining({ grpc: "GetTask", tenant: "slow", code: "NOT_FOUND" }),
    ]);
    expect(calls[0]!.responseTime).toEqual(expect.any(Number));
  });

  it("ends open streams with their run's final state when the server closes, then stops", async () => {
    const { t, base } = await start();
    const client = await grpcClient(base, "slow");
    const words = Array.from({ length: 400 }, (_, i) => `w${i}`).join(" ");
    const events: StreamResponse[] = [];
    let first: () => void = () => {};
    const started = new Promise<void>((resolve) => {
      first = resolve;
    });
    const streamed = (async () => {
      for await (const event of client.sendMessageStream({
        message: userMessage(words),
      } as never)) {
        events.push(event);
        first();
      }
    })().then(
      () => "ended",
      (err: { status?: number }) => `failed ${err.status}`,
    );
    await started;
    await t.app.close();
    expect(await streamed).toBe("ended");
    const last = events.at(-1)?.payload;
    expect(last?.$case).toBe("statusUpdate");
    expect(last?.$case === "statusUpdate" && last.value.status?.state).toBeGreaterThan(2);
    // The binding is gone with the server.
    const refused = (await client
      .sendMessage({ message: userMessage("late") } as never)
      .then(asTask, (e: unknown) => e)) as { status?: number };
    expect(refused.status).toBe(14);
  });
});
