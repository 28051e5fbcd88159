/**
 * The Lua shared by every script, generated from the wire spec (`lib/wire`): the refusal texts
 * ({@link PRELUDE}'s `emq_refuse`), the split and layout check, the fence, the guarded reads that
 * turn ACL and cluster refusals into the wire's texts, and each verb's steps 1–4
 * ({@link luaHead}) — shape, layout, fence, gates — binding its arguments to locals named as in the
 * spec (a group's arguments to tables indexed by job). A verb's own Lua (steps 5–6) follows;
 * {@link luaScript} composes them.
 *
 * Every refusal is returned as an error reply (`redis.error_reply`), so its text is exactly the
 * wire's (an `error()` raise would append the script's name and line).
 *
 * @module
 */
import { called } from "./_called.ts";
import { EVENTS_LUA } from "./events.ts";
import { isKeySuffix, KEY, KEY_PREFIX } from "./keys.ts";
import { FREED_LUA, LANES_LUA } from "./lanes.ts";
import { LIMITS_LUA } from "./limits.ts";
import { READY_LUA } from "./ready.ts";
import {
  ARGS,
  FENCE_KEY,
  type Gate,
  gateDigits,
  MAX_BATCH,
  MAX_COUNTER_DIGITS,
  MAX_DIGITS,
  MAX_OPTIONS_BYTES,
  OPTION_NAMES,
  OPTIONS,
  pieces,
  type Refusal,
  REFUSAL_NAMES,
  REFUSALS,
  type Verb,
  VERBS,
  type VerbSpec,
  WIRE,
} from "../wire/mod.ts";
import { MAX_NAME_BYTES } from "../keyspace/mod.ts";

/** A Lua string literal of `s` (single-quoted; backslash, quote, CR, LF and NUL escaped). */
export function luaString(s: string): string {
  return `'${s.replace(/[\\'\r\n\0]/g, (c) => ({ "\\": "\\\\", "'": "\\'", "\r": "\\r", "\n": "\\n", "\0": "\\0" })[c]!)}'`;
}

/** `emq_refuse['<name>'](p)`: the refusal's text as a Lua concatenation of literals, VERB and `p`. */
function refusalFunction(name: Refusal): string {
  const parts = pieces(REFUSALS[name].template).map((p) => "text" in p ? luaString(p.text) : p.param === "verb" ? "VERB" : `emq_line(p.${p.param})`);
  return `emq_refuse[${luaString(name)}] = function(p) return redis.error_reply(${parts.join(" .. ")}) end`;
}

