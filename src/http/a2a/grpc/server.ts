import type { AddressInfo } from "node:net";
import { Server, ServerCredentials } from "@grpc/grpc-js";
import type { FastifyInstance } from "fastify";
import type { Principal } from "../../../auth/principal.js";
import { a2aOptionsOf } from "../../../config/agent-a2a.js";
import type { RegisteredAgent } from "../../../config/registry.js";
import type { A2aAgents } from "../agents.js";
import { type CardAuth, extendedAgentCard, legacyExtendedAgentCard } from "../card.js";
import type { ExtendedCards } from "../operations.js";
import { serviceDefinition } from "./codec.js";
import { a2aServiceImplementation } from "./service.js";

/** How long calls still open at shutdown (streams of runs just ended) get to finish. */
const DRAIN_MS = 1000;

export interface A2aGrpcServer {
  /**
   * The binding's address for a client that reached this server by `hostname` (`host:port`,
   * as the cards' GRPC interface gives it: `publicAddress` when set); undefined until it
   * listens.
   */
  addressFor(hostname: string): string | undefined;
}

/** `host:port` as gRPC takes it (an IPv6 address in brackets). */
const hostPort = (host: string, port: number) =>
  `${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;

/** The host of an `:authority` (`host:port`, `[v6]:port`, or a host alone). */
const hostOf = (authority: string) => /^(.*?)(?::\d+)?$/.exec(authority)?.[1] || authority;

/**
 * A2A's gRPC binding on a port of its own (`server.a2a.grpc`), beside the HTTP server: it
 * listens once the app is ready, refuses new calls once the shutdown begins (as HTTP does),
 * and closes after the HTTP streams drained, giving its own open calls a moment to end.
 */
export function serveA2aGrpc(
  app: FastifyInstance,
  agents: A2aAgents,
  basePath: string,
): A2aGrpcServer {
  const { settings } = app.deps;
  const { port, host = settings.host, publicAddress } = settings.a2a.grpc;
  const auth: CardAuth = {
    apiKeys: settings.auth.keys.length > 0,
    jwt: settings.auth.jwt !== undefined,
  };
  let bound: number | undefined;
  const addressFor = (hostname: string) =>
    bound === undefined ? undefined : (publicAddress ?? hostPort(hostname, bound));

  /**
   * The extended cards of an agent, for a caller that reached the binding at `authority`: its
   * HTTP interfaces on this server's HTTP port under the same host name.
   */
  const cardsOf = (agent: RegisteredAgent, caller: Principal, authority: string) => {
    const hostname = hostOf(authority);
    const address = app.server.address() as AddressInfo | null;
    const origin = `http://${hostPort(hostname, address?.port ?? settings.port)}`;
    const url = `${origin}${basePath}/${encodeURIComponent(agent.name)}`;
    const modes = a2aOptionsOf(agent.config);
    const context = { origin, caller };
    return {
      v1: () => extendedAgentCard(agent, url, auth, modes, context, addressFor(hostname)),
      v03: () => legacyExtendedAgentCard(agent, url, auth, modes, context),
    } satisfies ExtendedCards;
  };

  const server = new Server({
    // A request as large as an HTTP body may be; a larger one is RESOURCE_EXHAUSTED.
    "grpc.max_receive_message_length": settings.limits.maxBodyBytes,
  });
  server.addService(
    serviceDefinition(),
    a2aServiceImplementation({
      agents,
      authenticate: (presented) => app.authenticate(presented),
      cardsOf: (face, caller, authority) =>
        auth.apiKeys || auth.jwt ? cardsOf(face.agent, caller, authority) : null,
      isShuttingDown: () => app.isShuttingDown(),
      maxOpenStreams: settings.limits.maxOpenStreams,
      log: app.log,
    }),
  );

  app.addHook("onReady", async () => {
    bound = await new Promise<number>((resolve, reject) => {
      server.bindAsync(hostPort(host, port), ServerCredentials.createInsecure(), (err, at) =>
        err
          ? reject(
              new Error(
                `A2A gRPC binding: cannot listen on ${hostPort(host, port)}: ${err.message}`,
              ),
            )
          : resolve(at),
      );
    });
    app.log.info({ address: hostPort(host, bound) }, "A2A gRPC binding listening");
  });
  // After the shutdown plugin's own preClose: the engine stopped, so the runs the streams
  // follow have ended and their last events are on the way.
  app.addHook("preClose", async () => {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        server.forceShutdown();
        resolve();
      }, DRAIN_MS);
      server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  });
  return { addressFor };
}
