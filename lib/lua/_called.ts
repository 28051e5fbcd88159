/**
 * The shared Lua a script ships: {@link called} keeps, of the shared top-level definitions, those the
 * verb's own Lua reaches (directly or through the definitions it calls), in their order — a Lua
 * local must be defined before the code that calls it. A script then compiles only what it runs.
 *
 * @module
 */

/** One top-level definition of the shared Lua: the locals it binds and its text (with the comment before it). */
interface Definition {
  readonly names: readonly string[];
  readonly text: string;
}

/**
 * The top-level definitions of `lua`, in order. Each starts at a column-0 `local` (or at the
 * column-0 comment just before it) and runs to the next; the column-0 lines in between
 * (`emq_refuse[…] = function …`, a table's closing brace) belong to it.
 */
function definitions(lua: string): Definition[] {
  const out: { names: string[]; lines: string[] }[] = [];
  let comment: string[] = [];
  for (const line of lua.split("\n")) {
    if (line.startsWith("--")) {
      comment.push(line);
      continue;
    }
    const m = /^local\s+(?:function\s+([A-Za-z_]\w*)|([A-Za-z_][\w, ]*?)\s*=)/.exec(line);
    const refusal = /^(emq_refuse\['[^']*'\]) = /.exec(line);
    if (m) {
      const names = m[1] !== undefined ? [m[1]] : m[2]!.split(",").map((n) => n.trim());
      out.push({ names, lines: [...comment, line] });
    } else if (refusal) {
      out.push({ names: [refusal[1]!], lines: [...comment, line] });
    } else if (line.startsWith("local ")) {
      throw new Error(`shared Lua: a top-level local the composer cannot name: ${line}`);
    } else if (out.length > 0) {
      out[out.length - 1]!.lines.push(...comment, line);
    } else if (line.trim() !== "" || comment.length > 0) {
      throw new Error(`shared Lua: code before the first definition: ${line}`);
    }
    comment = [];
  }
  if (comment.length > 0) out[out.length - 1]?.lines.push(...comment);
  return out.map((d) => ({ names: d.names, text: d.lines.join("\n").trim() }));
}

/** The identifiers of `lua`, its comments left out (a `--` outside a string literal starts one). */
function identifiers(lua: string): Set<string> {
  const code = lua.split("\n").map((line) => {
    let quote = "";
    for (let i = 0; i < line.length; i++) {
      const c = line[i]!;
      if (quote !== "") {
        if (c === "\\") i++;
        else if (c === quote) quote = "";
      } else if (c === "'" || c === '"') {
        quote = c;
      } else if (c === "-" && line[i + 1] === "-") {
        return line.slice(0, i);
      }
    }
    return line;
  }).join("\n");
  const refusals = code.match(/emq_refuse\['[^']*'\]/g) ?? [];
  if (/emq_refuse\[[^']/.test(code)) throw new Error("Lua: a refusal looked up by a computed name (emq_refuse[…])");
  return new Set([...(code.match(/[A-Za-z_]\w*/g) ?? []), ...refusals]);
}

/**
 * Of the `shared` Lua (top-level definitions, each defined once), the definitions `roots` reaches,
 * in their order. Throws when a name is defined twice with different text, when a definition uses
 * one defined after it, or when an `emq_` name the script uses is defined neither in `shared` nor
 * in `roots` (a misspelt call, found when the script is built rather than when it runs).
 */
export function called(shared: string, roots: string): string {
  const defs: Definition[] = [];
  const by = new Map<string, number>();
  for (const d of definitions(shared)) {
    const known = d.names.map((n) => by.get(n)).find((i) => i !== undefined);
    if (known !== undefined) {
      if (defs[known]!.text !== d.text) throw new Error(`shared Lua: ${d.names.join(", ")} defined twice, differently`);
      continue;
    }
    for (const n of d.names) by.set(n, defs.length);
    defs.push(d);
  }
  const uses = defs.map((d) => identifiers(d.text));
  // a local called before its definition would be read as a (nil) global
  uses.forEach((names, i) => {
    for (const n of names) {
      const j = by.get(n);
      if (j !== undefined && j > i) throw new Error(`shared Lua: ${defs[i]!.names[0]} uses ${n}, defined after it`);
    }
  });
  const kept = new Set<number>();
  const visit = (names: Set<string>) => {
    for (const n of names) {
      const i = by.get(n);
      if (i !== undefined && !kept.has(i)) {
        kept.add(i);
        visit(uses[i]!);
      }
    }
  };
  const own = identifiers(roots);
  visit(own);
  const text = [roots, ...[...kept].map((i) => defs[i]!.text)].join("\n");
  const bound = new Set(
    (text.match(/\blocal\s+(?:function\s+)?[\w, ]+/g) ?? []).flatMap((l) => l.replace(/^local\s+(?:function\s+)?/, "").split(",").map((n) => n.trim())),
  );
  for (const names of [own, ...[...kept].map((i) => uses[i]!)]) {
    for (const n of names) {
      if (/^(emq|EMQ)_/.test(n) && !by.has(n) && !bound.has(n)) throw new Error(`Lua: ${n} is used but never defined`);
    }
  }
  return defs.filter((_, i) => kept.has(i)).map((d) => d.text).join("\n");
}
