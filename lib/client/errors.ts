/**
 * The client's errors, one taxonomy: every error the client raises is an {@link EchoMQError} naming
 * the rule it enforces — a client-side check, a server refusal of a wire verb ({@link WireError}
 * and its subclasses, decoded from the server's text by the wire spec's parser, exhaustively), or
 * a backend that cannot be used ({@link BackendError}). Keyspace violations (queue names, ids)
 * raise `KeyspaceError` (a `TypeError`), before any wire.
 *
 * @module
 */
import { match } from "ts-pattern";
import { type JobId, KeyspaceError, type RuleErrorClass, ruleErrorOf } from "../keyspace/mod.ts";
import { type ParsedRefusal, parseRefusal } from "../wire/mod.ts";

/** Which rule a client-side check enforces. */
export type ClientRule =
  | "delay-ms"
  | "lease-ms"
  | "due-ms"
  | "limit"
  | "count"
  | "payload"
  | "reason"
  | "options"
  | "closed"
  | "job"
  | "durable"
  | "connection"
  | "timeout"
  | "batch"
  | "scheduler"
  | "result"
  | "flow";

/** Every rule an {@link EchoMQError} can name: a client-side check, a wire refusal, or the backend. */
export type Rule = ClientRule | WireRule | "backend";

/** An `Error` naming a rule (see `RuleError`): the root of {@link EchoMQError}, as `RuleTypeError` is the keyspace's. */
export const RuleErrorRoot: RuleErrorClass<Error> = ruleErrorOf(Error);

/**
 * The root of every error the client raises: a call refused by the client before any wire
 * (`rule` names the check), a `durable` write not acknowledged in time ({@link DurabilityError}),
 * a server refusal ({@link WireError} and its subclasses), a server that cannot be reached or a
 * connection lost ({@link ConnectionError}), a call without a reply in time
 * ({@link RequestTimeoutError}) or an unusable backend ({@link BackendError}). A bad queue name or
 * id is a `KeyspaceError` (raised before any wire by the keyspace module, which depends on nothing
 * of the client): it is a `TypeError`, and `instanceof EchoMQError` is true of it too. Built as
 * `new EchoMQError(rule, message)`; its `name` (and every subclass's) is its class's.
 */
export class EchoMQError extends RuleErrorRoot<Rule> {
  /**
   * `x instanceof EchoMQError`: an instance of this class or a subclass — or a `KeyspaceError`,
   * so that one `catch` test covers every error a client call raises while `mod.ts` keeps its
   * keyspace errors `TypeError`s without depending on the client. A subclass tests as usual.
   */
  static override [Symbol.hasInstance](x: unknown): boolean {
    return Function.prototype[Symbol.hasInstance].call(this, x) || (this === EchoMQError && x instanceof KeyspaceError);
  }
}

/** The option of `upsertScheduler` a {@link SchedulerOptionError} names. */
export type SchedulerOption = "name" | "cron" | "tz" | "everyMs" | "spec" | "missed" | "payload";

/**
 * A scheduler's input refused before anything is sent (`upsertScheduler`, `removeScheduler`): an
 * invalid cron pattern, an unknown time zone, an `everyMs` that is not a positive integer, a name
 * that breaks the name rule, a bad missed-tick policy. `option` names which.
 */
export class SchedulerOptionError extends EchoMQError {
  /** The option refused. */
  readonly option: SchedulerOption;
  /** Builds the error for `option`. */
  constructor(option: SchedulerOption, message: string, cause?: unknown) {
    super("scheduler", message, cause);
    this.option = option;
  }
}

/**
 * A handler's result (its return value, or `ack`'s `result`) that is too large to keep: its JSON
 * is longer than `limit` bytes (`MAX_PAYLOAD_BYTES`, the server's payload limit, which ACK's
 * `result` shares). Checked before the wire, so one job's result never refuses the others of its
 * settle command: a worker fails that attempt with this error (retried, or buried after the last
 * attempt, as any handler throw; the reason names it), `ack` throws it, `settleMany` gives it to
 * that settlement alone. The server's own refusal of an ACK whose result passes a lower
 * `emq.max-payload` is a `WireError` of rule `gate` (as a payload's).
 */
export class ResultTooLargeError extends EchoMQError {
  /** The job whose result it is. */
  readonly id: string;
  /** The result's size, in bytes of JSON. */
  readonly bytes: number;
  /** The limit, in bytes. */
  readonly limit: number;
  /** Builds the error for `id`'s result of `bytes` bytes. */
  constructor(id: string, bytes: number, limit: number) {
    super("result", `result of ${id}: ${bytes} bytes of JSON, more than the ${limit} a result may have`);
    this.id = id;
    this.bytes = bytes;
    this.limit = limit;
  }
}

