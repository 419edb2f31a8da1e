import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";

/**
 * A token issuer for tests: a real key pair, its JWKS served over HTTP on a local port, and
 * tokens signed with it (or with a stranger's key, to be refused).
 */
export interface TestIssuer {
  issuer: string;
  audience: string;
  jwksUrl: string;
  /** A token for `sub`, valid for an hour unless `claims`/`options` say otherwise. */
  token(
    sub: string | undefined,
    claims?: JWTPayload,
    options?: { expiresIn?: string | number; notBefore?: string | number; foreignKey?: boolean },
  ): Promise<string>;
  close(): Promise<void>;
}

export async function startIssuer(): Promise<TestIssuer> {
  const own = await generateKeyPair("ES256", { extractable: true });
  const stranger = await generateKeyPair("ES256");
  const jwk = { ...(await exportJWK(own.publicKey)), kid: "test-key", alg: "ES256", use: "sig" };
  const server: Server = createServer((request, response) => {
    if (request.url !== "/jwks.json") {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${base}/`;
  const audience = "acp-agui-tests";
  return {
    issuer,
    audience,
    jwksUrl: `${base}/jwks.json`,
    async token(sub, claims = {}, options = {}) {
      const jwt = new SignJWT({ iss: issuer, aud: audience, ...claims })
        .setProtectedHeader({ alg: "ES256", kid: "test-key" })
        .setIssuedAt()
        .setExpirationTime(options.expiresIn ?? "1h");
      if (sub !== undefined) jwt.setSubject(sub);
      if (options.notBefore !== undefined) jwt.setNotBefore(options.notBefore);
      return jwt.sign(options.foreignKey ? stranger.privateKey : own.privateKey);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
