/**
 * What most reliability files share: the backends this machine can run (both when the module is
 * built, else the scripts), one standalone server for the whole file, and the cleanup of what a
 * test opens as it goes.
 */
import { afterAll, beforeAll } from "bun:test";
import { moduleBuilt, moduleIfBuilt, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";

/** The backends to test: the module's only when it is built. */
export const BACKENDS: readonly ("module" | "scripts")[] = moduleBuilt() ? ["module", "scripts"] : ["scripts"];

/** A standalone server (with the module when built), started before the file's tests, stopped after. */
export function useServer(): { readonly server: ServerHandle } {
  const site = {} as { server: ServerHandle };
  beforeAll(async () => {
    site.server = await startServer({ module: moduleIfBuilt() });
  }, 60_000);
  afterAll(async () => {
    await site.server?.stop();
  });
  return site;
}

/**
 * What a test opens as it goes (clients, workers), closed after the file's tests: the last opened
 * first, each best effort (a test that failed midway may leave some half-closed, and the others
 * must still close); then `last` (the servers). Push a closer as each thing is opened.
 */
export function useClosers(last: () => unknown): Array<() => unknown> {
  const closers: Array<() => unknown> = [];
  afterAll(async () => {
    for (const close of closers.reverse()) {
      try {
        await close();
      } catch {
        // best effort
      }
    }
    await last();
  });
  return closers;
}