/**
 * A claimed job whose stored payload the codec could not decode. The job *is* claimed (active,
 * lease running): `job` names it so the caller can retry or bury it; a worker treats this as a
 * failed attempt.
 */
export class PayloadDecodeError extends EchoMQError {
  /** The claimed job (its payload is missing here: it could not be decoded), with its lease token. */
  readonly job: { readonly id: JobId; readonly queue: string; readonly attempts: number; readonly token: number };
  /** Builds the error for `job`, with the codec's error as the cause. */
  constructor(codec: string, job: { id: JobId; queue: string; attempts: number; token: number }, cause: unknown) {
    super(
      "payload",
      `claim: the ${codec} codec could not decode the payload of ${job.id} on queue ${JSON.stringify(job.queue)}: ${
        cause instanceof Error ? cause.message : String(cause)
      }`,
    );
    this.job = job;
    this.cause = cause;
  }
}

/**
 * A `durable` enqueue or schedule was written on the primary, but fewer replicas than asked
 * acknowledged it within the timeout (`WAIT` after the write, on the same connection) — or the
 * `WAIT` itself failed (`cause`). The jobs exist on the primary; they may be lost if it fails before
 * a replica copies them. To be sure, enqueue again with the same id: a `DuplicateIdError` then says
 * the job was kept.
 */
export class DurabilityError extends EchoMQError {
  /** The queue written. */
  readonly queue: string;
  /** The ids written on the primary but not acknowledged by enough replicas. */
  readonly ids: readonly string[];
  /** Replicas that acknowledged (0 when `WAIT` failed). */
  readonly acknowledged: number;
  /** Replicas asked for. */
  readonly replicas: number;
  /** How long `WAIT` blocked at most, in ms. */
  readonly timeoutMs: number;
  /** Builds the error; `cause` is the `WAIT`'s own error, if it failed. */
  constructor(
    what: string,
    queue: string,
    ids: readonly string[],
    acknowledged: number,
    wait: { readonly replicas: number; readonly timeoutMs: number },
    cause?: unknown,
  ) {
    const which = ids.length === 1 ? ids[0]! : `${ids.length} jobs (${ids[0]} …)`;
    const why = cause === undefined
      ? `${acknowledged} of ${wait.replicas} replica(s) acknowledged it within ${wait.timeoutMs} ms`
      : `WAIT failed: ${cause instanceof Error ? cause.message : String(cause)}`;
    super(
      "durable",
      `${what}: ${which} on queue ${JSON.stringify(queue)} was written on the primary, but ${why} ` +
        "(durable rule: it may be lost if the primary fails; enqueue it again with the same id to make sure)",
      cause,
    );
    this.queue = queue;
    this.ids = ids;
    this.acknowledged = acknowledged;
    this.replicas = wait.replicas;
    this.timeoutMs = wait.timeoutMs;
  }
}

/**
 * The refusal of docs/WIRE.md the server gave, by step and kind; `oom` is the server's own refusal
 * of an admission under `maxmemory` (docs/WIRE.md, Memory), `other` any server error the spec does
 * not name.
 */
export type WireRule =
  | "shape"
  | "layout"
  | "fence"
  | "gate"
  | "repeated"
  | "noperm"
  | "wrongtype"
  | "duplicate"
  | "lease-lost"
  | "cancelled"
  | "active"
  | "not-dead"
  | "not-scheduled"
  | "counter"
  | "migrating"
  | "entry-form"
  | "outbox-lost"
  | "not-open"
  | "flow-place"
  | "fan-in"
  | "oom"
  | "other";

/**
 * A command refused by the server: a wire verb (module or script alike), or one of the plain reads
 * of `stats`, `counts`, `jobs`, `getJob`, `isPaused` and `queues` (`verb` is then the command, e.g.
 * `LLEN`). `text` is the server's reply; a refused command wrote nothing. `cause` is glide's error.
 */
