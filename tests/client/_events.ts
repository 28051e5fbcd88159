/** Shared pieces of the events and result suites: the reader connections of a queue, a hand-written entry. */
import { keyspace } from "../../mod.ts";
import type { Connection } from "../../lib/client/connection.ts";
import { READER_NAME_PREFIX } from "../../lib/client/event_reader.ts";

/** The reader connections of queue `q` on its node (`CLIENT LIST` names): their server ids. */
export async function readers(raw: Connection, q: string): Promise<string[]> {
  const list = String(await raw.command(["CLIENT", "LIST"], keyspace(q).meta));
  const name = `name=${READER_NAME_PREFIX}${encodeURIComponent(q)} `;
  return list.split("\n").filter((l) => l.includes(name)).map((l) => /\bid=(\d+)/.exec(l)![1]!);
}

/** Appends an entry to `q`'s stream by hand (a verb's entry, as the spec writes it); its id. */
export async function xadd(raw: Connection, q: string, ...fields: string[]): Promise<string> {
  const K = keyspace(q);
  return String(await raw.command(["XADD", K.events, "*", ...fields], K.meta));
}