/** The shared Lua, of which each script ships what it calls. `VERB` is defined by the script's head. */
export const PRELUDE: string = `
-- Refusals, one function each, texts from lib/wire/refusals.ts. An error reply is one line:
-- CR, LF and NUL in a parameter (an id) become spaces.
local function emq_line(x)
  return (string.gsub(tostring(x), '[\\r\\n%z]', ' '))
end
local emq_refuse = {}
${REFUSAL_NAMES.map(refusalFunction).join("\n")}

-- 1. shape: one key; the fixed arguments, then a whole number (>= least) of groups. Returns the
-- number of groups (0 for a verb without groups) or nil and the refusal.
local function emq_shape(fixed, group, least)
  local rest = #ARGV - fixed
  if #KEYS ~= 1 or rest < 0 or (group == 0 and rest ~= 0)
    or (group > 0 and (rest < group * least or rest % group ~= 0)) then
    return nil, emq_refuse['arity']({})
  end
  if group == 0 then return 0 end
  local n = rest / group
  if n > ${MAX_BATCH} then return nil, emq_refuse['batch']({max = '${MAX_BATCH}'}) end
  return n
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

-- The bases of the meta keys a library's calls named (KEYS[1] → base), at most 1000 (then
-- forgotten): a pure function of the key, not computed again at every call.
local emq_bases, emq_bases_count = {}, 0

-- 2. layout: KEYS[1] is the queue's meta. Returns the base ('emq:{q}:'), or nil and the refusal.
local function emq_layout()
  local base = emq_bases[KEYS[1]]
  if base then return base end
  local name, kind = emq_split(KEYS[1])
  if name == nil or kind ~= '${KEY.meta}' then return nil, emq_refuse['layout']({}) end
  base = 'emq:{' .. name .. '}:'
  if emq_bases_count >= 1000 then emq_bases, emq_bases_count = {}, 0 end
  emq_bases[KEYS[1]], emq_bases_count = base, emq_bases_count + 1
  return base
end

-- 3. fence: the standalone identity key. Returns whether the server looks like a cluster node
-- (the read of a key of another slot fails there, and counts as unfenced; so does a key the
-- caller's ACL hides), or nil and the refusal.
local function emq_fence()
  local wire = redis.pcall('GET', ${luaString(FENCE_KEY)})
  if type(wire) == 'table' and wire.err then return true end
  if type(wire) == 'string' and wire ~= '${WIRE}' then
    local found = string.find(wire, '^[0-9]+$') and #wire <= ${MAX_DIGITS} and wire or 'unknown'
    return nil, emq_refuse['fenced']({found = found})
  end
  return false
end

-- 4. a number gate: 1 to most ASCII digits, nothing else, at least min; nil when not.
local function emq_number(text, min, most)
  if #text < 1 or #text > most or not string.find(text, '^[0-9]+$') then return nil end
  local n = tonumber(text)
  if n < min then return nil end
  return n
end

-- A read of a key the verb derives: the caller's ACL and, in a cluster, the slot's migration state
-- apply, and their refusals become the wire's (noperm, migrating). Returns the reply, or nil and
-- the refusal.
local function emq_read(...)
  local r = redis.pcall(...)
  if type(r) == 'table' and r.err then
    if string.find(r.err, 'ACL', 1, true) or string.find(r.err, 'NOPERM', 1, true) then
      return nil, emq_refuse['noperm']({})
    end
    -- In a script the server words a migrating slot as 'non local key' (one key) or 'undeclared
    -- keys were accessed during rehashing' (several), not as TRYAGAIN or ASK.
    if string.find(r.err, 'non local key', 1, true) or string.find(r.err, 'during rehashing', 1, true)
      or string.find(r.err, 'TRYAGAIN', 1, true) or string.find(r.err, 'ASK', 1, true)
      or string.find(r.err, 'MOVED', 1, true) then
      return nil, emq_refuse['migrating']({})
    end
    return nil, redis.error_reply(r.err)
  end
  return r
end

-- The types step 5 read (key → type) and the sizes of the lists and sorted sets it typed (key →
-- size), in a call whose step 5 began with emq_meta (nil in any other), known until its first
-- write (emq_meta_done) or a step that starts afresh (emq_fresh): a key typed twice in that step 5
-- is read once, and a size read with the type is not read again.
local emq_typed, emq_sizes = nil, nil

-- 5. domain, a key that must be a list or a sorted set (kind) or missing, typed by its size
-- (LLEN, ZCARD: neither is ever empty, so 0 is missing), refused as emq_type refuses. Returns its
-- type and size, or nil and the refusal.
local function emq_sized(key, kind)
  local cmd = kind == 'list' and 'LLEN' or 'ZCARD'
  local r = redis.pcall(cmd, key)
  if type(r) == 'table' and r.err then
    if string.find(r.err, 'WRONGTYPE', 1, true) then return nil, emq_refuse['wrongtype']({}) end
    local _, e = emq_read(cmd, key)
    return nil, e
  end
  local t = r > 0 and kind or 'none'
  if emq_typed then emq_typed[key], emq_sizes[key] = t, r end
  return t, r
end

-- 5. domain: the Valkey type of a key ('none' when missing), refused when it is neither missing
-- nor want. Returns the type, or nil and the refusal.
local function emq_type(key, want)
  local t = emq_typed and emq_typed[key]
  if not t and emq_typed and (want == 'list' or want == 'zset') then
    -- (typed by its size, kept for the steps that read it)
    local x
    t, x = emq_sized(key, want)
    if not t then return nil, x end
  elseif not t then
    local r, e = emq_read('TYPE', key)
    if e then return nil, e end
    t = r['ok']
    if emq_typed then emq_typed[key] = t end
  end
  if t ~= 'none' and t ~= want then return nil, emq_refuse['wrongtype']({}) end
  return t
end

-- 5. domain, fields of a key that must be a hash or missing, in one read (a hot path's TYPE and
-- HGETs as one HMGET): refused as emq_type refuses (another type: wrongtype; the caller's ACL, a
-- migrating slot: as emq_read). Returns HMGET's reply (all false: missing, or a hash without
-- them), or nil and the refusal.
local function emq_hash_fields(key, ...)
  local r = redis.pcall('HMGET', key, ...)
  if type(r) == 'table' and r.err then
    if string.find(r.err, 'WRONGTYPE', 1, true) then return nil, emq_refuse['wrongtype']({}) end
    return emq_read('HMGET', key, ...)
  end
  return r
end

-- meta's fields a call read in one HMGET at step 5 (emq_meta; field → its value, false: absent),
-- known until the verb's first write (emq_meta_done) or a step that starts
-- afresh (emq_fresh): a call's writes to meta are not seen here, so reads after them go to the
-- server.
local emq_meta_known = {}
local function emq_meta_done()
  emq_meta_known, emq_typed, emq_sizes = {}, nil, nil
end

-- A field of meta: as emq_meta read it, else by HGET.
local function emq_meta_get(field)
  local v = emq_meta_known[field]
  if v == nil then v = redis.call('HGET', KEYS[1], field) end
  return v
end

-- 5. domain, meta: typed as emq_type(KEYS[1], 'hash') types it, with the fields the verb reads of
-- it (...) in the same read (TYPE only when none of them is there). Returns meta's type, or nil
-- and the refusal.
local function emq_meta(...)
  emq_typed, emq_sizes = emq_typed or {}, emq_sizes or {}
  local fields = {...}
  -- (meta carried, a hash with every field known: emq_meta_carry)
  if emq_typed[KEYS[1]] == 'hash' then
    local all = true
    for _, field in ipairs(fields) do
      if emq_meta_known[field] == nil then
        all = false
        break
      end
    end
    if all then return 'hash' end
  end
  local f, e = emq_hash_fields(KEYS[1], ...) if e then return nil, e end
  local any = false
  for i, field in ipairs(fields) do
    emq_meta_known[field] = f[i]
    if f[i] then any = true end
  end
  if any then
    emq_typed[KEYS[1]] = 'hash'
    return 'hash'
  end
  return emq_type(KEYS[1], 'hash')
end

-- 5. domain, keys a verb derives (the Lua side of the module's Scope::expect / absent): each of
-- wanted, {{key, kind}, ...}, in order, refused when neither missing nor of its kind; the missing
-- ones are appended to missing for emq_probe, the probe before the first write. Returns
-- {[key] = type}, or nil and the refusal.
local function emq_kinds(wanted, missing)
  local kinds = {}
  for _, k in ipairs(wanted) do
    local t, e = emq_type(k[1], k[2]) if e then return nil, e end
    kinds[k[1]] = t
    if t == 'none' then missing[#missing + 1] = k[1] end
  end
  return kinds
end

-- emq_kinds after meta (a hash or missing). Returns {meta = meta's type, kinds = {[key] = type},
-- missing = {key, ...}}, or nil and the refusal.
local function emq_types(wanted)
  local meta, e = emq_type(KEYS[1], 'hash') if e then return nil, e end
  local s = {meta = meta, missing = {}}
  s.kinds, e = emq_kinds(wanted, s.missing) if e then return nil, e end
  return s
end

-- 5. domain, the rows of ids, each a hash or missing (the missing appended to missing). Returns
-- {rows, exists} (by place), or nil and the refusal.
local function emq_rows(base, ids, missing)
  local r = {rows = {}, exists = {}}
  for j, x in ipairs(ids) do
    r.rows[j] = base .. '${KEY_PREFIX.job}' .. x
    local t, e = emq_type(r.rows[j], 'hash') if e then return nil, e end
    r.exists[j] = t == 'hash'
    if not r.exists[j] then missing[#missing + 1] = r.rows[j] end
  end
  return r
end

-- The ids whose membership of the sorted set key is member (true: in it; false: not), in order.
local function emq_members(key, ids, member)
  local out = {}
  for _, x in ipairs(ids) do
    if (redis.call('ZSCORE', key, x) ~= false) == member then out[#out + 1] = x end
  end
  return out
end

-- A job id given twice in one call: the refusal (the first repeat named), or nil.
local function emq_repeated(n, id)
  local seen = {}
  for j = 1, n do
    if seen[id[j]] then return emq_refuse['repeated']({id = id[j]}) end
    seen[id[j]] = true
  end
  return nil
end

-- A counter the verb increments (HINCRBY): missing, or an integer as HINCRBY reads it (optional
-- '-', digits without a leading zero) of at most ${MAX_COUNTER_DIGITS} digits, so that any increment of one call fits.
-- Returns nil, or the refusal.
local function emq_counter_text(count)
  if not count then return nil end
  -- (the common form, digits without a leading zero, at once)
  if #count <= ${MAX_COUNTER_DIGITS} and string.find(count, '^[1-9][0-9]*$') then return nil end
  local digits = string.gsub(count, '^%-', '', 1)
  if count == '-0' or digits == '' or #digits > ${MAX_COUNTER_DIGITS} or string.find(digits, '[^0-9]')
    or (digits ~= '0' and string.sub(digits, 1, 1) == '0') then
    return emq_refuse['counter']({})
  end
  return nil
end

-- emq_counter_text of field of key (HGET; meta's through emq_meta_get).
local function emq_counter(key, field)
  if key == KEYS[1] then return emq_counter_text(emq_meta_get(field)) end
  return emq_counter_text(redis.call('HGET', key, field))
end

-- In a cluster, keys the verb will write or whose absence it relies on and that are missing here
-- may live on the other node of a slot migration: one multi-key read of meta and them answers
-- TRYAGAIN exactly then (the server's own rule), before anything is written. Every probe of a call
-- reads every key an earlier step of the call remembered too (the module's Scope does the same).
local emq_probing, emq_probed = {}, {}
local function emq_remember(missing)
  for _, k in ipairs(missing) do
    if not emq_probed[k] then
      emq_probed[k] = true
      emq_probing[#emq_probing + 1] = k
    end
  end
end
local function emq_probe(cluster, missing)
  if not cluster then return nil end
  emq_remember(missing)
  for i = 1, #emq_probing, 1000 do
    local run = {}
    for j = i, math.min(i + 999, #emq_probing) do run[#run + 1] = emq_probing[j] end
    local _, e = emq_read('EXISTS', KEYS[1], unpack(run))
    if e then return e end
  end
  return nil
end
-- A step that starts afresh (SETTLE's claim part, as the module's fresh Scope) forgets them.
local function emq_fresh()
  emq_probing, emq_probed, emq_meta_known, emq_typed, emq_sizes = {}, {}, {}, nil, nil
end

-- After emq_fresh, meta's fields as a step 5 read them (known: emq_meta_known then, meta a hash)
-- when the writes since touched none of them but written (forgotten: read again if asked): the
-- next emq_meta does not read them again; stream, a key step 5 typed a stream (or nil).
local function emq_meta_carry(known, written, stream)
  known[written] = nil
  emq_meta_known, emq_typed, emq_sizes = known, {[KEYS[1]] = 'hash'}, {}
  -- (and a stream typed then: the writes since made no key of it another type)
  if stream then emq_typed[stream] = 'stream' end
end

-- The rows a SETTLE found held (row key → {its token, created_ms, due_ms, parent, opts} as
-- stored: HMGET's reply), so that its parts (emq_held, emq_flow_settled, emq_letting_go) do not
-- read them again; empty in every other call.
local emq_held_known = {}

-- The server's time in ms, read once per call (as the module's Scope::now: step 5's checks, step
-- 6's writes and SETTLE's claim part see the same ms), and an integer as a decimal string (no
-- exponent, no fraction).
local emq_clock = nil
local function emq_now()
  if not emq_clock then
    local t = redis.call('TIME')
    emq_clock = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return emq_clock
end

local function emq_int(n)
  return string.format('%d', n)
end

-- A command on many ids (after key, when given), in runs that stay under Lua's stack limit.
local function emq_each(cmd, key, ids)
  for i = 1, #ids, 1000 do
    local args = {}
    if key then args[1] = key end
    for j = i, math.min(i + 999, #ids) do args[#args + 1] = ids[j] end
    redis.call(cmd, unpack(args))
  end
end

-- Members added to the sorted set key at one score, one ZADD per run (in place of a ZADD each).
local function emq_zadd_all(key, score, ids)
  for i = 1, #ids, 500 do
    local args = {}
    for j = i, math.min(i + 499, #ids) do
      args[#args + 1] = score
      args[#args + 1] = ids[j]
    end
    redis.call('ZADD', key, unpack(args))
  end
end

-- A limit of meta: its field when it is 1 to 15 digits, else the default.
local function emq_limit(field, default)
  local v = emq_meta_get(field)
  if v and #v <= 15 and string.find(v, '^[0-9]+$') then return tonumber(v) end
  return default
end
${EVENTS_LUA}`;

