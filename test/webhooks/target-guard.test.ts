import type { LookupAddress } from "node:dns";
import { describe, expect, it, vi } from "vitest";
import { DomainError } from "../../src/util/errors.js";
import {
  checkWebhookTarget,
  checkWebhookUrl,
  checkWebhookUrlSyntax,
  classifyAddress,
  createPinnedLookup,
  findTargetRefusal,
  type ResolveHost,
} from "../../src/webhooks/target-guard.js";

const HINT = "private targets are refused unless server.webhooks.allowPrivateTargets is set";

/** A resolver for made-up names: never touches real DNS. */
function fakeResolver(table: Record<string, string[]>): ResolveHost {
  return async (hostname) => {
    const addresses = table[hostname];
    if (addresses === undefined) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    }
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
}

function syntaxError(url: string, allowPrivateTargets = false): DomainError {
  try {
    checkWebhookUrlSyntax(url, { allowPrivateTargets });
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  }
  throw new Error(`${url} was accepted`);
}

describe("checkWebhookUrlSyntax", () => {
  it("refuses a loopback literal with the message naming the address and the config key", () => {
    const err = syntaxError("http://127.0.0.1:9/x");
    expect(err.code).toBe("invalid");
    expect(err.message).toBe(
      `webhook http://127.0.0.1:9/x resolves to a loopback address (127.0.0.1); ${HINT}`,
    );
  });

  it.each([
    ["http://127.0.0.1/", "a loopback address"],
    ["http://127.9.8.7/", "a loopback address"],
    ["http://2130706433/", "a loopback address"],
    ["http://0x7f.1/", "a loopback address"],
    ["http://[::1]/", "a loopback address"],
    ["http://10.1.2.3/", "a private address"],
    ["http://172.16.0.1/", "a private address"],
    ["http://172.31.255.255/", "a private address"],
    ["http://192.168.1.1/", "a private address"],
    ["http://[fc00::1]/", "a private address"],
    ["http://[fd12:3456::1]/", "a private address"],
    ["http://169.254.169.254/latest/meta-data/", "a cloud metadata (link-local) address"],
    ["http://169.254.1.1/", "a link-local address"],
    ["http://[fe80::1]/", "a link-local address"],
    ["http://0.0.0.0/", "an unspecified address"],
    ["http://[::]/", "an unspecified address"],
    ["http://100.64.0.1/", "a carrier-grade NAT address"],
    ["http://100.127.255.254/", "a carrier-grade NAT address"],
    ["http://224.0.0.1/", "a multicast address"],
    ["http://[ff02::1]/", "a multicast address"],
    ["http://255.255.255.255/", "a broadcast address"],
    ["http://[::ffff:127.0.0.1]/", "a loopback address (::ffff:7f00:1, which embeds 127.0.0.1)"],
    ["http://[::ffff:10.0.0.1]/", "a private address (::ffff:a00:1, which embeds 10.0.0.1)"],
    ["http://[::ffff:169.254.169.254]/", "a cloud metadata (link-local) address"],
    ["http://[::127.0.0.1]/", "a loopback address (::7f00:1, which embeds 127.0.0.1)"],
    ["http://[64:ff9b::7f00:1]/", "a loopback address (64:ff9b::7f00:1, which embeds 127.0.0.1)"],
    [
      "http://[2002:c0a8:101::1]/",
      "a private address (2002:c0a8:101::1, which embeds 192.168.1.1)",
    ],
  ])("refuses %s as %s", (url, label) => {
    const err = syntaxError(url);
    expect(err.code).toBe("invalid");
    expect(err.message).toContain(`resolves to ${label}`);
    expect(err.message).toContain(HINT);
  });

  it.each([
    "http://localhost/",
    "http://LOCALHOST:8080/",
    "http://localhost./",
    "http://api.localhost/",
  ])("refuses the localhost name %s", (url) => {
    const err = syntaxError(url);
    expect(err.message).toContain("names a localhost host");
  });

  it.each([
    "ftp://example.com/x",
    "file:///etc/passwd",
    "gopher://example.com/",
    "ws://example.com/",
  ])("refuses the non-http scheme of %s", (url) => {
    expect(syntaxError(url).message).toMatch(/uses the scheme \w+; only http and https/);
  });

  it("refuses credentials in the URL without repeating them", () => {
    const err = syntaxError("https://user:s3cret@example.com/hook");
    expect(err.message).toBe(
      "webhook https://example.com/hook must not carry credentials in the URL",
    );
    expect(syntaxError("https://user@example.com/hook").message).toContain("credentials");
  });

  it("refuses text that is not a URL", () => {
    expect(syntaxError("not a url").message).toBe('webhook "not a url" is not a valid URL');
  });

  it.each([
    "http://93.184.216.34/hook",
    "https://93.184.216.34:8443/hook?x=1",
    "https://[2606:2800:220:1:248:1893:25c8:1946]/hook",
    "https://example.com/hook",
    "http://[::ffff:93.184.216.34]/",
  ])("accepts the public target %s", (url) => {
    expect(checkWebhookUrlSyntax(url).href).toBe(new URL(url).href);
  });

  it("accepts private targets when allowed, but still checks scheme and credentials", () => {
    expect(() =>
      checkWebhookUrlSyntax("http://127.0.0.1:9/x", { allowPrivateTargets: true }),
    ).not.toThrow();
    expect(() =>
      checkWebhookUrlSyntax("http://localhost/", { allowPrivateTargets: true }),
    ).not.toThrow();
    expect(syntaxError("ftp://127.0.0.1/", true).code).toBe("invalid");
    expect(syntaxError("http://u:p@127.0.0.1/", true).code).toBe("invalid");
  });
});

