import type { LookupAddress } from "node:dns";
import { lookup as dnsLookup } from "node:dns/promises";
import { BlockList, isIP, type LookupFunction } from "node:net";
import { DomainError, invalid } from "../util/errors.js";

/**
 * The SSRF guard for webhook targets. A webhook URL comes from whoever creates a run, and the
 * server POSTs to it, so without this a client could make the server reach its own loopback,
 * the private network or the cloud metadata service (169.254.169.254).
 *
 * Four checks, from cheap to strict:
 * - `checkWebhookUrlSyntax`: synchronous: the URL, its scheme, and a literal address or a
 *   localhost name.
 * - `checkWebhookUrl`: where a webhook is set (an ACP run's `webhook`, an A2A push config):
 *   the syntax, and the addresses the host name resolves to now, so that a client learns at
 *   once that its URL will never be called. A name that does not resolve (or not within
 *   `CREATION_DNS_TIMEOUT_MS`) is let through: delivery checks it again.
 * - `checkWebhookTarget`: at each delivery attempt, also resolves the host name (DNS can change).
 * - `createPinnedLookup`: the lookup the delivery connection itself uses, so a name that
 *   resolves to a public address for the check and a private one for the connect (DNS
 *   rebinding) is still refused.
 */

/** Resolves a host name to all its addresses (injectable so tests never touch real DNS). */
export type ResolveHost = (hostname: string) => Promise<LookupAddress[]>;

export interface WebhookTargetOptions {
  /** When true, loopback/private/link-local… targets are allowed (scheme and credentials are still checked). */
  allowPrivateTargets: boolean;
  /** Defaults to the system resolver (`dns.lookup` with `all: true`). */
  resolve?: ResolveHost;
}

export const systemResolve: ResolveHost = (hostname) =>
  dnsLookup(hostname, { all: true, verbatim: true });

const ALLOW_HINT = "private targets are refused unless server.webhooks.allowPrivateTargets is set";

type Family = "ipv4" | "ipv6";

/** Refused ranges, most specific first; the label reads after "resolves to". */
const RANGES: Array<{ label: string; subnets: Array<[string, number, Family]> }> = [
  { label: "a cloud metadata (link-local) address", subnets: [["169.254.169.254", 32, "ipv4"]] },
  { label: "a broadcast address", subnets: [["255.255.255.255", 32, "ipv4"]] },
  {
    label: "an unspecified address",
    subnets: [
      ["0.0.0.0", 8, "ipv4"],
      ["::", 128, "ipv6"],
    ],
  },
  {
    label: "a loopback address",
    subnets: [
      ["127.0.0.0", 8, "ipv4"],
      ["::1", 128, "ipv6"],
    ],
  },
  {
    label: "a private address",
    subnets: [
      ["10.0.0.0", 8, "ipv4"],
      ["172.16.0.0", 12, "ipv4"],
      ["192.168.0.0", 16, "ipv4"],
      ["fc00::", 7, "ipv6"],
      ["fec0::", 10, "ipv6"],
      ["64:ff9b:1::", 48, "ipv6"],
    ],
  },
  {
    label: "a link-local address",
    subnets: [
      ["169.254.0.0", 16, "ipv4"],
      ["fe80::", 10, "ipv6"],
    ],
  },
  { label: "a carrier-grade NAT address", subnets: [["100.64.0.0", 10, "ipv4"]] },
  {
    label: "a multicast address",
    subnets: [
      ["224.0.0.0", 4, "ipv4"],
      ["ff00::", 8, "ipv6"],
    ],
  },
  {
    label: "a reserved address",
    subnets: [
      ["192.0.0.0", 24, "ipv4"],
      ["192.0.2.0", 24, "ipv4"],
      ["198.18.0.0", 15, "ipv4"],
      ["198.51.100.0", 24, "ipv4"],
      ["203.0.113.0", 24, "ipv4"],
      ["240.0.0.0", 4, "ipv4"],
      ["100::", 64, "ipv6"],
      ["2001:db8::", 32, "ipv6"],
    ],
  },
];

const BLOCKS = RANGES.map(({ label, subnets }) => {
  const list = new BlockList();
  for (const [network, prefix, family] of subnets) list.addSubnet(network, prefix, family);
  return { label, list };
});

