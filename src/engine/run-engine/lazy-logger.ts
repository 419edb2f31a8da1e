import type { Bindings, Logger } from "pino";

const LEVELS = ["fatal", "error", "warn", "info", "debug", "trace"] as const;

const BINDINGS = Symbol("bindings");
const REAL = Symbol("real");

interface Lazy {
  [BINDINGS]: Bindings;
  [REAL]: Logger | undefined;
}

/** Per parent logger: the prototype of its lazy children (their methods, made once). */
const prototypes = new WeakMap<Logger, object>();

/**
 * `parent.child(bindings)`, made only when something is logged through it. pino serializes a
 * child's bindings when it is made (through the redaction stringifier, since the server redacts
 * secrets), which cost about 1 % of the server's CPU when done for every run although a run
 * that goes well logs nothing at the server's default level. A level the parent does not log is
 * checked at each call (the level can change at run time) and never makes the child.
 *
 * The lazy logger inherits everything else from `parent` (its level, `isLevelEnabled`…), so it
 * passes for the child wherever a `Logger` is expected; its own level methods are its own
 * properties, as a pino child's are (`AgentDeviations.watch` replaces `warn`).
 */
export function lazyChild(parent: Logger, bindings: Bindings): Logger {
  let proto = prototypes.get(parent);
  if (proto === undefined) {
    proto = lazyPrototype(parent);
    prototypes.set(parent, proto);
  }
  const lazy = Object.create(proto) as Lazy;
  lazy[BINDINGS] = bindings;
  lazy[REAL] = undefined;
  return lazy as unknown as Logger;
}

function lazyPrototype(parent: Logger): object {
  const proto = Object.create(parent) as Record<string | symbol, unknown>;
  const real = (lazy: Lazy): Logger => (lazy[REAL] ??= parent.child(lazy[BINDINGS]));
  for (const level of LEVELS) {
    proto[level] = function (this: Lazy, ...args: unknown[]) {
      if (!parent.isLevelEnabled(level)) return;
      (real(this)[level] as (...a: unknown[]) => void)(...args);
    };
  }
  proto.child = function (this: Lazy, bindings: Bindings, options?: object) {
    return real(this).child(bindings, options);
  };
  proto.bindings = function (this: Lazy) {
    return real(this).bindings();
  };
  return proto;
}
