/**
 * OpenTelemetry tracing, by injection: the user hands `EchoMQ.connect` their own
 * `import * as api from '@opentelemetry/api'` (`tracing: { api }`), typed here structurally
 * ({@link TracingApi}), so this package depends on nothing of OpenTelemetry's. Without it nothing
 * is created, nothing is imported and no option rides on a job.
 *
 * The spans follow the OpenTelemetry messaging semantic conventions: `send <queue>` (kind
 * PRODUCER) around an admission — one span for all of `enqueueMany`'s jobs, with
 * `messaging.batch.message_count` — whose W3C trace context (`traceparent`) travels on the job's
 * row as the job option `traceparent`; `process <queue>` (kind CONSUMER) around each handler a
 * worker runs, a root span with a *link* to that context (the conventions' default: a consumer's
 * trace is its own) — or, with `tracing: { consumer: "child" }`, a *child* of it, so that one trace
 * holds the producer and its consumers (as bullmq-otel draws it). Attributes: `messaging.system`
 * (`echomq`), `messaging.destination.name` (the queue), `messaging.message.id` (the job id),
 * `messaging.operation.type` (`send` / `process`), `messaging.operation.name` (the call:
 * `enqueue`, `schedule`, `submit`, `enqueueMany`, `process`), and on a process span
 * `echomq.attempt` and `echomq.settlement` (`ack`, `retry`, `bury`, `release`: what the worker
 * sent). A handler's throw (or timeout) is recorded as an exception with status ERROR; a settle
 * the server refused is the event `echomq.settle_failed`, a lost lease the event
 * `echomq.lease_lost`, each with status ERROR.
 *
 * @module
 */
import { EchoMQError } from "./errors.ts";

/** A context of `@opentelemetry/api` (`Context`), as EchoMQ uses it: opaque. */
export interface TraceContext {
  /** The value under `key` (the API's `Context.getValue`). */
  getValue(key: symbol): unknown;
}

/** A span's identity (the API's `SpanContext`). */
export interface TraceSpanContext {
  /** 32 lowercase hex digits. */
  readonly traceId: string;
  /** 16 lowercase hex digits. */
  readonly spanId: string;
  /** The W3C trace flags (bit 0: sampled). */
  readonly traceFlags: number;
  /** True when the context came from another process. */
  readonly isRemote?: boolean;
}

/** Attributes of a span or an event (the API's `Attributes`, the kinds EchoMQ writes). */
export type TraceAttributes = Record<string, string | number | boolean>;

/** A span as EchoMQ drives it (the API's `Span`). */
export interface TraceSpan {
  /** Its identity. */
  spanContext(): TraceSpanContext;
  /** Sets one attribute. */
  setAttribute(key: string, value: string | number | boolean): unknown;
  /** Adds an event. */
  addEvent(name: string, attributes?: TraceAttributes): unknown;
  /** Sets its status (`code` a `SpanStatusCode`). */
  setStatus(status: { code: number; message?: string }): unknown;
  /** Records an exception as an event. */
  recordException(exception: Error | string): unknown;
  /** Ends it. */
  end(): void;
}

/** What a span starts with (the API's `SpanOptions`, the fields EchoMQ sets). */
export interface TraceSpanOptions {
  /** A `SpanKind`. */
  kind?: number;
  /** Its first attributes. */
  attributes?: TraceAttributes;
  /** Links to other spans' contexts. */
  links?: Array<{ context: TraceSpanContext }>;
}

/** A tracer (the API's `Tracer`). */
export interface TraceTracer {
  /** Starts a span under `context` (default: the active one). */
  startSpan(name: string, options?: TraceSpanOptions, context?: TraceContext): TraceSpan;
}

/** Where tracers come from (the API's `TracerProvider`). */
export interface TraceTracerProvider {
  /** The tracer of instrumentation `name`. */
  getTracer(name: string, version?: string): TraceTracer;
}

/**
 * The part of `@opentelemetry/api` EchoMQ uses: pass the module itself
 * (`import * as api from '@opentelemetry/api'`). Structural, so that EchoMQ has no dependency on it.
 */
export interface TracingApi {
  /** The trace API: tracers, and a span put into a context. */
  readonly trace: {
    /** The global provider's tracer. */
    getTracer(name: string, version?: string): TraceTracer;
    /** `context` with `span` as its active span. */
    setSpan(context: TraceContext, span: TraceSpan): TraceContext;
    /** `context` with a remote span's context as its parent (used by `consumer: "child"`). */
    setSpanContext?(context: TraceContext, spanContext: TraceSpanContext): TraceContext;
  };
  /** The context API. */
  readonly context: {
    /** The active context. */
    active(): TraceContext;
    /** Runs `fn` with `context` active. */
    with<T>(context: TraceContext, fn: () => T): T;
  };
  /** The empty context: a process span's parent (it links to its producer instead). */
  readonly ROOT_CONTEXT: TraceContext;
  /** The span kinds. */
  readonly SpanKind: { readonly PRODUCER: number; readonly CONSUMER: number };
  /** The status codes. */
  readonly SpanStatusCode: { readonly ERROR: number };
}

