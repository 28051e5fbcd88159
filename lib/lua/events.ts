/**
 * The queue's events stream, as Lua (the twin of the module's event writes; lib/wire/events.ts,
 * docs/WIRE.md "Events"): `emq_events_max` reads `meta`'s `events_max` once per call (absent or not
 * as RETAIN writes it: the default; 0: no events), `emq_events_add` appends one entry, `XADD events
 * MAXLEN ~ <events_max> * type <type> <field> <value> …` (trimmed by whole stream nodes; the
 * server replicates it with the exact length left, as the module does). A verb calls it only in
 * step 6, after every check; the `events` key is typed in step 5 (`emq_events_open`) like every key
 * the verb writes. {@link luaEvent} writes the Lua of one entry from the spec's table, so the
 * fields of each type and their order are the spec's by construction.
 *
 * @module
 */
import { EVENT_FIELDS, EVENT_TYPE_FIELD, type EventField, EVENTS, EVENTS_MAX_DEFAULT, type EventType, META } from "../wire/mod.ts";
import { KEY } from "./keys.ts";

/** The fields an entry leaves out when empty: `lane` (absent: the queue itself), `results` (none to carry). */
const OPTIONAL: readonly EventField[] = ["lane", "results"];

/** `emq_events_open(base, missing)`, `emq_events_max()` and `emq_events_add(base, t, fields)`: in the prelude (a script ships them when it writes events). */
export const EVENTS_LUA: string = `
-- Step 5 of a verb that writes events: the events stream typed (a stream or missing, then listed
-- in missing for the cluster probe). Returns nil, or the refusal.
local function emq_events_open(base, missing)
  local _, e = emq_kinds({{base .. '${KEY.events}', 'stream'}}, missing)
  return e
end

-- meta's events_max, read once per call: its field when it is 1 to 15 digits, else the default
-- (${EVENTS_MAX_DEFAULT}); 0: the queue writes no events.
local emq_events_cap = nil
local function emq_events_max()
  if emq_events_cap == nil then emq_events_cap = emq_limit('${META.events_max}', ${EVENTS_MAX_DEFAULT}) end
  return emq_events_cap
end

-- One entry of type t: fields {{name, value, optional}, ...} in the spec's order (a value a number
-- is written as an integer; an optional one left out when empty). No entry when the queue writes
-- no events, or when its '${"jobs" satisfies EventField}' list is empty (no job made the transition).
local function emq_events_add(base, t, fields)
  local max = emq_events_max()
  if max == 0 then return end
  local args = {base .. '${KEY.events}', 'MAXLEN', '~', emq_int(max), '*', '${EVENT_TYPE_FIELD}', t}
  for _, f in ipairs(fields) do
    local v = f[2]
    if type(v) == 'number' then v = emq_int(v) end
    if f[1] == '${"jobs" satisfies EventField}' and v == '' then return end
    if not (f[3] and v == '') then
      args[#args + 1] = f[1]
      args[#args + 1] = v
    end
  end
  redis.call('XADD', unpack(args))
end

-- A list of ids (or numbers) as an event's list: space-separated.
local function emq_list(xs)
  local out = {}
  for i, x in ipairs(xs) do out[i] = type(x) == 'number' and emq_int(x) or x end
  return table.concat(out, ' ')
end
`;

/** The fields an event of type `T` carries, each a Lua expression of its value (a string or a number; a list through `emq_list`). */
export type EventValues<T extends EventType> = { readonly [F in (typeof EVENTS)[T]["fields"][number]]: string };

/**
 * The Lua of one event entry of type `t` (`emq_events_add(base, …)`), its fields in the order of
 * {@link EVENT_FIELDS}, each given as a Lua expression: a string (or number), the entry's value.
 */
export function luaEvent<T extends EventType>(t: T, values: EventValues<T>): string {
  const order = Object.keys(EVENT_FIELDS) as EventField[];
  const fields = (EVENTS[t].fields as readonly EventField[]).slice().sort((a, b) => order.indexOf(a) - order.indexOf(b));
  const items = fields.map((f) => `{'${f}', ${(values as Record<string, string>)[f]}${OPTIONAL.includes(f) ? ", true" : ""}}`);
  return `emq_events_add(base, '${t}', {${items.join(", ")}})`;
}
