// Preloaded (`node --expose-gc --import bench/lib/force-gc.mjs …`) by benchmarks that need full
// garbage collections to happen while they measure, as they do in a long-running server: one
// every second, on a timer that never keeps the process alive.
if (typeof globalThis.gc !== "function") throw new Error("force-gc.mjs needs node --expose-gc");
setInterval(() => globalThis.gc(), 1000).unref();