/** The `tracing` option of `EchoMQ.connect`. */
export interface TracingOptions {
  /** `@opentelemetry/api` itself (`import * as api from '@opentelemetry/api'`). */
  api: TracingApi;
  /** Where the tracer comes from (default: the API's global provider, `api.trace.getTracer`). */
  tracerProvider?: TraceTracerProvider;
  /**
   * How a `process` span relates to the `send` span of its job: `"link"` (default, the messaging
   * conventions' choice: a new trace per processing, linked to the producer's) or `"child"` (the
   * process span's parent is the producer's span: one trace from send to process, as bullmq-otel
   * draws it; a retried job's attempts are then siblings under one send).
   */
  consumer?: "link" | "child";
}

/** The instrumentation name EchoMQ's tracer is asked for. */
export const TRACER_NAME = "echomq";
/** `messaging.system` of every span. */
export const MESSAGING_SYSTEM = "echomq";

const HEX_TRACE = /^[0-9a-f]{32}$/;
const HEX_SPAN = /^[0-9a-f]{16}$/;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The W3C `traceparent` of a span context (version 00), or undefined when the context is not
 * valid (a non-recording span without a parent: no SDK is registered).
 */
export function formatTraceparent(sc: TraceSpanContext): string | undefined {
  if (!HEX_TRACE.test(sc.traceId) || !HEX_SPAN.test(sc.spanId)) return undefined;
  if (/^0+$/.test(sc.traceId) || /^0+$/.test(sc.spanId)) return undefined;
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

/** The remote span context of a W3C `traceparent` (version 00), or undefined when it is not one. */
export function parseTraceparent(text: string | undefined): TraceSpanContext | undefined {
  const m = text === undefined ? null : TRACEPARENT.exec(text);
  if (m === null) return undefined;
  const [, traceId, spanId, flags] = m as unknown as [string, string, string, string];
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, traceFlags: parseInt(flags, 16), isRemote: true };
}

/** `e` as text for a status message or an event attribute. */
function errorText(e: unknown): { type: string; message: string } {
  if (e instanceof Error) return { type: e.name, message: e.message };
  return { type: typeof e, message: String(e) };
}

/** What a job's `process` span needs of it. */
export interface TracedJob {
  /** The job id. */
  readonly id: string;
  /** Its queue. */
  readonly queue: string;
  /** Attempts so far, this claim included. */
  readonly attempts: number;
  /** The producer's W3C trace context, when it was admitted with tracing on. */
  readonly traceparent?: string;
}

/** A running `send` span: the admission's trace context, and what became of it. */
export interface SendSpan {
  /** The `traceparent` to put on the job(s), or undefined (no valid context: nothing rides). */
  readonly traceparent: string | undefined;
  /** Sets an attribute (the job id once known, the batch's count). */
  set(key: string, value: string | number | boolean): void;
}

/**
 * A job's `process` span, as the worker drives it; every method is a no-op once it ended.
 */
export class ProcessSpan {
  readonly #api: TracingApi;
  readonly #span: TraceSpan;
  #ended = false;

  /** Wraps a started span (see {@link Tracing.process}). */
  constructor(api: TracingApi, span: TraceSpan) {
    this.#api = api;
    this.#span = span;
  }

  /** Runs `fn` (the handler) with this span active, so that the handler's spans are its children. */
  run<T>(fn: () => T): T {
    return this.#api.context.with(this.#api.trace.setSpan(this.#api.ROOT_CONTEXT, this.#span), fn);
  }

