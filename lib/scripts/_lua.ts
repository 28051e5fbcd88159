/**
 * The Lua shared by every wire-4 script: the steps of docs/WIRE.md (shape, layout, fence, gates,
 * domain checks) written once and composed into each verb's script by {@link luaScript}.
 *
 * Every helper returns `nil` on success or an error reply (`redis.error_reply`) that the verb
 * body returns as is, so the reply text is exactly the wire's (an `error()` raise would append
 * the script's name and line).
 *
 * @module
 */

/** The payload limit the scripts enforce: the module's `emq.max-payload` default. */
export const MAX_PAYLOAD_BYTES = 1048576;
/** The reason limit of RETRY and BURY. */
export const MAX_REASON_BYTES = 4096;

/** The shared Lua: one copy, composed into every script. `VERB` is defined by the script's head. */
export const PRELUDE: string = `
local function emq_err(text)
  return redis.error_reply('ERR ' .. VERB .. ' ' .. text)
end

-- 1. shape: exact key and argument counts.
local function emq_shape(nkeys, nargs)
  if #KEYS ~= nkeys or #ARGV ~= nargs then
    return redis.error_reply("ERR wrong number of arguments for '" .. VERB .. "' command")
  end
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
local function emq_layout(types)
  local name, kind = emq_split(KEYS[1])
  if name == nil or kind ~= types[1] then
    return nil, emq_err('keys do not match the wire-4 layout')
  end
  local base = 'emq:{' .. name .. '}:'
  for i = 2, #types do
    if KEYS[i] ~= base .. types[i] then
      return nil, emq_err('keys do not match the wire-4 layout')
    end
  end
  return base
end

-- 3. fence: the standalone identity key; a failed read (cluster mode) counts as unfenced.
local function emq_fence()
  local wire = redis.pcall('GET', '{emq}:version')
  if type(wire) == 'string' and wire ~= '4' then
    return emq_err('fenced: this server speaks wire ' .. wire .. ', not wire 4')
  end
end

-- 4. gates.
local function emq_id(id)
  if string.sub(id, 1, 3) ~= 'JOB' then return emq_err('id must be a JOB id') end
end

-- 1 to 15 ASCII digits, nothing else, at least min. Returns the number, or nil and the error.
local function emq_number(text, what, min)
  if #text < 1 or #text > 15 or not string.find(text, '^[0-9]+$') then
    if min == 0 then return nil, emq_err(what .. ' must be a non-negative integer') end
    return nil, emq_err(what .. ' must be a positive integer')
  end
  local n = tonumber(text)
  if n < min then
    if min == 0 then return nil, emq_err(what .. ' must be a non-negative integer') end
    return nil, emq_err(what .. ' must be a positive integer')
  end
  return n
end

local function emq_max(text, what, limit)
  if #text > limit then return emq_err(what .. ' exceeds ' .. limit .. ' bytes') end
end

-- 5. domain: a key that exists with another Valkey type than want.
local function emq_type(key, want)
  local t = redis.call('TYPE', key)['ok']
  if t ~= 'none' and t ~= want then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
  end
end

-- The server's time in ms, and an integer as a decimal string (no exponent, no fraction).
local function emq_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function emq_int(n)
  return string.format('%d', n)
end

-- PROMOTE and REAP: up to limit ids of the sorted set KEYS[1] (type from) whose score is due
-- (<= now), ascending, move to pending with push ('LPUSH': the head, 'RPUSH': the tail, claimed
-- next); rows that exist are marked pending. Every row is type-checked before the first write.
local function emq_move_due(from, push)
  local e = emq_shape(3, 1) if e then return e end
  local base, e = emq_layout({from, 'pending', ''}) if e then return e end
  e = emq_fence() if e then return e end
  local limit, e = emq_number(ARGV[1], 'limit', 1) if e then return e end
  e = emq_type(KEYS[1], 'zset') or emq_type(KEYS[2], 'list') if e then return e end
  local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', emq_int(emq_now()), 'LIMIT', 0, limit)
  local rows = {}
  for i, id in ipairs(ids) do
    rows[i] = base .. 'job:' .. id
    e = emq_type(rows[i], 'hash') if e then return e end
  end
  for i, id in ipairs(ids) do
    redis.call('ZREM', KEYS[1], id)
    redis.call(push, KEYS[2], id)
    if redis.call('EXISTS', rows[i]) == 1 then redis.call('HSET', rows[i], 'state', 'pending') end
  end
  return #ids
end
`;

/**
 * One verb's script: the `#!lua` shebang (keys declared, writes allowed, refused under OOM),
 * the verb's name, the shared prelude, then the verb's own steps.
 */
export function luaScript(verb: string, body: string): string {
  return `#!lua\nlocal VERB = '${verb}'\n${PRELUDE}\n${body.trim()}\n`;
}
