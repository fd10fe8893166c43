import type { RequestLogSettings } from "../config.ts";
import type { Executor } from "../db/transaction.ts";
import type { AnsweredRequest, RequestRecorder } from "../lib/answered-request.ts";
import { FixedWindowCounter } from "../lib/fixed-window.ts";
import type { Logger } from "../logger.ts";
import type { RequestLogDropReason } from "../metrics/metrics.ts";
import { redactBody, redactQuery, scrubText } from "./redact.ts";
import { insertLogs, type LogInput } from "./statements/insert-logs.ts";

/** What the recorder works with: one object, its `db` and `logger` read at each use (a test may swap them). */
export interface RecorderDeps {
  db: Executor;
  logger: Logger;
  metrics: {
    requestLogsWritten(rows: number): void;
    requestLogsDropped(reason: RequestLogDropReason, rows: number): void;
  };
  /** Secrets this process knows that no pattern catches (the admin token, provider credentials). */
  secrets(): readonly string[];
  /** Whose budget a client address spends (an IPv6 client's /64, as the failed-authentication budget counts it). */
  clientSubject(address: string): string;
}

/** Records written in one statement at most; a full batch is written at once, without waiting for the timer. */
export const batchRows = 500;
/**
 * The bodies waiting, at most, in characters (as read and answered, before they are cut): with large bodies the
 * buffer fills by size before it fills by count, so a slow database costs bounded memory.
 */
export const maxWaitingChars = 64 * 1024 * 1024;
/** Records of requests without a recognised credential kept per client address per minute (a flood of bad keys). */
export const unauthenticatedPerMinute = 20;
const warnEveryMs = 60_000;
/** The first drop is logged this long after it, with what else was dropped meanwhile. */
const firstWarnDelayMs = 1000;
const maxTextChars = 4096;
const userAgentChars = 256;

/**
 * The request log's writer in this process. `record` is called on the request path after the answer is built:
 * it only pushes the record onto a bounded buffer (or drops and counts it). A timer writes the buffer every
 * `flushMs` (at once when a full batch waits), one statement per batch; redaction, masking and cutting happen
 * then, off the request path. A batch the database refuses is dropped and counted, never retried, never
 * thrown into a request. `stop` writes what is left, within a deadline.
 */
export class RequestLogRecorder implements RequestRecorder {
  readonly enabled: boolean;
  private waiting: AnsweredRequest[] = [];
  private waitingChars = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private flushing: Promise<void> | undefined;
  private stopped = false;
  private readonly unauthenticated = new FixedWindowCounter(60_000, 10_000);
  private readonly unlogged = new Map<RequestLogDropReason, number>();
  private lastFailure: unknown;
  private warnTimer: ReturnType<typeof setTimeout> | undefined;
  private lastWarnAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly deps: () => RecorderDeps,
    private readonly settings: RequestLogSettings,
  ) {
    this.enabled = settings.enabled;
  }

  record(request: AnsweredRequest): void {
    if (!this.enabled || this.stopped) return;
    // Refused before any credential was recognised: at most a few per address, so a flood of bad keys stays cheap.
    if (
      request.status >= 400 &&
      request.accountId === undefined &&
      request.operator === undefined &&
      this.unauthenticated.add(request.clientIp ? this.deps().clientSubject(request.clientIp) : "in-process") >
        unauthenticatedPerMinute
    ) {
      this.drop("unauthenticated", 1);
      return;
    }
    const chars = bodyChars(request);
    if (this.waiting.length >= this.settings.bufferRows || this.waitingChars + chars > maxWaitingChars) {
      this.drop("buffer_full", 1);
      return;
    }
    this.waiting.push(request);
    this.waitingChars += chars;
    if (this.flushing) return;
    if (this.waiting.length === batchRows) this.schedule(0);
    else if (!this.timer) this.schedule(this.settings.flushMs);
  }

  /** Records waiting to be written (not those being written). */
  get waitingCount(): number {
    return this.waiting.length;
  }

  /** Writes everything waiting now, batch after batch; resolves when done (tests, shutdown). */
  async flush(): Promise<void> {
    this.cancelTimer();
    while (this.flushing) await this.flushing;
    while (this.waiting.length > 0) {
      this.flushing = this.writeBatch().finally(() => {
        this.flushing = undefined;
      });
      await this.flushing;
    }
  }

  /**
   * Stops recording and writes what is waiting, giving up after `deadlineMs` (a database that does not answer
   * never holds shutdown). What is not written by then is counted as dropped.
   */
  async stop(deadlineMs = 2000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.cancelTimer();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<"expired">((resolve) => {
      timer = setTimeout(() => resolve("expired"), deadlineMs);
    });
    const outcome = await Promise.race([this.flush().then(() => "flushed" as const), expired]);
    clearTimeout(timer);
    if (outcome === "expired" && this.waiting.length > 0) {
      this.drop("write_failed", this.waiting.length);
      this.take(this.waiting.length);
    }
    if (this.warnTimer) clearTimeout(this.warnTimer);
    this.warn();
  }

  private schedule(delayMs: number): void {
    this.cancelTimer();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flushInBackground();
    }, delayMs);
    this.timer.unref?.();
  }

  private cancelTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One batch now; then, if records arrived meanwhile, the next when its time comes. */
  private async flushInBackground(): Promise<void> {
    if (this.flushing || this.waiting.length === 0) return;
    this.flushing = this.writeBatch().finally(() => {
      this.flushing = undefined;
    });
    await this.flushing;
    if (this.stopped || this.waiting.length === 0 || this.timer) return;
    this.schedule(this.waiting.length >= batchRows ? 0 : this.settings.flushMs);
  }

  /** The first `count` records waiting, taken off the buffer. */
  private take(count: number): AnsweredRequest[] {
    const taken = this.waiting.length <= count ? this.waiting : this.waiting.slice(0, count);
    this.waiting = this.waiting.length <= count ? [] : this.waiting.slice(count);
    for (const request of taken) this.waitingChars -= bodyChars(request);
    return taken;
  }

  private async writeBatch(): Promise<void> {
    const batch = this.take(batchRows);
    if (batch.length === 0) return;
    const deps = this.deps();
    try {
      const secrets = deps.secrets();
      const now = Date.now();
      const rows = batch.map((request, ord) => storedRecord(request, ord, now, this.settings.bodyBytes, secrets));
      const { written } = await insertLogs(deps.db, rows);
      deps.metrics.requestLogsWritten(written);
    } catch (error) {
      this.lastFailure = error;
      this.drop("write_failed", batch.length);
    }
  }

  private drop(reason: RequestLogDropReason, rows: number): void {
    this.deps().metrics.requestLogsDropped(reason, rows);
    this.unlogged.set(reason, (this.unlogged.get(reason) ?? 0) + rows);
    if (this.warnTimer) return;
    const delay = Math.max(firstWarnDelayMs, this.lastWarnAt + warnEveryMs - Date.now());
    this.warnTimer = setTimeout(() => {
      this.warnTimer = undefined;
      this.warn();
    }, delay);
    this.warnTimer.unref?.();
  }

  /** One line for everything dropped since the last one (at most one a minute). */
  private warn(): void {
    if (this.unlogged.size === 0) return;
    const byReason = Object.fromEntries(this.unlogged);
    const dropped = [...this.unlogged.values()].reduce((sum, rows) => sum + rows, 0);
    this.unlogged.clear();
    this.lastWarnAt = Date.now();
    // `err` goes through the logger's serializer, which keeps no quoted values or parameters (the batch's bodies).
    this.deps().logger.warn(
      { dropped, by_reason: byReason, ...(this.lastFailure === undefined ? {} : { err: this.lastFailure }) },
      "request logs dropped",
    );
    this.lastFailure = undefined;
  }
}

