// The editor completes the key type: drive the TypeScript language service at `queueKey("orders", "`
// and at `keyspace("orders").`.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import ts from "typescript";
import { QUEUE_TYPES } from "../../mod.ts";
import { projectOptions, ROOT } from "./compiler.ts";

function completionsAt(source: string): string[] {
  const file = resolve(ROOT, "tests/types/__completion__.ts");
  const at = source.indexOf("|");
  const text = source.replace("|", "");
  const host: ts.LanguageServiceHost = {
    getScriptFileNames: () => [file],
    getScriptVersion: () => "1",
    getScriptSnapshot: (f) => {
      const t = f === file ? text : ts.sys.readFile(f);
      return t === undefined ? undefined : ts.ScriptSnapshot.fromString(t);
    },
    getCurrentDirectory: () => ROOT,
    getCompilationSettings: () => projectOptions(),
    getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
    fileExists: (f) => f === file || ts.sys.fileExists(f),
    readFile: (f) => (f === file ? text : ts.sys.readFile(f)),
  };
  const service = ts.createLanguageService(host);
  return service.getCompletionsAtPosition(file, at, {})?.entries.map((e) => e.name) ?? [];
}

test('queueKey("orders", " completes exactly the QueueType members', () => {
  const names = completionsAt('import { queueKey } from "../../mod.ts";\nqueueKey("orders", "|');
  expect(names.sort()).toEqual([
    "active",
    "completed",
    "dead",
    "dedup",
    "dedup_ttl",
    "events",
    "lanes",
    "meta",
    "metrics",
    "outbox",
    "parked",
    "pending",
    "ring",
    "schedule",
    "schedulers",
    "waiting",
    "wake",
  ]);
});

// Every key type of docs/GRAMMAR.md's table (`emq:{q}:<type>`, the name before any `:<…>`), read
// from the document itself, so a new type documented without a builder fails here.
function grammarTypes(): string[] {
  const text = readFileSync(resolve(ROOT, "docs/GRAMMAR.md"), "utf8");
  const types = [...text.matchAll(/^\| `emq:\{q\}:([a-z_]*)[^`]*` \|/gm)].map((m) => m[1]);
  return [...new Set(types.filter((t) => t !== ""))]; // `emq:{q}:` is the base, never a key
}

test('keyspace("orders"). completes a builder for every key type of docs/GRAMMAR.md', () => {
  const names = completionsAt('import { keyspace } from "../../mod.ts";\nkeyspace("orders").|');
  const documented = grammarTypes();
  expect(documented).toEqual(expect.arrayContaining([...QUEUE_TYPES, "job", "ready", "levels", "lane", "scheduler"]));
  expect(documented.length).toBe(QUEUE_TYPES.length + 5);
  expect(names).toEqual(expect.arrayContaining(documented));
});
