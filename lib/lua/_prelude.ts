/**
 * The Lua shared by every script, generated from the wire spec (`lib/wire`): the refusal texts
 * ({@link PRELUDE}'s `emq_refuse`), the split and layout check, the fence, and each verb's steps
 * 1–4 ({@link luaHead}) — shape, layout, fence, gates — with the verb's keys and arguments bound
 * to locals named as in the spec. A verb's own Lua (steps 5–6) follows; {@link luaScript} composes
 * them.
 *
 * Every refusal is returned as an error reply (`redis.error_reply`), so its text is exactly the
 * wire's (an `error()` raise would append the script's name and line).
 *
 * @module
 */
import {
  ARGS,
  type Gate,
  MAX_DIGITS,
  pieces,
  type Refusal,
  REFUSAL_NAMES,
  REFUSALS,
  type Verb,
  VERBS,
  WIRE,
} from "../wire/mod.ts";

/** A Lua string literal of `s` (single-quoted; backslash, quote, CR, LF and NUL escaped). */
export function luaString(s: string): string {
  return `'${s.replace(/[\\'\r\n\0]/g, (c) => ({ "\\": "\\\\", "'": "\\'", "\r": "\\r", "\n": "\\n", "\0": "\\0" })[c]!)}'`;
}

/** `emq_refuse['<name>'](p)`: the refusal's text as a Lua concatenation of literals, VERB and `p`. */
function refusalFunction(name: Refusal): string {
  const parts = pieces(REFUSALS[name].template).map((p) =>
    "text" in p ? luaString(p.text) : p.param === "verb" ? "VERB" : `tostring(p.${p.param})`
  );
  return `emq_refuse[${luaString(name)}] = function(p) return redis.error_reply(${parts.join(" .. ")}) end`;
}

/** The shared Lua: one copy, composed into every script. `VERB` is defined by the script's head. */
export const PRELUDE: string = `
-- Refusals, one function each, texts from lib/wire/refusals.ts.
local emq_refuse = {}
${REFUSAL_NAMES.map(refusalFunction).join("\n")}

-- 1. shape: exact key and argument counts.
local function emq_shape(nkeys, nargs)
  if #KEYS ~= nkeys or #ARGV ~= nargs then return emq_refuse['arity']({}) end
end

-- The split: 'emq:{' literal, name up to the first '}', then '}:', name free of '{' and NUL
-- (the scripts accept the empty name). Returns name, type or nil.
local function emq_split(key)
  if string.sub(key, 1, 5) ~= 'emq:{' then return nil end
  local close = string.find(key, '}', 6, true)
  if not close then return nil end
  local name = string.sub(key, 6, close - 1)
  if string.find(name, '{', 1, true) or string.find(name, '\\0', 1, true) then return nil end
  if string.sub(key, close + 1, close + 1) ~= ':' then return nil end
  return name, string.sub(key, close + 2)
end

-- 2. layout: KEYS[1] splits with type types[1]; every other key is rebuilt from the name.
-- Returns the base, or nil and the refusal.
local function emq_layout(types)
  local name, kind = emq_split(KEYS[1])
  if name == nil or kind ~= types[1] then return nil, emq_refuse['layout']({}) end
  local base = 'emq:{' .. name .. '}:'
  for i = 2, #types do
    if KEYS[i] ~= base .. types[i] then return nil, emq_refuse['layout']({}) end
  end
  return base
end

-- 3. fence: the standalone identity key; a failed read (cluster mode) counts as unfenced.
local function emq_fence()
  local wire = redis.pcall('GET', '{emq}:version')
  if type(wire) == 'string' and wire ~= '${WIRE}' then return emq_refuse['fenced']({found = wire}) end
end

-- 4. a number gate: 1 to ${MAX_DIGITS} ASCII digits, nothing else, at least min; nil when not.
local function emq_number(text, min)
  if #text < 1 or #text > ${MAX_DIGITS} or not string.find(text, '^[0-9]+$') then return nil end
  local n = tonumber(text)
  if n < min then return nil end
  return n
end

-- 5. domain: a key that exists with another Valkey type than want.
local function emq_type(key, want)
  local t = redis.call('TYPE', key)['ok']
  if t ~= 'none' and t ~= want then return emq_refuse['wrongtype']({}) end
end

-- The server's time in ms, and an integer as a decimal string (no exponent, no fraction).
local function emq_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function emq_int(n)
  return string.format('%d', n)
end
`;

/** Lua that binds argument `name` (ARGV[i]) to a local and gates it: nothing for ungated bytes. */
function gateLua(name: string, i: number, gate: Gate): string {
  const bind = `local ${name} = ARGV[${i}]`;
  switch (gate.kind) {
    case "job-id":
      return `${bind}\nif string.sub(${name}, 1, 3) ~= 'JOB' then return emq_refuse['job-id']({}) end`;
    case "number": {
      const refusal = gate.min === 0 ? "non-negative" : "positive";
      return `local ${name} = emq_number(ARGV[${i}], ${gate.min})\n` +
        `if not ${name} then return emq_refuse['${refusal}']({arg = '${name}'}) end`;
    }
    case "bytes":
      return `${bind}\nif #${name} > ${gate.limit} then return emq_refuse['${gate.refusal}']({limit = '${gate.limit}'}) end`;
  }
}

/**
 * Steps 1–4 of `verb`, generated from its spec: shape, layout (binding `base` and one local per
 * key role), fence, then one local per argument, gated in argument order.
 */
export function luaHead(verb: Verb): string {
  const spec = VERBS[verb];
  const idAt = (spec.args as readonly string[]).indexOf("id") + 1;
  const types = spec.keys.map((role) =>
    role === "row" ? `'job:' .. ARGV[${idAt}]` : role === "base" ? "''" : luaString(role)
  );
  const keys: string[] = spec.keys.filter((r) => r !== "base");
  return [
    `-- steps 1-4 of ${verb}, generated from lib/wire/verbs.ts`,
    `local e = emq_shape(${spec.keys.length}, ${spec.args.length}) if e then return e end`,
    `local base, e = emq_layout({${types.join(", ")}}) if e then return e end`,
    `e = emq_fence() if e then return e end`,
    `local ${keys.join(", ")} = ${keys.map((r) => `KEYS[${(spec.keys as readonly string[]).indexOf(r) + 1}]`).join(", ")}`,
    ...spec.args.map((a, i) => gateLua(a, i + 1, ARGS[a].gate)),
  ].join("\n");
}

/**
 * One verb's script: the `#!lua` shebang (keys declared, writes allowed, refused under OOM), the
 * verb's name, the shared prelude, any shared helpers (`extra`), the generated steps 1–4, then the
 * verb's own steps 5–6 (`body`).
 */
export function luaScript(verb: Verb, body: string, extra = ""): string {
  const parts = [`#!lua\nlocal VERB = 'EMQ.${verb}'`, PRELUDE, extra.trim(), luaHead(verb), body.trim()];
  return `${parts.filter((p) => p !== "").join("\n")}\n`;
}
