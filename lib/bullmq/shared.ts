/**
 * One EchoMQ connection per backend factory, shared by every BullMQ `Queue`, `Worker` and
 * `QueueEvents` it builds (each blocking wait gets a connection of its own besides), opened on first
 * use and closed when the last backend that holds it closes.
 *
 * @module
 */
import { ClientContext } from "../client/context.ts";
import type { EchoMQOptions } from "../client/options.ts";

/** The factory's connection, counted by the backends that hold it. */
export class SharedClient {
  readonly #options: EchoMQOptions<unknown>;
  #ctx: Promise<ClientContext<unknown>> | null = null;
  #refs = 0;

  /** A connection made with `options` when first needed. */
  constructor(options: EchoMQOptions<unknown>) {
    this.#options = options;
  }

  /** One more backend holds the connection. */
  acquire(): void {
    this.#refs++;
  }

  /** The connection, opened on first use (a failed open is tried again by the next call). */
  get(): Promise<ClientContext<unknown>> {
    if (this.#ctx === null) {
      const opening = ClientContext.connect<unknown>(this.#options);
      this.#ctx = opening;
      opening.catch(() => {
        if (this.#ctx === opening) this.#ctx = null;
      });
    }
    return this.#ctx;
  }

  /** A backend let go; the last one closes the connection. */
  async release(): Promise<void> {
    if (--this.#refs > 0) return;
    const ctx = this.#ctx;
    this.#ctx = null;
    if (ctx !== null) (await ctx.catch(() => null))?.close();
  }
}
