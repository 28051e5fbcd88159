/**
 * Which Valkey the launcher starts: the version `valkey-server --version` prints, read once, so
 * that tests and benchmarks can run what only one version has (Valkey 9's atomic slot migration)
 * and report which version they ran.
 *
 * @module
 */
import { execFileSync } from "node:child_process";
import { serverBinary } from "./paths.ts";

/** A server version, e.g. `{ major: 9, minor: 1, patch: 2, text: "9.1.2" }`. */
export interface ServerVersion {
  /** Major version. */
  readonly major: number;
  /** Minor version. */
  readonly minor: number;
  /** Patch version. */
  readonly patch: number;
  /** `major.minor.patch`. */
  readonly text: string;
}

let cached: ServerVersion | null = null;

/** The version of {@link serverBinary} (`v=9.1.2` in its `--version` line); cached. */
export function serverVersion(): ServerVersion {
  if (cached !== null) return cached;
  const out = execFileSync(serverBinary(), ["--version"], { encoding: "utf8" });
  const m = /v=(\d+)\.(\d+)\.(\d+)/.exec(out);
  if (m === null) throw new Error(`cannot read the version of ${serverBinary()} from: ${out.trim()}`);
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  cached = { major, minor, patch, text: `${major}.${minor}.${patch}` };
  return cached;
}

/** Whether the server has atomic slot migration (`CLUSTER MIGRATESLOTS`, Valkey 9.0+). */
export function hasAtomicSlotMigration(): boolean {
  return serverVersion().major >= 9;
}