  /** The handler failed (threw, rejected, or ran past its time limit): exception recorded, status ERROR. */
  failed(error: unknown): void {
    if (this.#ended) return;
    this.#span.recordException(error instanceof Error ? error : String(error));
    this.#span.setStatus({ code: this.#api.SpanStatusCode.ERROR, message: errorText(error).message });
  }

  /** The worker sends this settlement of the job (`echomq.settlement`). */
  settling(kind: string): void {
    if (this.#ended) return;
    this.#span.setAttribute("echomq.settlement", kind);
  }

  /** The server refused the settle (or it had no outcome): event `echomq.settle_failed`, status ERROR. */
  settleFailed(kind: string, error: unknown): void {
    if (this.#ended) return;
    const { type, message } = errorText(error);
    this.#span.addEvent("echomq.settle_failed", { "echomq.settlement": kind, "exception.type": type, "exception.message": message });
    this.#span.setStatus({ code: this.#api.SpanStatusCode.ERROR, message: `${kind} failed: ${message}` });
  }

  /** The job's lease was lost while the handler ran: event `echomq.lease_lost`, status ERROR. */
  leaseLost(error: unknown): void {
    if (this.#ended) return;
    const { type, message } = errorText(error);
    this.#span.addEvent("echomq.lease_lost", { "exception.type": type, "exception.message": message });
    this.#span.setStatus({ code: this.#api.SpanStatusCode.ERROR, message: `lease lost: ${message}` });
  }

  /** Ends the span (once). */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#span.end();
  }
}

/** A client's tracing: its tracer and the API, from the `tracing` option of `EchoMQ.connect`. */
export class Tracing {
  readonly #api: TracingApi;
  readonly #tracer: TraceTracer;
  readonly #child: boolean;

  /** Tracing with `api`'s tracer (or `tracerProvider`'s). */
  constructor(options: TracingOptions) {
    this.#api = options.api;
    this.#tracer = (options.tracerProvider ?? options.api.trace).getTracer(TRACER_NAME);
    this.#child = options.consumer === "child";
  }

  /** The client's tracing from the `tracing` option: null without one; a malformed one refused. */
  static from(options: TracingOptions | undefined): Tracing | null {
    if (options === undefined || options === null) return null;
    const api = (options as Partial<TracingOptions>).api as Partial<TracingApi> | undefined;
    if (
      typeof options !== "object" || api === null || typeof api !== "object" ||
      typeof api.trace?.getTracer !== "function" || typeof api.trace.setSpan !== "function" ||
      typeof api.context?.with !== "function" || typeof api.context.active !== "function" ||
      api.ROOT_CONTEXT === undefined || typeof api.SpanKind?.PRODUCER !== "number" ||
      typeof api.SpanStatusCode?.ERROR !== "number"
    ) {
      throw new EchoMQError("options", "connect: tracing must be { api }, api the module @opentelemetry/api (import * as api)");
    }
    if (options.tracerProvider !== undefined && typeof options.tracerProvider?.getTracer !== "function") {
      throw new EchoMQError("options", "connect: tracing.tracerProvider must have getTracer(name)");
    }
    if (options.consumer !== undefined && options.consumer !== "link" && options.consumer !== "child") {
      throw new EchoMQError("options", `connect: tracing.consumer must be "link" or "child", got ${JSON.stringify(options.consumer)}`);
    }
    if (options.consumer === "child" && typeof api.trace.setSpanContext !== "function") {
      throw new EchoMQError("options", 'connect: tracing.consumer "child" needs api.trace.setSpanContext (@opentelemetry/api ≥ 1.0)');
    }
    return new Tracing(options);
  }

  /**
   * Runs the admission `fn` inside a `send <queue>` span (PRODUCER, a child of the active
   * context): `fn` gets the span's `traceparent` for the job(s); a throw is recorded (status
   * ERROR) and thrown again; the span ends when `fn` settles.
   */
  async send<T>(queue: string, operation: string, fn: (span: SendSpan) => Promise<T>): Promise<T> {
    const span = this.#tracer.startSpan(`send ${queue}`, {
      kind: this.#api.SpanKind.PRODUCER,
      attributes: {
        "messaging.system": MESSAGING_SYSTEM,
        "messaging.destination.name": queue,
        "messaging.operation.type": "send",
        "messaging.operation.name": operation,
      },
    });
    const view: SendSpan = {
      traceparent: formatTraceparent(span.spanContext()),
      set: (key, value) => void span.setAttribute(key, value),
    };
    try {
      return await fn(view);
    } catch (e) {
      span.recordException(e instanceof Error ? e : String(e));
      span.setStatus({ code: this.#api.SpanStatusCode.ERROR, message: errorText(e).message });
      throw e;
    } finally {
      span.end();
    }
  }

  /**
   * Starts the `process <queue>` span (CONSUMER) of a claimed job: a root span, linked to the
   * producer's context when the job carries one — or, with `consumer: "child"`, that context's
   * child.
   */
  process(job: TracedJob): ProcessSpan {
    const producer = parseTraceparent(job.traceparent);
    const child = this.#child && producer !== undefined;
    const parent = child ? this.#api.trace.setSpanContext!(this.#api.ROOT_CONTEXT, producer) : this.#api.ROOT_CONTEXT;
    const span = this.#tracer.startSpan(`process ${job.queue}`, {
      kind: this.#api.SpanKind.CONSUMER,
      attributes: {
        "messaging.system": MESSAGING_SYSTEM,
        "messaging.destination.name": job.queue,
        "messaging.message.id": job.id,
        "messaging.operation.type": "process",
        "messaging.operation.name": "process",
        "echomq.attempt": job.attempts,
      },
      ...(producer === undefined || child ? {} : { links: [{ context: producer }] }),
    }, parent);
    return new ProcessSpan(this.#api, span);
  }
}
