import {
  type Metadata,
  type ServerUnaryCall,
  type ServerWritableStream,
  type sendUnaryData,
  status,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import type { FastifyBaseLogger } from "fastify";
import type { Principal } from "../../../auth/principal.js";
import { A2aError } from "../../../bridge/a2a/index.js";
import { type Authentication, presentedCredential } from "../../plugins/auth.js";
import type { A2aAgents } from "../agents.js";
import { asA2aError } from "../errors.js";
import { type A2aFace, isWhole } from "../face.js";
import { type ExtendedCards, V1_OPERATIONS } from "../operations.js";
import {
  GRPC_METHODS,
  type GrpcMethod,
  type GrpcMethodName,
  type Received,
  requestJson,
  responseMessage,
} from "./codec.js";
import { toServiceError } from "./status.js";

/** What the gRPC binding needs of the server around it. */
export interface GrpcBinding {
  agents: A2aAgents;
  /** Who presents a key or token (undefined: none), as the HTTP faces decide it. */
  authenticate(presented: string | undefined): Promise<Authentication>;
  /** The caller's extended cards of an agent (null: the server does not authenticate). */
  cardsOf(face: A2aFace, caller: Principal, authority: string): ExtendedCards;
  /** Whether the server is shutting down: new calls are refused, as HTTP requests are. */
  isShuttingDown(): boolean;
  /** Streams open at once on this binding, as `limits.maxOpenStreams` bounds HTTP's. */
  maxOpenStreams: number;
  log: FastifyBaseLogger;
}

/** A call checked and resolved: who makes it, to which agent, and its params as ProtoJSON. */
interface Prepared {
  face: A2aFace;
  who: Principal;
  params: unknown;
}

/** The first value of a metadata key, as text. */
function metadataText(metadata: Metadata, key: string): string | undefined {
  const [value] = metadata.get(key);
  return typeof value === "string" ? value : undefined;
}

/** A key or token as HTTP takes it: `authorization: Bearer <key>`, else `x-api-key`. */
const presentedOf = (metadata: Metadata) =>
  presentedCredential(metadataText(metadata, "authorization"), metadataText(metadata, "x-api-key"));

/**
 * A2A's gRPC binding (specification §10): every method of `lf.a2a.v1.A2AService`, calling the
 * same operations as the JSON-RPC and HTTP+JSON bindings (operations.ts). The agent is the
 * request's `tenant`, as each card's GRPC interface declares it (the only agent when one is
 * configured and the tenant is empty); credentials come in the `authorization` (or
 * `x-api-key`) metadata. Errors are gRPC status codes with a `google.rpc.Status` whose
 * ErrorInfo gives A2A's reason (status.ts).
 */
export function a2aServiceImplementation(binding: GrpcBinding): UntypedServiceImplementation {
  const { agents, log } = binding;
  let openStreams = 0;

  /** The agent a request names, for this caller (AgentNotFound, PermissionDenied). */
  const faceOf = (tenant: unknown, who: Principal): A2aFace => {
    if (typeof tenant === "string" && tenant !== "") return agents.faceOf(tenant, who);
    const [only, ...others] = agents.list();
    if (only && others.length === 0) return agents.faceOf(only.name, who);
    throw new A2aError(
      "InvalidParams",
      "tenant is required: the name of the agent, as its card's GRPC interface gives it",
    );
  };

  const prepare = async (
    method: GrpcMethodName,
    received: Received,
    metadata: Metadata,
  ): Promise<Prepared> => {
    if (binding.isShuttingDown()) {
      throw new A2aError("Unavailable", "the server is shutting down");
    }
    const found = await binding.authenticate(presentedOf(metadata));
    if (!("caller" in found)) {
      throw new A2aError(found.refused === 401 ? "Unauthenticated" : "Unavailable", found.message);
    }
    checkVersion(metadataText(metadata, "a2a-version"));
    if ("malformed" in received) {
      throw new A2aError(
        "InvalidRequest",
        `the request is not a valid lf.a2a.v1 ${method} request: ${received.malformed}`,
      );
    }
    const face = faceOf(received.value.tenant, found.caller);
    return { face, who: found.caller, params: requestJson(GRPC_METHODS[method], received.value) };
  };

  /** One line per call, as Fastify logs each HTTP request: what, for which agent, how it ended. */
  const logged = (name: GrpcMethodName, received: Received) => {
    const started = performance.now();
    const tenant = "value" in received ? received.value.tenant : undefined;
    return (code: number) =>
      log.info(
        {
          grpc: name,
          ...(typeof tenant === "string" && tenant !== "" ? { tenant: tenant.slice(0, 300) } : {}),
          code: status[code] ?? code,
          responseTime: performance.now() - started,
        },
        "gRPC call completed",
      );
  };

  const unary = (name: GrpcMethodName, method: GrpcMethod) => {
    const operation = V1_OPERATIONS.methods[name]!;
    return async (call: ServerUnaryCall<Received, unknown>, callback: sendUnaryData<unknown>) => {
      const done = logged(name, call.request);
      const cancelled = new AbortController();
      call.once("cancelled", () => cancelled.abort());
      try {
        const { face, who, params } = await prepare(name, call.request, call.metadata);
        const cards = binding.cardsOf(face, who, call.getHost());
        const result = await operation.unary!(face, who, params, cancelled.signal, cards);
        callback(null, responseMessage(method, result));
        done(status.OK);
      } catch (err) {
        const error = toServiceError(asA2aError(err, log));
        callback(error);
        done(error.code ?? status.UNKNOWN);
      }
    };
  };

  const stream = (name: GrpcMethodName, method: GrpcMethod) => {
    const operation = V1_OPERATIONS.methods[name]!;
    return async (call: ServerWritableStream<Received, unknown>) => {
      const done = logged(name, call.request);
      // The task outlives its stream: a client that goes away stops the following only.
      const following = new AbortController();
      call.once("cancelled", () => following.abort());
      let counted = false;
      try {
        const { face, who, params } = await prepare(name, call.request, call.metadata);
        if (openStreams >= binding.maxOpenStreams) {
          throw new A2aError(
            "ResourceExhausted",
            `too many open streams (${binding.maxOpenStreams}, server.limits.maxOpenStreams); try again later`,
          );
        }
        openStreams++;
        counted = true;
        const events = await operation.stream!(face, who, params, following.signal);
        try {
          for await (const event of events) {
            if (call.cancelled) break;
            if (!call.write(responseMessage(method, event))) await drained(call);
          }
        } finally {
          if (!isWhole(events)) await events.return(undefined);
        }
        call.end();
        done(call.cancelled ? status.CANCELLED : status.OK);
      } catch (err) {
        const error = toServiceError(asA2aError(err, log));
        if (!call.cancelled) call.emit("error", error);
        done(call.cancelled ? status.CANCELLED : (error.code ?? status.UNKNOWN));
      } finally {
        if (counted) openStreams--;
      }
    };
  };

  const implementation: UntypedServiceImplementation = {};
  for (const [name, method] of Object.entries(GRPC_METHODS) as [GrpcMethodName, GrpcMethod][]) {
    const operation = V1_OPERATIONS.methods[name];
    if (!operation) throw new Error(`no A2A operation ${name}`);
    implementation[method.key] = operation.stream ? stream(name, method) : unary(name, method);
  }
  return implementation;
}

/**
 * The service is A2A 1.0's (`lf.a2a.v1`): a call that names no version, or a 1.x one in its
 * `a2a-version` metadata, is served; any other version is VersionNotSupported.
 */
function checkVersion(version: string | undefined): void {
  const asked = version?.trim();
  if (!asked || /^1(\.\d+){0,2}$/.test(asked)) return;
  throw new A2aError(
    "VersionNotSupported",
    `A2A-Version ${JSON.stringify(asked.slice(0, 40))} is not supported over gRPC: this service is A2A 1.0 (lf.a2a.v1)`,
  );
}

/** Resolves once the stream takes more, or its client is gone. */
function drained(call: ServerWritableStream<Received, unknown>): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      call.off("drain", done);
      call.off("cancelled", done);
      resolve();
    };
    call.once("drain", done);
    call.once("cancelled", done);
  });
}
