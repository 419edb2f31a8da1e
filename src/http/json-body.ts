import type { FastifyInstance } from "fastify";

class BadJson extends Error {
  readonly statusCode = 400;
}

/** Keys that would reach an object's prototype if some later code merged the body with `=`. */
function rejectPrototypeKeys(key: string, value: unknown): unknown {
  if (key === "__proto__") throw new BadJson('body contains the forbidden key "__proto__"');
  if (
    key === "constructor" &&
    typeof value === "object" &&
    value !== null &&
    "prototype" in value
  ) {
    throw new BadJson('body contains a forbidden "constructor.prototype" key');
  }
  return value;
}

/**
 * Our JSON body parser: clear messages for empty and malformed bodies, and prototype-pollution
 * keys refused. The reviver (slow) only runs for the rare body that mentions such a key.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === "") {
      done(new BadJson("body is empty: send a JSON object"), undefined);
      return;
    }
    try {
      const suspicious = text.includes("__proto__") || text.includes("constructor");
      done(null, suspicious ? JSON.parse(text, rejectPrototypeKeys) : JSON.parse(text));
    } catch (err) {
      if (err instanceof BadJson) done(err, undefined);
      else done(new BadJson(`body is not valid JSON: ${(err as Error).message}`), undefined);
    }
  });
}
