import type { CallInterceptor, Client } from "@a2a-js/sdk/client";
import { ClientFactory } from "@a2a-js/sdk/client";
import { GrpcTransportFactory } from "@a2a-js/sdk/client/grpc";
import { DEFAULT_SETTINGS, type ServerSettings } from "../../src/config/settings.js";

/** The A2A settings with the gRPC binding on, on a free port of the loopback. */
export const grpcOn = (): Pick<ServerSettings, "a2a"> => ({
  a2a: { ...DEFAULT_SETTINGS.a2a, grpc: { enabled: true, port: 0, host: "127.0.0.1" } },
});

/**
 * The official A2A client for an agent, over gRPC: the card read over HTTP as any client does,
 * its GRPC interface (address and tenant) chosen by the SDK. `metadata` goes with every call
 * (credentials), as the SDK sends service parameters.
 */
export async function grpcClient(
  base: string,
  agent: string,
  metadata: Record<string, string> = {},
): Promise<Client> {
  const withMetadata: CallInterceptor = {
    before: async (args) => {
      args.options = {
        ...args.options,
        serviceParameters: { ...args.options?.serviceParameters, ...metadata },
      };
    },
    after: async () => {},
  };
  const factory = new ClientFactory({
    transports: [new GrpcTransportFactory()],
    preferredTransports: ["GRPC"],
    clientConfig: { interceptors: [withMetadata] },
  });
  return factory.createFromUrl(`${base}/a2a/${agent}/.well-known/agent-card.json`, "");
}
