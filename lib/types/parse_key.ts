/** What {@link ParseQueueKey} gives for a key outside the grammar: the rule it broke. */
export type KeyParseError<Message extends string> = { readonly error: Message };

/**
 * A key type back to its queue and type, the type-level twin of `splitQueueKey`:
 * `ParseQueueKey<"emq:{orders}:job:JOB0Nb1VTbfnu4">` is `{ queue: "orders"; type: "job:JOB0Nb1VTbfnu4" }`.
 * A key outside the grammar gives a {@link KeyParseError} naming the rule.
 */
export type ParseQueueKey<K extends string> = K extends `emq:{${infer Q}}:${infer T}`
  ? Q extends `${string}}${string}` ? KeyParseError<"the queue name must end at the first '}', followed by ':'">
  : Q extends `${string}{${string}` ? KeyParseError<"queue name must not contain '{'">
  : Q extends `${string}\0${string}` ? KeyParseError<"queue name must not contain NUL">
  : { queue: Q; type: T }
  : KeyParseError<"a queue key starts with 'emq:{' and has '}:' after the name">;
