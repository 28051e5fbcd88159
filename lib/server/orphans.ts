/**
 * The second line of leak protection: every server directory records who started it
 * (`owner.json`: the host's pid and its start time, the server's pid). Whatever killed the host and
 * its watchdog, the next launcher in any process — and the test command's last step — finds the
 * servers whose host is gone and kills them. A pid alone could be reused; the start time (field 22
 * of `/proc/<pid>/stat`) makes the host's identity exact.
 *
 * @module
 */
import { readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import process from "node:process";
import { join } from "node:path";

/** The name prefix of every server directory under the system temporary folder. */
export const DIR_PREFIX = "emq-valkey-";

/** What `owner.json` holds. */
interface Owner {
  host: number;
  hostStart: string;
  server: number;
}

/** A process's start time in clock ticks since boot, or null when it is gone or a zombie. */
function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[0] === "Z" ? null : fields[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * Whether `pid` is a live server working in `dir` (its working directory: valkey-server rewrites
 * its command line, so the argv cannot tell).
 */
function serverIn(pid: number, dir: string): boolean {
  try {
    return readlinkSync(`/proc/${pid}/cwd`) === dir && startTime(pid) !== null;
  } catch {
    return false;
  }
}

/** Records that the current process owns the server `pid` running in `dir`. */
export function recordOwner(pid: number, dir: string, host: number): void {
  const owner: Owner = { host, hostStart: startTime(host) ?? "", server: pid };
  try {
    writeFileSync(join(dir, "owner.json"), JSON.stringify(owner));
  } catch {
    // the directory is gone already: nothing to protect
  }
}

/** One server left behind by a host that is gone. */
export interface Orphan {
  /** The server's directory. */
  readonly dir: string;
  /** The server's pid, or null when only the directory was left. */
  readonly pid: number | null;
  /** The host that started it (gone). */
  readonly host: number;
}

/**
 * Finds the server directories whose host is gone, kills their servers (SIGKILL) and removes the
 * directories; returns what it found. Directories without an owner record are left alone (another
 * tool's, or a server starting this instant).
 */
export function sweepOrphans(root: string = tmpdir()): Orphan[] {
  const found: Orphan[] = [];
  let names: string[];
  try {
    names = readdirSync(root).filter((n) => n.startsWith(DIR_PREFIX));
  } catch {
    return found;
  }
  for (const name of names) {
    const dir = join(root, name);
    let owner: Owner;
    try {
      owner = JSON.parse(readFileSync(join(dir, "owner.json"), "utf8")) as Owner;
    } catch {
      continue;
    }
    if (startTime(owner.host) === owner.hostStart && owner.hostStart !== "") continue;
    const live = serverIn(owner.server, dir);
    if (live) {
      try {
        process.kill(owner.server, "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }
    rmSync(dir, { recursive: true, force: true });
    found.push({ dir, pid: live ? owner.server : null, host: owner.host });
  }
  return found;
}