describe("classifyAddress", () => {
  it("returns null for public addresses and non-addresses", () => {
    expect(classifyAddress("93.184.216.34")).toBeNull();
    expect(classifyAddress("2606:2800:220:1:248:1893:25c8:1946")).toBeNull();
    expect(classifyAddress("example.com")).toBeNull();
  });

  it("handles a zone id on a link-local address", () => {
    expect(classifyAddress("fe80::1%eth0")).toBe("a link-local address");
  });
});

describe("checkWebhookTarget", () => {
  const resolve = fakeResolver({
    "hooks.example.com": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
    "mixed.example.com": ["93.184.216.34", "10.0.0.7"],
    "mapped.example.com": ["::ffff:127.0.0.1"],
    "metadata.example.com": ["169.254.169.254"],
  });

  it("accepts a name whose every address is public", async () => {
    await expect(
      checkWebhookTarget("https://hooks.example.com/x", { allowPrivateTargets: false, resolve }),
    ).resolves.toBeUndefined();
  });

  it("refuses a name when any one of its addresses is private", async () => {
    await expect(
      checkWebhookTarget("https://mixed.example.com/x", { allowPrivateTargets: false, resolve }),
    ).rejects.toThrow(
      `webhook https://mixed.example.com/x resolves to a private address (10.0.0.7); ${HINT}`,
    );
  });

  it("refuses names resolving to IPv4-mapped loopback and to the metadata address", async () => {
    const options = { allowPrivateTargets: false, resolve };
    await expect(checkWebhookTarget("http://mapped.example.com/", options)).rejects.toThrow(
      "resolves to a loopback address (::ffff:127.0.0.1, which embeds 127.0.0.1);",
    );
    await expect(checkWebhookTarget("http://metadata.example.com/", options)).rejects.toThrow(
      "resolves to a cloud metadata (link-local) address (169.254.169.254)",
    );
  });

  it("refuses localhost (with the system resolver)", async () => {
    const err = await checkWebhookTarget("http://localhost:1/hook", {
      allowPrivateTargets: false,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe("invalid");
  });

  it("reports a resolver failure as a plain (retryable) error", async () => {
    const err = await checkWebhookTarget("http://nowhere.invalid/", {
      allowPrivateTargets: false,
      resolve,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(DomainError);
    expect((err as Error).message).toBe("cannot resolve nowhere.invalid: ENOTFOUND");
  });

  it("does not resolve anything when private targets are allowed", async () => {
    const spy = vi.fn(resolve);
    await checkWebhookTarget("http://mixed.example.com/", {
      allowPrivateTargets: true,
      resolve: spy,
    });
    expect(spy).not.toHaveBeenCalled();
  });

  it("does not resolve literal addresses", async () => {
    const spy = vi.fn(resolve);
    await checkWebhookTarget("http://93.184.216.34/", { allowPrivateTargets: false, resolve: spy });
    expect(spy).not.toHaveBeenCalled();
  });
});

describe("checkWebhookUrl (where a webhook is set)", () => {
  const resolve = fakeResolver({
    "public.example": ["93.184.216.34"],
    "intranet.example": ["10.1.2.3"],
  });

  it("refuses a name that resolves to a private address, naming the rule and the address", async () => {
    await expect(
      checkWebhookUrl("http://intranet.example/hook", { allowPrivateTargets: false, resolve }),
    ).rejects.toThrow(
      `webhook http://intranet.example/hook resolves to a private address (10.1.2.3); ${HINT}`,
    );
  });

  it("accepts a public name, and a name that does not resolve now (delivery checks it again)", async () => {
    for (const url of ["https://public.example/hook", "https://nowhere.example/hook"]) {
      await expect(
        checkWebhookUrl(url, { allowPrivateTargets: false, resolve }),
      ).resolves.toBeUndefined();
    }
  });

  it("accepts a name whose resolver never answers (after a bound, not forever)", async () => {
    await expect(
      checkWebhookUrl("https://slow.example/hook", {
        allowPrivateTargets: false,
        resolve: () => new Promise<LookupAddress[]>(() => {}),
      }),
    ).resolves.toBeUndefined();
  });

  it("checks scheme and literal addresses without resolving, and nothing more when private targets are allowed", async () => {
    const never: ResolveHost = () => Promise.reject(new Error("resolved"));
    await expect(
      checkWebhookUrl("ftp://public.example/", { allowPrivateTargets: true, resolve: never }),
    ).rejects.toThrow("uses the scheme ftp");
    await expect(
      checkWebhookUrl("http://[::1]/", { allowPrivateTargets: false, resolve: never }),
    ).rejects.toThrow("a loopback address (::1)");
    await expect(
      checkWebhookUrl("http://intranet.example/", { allowPrivateTargets: true, resolve: never }),
    ).resolves.toBeUndefined();
  });
});

describe("createPinnedLookup", () => {
  const resolve = fakeResolver({
    "public.example.com": ["2606:2800:220:1:248:1893:25c8:1946", "93.184.216.34"],
    "private.example.com": ["93.184.216.34", "192.168.0.5"],
  });

  function call(
    lookup: ReturnType<typeof createPinnedLookup>,
    hostname: string,
    options: { all?: boolean; family?: number },
  ): Promise<{ err: Error | null; address: string | LookupAddress[]; family?: number }> {
    return new Promise((done) =>
      lookup(hostname, options, (err, address, family) => done({ err, address, family })),
    );
  }

  it("answers in the form net asks for: all addresses, or the first of a family", async () => {
    const lookup = createPinnedLookup({ allowPrivateTargets: false, resolve });
    const all = await call(lookup, "public.example.com", { all: true });
    expect(all.err).toBeNull();
    expect(all.address).toHaveLength(2);
    const one = await call(lookup, "public.example.com", { family: 4 });
    expect(one).toEqual({ err: null, address: "93.184.216.34", family: 4 });
  });

  it("fails the connect with a refusal when an address is private", async () => {
    const lookup = createPinnedLookup({ allowPrivateTargets: false, resolve });
    const { err } = await call(lookup, "private.example.com", { all: true });
    expect(findTargetRefusal(err)?.message).toBe(
      `webhook host private.example.com resolves to a private address (192.168.0.5) at connect time; ${HINT}`,
    );
  });

  it("lets private addresses through when allowed", async () => {
    const lookup = createPinnedLookup({ allowPrivateTargets: true, resolve });
    const { err, address } = await call(lookup, "private.example.com", { family: 4 });
    expect(err).toBeNull();
    expect(address).toBe("93.184.216.34");
  });
});

describe("findTargetRefusal", () => {
  it("finds the refusal in a fetch-style cause chain, and nothing in other errors", () => {
    const refusal = new DomainError("invalid", "refused");
    expect(findTargetRefusal(new TypeError("fetch failed", { cause: refusal }))).toBe(refusal);
    expect(
      findTargetRefusal(new TypeError("fetch failed", { cause: new Error("ECONNREFUSED") })),
    ).toBeNull();
    expect(findTargetRefusal(new DomainError("conflict", "x"))).toBeNull();
  });
});