/** Each option's value gate, as Lua: `emq_option_gate[key](value)` returns the value or the refusal. */
function optionGates(): string {
  return OPTION_NAMES.map((o) =>
    [
      `emq_option_gate[${luaString(o)}] = function(v)`,
      ...gateLua(o, "local x", "x", "v", OPTIONS[o].gate).split("\n").map((l) => `  ${l}`),
      "  return x",
      "end",
    ].join("\n")
  ).join("\n");
}

/**
 * `emq_options(text)`: a job's options through their gate (the twin of `native/src/options.rs`),
 * in the spec's order — length, each item's form, key (known, once) and value gate, then each
 * option's needs. Returns the options by key, or nil and the refusal.
 */
function optionsLua(): string {
  const needs = OPTION_NAMES.flatMap((o) => {
    const n = (OPTIONS[o] as { needs?: string }).needs;
    return n === undefined ? [] : [`{${luaString(o)}, ${luaString(n)}}`];
  });
  return `
local emq_option_gate = {}
${optionGates()}
local function emq_options(text)
  if #text > ${MAX_OPTIONS_BYTES} then return nil, emq_refuse['options']({limit = '${MAX_OPTIONS_BYTES}'}) end
  local o = {}
  if text == '' then return o end
  local start = 1
  while true do
    local stop = string.find(text, '\\0', start, true)
    local item = string.sub(text, start, (stop or (#text + 1)) - 1)
    local eq = string.find(item, '=', 1, true)
    if not eq or eq == 1 then return nil, emq_refuse['option-form']({}) end
    local key, value = string.sub(item, 1, eq - 1), string.sub(item, eq + 1)
    local gate = emq_option_gate[key]
    -- any bytes may come here: printable ASCII only, so that every client can parse the error
    if not gate then return nil, emq_refuse['option-unknown']({option = (string.gsub(key, '[^\\32-\\126]', '?'))}) end
    if o[key] ~= nil then return nil, emq_refuse['option-repeated']({option = key}) end
    local v = gate(value)
    if type(v) == 'table' then return nil, v end
    o[key] = v
    if not stop then break end
    start = stop + 1
  end
  for _, n in ipairs({${needs.join(", ")}}) do
    if o[n[1]] ~= nil and o[n[2]] == nil then return nil, emq_refuse['option-needs']({option = n[1], needs = n[2]}) end
  end
  return o
end
`;
}

