// Queue names spread over a test cluster's three primaries (one per third of the slot space), for
// the tests whose edges must cross primaries (flows, their events, nested flows, cancels).
import { slot } from "../../mod.ts";

/** Three queue names of `stem` whose slots fall in the three thirds of the slot space (one per primary of the test cluster). */
export function spread(stem: string): [string, string, string] {
  const found: Array<string | undefined> = [undefined, undefined, undefined];
  for (let i = 0; found.includes(undefined); i++) {
    const q = `${stem}-${i}`;
    const third = Math.min(2, Math.floor(slot(`{${q}}`) / 5462));
    found[third] ??= q;
  }
  return found as [string, string, string];
}
