/**
 * What most reliability files share: the backends this machine can run (both when the module is
 * built, else the scripts), and one standalone server for the whole file.
 */
import { afterAll, beforeAll } from "bun:test";
import { moduleBuilt, modulePath, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";

/** The backends to test: the module's only when it is built. */
export const BACKENDS: readonly ("module" | "scripts")[] = moduleBuilt() ? ["module", "scripts"] : ["scripts"];

/** A standalone server (with the module when built), started before the file's tests, stopped after. */
export function useServer(): { readonly server: ServerHandle } {
  const site = {} as { server: ServerHandle };
  beforeAll(async () => {
    site.server = await startServer({ module: moduleBuilt() ? modulePath() : false });
  }, 60_000);
  afterAll(async () => {
    await site.server?.stop();
  });
  return site;
}
