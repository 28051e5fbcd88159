// The editor completes the key type: drive the TypeScript language service at `queueKey("orders", "`.
import { expect, test } from "bun:test";
import { resolve } from "node:path";
import ts from "typescript";
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
  expect(names.sort()).toEqual(["active", "completed", "dead", "dedup", "dedup_ttl", "events", "lanes", "meta", "parked", "pending", "ring", "schedule", "schedulers", "wake"]);
});