/** The 8 16-bit groups of a valid IPv6 address (zone id dropped, embedded dotted quad allowed). */
function ipv6Groups(address: string): number[] {
  let text = address.split("%")[0] ?? "";
  const lastColon = text.lastIndexOf(":");
  const tail = text.slice(lastColon + 1);
  if (tail.includes(".")) {
    const [a = 0, b = 0, c = 0, d = 0] = tail.split(".").map(Number);
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", rest] = text.split("::");
  const headGroups = head === "" ? [] : head.split(":");
  const restGroups = rest === undefined || rest === "" ? [] : rest.split(":");
  const zeros = rest === undefined ? 0 : 8 - headGroups.length - restGroups.length;
  return [...headGroups, ...Array<string>(zeros).fill("0"), ...restGroups].map((g) =>
    Number.parseInt(g, 16),
  );
}

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), if any. */
function embeddedIPv4(address: string): string | null {
  const g = ipv6Groups(address);
  const quad = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(5) && g[5] === 0xffff) return quad(g[6]!, g[7]!); // ::ffff:a.b.c.d
  if (zeroUpTo(6) && (g[6] !== 0 || g[7]! > 1)) return quad(g[6]!, g[7]!); // ::a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) {
    return quad(g[6]!, g[7]!); // NAT64 64:ff9b::a.b.c.d
  }
  if (g[0] === 0x2002) return quad(g[1]!, g[2]!); // 6to4 2002:aabb:ccdd::
  return null;
}

interface Classification {
  label: string;
  /** The IPv4 address judged, when `address` is an IPv6 form that embeds one. */
  embedded: string | null;
}

function classify(address: string): Classification | null {
  const family = isIP(address);
  if (family === 0) return null;
  if (family === 6) {
    const v4 = embeddedIPv4(address);
    if (v4 !== null) {
      const inner = classify(v4);
      return inner === null ? null : { label: inner.label, embedded: v4 };
    }
    const bare = address.split("%")[0] ?? address;
    const label = BLOCKS.find((block) => block.list.check(bare, "ipv6"))?.label;
    return label === undefined ? null : { label, embedded: null };
  }
  const label = BLOCKS.find((block) => block.list.check(address, "ipv4"))?.label;
  return label === undefined ? null : { label, embedded: null };
}

/**
 * What kind of non-public address `address` is ("a loopback address", …), or null when it is a
 * public unicast address (or not an IP address at all). IPv6 forms that embed an IPv4 address
 * (IPv4-mapped, IPv4-compatible, NAT64, 6to4) are judged by that IPv4 address.
 */
export function classifyAddress(address: string): string | null {
  return classify(address)?.label ?? null;
}

/** "a loopback address (::ffff:7f00:1, which embeds 127.0.0.1)", or null when public. */
function describeRefused(address: string): string | null {
  const found = classify(address);
  if (found === null) return null;
  const embeds = found.embedded === null ? "" : `, which embeds ${found.embedded}`;
  return `${found.label} (${address}${embeds})`;
}

function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.+$/, "");
  return name === "localhost" || name.endsWith(".localhost");
}

function refusal(target: string, description: string, address: string): DomainError {
  return invalid(`webhook ${target} resolves to ${description}; ${ALLOW_HINT}`, { address });
}

/** The URL without user/password, for messages about a URL that carried them. */
function withoutCredentials(url: URL): string {
  const copy = new URL(url.href);
  copy.username = "";
  copy.password = "";
  return copy.href;
}

/** `[::1]` → `::1`; other host names unchanged. */
function bareHost(hostname: string): string {
  return hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
}

/**
 * Synchronous checks for run creation: the URL parses, uses http or https, carries no
 * credentials, and (unless private targets are allowed) is not a `localhost` name or a literal
 * IP address in a refused range. Host names are not resolved here. Throws `DomainError`
 * (`invalid`); returns the parsed URL.
 */
export function checkWebhookUrlSyntax(
  url: string,
  options: Pick<WebhookTargetOptions, "allowPrivateTargets"> = { allowPrivateTargets: false },
): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(`webhook ${JSON.stringify(url)} is not a valid URL`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw invalid(
      `webhook ${url} uses the scheme ${parsed.protocol.slice(0, -1)}; only http and https are allowed`,
    );
  }
  if (parsed.username !== "" || parsed.password !== "") {
    throw invalid(`webhook ${withoutCredentials(parsed)} must not carry credentials in the URL`);
  }
  if (options.allowPrivateTargets) return parsed;
  if (isLocalhostName(parsed.hostname)) {
    throw invalid(`webhook ${url} names a localhost host; ${ALLOW_HINT}`);
  }
  // WHATWG URL parsing already turned 2130706433, 0x7f.1 and 127.1 into 127.0.0.1.
  const host = bareHost(parsed.hostname);
  const refused = describeRefused(host);
  if (refused !== null) throw refusal(url, refused, host);
  return parsed;
}

