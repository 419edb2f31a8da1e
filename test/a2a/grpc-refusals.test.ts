/**
 * Bad input on A2A's gRPC binding: bytes that are no protobuf message, messages the
 * specification does not allow, an agent not named or not there, a version the service does
 * not speak. Each is INVALID_ARGUMENT (or NOT_FOUND, FAILED_PRECONDITION) with a
 * `google.rpc.Status` naming the fault; never INTERNAL. Calls come from the official client
 * where it can make them, and from a bare gRPC client for bytes no SDK would send.
 */
import { randomUUID } from "node:crypto";
import { ListTasksRequest, Message } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { decodeErrorInfo, decodeStatus } from "@a2a-js/sdk/errors/grpc";
import { A2AService } from "@a2a-js/sdk/server/grpc";
import { credentials, Client as GrpcClient, Metadata, type ServiceError } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS } from "../../src/config/settings.js";
import { build, type TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";
import { grpcClient, grpcOn } from "./grpc-helpers.js";
import { userMessage } from "./helpers.js";

const YAML = `
agents:
  - name: echo
    version: 1.0.0
    description: Echoes the last user message.
    adapter: { type: echo }
  - name: other
    version: 1.0.0
    description: Another echo.
    adapter: { type: echo }
`;

const INVALID_ARGUMENT = 3;
const NOT_FOUND = 5;
const FAILED_PRECONDITION = 9;
const RESOURCE_EXHAUSTED = 8;
const SERVICE = "/lf.a2a.v1.A2AService";

/** The status and ErrorInfo reason of a gRPC error, from its `grpc-status-details-bin`. */
function described(code: number, message: string, detailsBin: Buffer | undefined) {
  const status = detailsBin ? decodeStatus(detailsBin) : undefined;
  const info = status?.details[0] ? decodeErrorInfo(status.details[0].value) : undefined;
  return { code, message, statusCode: status?.code, reason: info?.reason };
}

/** The official client's refusal of a call. */
async function refusal(call: Promise<unknown>) {
  const err = (await call.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (e: unknown) => e,
  )) as { status: number; message: string; statusDetailsBin?: Buffer };
  return described(err.status, err.message, err.statusDetailsBin);
}

