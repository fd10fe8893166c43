import { requestLogsChannel } from "../db/channels.ts";
import type { DbHandle, Unlisten } from "../db/client.ts";
import type { Executor } from "../db/transaction.ts";
import { AppError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import { type LogFilters, listLogRows, matchesLogFilters } from "./statements/list-logs.ts";
import { type ListedLogRow, presentRequestLog } from "./view.ts";

/** How a process's streams are paced. */
export interface LogStreamTimings {
  /** A comment line to every stream this often, so proxies and the server's idle timeout keep it open. */
  keepAliveMs: number;
  /** Each stream's credential is checked this often: a revoked or expired one ends its stream. */
  checkMs: number;
}

/** One stream as a client asked for it. */
export interface LogStreamRequest {
  filters: LogFilters;
  /** `Last-Event-ID`: the records after this one that match are sent first. */
  afterId?: number;
  /** Whether the stream's credential still works (false ends the stream); asked every `checkMs`. */
  stillAllowed(): Promise<boolean>;
  /** The client's request: aborted when the client goes away. */
  signal: AbortSignal;
}

/** Records read per statement, by the process's reader and for a resumed stream's missed records. */
const readLimit = 1000;
/**
 * Bytes a stream may have queued, beyond its first burst (the missed records), for a client that does not read them:
 * several seconds of a busy service's records, so a client that only falls behind for a moment is not cut off.
 */
const maxQueuedBytes = 4 << 20;
/** After a failed read, the next attempt (a notification may not come to prompt it). */
const retryMs = 1000;

const encoder = new TextEncoder();
const comment = (text: string) => encoder.encode(`: ${text}\n\n`);
const eventOf = (row: ListedLogRow) =>
  encoder.encode(`event: request_log\nid: ${row.id}\ndata: ${JSON.stringify(presentRequestLog(row))}\n\n`);

/** One open stream: its filters, what it has sent, and the records that arrive while its missed ones are read. */
class Subscriber {
  lastSent: number;
  /** Set until the stream's body exists: live records wait here behind the missed ones being read. */
  pending: ListedLogRow[] | undefined = [];
  controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  checking = false;
  closed = false;
  /** What may wait in the body's queue: the first burst, however large, and `maxQueuedBytes` more. */
  private queueLimit = maxQueuedBytes;

  constructor(
    readonly request: LogStreamRequest,
    readonly onClosed: (subscriber: Subscriber) => void,
  ) {
    this.lastSent = request.afterId ?? 0;
  }

  /** A record the process has read: sent if it is this stream's and newer than what it sent. */
  offer(row: ListedLogRow, event: () => Uint8Array): void {
    if (this.closed || row.id <= this.lastSent || !matchesLogFilters(this.request.filters, row)) return;
    if (this.pending) {
      this.pending.push(row);
      return;
    }
    this.lastSent = row.id;
    this.write(event());
  }

  /** Starts the body: the first comment, the missed records, then what arrived meanwhile. */
  begin(controller: ReadableStreamDefaultController<Uint8Array>, missed: ListedLogRow[]): void {
    this.controller = controller;
    const waiting = this.pending ?? [];
    this.pending = undefined;
    const burst = [comment("stream of request logs")];
    for (const row of [...missed, ...waiting]) {
      if (row.id <= this.lastSent) continue;
      this.lastSent = row.id;
      burst.push(eventOf(row));
    }
    this.queueLimit += burst.reduce((bytes, chunk) => bytes + chunk.byteLength, 0);
    for (const chunk of burst) this.write(chunk);
  }

  /** Sends `chunk`; a client that stops reading would have its records queued here for ever, so past the limit it ends. */
  write(chunk: Uint8Array): void {
    if (!this.enqueue(chunk)) return;
    const room = this.controller?.desiredSize ?? null;
    if (room !== null && room < -this.queueLimit)
      this.end("stream ended: the client reads too slowly; reconnect with Last-Event-ID");
  }

  /** Ends the stream with a last comment saying why. */
  end(why: string): void {
    if (this.closed) return;
    this.enqueue(comment(why));
    try {
      this.controller?.close();
    } catch {
      // Already cancelled by the client.
    }
    this.close();
  }

  /** False when there is nothing to write to: not begun, ended, or cancelled by the client (then closed). */
  private enqueue(chunk: Uint8Array): boolean {
    if (this.closed || !this.controller) return false;
    try {
      this.controller.enqueue(chunk);
      return true;
    } catch {
      // The client went away and the body was cancelled.
      this.close();
      return false;
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.pending = undefined;
    this.onClosed(this);
  }
}

/**
 * The request-log streams of one API process. ONE `LISTEN vend_request_logs` (from the first stream on), whose
 * notifications (one per batch written, by any process, carrying the batch's last id) make ONE reader read the
 * records after the last it read, in id order (ids are given in commit order, so none is missed), and hand each
 * to every open stream, which keeps those that match its filters. A stream holds no database connection: it waits
 * on the process's reader, and the database is read once per batch whatever the number of streams.
 */
export class RequestLogStreams {
  private readonly subscribers = new Set<Subscriber>();
  private listening: Promise<Unlisten> | undefined;
  /** The last record read (or known to be of no open stream's interest); undefined until listening. */
  private lastSeen: number | undefined;
  /** The highest id announced: one announced while the newest record was being learnt is read once it is. */
  private lastAnnounced = 0;
  private reading = false;
  private readAgain = false;
  private failing = false;
  private timers: ReturnType<typeof setInterval>[] = [];
  private drained = false;

  constructor(
    private readonly database: DbHandle,
    /** Read at each use, so a swapped database is used. */
    private readonly db: () => Executor,
    private readonly logger: () => Logger,
    private readonly timings: LogStreamTimings,
  ) {}

  /** Open streams. */
  get size(): number {
    return this.subscribers.size;
  }

  /**
   * A stream's body (Server-Sent Events): a first comment, the missed records when `afterId` is given (the
   * newest 1,000 after it that match), then each matching record as the process reads it, a comment every
   * `keepAliveMs`; it ends when the client goes away, when its credential stops working, and on shutdown. A
   * database that cannot be reached fails it here, before anything is answered.
   */
  async open(request: LogStreamRequest): Promise<ReadableStream<Uint8Array>> {
    if (this.drained) throw shuttingDown();
    const abort = () => subscriber.close();
    const subscriber = new Subscriber(request, (closed) => {
      request.signal.removeEventListener("abort", abort);
      this.forget(closed);
    });
    this.subscribers.add(subscriber);
    this.startTimers();
    request.signal.addEventListener("abort", abort, { once: true });
    let missed: ListedLogRow[] = [];
    try {
      await this.ready();
      if (request.afterId !== undefined) {
        const window = { afterId: request.afterId, limit: readLimit, order: "newest" } as const;
        missed = (await listLogRows(this.db(), request.filters, window)).reverse();
      }
    } catch (error) {
      subscriber.close();
      throw error;
    }
    if (request.signal.aborted) subscriber.close();
    return new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          if (subscriber.closed) controller.close();
          else subscriber.begin(controller, missed);
        },
        cancel: () => subscriber.close(),
      },
      { highWaterMark: 64 * 1024, size: (chunk) => chunk?.byteLength ?? 0 },
    );
  }

  /** Shutdown begins: every stream ends now with a comment saying so, and no new one opens. */
  drain(): void {
    this.drained = true;
    for (const subscriber of [...this.subscribers])
      subscriber.end("stream ended: the server is shutting down; reconnect with Last-Event-ID");
  }

  /** Ends what is open and stops listening. */
  async stop(): Promise<void> {
    this.drain();
    this.stopTimers();
    const unlisten = await this.listening?.catch(() => undefined);
    this.listening = undefined;
    await unlisten?.();
  }

  /** LISTENs (once per process), then learns the newest record: streams start after it. */
  private async ready(): Promise<void> {
    this.listening ??= (async () => {
      const unlisten = await this.database.listen(
        requestLogsChannel,
        (payload) => this.announced(payload),
        // A restarted LISTEN may have missed notifications: read what was written meanwhile.
        () => {
          if (this.lastSeen !== undefined) void this.readNew();
        },
      );
      try {
        const [newest] = await listLogRows(this.db(), {}, { limit: 1, order: "newest" });
        this.lastSeen = Math.max(this.lastSeen ?? 0, newest?.id ?? 0);
      } catch (error) {
        await unlisten();
        throw error;
      }
      if (this.lastAnnounced > this.lastSeen) void this.readNew();
      return unlisten;
    })().catch((error: unknown) => {
      // The database did not answer: the next stream tries again.
      this.listening = undefined;
      throw error;
    });
    await this.listening;
  }

  /** A batch was written, its last record `payload`. */
  private announced(payload: string): void {
    const id = Number(payload);
    if (!Number.isSafeInteger(id)) return;
    this.lastAnnounced = Math.max(this.lastAnnounced, id);
    if (this.lastSeen === undefined || id <= this.lastSeen) return;
    // No stream wants them: nothing to read, and no stream opened later will (it starts after them).
    if (this.subscribers.size === 0 && !this.reading) {
      this.lastSeen = id;
      return;
    }
    void this.readNew();
  }

  /** Reads every record after the last read, in id order, and hands each to the open streams. One reader at a time. */
  private async readNew(): Promise<void> {
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    this.reading = true;
    try {
      do {
        this.readAgain = false;
        let full = true;
        while (full && this.subscribers.size > 0) {
          const rows = await listLogRows(this.db(), {}, { afterId: this.lastSeen, limit: readLimit, order: "oldest" });
          full = rows.length === readLimit;
          this.handOut(rows);
        }
      } while (this.readAgain && this.subscribers.size > 0);
      if (this.failing) this.logger().info("request log streams read again");
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.logger().warn({ err: String(error) }, "request log streams could not read; retrying");
      this.failing = true;
      setTimeout(() => void this.readNew(), retryMs).unref?.();
    } finally {
      this.reading = false;
    }
  }

  private handOut(rows: ListedLogRow[]): void {
    for (const row of rows) {
      this.lastSeen = row.id;
      let event: Uint8Array | undefined;
      const encoded = () => {
        event ??= eventOf(row);
        return event;
      };
      for (const subscriber of this.subscribers) subscriber.offer(row, encoded);
    }
  }

  private forget(subscriber: Subscriber): void {
    this.subscribers.delete(subscriber);
    if (this.subscribers.size === 0) this.stopTimers();
  }

  private startTimers(): void {
    if (this.timers.length > 0) return;
    const keepAlive = setInterval(() => {
      for (const subscriber of this.subscribers) subscriber.write(comment("keep-alive"));
    }, this.timings.keepAliveMs);
    const check = setInterval(() => {
      for (const subscriber of this.subscribers) this.check(subscriber);
    }, this.timings.checkMs);
    for (const timer of [keepAlive, check]) timer.unref?.();
    this.timers = [keepAlive, check];
  }

  private stopTimers(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
  }

  private check(subscriber: Subscriber): void {
    if (subscriber.checking || subscriber.closed) return;
    subscriber.checking = true;
    subscriber.request
      .stillAllowed()
      .then((allowed) => {
        if (!allowed) subscriber.end("stream ended: the credential no longer works");
      })
      .catch(() => {
        // Not known either way (the database did not answer): the stream goes on, and is asked again.
      })
      .finally(() => {
        subscriber.checking = false;
      });
  }
}

const shuttingDown = () =>
  new AppError("SERVICE_UNAVAILABLE", "The server is shutting down; retry shortly", null, { "retry-after": "1" });

/**
 * The keep-alive period for a server whose connections idle out after `idleTimeoutSeconds`: 15 s, or less so
 * that at least two fit in the idle timeout (the server would otherwise close a quiet stream).
 */
export function keepAliveMsFor(idleTimeoutSeconds: number): number {
  return Math.min(15_000, Math.floor((idleTimeoutSeconds * 1000) / 2));
}
