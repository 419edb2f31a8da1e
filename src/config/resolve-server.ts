import { createPublicKey } from "node:crypto";
import { type RetentionConfigInput, resolveRetention } from "../retention/settings.js";
import { formatKeyPath } from "./errors.js";
import { issue, type ResolveContext } from "./resolve-context.js";
import type { AgentConfig, KeyPath } from "./schema.js";
import {
  type ApiKey,
  type AuthSettings,
  DEFAULT_SETTINGS,
  type JwtSettings,
  MIN_API_KEY_LENGTH,
  mergeSettings,
  type ServerSettings,
  type SettingsLayer,
} from "./settings.js";

/** The `server` section as written: sections partial, API keys and the issuer unresolved. */
export type RawServer = Omit<SettingsLayer, "auth" | "retention"> & {
  auth?: { keys?: RawApiKey[]; jwt?: RawJwt };
  retention?: RetentionConfigInput;
};

interface RawApiKey {
  key?: string;
  keyEnv?: string;
  name: string;
  agents?: string[];
  admin?: boolean;
}

type RawJwt = Omit<JwtSettings, "userClaim"> & { userClaim?: string };

/**
 * The `server` section as the file gives it: every setting optional, over the defaults; API keys
 * and the token issuer as written, resolved and checked here.
 */
export function resolveServer(
  raw: RawServer = {},
  agents: AgentConfig[],
  context: ResolveContext,
): ServerSettings {
  const settings = mergeSettings(DEFAULT_SETTINGS, {
    ...raw,
    auth: resolveAuth(raw.auth, agents, context),
    retention: resolveRetention(raw.retention, (key, message) =>
      issue(context, ["server", "retention", key], message),
    ),
  });
  checkServedPaths(settings, raw, context);
  return settings;
}

interface ServedPath {
  at: KeyPath;
  path: string;
  /** Written in the file (not a default): where a clash is reported. */
  written: boolean;
}

/**
 * Where the server mounts something of its own under a configurable path: the inspector and
 * every face that is on. A face is a settings section with `enabled` and `basePath`, so a new
 * face's section is covered without naming it here.
 */
function servedPaths(settings: ServerSettings, raw: RawServer): ServedPath[] {
  const written = raw as Record<string, { basePath?: unknown; path?: unknown } | undefined>;
  const served: ServedPath[] = [];
  if (settings.inspector.enabled) {
    const { path } = settings.inspector;
    const at: KeyPath = ["server", "inspector", "path"];
    served.push({ at, path, written: written.inspector?.path !== undefined });
  }
  for (const [name, section] of Object.entries(settings)) {
    const face = section as { enabled?: unknown; basePath?: unknown };
    if (face.enabled !== true || typeof face.basePath !== "string") continue;
    const at: KeyPath = ["server", name, "basePath"];
    served.push({ at, path: face.basePath, written: written[name]?.basePath !== undefined });
  }
  return served;
}

/**
 * Two faces (or a face and the inspector) at one path, or one under the other, would shadow
 * each other's routes or refuse to start with a duplicated route: each needs a path of its own.
 */
function checkServedPaths(settings: ServerSettings, raw: RawServer, context: ResolveContext) {
  const served = servedPaths(settings, raw);
  for (const [index, one] of served.entries()) {
    for (const other of served.slice(index + 1)) {
      const [here, there] = other.written || !one.written ? [other, one] : [one, other];
      const relation =
        here.path === there.path
          ? "is also"
          : here.path.startsWith(`${there.path}/`)
            ? "is under"
            : there.path.startsWith(`${here.path}/`)
              ? "contains"
              : undefined;
      if (relation === undefined) continue;
      issue(
        context,
        here.at,
        `${relation} ${formatKeyPath(there.at)} (${there.path}): each face and the inspector need a path of their own`,
      );
    }
  }
}

/**
 * Each key comes from `key` or from the environment variable `keyEnv` (exactly one). Names and
 * keys must be unique, and `agents` must name configured agents. The key itself never appears
 * in a message.
 */
function resolveApiKeys(
  raw: RawApiKey[],
  agents: AgentConfig[],
  context: ResolveContext,
): ApiKey[] {
  const known = new Set(agents.map((agent) => agent.name));
  const names = new Map<string, number>();
  const keys = new Map<string, number>();
  const out: ApiKey[] = [];
  for (const [index, entry] of raw.entries()) {
    const at: KeyPath = ["server", "auth", "keys", index];
    let key = entry.key;
    if ((entry.key === undefined) === (entry.keyEnv === undefined)) {
      issue(context, at, "needs exactly one of `key` and `keyEnv`");
      continue;
    }
    if (entry.keyEnv !== undefined) {
      key = context.env[entry.keyEnv];
      if (key === undefined || key === "") {
        issue(context, [...at, "keyEnv"], `names ${entry.keyEnv}, which is not set`);
        continue;
      }
    }
    if (key!.length < MIN_API_KEY_LENGTH) {
      const source = entry.keyEnv === undefined ? "" : ` (from ${entry.keyEnv})`;
      issue(
        context,
        [...at, entry.keyEnv === undefined ? "key" : "keyEnv"],
        `is shorter than ${MIN_API_KEY_LENGTH} characters${source}: use a long random key`,
      );
      continue;
    }
    const earlierName = names.get(entry.name);
    if (earlierName !== undefined) {
      issue(context, [...at, "name"], `repeats the name of keys[${earlierName}]`);
    }
    names.set(entry.name, index);
    const earlierKey = keys.get(key!);
    if (earlierKey !== undefined) {
      issue(context, at, `has the same key as keys[${earlierKey}]`);
    }
    keys.set(key!, index);
    for (const [i, name] of (entry.agents ?? []).entries()) {
      if (!known.has(name)) {
        issue(context, [...at, "agents", i], `names agent "${name}", which is not configured`);
      }
    }
    const resolved: ApiKey = { key: key!, name: entry.name };
    if (entry.agents !== undefined) resolved.agents = [...entry.agents];
    if (entry.admin === true) resolved.admin = true;
    out.push(resolved);
  }
  return out;
}

function resolveAuth(
  raw: { keys?: RawApiKey[]; jwt?: RawJwt } | undefined,
  agents: AgentConfig[],
  context: ResolveContext,
): AuthSettings {
  const auth: AuthSettings = { keys: resolveApiKeys(raw?.keys ?? [], agents, context) };
  const jwt = raw?.jwt;
  if (jwt === undefined) return auth;
  const at: KeyPath = ["server", "auth", "jwt"];
  if ((jwt.jwksUrl === undefined) === (jwt.publicKey === undefined)) {
    issue(context, at, "needs exactly one of `jwksUrl` and `publicKey`");
    return auth;
  }
  if (jwt.publicKey !== undefined) {
    try {
      createPublicKey(jwt.publicKey);
    } catch {
      issue(context, [...at, "publicKey"], "is not a PEM public key node can read");
      return auth;
    }
  }
  auth.jwt = { ...jwt, userClaim: jwt.userClaim ?? "sub" };
  return auth;
}