/**
 * The delivery-time check: `checkWebhookUrlSyntax`, then (unless private targets are allowed)
 * every address the host name resolves to must be public. Throws `DomainError` (`invalid`) for
 * a refused target; a resolver failure is thrown as a plain `Error` (transient: worth a retry).
 */
export async function checkWebhookTarget(
  url: string,
  options: WebhookTargetOptions,
): Promise<void> {
  const parsed = checkWebhookUrlSyntax(url, options);
  if (options.allowPrivateTargets) return;
  const host = bareHost(parsed.hostname);
  if (isIP(host) !== 0) return;
  const addresses = await resolveAll(host, options.resolve ?? systemResolve);
  for (const { address } of addresses) {
    const refused = describeRefused(address);
    if (refused !== null) throw refusal(url, refused, address);
  }
}

/** How long the check where a webhook is set waits for DNS before it lets the name through. */
const CREATION_DNS_TIMEOUT_MS = 2000;

/**
 * The check where a webhook is set (see the top of this file): throws `DomainError`
 * (`invalid`, naming the rule) for a URL delivery would refuse; resolves otherwise, also when
 * the name cannot be resolved now.
 */
export async function checkWebhookUrl(url: string, options: WebhookTargetOptions): Promise<void> {
  checkWebhookUrlSyntax(url, options);
  if (options.allowPrivateTargets) return;
  const resolve = options.resolve ?? systemResolve;
  let timer: NodeJS.Timeout | undefined;
  const bounded: ResolveHost = (hostname) =>
    Promise.race([
      resolve(hostname),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("timed out")), CREATION_DNS_TIMEOUT_MS);
        timer.unref();
      }),
    ]);
  try {
    await checkWebhookTarget(url, { allowPrivateTargets: false, resolve: bounded });
  } catch (err) {
    if (findTargetRefusal(err) !== null) throw err;
  } finally {
    clearTimeout(timer);
  }
}

async function resolveAll(host: string, resolve: ResolveHost): Promise<LookupAddress[]> {
  let addresses: LookupAddress[];
  try {
    addresses = await resolve(host);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new Error(`cannot resolve ${host}: ${code}`, { cause: err });
  }
  if (addresses.length === 0) throw new Error(`cannot resolve ${host}: no addresses`);
  return addresses;
}

/**
 * A `net` lookup function for the delivery connection: resolves with `resolve` and, unless
 * private targets are allowed, fails with a `DomainError` (`invalid`) when any address is in a
 * refused range. The connection then goes only to an address this function vetted, which
 * closes the gap between `checkWebhookTarget` and the connect (DNS rebinding).
 */
export function createPinnedLookup(options: WebhookTargetOptions): LookupFunction {
  const resolve = options.resolve ?? systemResolve;
  return (hostname, lookupOptions, callback) => {
    const check = async (): Promise<LookupAddress[]> => {
      const addresses = await resolveAll(hostname, resolve);
      if (!options.allowPrivateTargets) {
        if (isLocalhostName(hostname)) {
          throw invalid(`webhook host ${hostname} is a localhost name; ${ALLOW_HINT}`);
        }
        for (const { address } of addresses) {
          const refused = describeRefused(address);
          if (refused !== null) {
            throw invalid(
              `webhook host ${hostname} resolves to ${refused} at connect time; ${ALLOW_HINT}`,
              { address },
            );
          }
        }
      }
      const family = familyNumber(lookupOptions.family);
      const usable = family === 0 ? addresses : addresses.filter((a) => a.family === family);
      if (usable.length === 0)
        throw new Error(`cannot resolve ${hostname}: no IPv${family} address`);
      return usable;
    };
    check().then(
      (addresses) => {
        if (lookupOptions.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ""),
    );
  };
}

function familyNumber(family: number | "IPv4" | "IPv6" | undefined): 0 | 4 | 6 {
  if (family === 4 || family === "IPv4") return 4;
  if (family === 6 || family === "IPv6") return 6;
  return 0;
}

/** The refusal inside an error or its `cause` chain (fetch wraps connect errors), if any. */
export function findTargetRefusal(err: unknown): DomainError | null {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof DomainError && current.code === "invalid") return current;
    current = current.cause;
  }
  return null;
}