/** Lua that binds `value` (a Lua expression) with `bind` (`local x` or `x[j]`), read back as `ref`, and gates it as argument `name`. */
function gateLua(name: string, bind: string, ref: string, value: string, gate: Gate): string {
  switch (gate.kind) {
    case "options":
      return `${bind} = ${value}\ndo local _, e = emq_options(${ref}) if e then return e end end`;
    case "job-id":
      return `${bind} = ${value}\nif string.sub(${ref}, 1, 3) ~= 'JOB' then return emq_refuse['job-id']({}) end`;
    case "number": {
      const refusal = gate.min === 0 ? "non-negative" : "positive";
      const lines = [
        `${bind} = emq_number(${value}, ${gate.min}, ${gateDigits(gate)})`,
        `if not ${ref} then return emq_refuse['${refusal}']({arg = '${name}'}) end`,
      ];
      if (gate.max !== undefined) {
        lines.push(`if ${ref} > ${gate.max} then return emq_refuse['too-large']({arg = '${name}', max = '${gate.max}'}) end`);
      }
      return lines.join("\n");
    }
    case "lane":
      // empty (the queue, or the default lane) or the name rule
      return `${bind} = ${value}\n` +
        `if #${ref} > ${MAX_NAME_BYTES} or string.find(${ref}, '[{}%z]') then ` +
        `return emq_refuse['name']({arg = '${name}', max = '${MAX_NAME_BYTES}'}) end`;
    case "name":
      // the name rule (lib/keyspace/name.ts): 1 to MAX_NAME_BYTES bytes, no '{', '}' or NUL
      return `${bind} = ${value}\n` +
        `if #${ref} < 1 or #${ref} > ${MAX_NAME_BYTES} or string.find(${ref}, '[{}%z]') then ` +
        `return emq_refuse['name']({arg = '${name}', max = '${MAX_NAME_BYTES}'}) end`;
    case "bytes":
      return `${bind} = ${value}\n` +
        `if #${ref} > ${gate.limit} then return emq_refuse['${gate.refusal}']({limit = '${gate.limit}'}) end`;
  }
}

