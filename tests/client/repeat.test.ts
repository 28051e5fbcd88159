/**
 * When schedulers run, computed on the client (lib/client/repeat.ts), against croner's own answers:
 * a cron in a time zone across both DST changes, every-N runs anchored on the scheduler's own
 * next run, the missed-tick policies, the stored text read back, and bad input refused with the
 * option named.
 */
import { describe, expect, test } from "bun:test";
import { Cron } from "croner";
import { SchedulerOptionError } from "../../client.ts";
import { firing, fromText, maxMissed, policyOf, repeat } from "../../lib/client/repeat.ts";

const at = (iso: string): number => new Date(iso).getTime();

describe("cron with a time zone", () => {
  test("09:00 in New York across the March and November DST changes: croner's runs, an hour apart in UTC", () => {
    const r = repeat({ cron: "0 9 * * *", tz: "America/New_York" });
    const c = new Cron("0 9 * * *", { timezone: "America/New_York", paused: true });
    let t = at("2026-03-06T12:00:00Z");
    const runs: number[] = [];
    for (let i = 0; i < 4; i++) runs.push(t = r.after(t, t));
    expect(runs).toEqual(c.nextRuns(4, new Date(at("2026-03-06T12:00:00Z"))).map((d) => d.getTime()));
    // EST (UTC−5) before 8 March 2026, EDT (UTC−4) after
    expect(runs.map((x) => new Date(x).toISOString())).toEqual([
      "2026-03-06T14:00:00.000Z",
      "2026-03-07T14:00:00.000Z",
      "2026-03-08T13:00:00.000Z",
      "2026-03-09T13:00:00.000Z",
    ]);
    expect(new Date(r.after(at("2026-10-31T20:00:00Z"), at("2026-11-01T20:00:00Z"))).toISOString()).toBe("2026-11-02T14:00:00.000Z");
  });

  test("02:30 in Berlin on the night the clocks skip 02:00–03:00: croner's answer", () => {
    const r = repeat({ cron: "30 2 * * *", tz: "Europe/Berlin" });
    const c = new Cron("30 2 * * *", { timezone: "Europe/Berlin", paused: true });
    const from = at("2026-03-28T12:00:00Z");
    expect(r.after(from, from)).toBe(c.nextRun(new Date(from))!.getTime());
    expect(r.text).toBe("cron 30 2 * * * tz=Europe/Berlin");
    expect(fromText(r.text)!.spec).toEqual({ cron: "30 2 * * *", tz: "Europe/Berlin" });
  });

  test("missed runs: the latest ones ≤ now, ascending; a run exactly at now counts", () => {
    const r = repeat({ cron: "*/10 * * * * *" });
    const from = at("2026-01-01T00:00:00Z");
    expect(r.latest(from, at("2026-01-01T00:01:00Z"), 3)).toEqual([40, 50, 60].map((s) => from + s * 1000));
    expect(r.count(from, at("2026-01-01T00:00:30Z"), 100)).toBe(4);
  });
});

describe("every", () => {
  const r = repeat({ everyMs: 100 });
  test("runs on the grid of the scheduler's own next run", () => {
    expect(r.after(1000, 1000)).toBe(1100);
    expect(r.after(1000, 1250)).toBe(1300);
    expect(r.after(1000, 900)).toBe(1000);
    expect(r.latest(1000, 1250, 2)).toEqual([1100, 1200]);
    expect(fromText("every 100")!.spec).toEqual({ everyMs: 100 });
  });

  test("policies: a merely due run always runs; missed runs: latest one, skip none, max N", () => {
    expect(firing(r, 1000, 999, 1)).toBeNull();
    expect(firing(r, 1000, 1050, 0)).toEqual({ ticks: [1000], next: 1100 });
    expect(firing(r, 1000, 2050, maxMissed(undefined))).toEqual({ ticks: [2000], next: 2100 });
    expect(firing(r, 1000, 2050, maxMissed("latest"))).toEqual({ ticks: [2000], next: 2100 });
    expect(firing(r, 1000, 2050, maxMissed("skip"))).toEqual({ ticks: [], next: 2100 });
    expect(firing(r, 1000, 2050, maxMissed({ max: 3 }))).toEqual({ ticks: [1800, 1900, 2000], next: 2100 });
    expect([policyOf(1), policyOf(0), policyOf(3)]).toEqual(["latest", "skip", { max: 3 }]);
  });
});

test("bad input names the option", () => {
  const cases: Array<[() => unknown, string]> = [
    [() => repeat({ cron: "61 * * * *" }), "cron"],
    [() => repeat({ cron: "" }), "cron"],
    [() => repeat({ cron: "* * * * *", tz: "Nowhere/Atlantis" }), "tz"],
    [() => repeat({ everyMs: 0 }), "everyMs"],
    [() => repeat({ everyMs: Number.NaN }), "everyMs"],
    [() => repeat({ everyMs: 1.5 }), "everyMs"],
    [() => repeat({} as never), "spec"],
    [() => maxMissed({ max: 10_001 }), "missed"],
    [() => maxMissed("some" as never), "missed"],
  ];
  for (const [run, option] of cases) {
    let e: unknown = null;
    try {
      run();
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(SchedulerOptionError);
    expect((e as SchedulerOptionError).option as string).toBe(option);
  }
  expect(fromText("every x")).toBeNull();
});