describe("A2A gRPC refusals", () => {
  let t: TestApp;
  let base: string;
  let address: string;
  let echo: Client;
  let raw: GrpcClient;
  beforeAll(async () => {
    t = await build({ yaml: YAML, unchecked: true, settings: grpcOn() });
    base = await listen(t);
    const card = (await (await fetch(`${base}/a2a/echo/.well-known/agent-card.json`)).json()) as {
      supportedInterfaces: { url: string; protocolBinding: string }[];
    };
    address = card.supportedInterfaces.find((i) => i.protocolBinding === "GRPC")!.url;
    echo = await grpcClient(base, "echo");
    raw = new GrpcClient(address, credentials.createInsecure());
  });
  afterAll(async () => {
    raw?.close();
    await t?.close();
  });

  /** A unary call of `method` with these bytes as its request, as a bare client sends them. */
  const unaryBytes = (method: string, bytes: Buffer, metadata = new Metadata()) =>
    new Promise<ReturnType<typeof described>>((resolve, reject) => {
      raw.makeUnaryRequest(
        `${SERVICE}/${method}`,
        (value: Buffer) => value,
        (value: Buffer) => value,
        bytes,
        metadata,
        (err: ServiceError | null) => {
          if (!err) return reject(new Error(`${method} answered`));
          const [details] = err.metadata.get("grpc-status-details-bin") as Buffer[];
          resolve(described(err.code, err.details, details));
        },
      );
    });

  it("refuses bytes that are no protobuf message: INVALID_ARGUMENT, not INTERNAL", async () => {
    for (const bytes of [[0xff, 0xff, 0xff], [0x0f], [0x0a, 0x05, 0x61]]) {
      for (const method of ["GetTask", "SendMessage", "CancelTask", "ListTasks"]) {
        const refused = await unaryBytes(method, Buffer.from(bytes));
        expect(refused, method).toMatchObject({
          code: INVALID_ARGUMENT,
          statusCode: INVALID_ARGUMENT,
          reason: "INVALID_REQUEST",
        });
        expect(refused.message).toContain(`not a valid lf.a2a.v1 ${method} request`);
      }
    }
  });

  it("refuses a request larger than server.limits.maxBodyBytes: RESOURCE_EXHAUSTED", async () => {
    const big = Buffer.alloc(DEFAULT_SETTINGS.limits.maxBodyBytes + 1024, 0x20);
    const refused = await unaryBytes("SendMessage", big);
    expect(refused.code).toBe(RESOURCE_EXHAUSTED);
  });

  it("refuses a stream request that is no protobuf message before any event", async () => {
    const stream = raw.makeServerStreamRequest(
      `${SERVICE}/SendStreamingMessage`,
      (value: Buffer) => value,
      (value: Buffer) => value,
      Buffer.from([0xff, 0xff]),
      new Metadata(),
    );
    const events: unknown[] = [];
    const err = await new Promise<ServiceError>((resolve) => {
      stream.on("data", (event) => events.push(event));
      stream.on("error", resolve);
    });
    expect(events).toEqual([]);
    const [details] = err.metadata.get("grpc-status-details-bin") as Buffer[];
    expect(described(err.code, err.details, details)).toMatchObject({
      code: INVALID_ARGUMENT,
      reason: "INVALID_REQUEST",
    });
  });

  it("refuses messages the specification does not allow, naming the field", async () => {
    const noParts = Message.fromJSON({ messageId: randomUUID(), role: "ROLE_USER", parts: [] });
    const cases: [Promise<unknown>, RegExp][] = [
      [echo.sendMessage({ message: noParts } as never), /parts/],
      [echo.sendMessage({} as never), /message/],
      [
        echo.sendMessage({
          message: Message.fromJSON({
            messageId: randomUUID(),
            role: "ROLE_USER",
            parts: [{ mediaType: "text/plain" }],
          }),
        } as never),
        /part/,
      ],
      [echo.getTask({ id: "" } as never), /id must be a non-empty string/],
      [echo.listTasks(ListTasksRequest.fromJSON({ pageSize: 1000 })), /pageSize/],
    ];
    for (const [call, message] of cases) {
      const refused = await refusal(call);
      expect(refused.code).toBe(INVALID_ARGUMENT);
      expect(refused.statusCode).toBe(INVALID_ARGUMENT);
      expect(refused.message).toMatch(message);
    }
    const stream = await refusal(
      (async () => {
        for await (const _ of echo.sendMessageStream({ message: noParts } as never)) {
          // Nothing comes: the refusal is the stream's status.
        }
      })(),
    );
    expect(stream.code).toBe(INVALID_ARGUMENT);
  });

  it("refuses a file part of a type the agent does not take: CONTENT_TYPE_NOT_SUPPORTED", async () => {
    const refused = await refusal(
      echo.sendMessage({
        message: Message.fromJSON({
          messageId: randomUUID(),
          role: "ROLE_USER",
          parts: [{ raw: "AAEC", mediaType: "image/png" }],
        }),
      } as never),
    );
    expect(refused).toMatchObject({
      code: INVALID_ARGUMENT,
      reason: "CONTENT_TYPE_NOT_SUPPORTED",
    });
  });

  it("needs the tenant when several agents are served, and refuses one that is not there", async () => {
    const getTask = (tenant: string) =>
      unaryBytes(
        "GetTask",
        A2AService.getTask.requestSerialize({ tenant, id: randomUUID(), historyLength: undefined }),
      );
    expect(await getTask("")).toMatchObject({ code: INVALID_ARGUMENT, reason: "INVALID_PARAMS" });
    expect((await getTask("")).message).toMatch(/tenant is required/);
    expect(await getTask("nobody")).toMatchObject({ code: NOT_FOUND, reason: "AGENT_NOT_FOUND" });
    expect(await getTask("echo")).toMatchObject({ code: NOT_FOUND, reason: "TASK_NOT_FOUND" });
  });

  it("refuses an A2A version the service does not speak", async () => {
    const metadata = new Metadata();
    metadata.set("a2a-version", "0.3");
    const bytes = A2AService.getTask.requestSerialize({
      tenant: "echo",
      id: randomUUID(),
      historyLength: undefined,
    });
    expect(await unaryBytes("GetTask", bytes, metadata)).toMatchObject({
      code: FAILED_PRECONDITION,
      reason: "VERSION_NOT_SUPPORTED",
    });
    const sent = await echo.sendMessage({ message: userMessage("v1") } as never, {
      serviceParameters: { "a2a-version": "1.0" },
    });
    expect(sent).toHaveProperty("id");
  });
});