/**
 * Steps 1–4 of `verb`, generated from its spec: shape (binding `n`, the number of jobs), layout
 * (binding `base`), fence (binding `cluster`), then each fixed argument as a local and each group
 * argument as a table indexed by job, gated in argument order.
 */
export function luaHead(verb: Verb): string {
  const spec: VerbSpec = VERBS[verb];
  const F = spec.args.length;
  const G = spec.group.length;
  const lines = [
    `-- steps 1-4 of ${verb}, generated from lib/wire/verbs.ts`,
    `local n, e = emq_shape(${F}, ${G}, ${spec.minGroups ?? 1}) if e then return e end`,
    `local base, e = emq_layout() if e then return e end`,
    `local cluster, e = emq_fence() if e then return e end`,
    ...spec.args.map((a, i) => gateLua(a, `local ${a}`, a, `ARGV[${i + 1}]`, ARGS[a].gate)),
  ];
  if (G > 0) {
    lines.push(`local ${spec.group.join(", ")} = ${spec.group.map(() => "{}").join(", ")}`);
    lines.push(`for j = 1, n do`);
    lines.push(`  local at = ${F} + (j - 1) * ${G}`);
    spec.group.forEach((a, i) => {
      lines.push(...gateLua(a, `${a}[j]`, `${a}[j]`, `ARGV[at + ${i + 1}]`, ARGS[a].gate).split("\n").map((l) => `  ${l}`));
    });
    lines.push(`end`);
  }
  return lines.join("\n");
}