export class WireError extends EchoMQError {
  /** The verb, e.g. `EMQ.ENQUEUE` (or the plain command, e.g. `HGETALL`). */
  readonly verb: string;
  /** Which refusal. */
  declare readonly rule: WireRule;
  /** The server's error text, exactly as on the wire (`ERR EMQ.ENQUEUE duplicate id JOB…`). */
  readonly text: string;
  /** Builds the error from the verb and the server's text; `cause` is glide's error. */
  constructor(verb: string, rule: WireRule, text: string, cause?: unknown) {
    super(rule, `${verb} refused (${rule}): ${text}`, cause);
    this.verb = verb;
    this.text = text;
  }
}

/**
 * ENQUEUE or SCHEDULE found a row for `id` already (ids are never silently merged), or one call
 * named `id` twice (`rule` stays `duplicate`; the text says which).
 */
export class DuplicateIdError extends WireError {
  /** The id whose row exists. */
  readonly id: string;
  /** Builds the error. */
  constructor(verb: string, text: string, id: string) {
    super(verb, "duplicate", text);
    this.id = id;
  }
}

/** The refusals naming the jobs of the call they refused: one {@link JobRefusalError} subclass each. */
export type JobRefusalRule = "lease-lost" | "cancelled" | "active" | "not-dead" | "not-scheduled";

/**
 * A refusal naming the jobs of the call it refused (`ids`, space-separated in the server's text):
 * nothing was written. The base of {@link LeaseLostError}, {@link JobActiveError},
 * {@link JobNotDeadError} and {@link JobNotScheduledError}, each of which names its rule in
 * {@link JobRefusalError.refusal} and is built as `new LeaseLostError(verb, text, ids)`.
 */
export class JobRefusalError extends WireError {
  /** The rule of the refusal a subclass stands for (none on this base: its constructor needs `rule`). */
  static readonly refusal: JobRefusalRule | undefined = undefined;
  /** The jobs refused, in the call's order. */
  readonly ids: readonly string[];
  /** Builds the error; `rule` is the class's {@link JobRefusalError.refusal} unless given. */
  constructor(verb: string, text: string, ids: readonly string[], rule?: JobRefusalRule) {
    const refusal = rule ?? (new.target as typeof JobRefusalError).refusal;
    if (refusal === undefined) throw new TypeError(`${new.target.name}: no rule`);
    super(verb, refusal, text);
    this.ids = ids;
  }
}

/**
 * A settle or extension named jobs whose lease this caller no longer holds: the lease ran out and
 * the job was reaped (another claim may hold it now, under another token), or it was settled
 * already. Nothing was written. `ids` lists every such job of the call.
 */
export class LeaseLostError extends JobRefusalError {
  /** Its rule. */
  static override readonly refusal: JobRefusalRule = "lease-lost";
}

/**
 * An extension named jobs that `mq.cancel` cancelled while this caller held them (`ids`): they are
 * buried with their cancel's reason, and their handlers should stop. The worker aborts each one's
 * `job.signal` with this error. Nothing was written.
 */
export class JobCancelledError extends JobRefusalError {
  /** Its rule. */
  static override readonly refusal: JobRefusalRule = "cancelled";
}

/** REMOVE named jobs a worker holds (`ids`): remove them once they are settled. Nothing was removed. */
export class JobActiveError extends JobRefusalError {
  /** Its rule. */
  static override readonly refusal: JobRefusalRule = "active";
}

/** REQUEUE named jobs that are not dead (`ids`). Nothing was requeued. */
export class JobNotDeadError extends JobRefusalError {
  /** Its rule. */
  static override readonly refusal: JobRefusalRule = "not-dead";
}

/** RUN named jobs that are not scheduled (`ids`). Nothing was moved. */
export class JobNotScheduledError extends JobRefusalError {
  /** Its rule. */
  static override readonly refusal: JobRefusalRule = "not-scheduled";
}

/** The server speaks another wire version than this client's. */
export class FencedError extends WireError {
  /** Builds the error. */
  constructor(verb: string, text: string) {
    super(verb, "fence", text);
  }
}

/**
 * Why a connection failed: at connect, `auth` (NOAUTH: credentials missing; WRONGPASS: wrong; or
 * the user may not run what connecting needs), `refused` (nothing listens on the port), `timeout`
 * (no answer within `connectTimeout`), `tls` (the TLS handshake failed) or `cluster` (the
 * `cluster` option does not match the server); after connect, `lost` (the connection broke while
 * a call was out: it may or may not have run); `other` for anything else glide reports.
 */
export type ConnectionReason = "auth" | "refused" | "timeout" | "tls" | "cluster" | "lost" | "other";

/**
 * The server could not be reached or would not take the connection (at connect), or the
 * connection broke while a call was out (`reason` `lost`: that call may or may not have run).
 * `address` names where the client looked; `reason` what to do about it. No message carries a
 * password.
 */
