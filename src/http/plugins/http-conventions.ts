import fp from "fastify-plugin";
import { type RouteHint, registerErrorHandling } from "../errors.js";
import { type JsonLimits, registerJsonBodyParser } from "../json-body.js";
import { registerValidatorCompiler } from "../validator-compiler.js";
import { isJsonBody, wireChunk } from "../wire-bytes.js";
import { PLUGIN } from "./names.js";

export interface HttpConventionsOptions {
  limits: JsonLimits & { maxBodyBytes: number };
  /** Each face's paths, for a 404 under its prefix (see errors.ts). */
  routeHints?: readonly RouteHint[];
}

/**
 * The HTTP conventions every route shares: our JSON body parser (and no text/plain one: the
 * default would hand strings to JSON routes, and a wrong content type is a clear 415 instead
 * of a confusing schema error), bodies checked by the precompiled validators, and every error
 * answered as an ACP string error; long answers are sent as their bytes.
 */
export const httpConventions = fp<HttpConventionsOptions>(
  async (app, { limits, routeHints }) => {
    app.removeContentTypeParser("text/plain");
    registerJsonBodyParser(app, limits);
    registerValidatorCompiler(app);
    registerErrorHandling(app, { maxBodyBytes: limits.maxBodyBytes, routeHints });
    // A long answer (a run's output, a thread's history) goes out as bytes, streamed in pieces
    // when it is JSON we serialize (see wire-bytes.ts), with its length announced.
    // A callback, not an async hook: it runs for every answer, and needs no promise.
    app.addHook("onSend", (_request, reply, payload, done) => {
      if (isJsonBody(payload)) reply.header("content-length", String(payload.contentLength));
      done(null, typeof payload === "string" ? wireChunk(payload) : payload);
    });
  },
  { name: PLUGIN.httpConventions, fastify: "5.x" },
);