/**
 * One verb's script: the `#!lua` shebang (keys declared, writes allowed; a verb that frees memory or
 * keeps it bounded is flagged `allow-oom`, so that workers drain a full server), the verb's name, of
 * the shared Lua (the prelude, the options gate, limits, lanes, ready lists, then `extra`) only what
 * the rest calls ({@link called}), the generated steps 1–4, then the verb's own steps 5–6 (`body`).
 * Throws when the Lua appends to a queue's base a literal that is no key type.
 */
export function luaScript(verb: Verb, body: string, extra = ""): string {
  const spec: VerbSpec = VERBS[verb];
  const shebang = spec.admits ? "#!lua" : "#!lua flags=allow-oom";
  const own = `${luaHead(verb)}\n${body.trim()}`;
  const shared = [PRELUDE, OPTIONS_LUA, LIMITS_LUA, LANES_LUA, READY_LUA, FREED_LUA, extra].join("\n");
  const script = `${shebang}\nlocal VERB = 'EMQ.${verb}'\n${called(shared, own)}\n${own}\n`;
  for (const [, suffix] of script.matchAll(/\bbase \.\. '([^']*)'/g)) {
    if (!isKeySuffix(suffix!)) throw new Error(`${verb}'s Lua: base .. '${suffix}' is no key type`);
  }
  return script;
}

/** The options gate (admissions gate a job's options; settles read a row's options too). */
const OPTIONS_LUA: string = optionsLua().trim();