export class ConnectionError extends EchoMQError {
  /** The addresses tried, `host:port`. */
  readonly address: string;
  /** Why: see {@link ConnectionReason}. */
  readonly reason: ConnectionReason;
  /** Builds the error; `cause` is glide's own error. */
  constructor(address: string, reason: ConnectionReason, message: string, cause?: unknown) {
    super("connection", message, cause);
    this.address = address;
    this.reason = reason;
  }
}

/**
 * A call that got no reply within the request timeout (the server stopped, paused, overloaded or
 * unreachable): it may or may not have run. A retry of a write must be idempotent — an enqueue
 * with its id (`enqueue(…, { id })`), whose `DuplicateIdError` then says the first one ran.
 * `cause` is glide's `TimeoutError`.
 */
export class RequestTimeoutError extends EchoMQError {
  /** The command, e.g. `EMQ.ENQUEUE` or `LLEN`. */
  readonly command: string;
  /** The server(s) asked, `host:port`. */
  readonly address: string;
  /** The request timeout in force, in ms. */
  readonly timeoutMs: number;
  /** Builds the error; `cause` is glide's error. */
  constructor(command: string, address: string, timeoutMs: number, cause?: unknown) {
    super("timeout", `${command}: no reply from ${address} within ${timeoutMs} ms (request timeout): it may or may not have run`, cause);
    this.command = command;
    this.address = address;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * What a failed `enqueueMany` did with each input it read: the fields of {@link BatchError} (each
 * documented there), and whether the input ran out (`exhausted`).
 */
export type BatchReport<P> =
  & Pick<BatchError<P>, "landed" | "landedAt" | "unsent" | "unsentAt" | "unconfirmed" | "unconfirmedAt" | "unreadFrom" | "payloads">
  & {
    /** True when the input ran out: every input was read. */
    readonly exhausted: boolean;
  };

/**
 * An `enqueueMany` that failed part way — a command refused or without a reply, a connection
 * lost, a payload the codec could not encode, an input that threw: `cause` is the first failure.
 * After it nothing more is sent or read, and every input is accounted for exactly once: inputs
 * `0 … unreadFrom − 1` were read, each in one of `landed` (on the server), `unsent` (certainly
 * not) or `unconfirmed` (maybe), at its index (`landedAt`, `unsentAt`, `unconfirmedAt`); inputs
 * from `unreadFrom` on were never read, and the input was left as it was: a generator or iterator
 * is not closed (`return()` is not called), so iterating it again continues with input
 * `unreadFrom`.
 *
 * To finish the job, every input once:
 * 1. skip `landed`;
 * 2. send each `unconfirmed` and `unsent` id again with its payload and its id —
 *    `enqueue(queue, payloads.get(id), { id })` — and take a `DuplicateIdError` as "it was there";
 *    an unsent payload the codec refused (`cause` says which) must be mended first;
 * 3. send the inputs from `unreadFrom` on: `enqueueMany(queue, array.slice(unreadFrom))`, or the
 *    same generator or iterator again.
 */
export class BatchError<P = unknown> extends EchoMQError {
  /** Ids written on the server (and confirmed by the replicas, when durable), in input order. Skip them. */
  readonly landed: readonly string[];
  /** Ids certainly not written: refused by the server or the client, or never sent. Send them again. */
  readonly unsent: readonly string[];
  /**
   * Ids that may be on the server: written on the primary without enough replicas' confirmation
   * (a durable shortfall), or sent in a request whose outcome is unknown (a timeout, a lost
   * connection). Send them again with the same ids (`enqueue(…, { id })`): a job still there is
   * refused as a duplicate, not doubled (a job a worker has acked meanwhile is refused too while the
   * queue keeps it completed; with `completedMax` 0, or once the retention deleted it, it would run twice).
   */
  readonly unconfirmed: readonly string[];
  /** `landedAt[i]` is the input index of `landed[i]`. */
  readonly landedAt: readonly number[];
  /** `unsentAt[i]` is the input index of `unsent[i]`. */
  readonly unsentAt: readonly number[];
  /** `unconfirmedAt[i]` is the input index of `unconfirmed[i]`. */
  readonly unconfirmedAt: readonly number[];
  /** The index of the first input not read: `enqueueMany` read inputs `0 … unreadFrom − 1` only. */
  readonly unreadFrom: number;
  /** The payload of each `unsent` and `unconfirmed` id, as read: what a retry sends (a stream cannot give it again). */
  readonly payloads: ReadonlyMap<string, P>;
  /** Builds the error from what became of each input. */
  constructor(what: string, report: BatchReport<P>, cause: unknown) {
    const { landed, unsent, unconfirmed, unreadFrom } = report;
    super(
      "batch",
      `${what}: ${landed.length} job(s) landed, ${unsent.length} not written, ${unconfirmed.length} unconfirmed (first failure: ${
        cause instanceof Error ? cause.message : String(cause)
      }); ${report.exhausted ? "" : `inputs from index ${unreadFrom} on were not read; `}send the unconfirmed and the unsent ` +
        `again with their ids (a DuplicateIdError means it was there)${report.exhausted ? "" : `, then the inputs from index ${unreadFrom} on`}`,
    );
    this.landed = landed;
    this.unsent = unsent;
    this.unconfirmed = unconfirmed;
    this.landedAt = report.landedAt;
    this.unsentAt = report.unsentAt;
    this.unconfirmedAt = report.unconfirmedAt;
    this.unreadFrom = unreadFrom;
    this.payloads = report.payloads;
    this.cause = cause;
  }
}

/** The requested backend cannot serve this server (e.g. `backend: "module"` without the module). */
export class BackendError extends EchoMQError {
  /** Builds the error. */
  constructor(message: string) {
    super("backend", message);
  }
}

// glide prints server errors as "An error was signalled by the server: - <Kind>: <text>" for
// known codes, and "<CODE>: <text>" for others. These are the kinds and their wire codes.
const KINDS: Record<string, string> = {
  ResponseError: "ERR",
  ExecAbortError: "EXECABORT",
  BusyLoadingError: "LOADING",
  NoScriptError: "NOSCRIPT",
  Moved: "MOVED",
  Ask: "ASK",
  TryAgain: "TRYAGAIN",
  ClusterDown: "CLUSTERDOWN",
  CrossSlot: "CROSSSLOT",
  MasterDown: "MASTERDOWN",
  ReadOnly: "READONLY",
  NotBusy: "NOTBUSY",
};

/**
 * The server's error text as it was on the wire (`ERR …`, `WRONGTYPE …`, `NOSCRIPT …`), recovered
 * from a glide error; `null` when `e` is not a server error reply (timeout, connection, …).
 */
export function serverText(e: unknown): string | null {
  if (e instanceof EchoMQError) return e instanceof WireError ? e.text : null;
  const message = e instanceof Error ? e.message : typeof e === "string" ? e : null;
  if (message === null) return null;
  const known = /^An error was signalled by the server:? - (\w+):? ?([\s\S]*)$/.exec(message);
  if (known) {
    const code = KINDS[known[1]!] ?? known[1]!;
    return known[2] === "" ? code : `${code} ${known[2]}`;
  }
  const coded = /^([A-Z][A-Z_]+): ([\s\S]*)$/.exec(message);
  if (coded) return `${coded[1]} ${coded[2]}`;
  return null;
}

/** True when `e` is a server's `NOSCRIPT` reply. */
export function isNoScript(e: unknown): boolean {
  return serverText(e)?.startsWith("NOSCRIPT") ?? false;
}

/** The typed error of a recognised refusal; a refusal added to the spec and missed here fails to compile. */
function typed(verb: string, refusal: ParsedRefusal, text: string): WireError {
  const p = refusal.params;
  const ids = (p.ids ?? "").split(" ").filter((x) => x !== "");
  return match(refusal.name)
    .with("duplicate", () => new DuplicateIdError(verb, text, p.id ?? ""))
    .with("lease-lost", () => new LeaseLostError(verb, text, ids))
    .with("cancelled", () => new JobCancelledError(verb, text, ids))
    .with("active", () => new JobActiveError(verb, text, ids))
    .with("not-dead", () => new JobNotDeadError(verb, text, ids))
    .with("not-scheduled", () => new JobNotScheduledError(verb, text, ids))
    .with("fenced", () => new FencedError(verb, text))
    .with("arity", "batch", () => new WireError(verb, "shape", text))
    .with("layout", () => new WireError(verb, "layout", text))
    .with(
      "job-id",
      "name",
      "positive",
      "non-negative",
      "too-large",
      "payload",
      "reason",
      "failure",
      "log",
      "progress",
      "spec",
      "result",
      "entry",
      "options",
      "option-form",
      "option-unknown",
      "option-repeated",
      "option-needs",
      () => new WireError(verb, "gate", text),
    )
    .with("repeated", () => new DuplicateIdError(verb, text, p.id ?? ""))
    .with("noperm", () => new WireError(verb, "noperm", text))
    .with("wrongtype", () => new WireError(verb, "wrongtype", text))
    .with("counter", () => new WireError(verb, "counter", text))
    .with("migrating", () => new WireError(verb, "migrating", text))
    .with("entry-form", () => new WireError(verb, "entry-form", text))
    .with("outbox-lost", () => new WireError(verb, "outbox-lost", text))
    .with("not-open", () => new WireError(verb, "not-open", text))
    .with("flow-place", () => new WireError(verb, "flow-place", text))
    .with("fan-in", () => new WireError(verb, "fan-in", text))
    .exhaustive();
}

/** The rule of a server error the spec does not name, by its code: NOPERM, OOM, WRONGTYPE, … */
export function serverRule(text: string): WireRule {
  const code = /^[A-Z]+/.exec(text)?.[0];
  return code === "NOPERM" ? "noperm" : code === "OOM" ? "oom" : code === "WRONGTYPE" ? "wrongtype" : "other";
}

/**
 * Turns an error of a call of `verb` into the client's taxonomy under that verb's name: a server
 * refusal into the matching {@link WireError} (a refusal the spec does not name, such as OOM, by
 * its code: {@link serverRule}); a {@link RequestTimeoutError} of the command that carried the verb
 * (`EVALSHA`) renamed; anything else — another verb's refusal included — unchanged. glide's error
 * stays the `cause`.
 */
export function wireError(verb: string, e: unknown): unknown {
  if (e instanceof RequestTimeoutError) return e.command === verb ? e : new RequestTimeoutError(verb, e.address, e.timeoutMs, e.cause);
  const text = serverText(e);
  if (text === null) return e;
  const cause = e instanceof WireError ? e.cause : e;
  const refusal = parseRefusal(text);
  if (refusal !== null && refusal.verb !== null && refusal.verb !== verb) return e; // another verb's refusal: not this one's
  let typedError: WireError;
  if (refusal !== null) typedError = typed(verb, refusal, text);
  // A refusal of this verb that the spec does not know (a newer server): still typed, as `other`.
  else if (text.startsWith(`ERR ${verb} `)) typedError = new WireError(verb, "other", text);
  else typedError = new WireError(verb, serverRule(text), text);
  if (cause !== undefined) typedError.cause = cause;
  return typedError;
}

/** `text` with every occurrence of `secret` (a password) replaced by `***`. */
export function redact(text: string, secret: string | undefined): string {
  return secret === undefined || secret === "" ? text : text.split(secret).join("***");
}

/** An error of `result()` about one job of one queue: it names both. */
export class JobResultError extends EchoMQError {
  /** The queue asked. */
  readonly queue: string;
  /** The job asked for. */
  readonly jobId: string;
  /** Builds the error for job `jobId` of `queue`, of `rule`, saying `message`. */
  constructor(rule: "job" | "timeout", queue: string, jobId: string, message: string) {
    super(rule, message);
    this.queue = queue;
    this.jobId = jobId;
  }
}

/** `result()` of a job that has no row: it never existed, was removed, or its retention deleted it. */
export class JobNotFoundError extends JobResultError {
  /** Builds the error; `message` says why. */
  constructor(queue: string, jobId: string, message: string) {
    super("job", queue, jobId, message);
  }
}

/** `result()` of a job that is dead (buried): it failed for good. `reason` is the last failure's. */
export class JobFailedError extends JobResultError {
  /** Its reason, as the worker sent it. */
  readonly reason: string;
  /** Builds the error for job `jobId` of `queue`, buried with `reason`. */
  constructor(queue: string, jobId: string, reason: string) {
    super("job", queue, jobId, `job ${jobId} of queue ${JSON.stringify(queue)} failed: ${reason}`);
    this.reason = reason;
  }
}

/** `result()` that did not see the job finish within its `timeoutMs` (the job goes on). */
export class ResultTimeoutError extends JobResultError {
  /** The time waited, ms. */
  readonly timeoutMs: number;
  /** Builds the error. */
  constructor(queue: string, jobId: string, timeoutMs: number) {
    super("timeout", queue, jobId, `result: job ${jobId} of queue ${JSON.stringify(queue)} did not finish within ${timeoutMs} ms`);
    this.timeoutMs = timeoutMs;
  }
}
