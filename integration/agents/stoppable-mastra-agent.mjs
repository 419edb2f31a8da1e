/**
 * MastraAgent that can be stopped. `@ag-ui/mastra` 1.1.2's MastraAgent has no `abortRun()` and
 * passes no abort signal to the Mastra agent's `stream()`, so nothing a caller does stops a
 * Mastra run once started: the model streams on to its end and the turn is saved to memory.
 * This subclass gives the Mastra agent an abort signal, aborted by `abortRun()`, which the
 * server calls when a run is cancelled, times out or is shut down. Copy it into your module
 * until @ag-ui/mastra stops runs itself.
 */
import { MastraAgent } from "@ag-ui/mastra";

export class StoppableMastraAgent extends MastraAgent {
  #controller = new AbortController();

  /** @param {import("@ag-ui/mastra").MastraAgentConfig} config */
  constructor(config) {
    super(config);
    this.settings = config;
    const signal = () => this.#controller.signal;
    this.agent = new Proxy(config.agent, {
      get(target, key) {
        const value = Reflect.get(target, key, target);
        if (key === "stream" || key === "resumeStream") {
          return (/** @type {unknown} */ input, /** @type {object} */ options) =>
            value.call(target, input, { ...options, abortSignal: signal() });
        }
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }

  /** MastraAgent's own clone would be a plain MastraAgent. */
  clone() {
    const copy = new StoppableMastraAgent(this.settings);
    if (this.headers) copy.headers = { ...this.headers };
    return copy;
  }

  abortRun() {
    this.#controller.abort();
    super.abortRun();
  }
}
