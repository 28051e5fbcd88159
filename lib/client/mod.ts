/**
 * The EchoMQ client, by concept: connection and options, backend selection, the wire calls, the
 * payload codecs, the worker and the errors. Only what a user calls is exported here; backends
 * and wire calls stay internal (tests import them from their files).
 *
 * @module
 */
export { EchoMQ } from "./echomq.ts";
export { Queue, type TypedJobInfo } from "./queue.ts";
export type { Decoded, DecodedResult, JsonPayload, JsonResult, NoJson, Payload, PayloadKind } from "./payload.ts";
export {
  BATCH_BYTES,
  BATCH_COMMANDS,
  type ClaimManyOptions,
  type ClaimOptions,
  type DedupOptions,
  DEFAULT_DURABLE_TIMEOUT_MS,
  DEFAULT_MOVE_LIMIT,
  type DurableOptions,
  type EchoMQOptions,
  type EnqueueManyOptions,
  type EnqueueOptions,
  MAX_JOB_TIMEOUT_MS,
  type RetryOptions,
  type When,
} from "./options.ts";
export type { Address, BackendChoice, ConnectionOptions, TlsOptions } from "./connection.ts";
export { parseServerUrl, redactUrl, type ServerUrl } from "./url.ts";
export { bytes, type Codec, json, text } from "./codec.ts";
export type { Counts, Job, JobRef, Settlement, WorkerJob } from "./job.ts";
export type { Admitted, Claim } from "./batch.ts";
export type { SettleClaim } from "./settle_claim.ts";
export { JOB_STATES, type JobInfo, type JobState, type ParentRef, type QueueStats } from "./info.ts";
export type { FailedAttempt } from "./failure.ts";
export type { JobLogs } from "./logs.ts";
export { CANCELLED_REASON, type CancelOptions, type CancelOutcome } from "./cancel.ts";
export type { LatencyHistogram, MetricsOptions, MinuteCounts, QueueMetrics } from "./metrics.ts";
export type { FindOptions, FindQuery, FoundJobs } from "./search.ts";
export type { QueueScanPage } from "./inspect.ts";
export type { FlowTree } from "./flow_tree.ts";
export type { FlowStats } from "./flow_stats.ts";
export {
  type AddChildrenOptions,
  childId,
  type ChildState,
  type FlowChild,
  type FlowNode,
  type FlowParent,
  type FlowSpec,
  type FlowStepOptions,
  MAX_FLOW_CHILDREN,
  type OnFailure,
} from "./flows.ts";
export type { Relay, RelayOptions } from "./relay.ts";
export type { LaneInfo, LanePage } from "./lanes.ts";
export type { LimitOptions, LimitTarget, QueueLimits, RateLimit } from "./limits.ts";
export {
  COMPLETED_AGE_DEFAULT_MS,
  COMPLETED_MAX_DEFAULT,
  DEAD_AGE_DEFAULT_MS,
  DEAD_MAX_DEFAULT,
  EVENTS_MAX_DEFAULT,
  MAX_PAYLOAD_BYTES,
  MAX_WIRE_NUMBER,
} from "../wire/mod.ts";
export type { RemoveOptions, RequeueOptions, Retention } from "./operations.ts";
export {
  type Backoff,
  type ClaimLine,
  DEFAULT_BLOCK_MS,
  exponentialBackoff,
  type Handler,
  type StopOptions,
  Worker,
  type WorkerClient,
  type WorkerOptions,
} from "./worker/worker.ts";
export type { WorkerIdentity } from "./worker/worker_name.ts";
export type { WorkerInfo } from "./workers.ts";
export {
  JobOverdueError,
  JobTimeoutError,
  LeaseExpiredError,
  RateLimitedError,
  RetryError,
  SandboxCrashError,
  UnrecoverableError,
  WorkerStalledError,
} from "./worker/worker_errors.ts";
export { exponential, type ExponentialOptions, fixed } from "./backoff.ts";
export type { MissedPolicy, RepeatSpec } from "./repeat.ts";
export {
  formatTraceparent,
  MESSAGING_SYSTEM,
  parseTraceparent,
  ProcessSpan,
  type SendSpan,
  type TraceAttributes,
  type TraceContext,
  type TracedJob,
  TRACER_NAME,
  type TraceSpan,
  type TraceSpanContext,
  type TraceSpanOptions,
  type TraceTracer,
  type TraceTracerProvider,
  Tracing,
  type TracingApi,
  type TracingOptions,
} from "./tracing.ts";
export type { SchedulerInfo, SchedulerOptions } from "./schedulers.ts";
export type { Both, EventFieldsOf, EventGap, EventOf, EventsFrom, FieldItem, FieldsOf, QueueEvent, QueueEventItem, QueueEventType } from "./events.ts";
export type { EventsOptions } from "./event_reader.ts";
export { JOB_EVENTS_SCAN, type JobEvent, type JobEvents, MAX_JOB_EVENTS_SCAN } from "./recent_events.ts";
export type { ResultOptions } from "./result.ts";
export type { Enqueued, EnqueueReply, EnqueueWait, EnqueueWaitOptions, WaitOption } from "./enqueue_wait.ts";
export { JobFailedError, JobNotFoundError, JobResultError, ResultTimeoutError } from "./errors.ts";
export {
  BackendError,
  BatchError,
  type BatchReport,
  type ClientRule,
  ConnectionError,
  type ConnectionReason,
  DuplicateIdError,
  DurabilityError,
  EchoMQError,
  FencedError,
  JobActiveError,
  JobCancelledError,
  JobNotDeadError,
  JobNotScheduledError,
  JobRefusalError,
  type JobRefusalRule,
  LeaseLostError,
  PayloadDecodeError,
  RequestTimeoutError,
  ResultTooLargeError,
  type Rule,
  RuleErrorRoot,
  type SchedulerOption,
  SchedulerOptionError,
  WireError,
  type WireRule,
} from "./errors.ts";
export { KeyspaceError, type KeyspaceRule, type RuleError, type RuleErrorClass, RuleTypeError } from "../keyspace/mod.ts";