/**
 * Text PostgreSQL takes: no NUL character, no half of a surrogate pair. Only a request body can hold either (it is
 * the client's bytes, decoded); headers and URLs cannot, and answers are written by JSON.stringify.
 */
function storable(text: string): string {
  const clean = text.includes("\u0000") ? text.replaceAll("\u0000", "\uFFFD") : text;
  return clean.isWellFormed() ? clean : clean.toWellFormed();
}

const bodyChars = (request: AnsweredRequest) => (request.requestBody?.length ?? 0) + (request.responseBody?.length ?? 0);

const cut = (value: string, chars: number): string => (value.length > chars ? value.slice(0, chars) : value);

/** An envelope's `code`, read from the start of an error answer that was stored (a replayed idempotent error). */
const envelopeCode = /^\{"success":false,"code":"([A-Z_]+)"/;

/** One record as stored: split, redacted, masked and cut. */
export function storedRecord(
  request: AnsweredRequest,
  ord: number,
  now: number,
  bodyBytes: number,
  secrets: readonly string[],
): LogInput {
  const { url } = request;
  const pathStart = url.indexOf("/", url.indexOf("//") + 2);
  const queryStart = url.indexOf("?", pathStart);
  const path = pathStart < 0 ? "/" : url.slice(pathStart, queryStart < 0 ? undefined : queryStart);
  const query = queryStart < 0 || queryStart === url.length - 1 ? null : url.slice(queryStart + 1);
  // REQUEST_LOGS_BODY_BYTES=0 keeps no bodies at all (marked cut).
  const body = (text: string | undefined, masks: boolean) =>
    text === undefined
      ? undefined
      : bodyBytes === 0
        ? { text: null, truncated: true }
        : redactBody(text, { limitBytes: bodyBytes, masks, secrets });
  const requestBody = body(request.requestBody === undefined ? undefined : storable(request.requestBody), true);
  const responseBody = body(request.responseBody, false);
  const errorCode =
    request.errorCode ??
    (request.status >= 400 && request.responseBody ? (envelopeCode.exec(request.responseBody)?.[1] ?? null) : null);
  // Redacted whole, then cut: a credential is never cut in two before it is recognised.
  const text = (value: string | null | undefined, chars: number) =>
    value === null || value === undefined ? null : cut(scrubText(value, secrets), chars);
  return {
    ord,
    age_ms: Math.max(0, now - request.arrivedAt),
    request_id: scrubText(request.requestId, secrets),
    account_id: request.accountId ?? null,
    mode: request.mode ?? null,
    key_id: request.keyId ?? null,
    key_prefix: request.keyPrefix ?? null,
    operator: request.operator ?? null,
    method: request.method.slice(0, 16),
    route: request.route,
    path: text(path, maxTextChars) ?? "/",
    query: query === null ? null : cut(redactQuery(query, secrets), maxTextChars),
    status: request.status,
    error_code: errorCode,
    idempotency_key: text(request.idempotencyKey, userAgentChars),
    idempotent_replayed: request.idempotentReplayed,
    duration_ms: Math.round(request.durationMs * 1000) / 1000,
    client_ip: request.clientIp ?? null,
    user_agent: text(request.userAgent, userAgentChars),
    request_body: requestBody?.text ?? null,
    request_body_truncated: requestBody?.truncated ?? false,
    response_body: responseBody?.text ?? null,
    response_body_truncated: responseBody?.truncated ?? false,
  };
}
