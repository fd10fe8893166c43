import { ConnectionError, VendError } from "./errors.js";
import type { Requester } from "./requester.js";
import { retryDelayMs, sleep } from "./transport.js";

export interface StreamOptions {
  /** Ends the stream: the iterator returns, the connection is closed. */
  signal?: AbortSignal;
  /**
   * Resume after the record with this `id` (the last one you received): the records written since that match the
   * filters (up to 1,000) come first, then the live ones.
   */
  lastEventId?: string;
}

/**
 * What one connection of a generated event-stream operation is opened with. It has no `signal`: the connection's
 * fetch ends its body when the connection is closed, so the generated reader sees an end rather than an abort.
 */
export interface StreamConnection extends ReturnType<Requester["streaming"]> {
  headers: { "Last-Event-ID"?: string };
  /** One attempt: `followStream` reconnects itself, with the last event's id. */
  sseMaxRetryAttempts: number;
  onSseError: (error: unknown) => void;
  onSseEvent: (event: { id?: string }) => void;
}

/** Opens one connection; its `stream` yields each event's data, parsed from JSON. */
export type OpenStream = (connection: StreamConnection) => Promise<{ stream: AsyncGenerator<unknown, unknown, unknown> }>;

/** Silence for longer than this (three keep-alive comments missed) means the connection is dead: reconnect. */
export const streamIdleMs = 45_000;

/** An answer that another attempt cannot change: the request, the credentials or the permissions are wrong. */
const isFinalRefusal = (error: unknown): error is VendError =>
  error instanceof VendError && error.status !== null && error.status < 500 && error.status !== 408 && error.status !== 429;

/** `Retry-After` of a 429 or 503 answer, to wait before reconnecting. */
const retryAfterOf = (error: unknown): string | null =>
  error instanceof VendError ? (error.headers?.get("retry-after") ?? null) : null;

interface Connection {
  /** Events or comments arrived: the connection was open. */
  opened: boolean;
  failure: unknown;
}

/**
 * The data of every event of a Server-Sent Events operation, across reconnections: after a dropped connection, an
 * answer the server may change its mind about (5xx, 429), a stream the server ended (a restart) or silence past
 * `streamIdleMs`, it reconnects with backoff (as `retryDelayMs`, or the server's `Retry-After`) and `Last-Event-ID`
 * set to the last event received, so nothing is missed and nothing repeated. A refusal (400, 401, 403, 404) throws
 * its `VendError`; so does a server not reached `maxRetries` more times before it was ever connected. Ends when
 * `signal` aborts.
 */
export async function* followStream<T>(
  requester: Requester,
  open: OpenStream,
  options: StreamOptions,
): AsyncGenerator<T, void, undefined> {
  const { signal } = options;
  let lastEventId = options.lastEventId;
  let everOpened = false;
  let failures = 0;
  while (!signal?.aborted) {
    const connection: Connection = { opened: false, failure: undefined };
    yield* connectOnce<T>(requester, open, lastEventId, connection, signal, (id) => {
      lastEventId = id;
    });
    if (signal?.aborted) return;
    if (connection.opened) {
      everOpened = true;
      failures = 0;
    }
    if (isFinalRefusal(connection.failure)) throw connection.failure;
    if (!everOpened && failures >= requester.maxRetries) throw asConnectionError(connection.failure);
    try {
      await sleep(retryDelayMs(failures++, retryAfterOf(connection.failure)), signal);
    } catch {
      return;
    }
  }
}

async function* connectOnce<T>(
  requester: Requester,
  open: OpenStream,
  lastEventId: string | undefined,
  connection: Connection,
  signal: AbortSignal | undefined,
  received: (id: string) => void,
): AsyncGenerator<T, void, undefined> {
  const controller = new AbortController();
  const stop = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", stop, { once: true });
  let idle: ReturnType<typeof setTimeout> | undefined;
  const watchIdle = () => {
    clearTimeout(idle);
    idle = setTimeout(() => controller.abort(new Error(`no event or keep-alive for ${streamIdleMs / 1000} s`)), streamIdleMs);
  };
  let eventId: string | undefined;
  watchIdle();
  try {
    const { stream } = await open({
      ...requester.streaming(controller.signal),
      headers: lastEventId === undefined ? {} : { "Last-Event-ID": lastEventId },
      sseMaxRetryAttempts: 1,
      onSseError: (error) => {
        connection.failure = error;
      },
      onSseEvent: (event) => {
        connection.opened = true;
        eventId = event.id;
        watchIdle();
      },
    });
    for await (const data of stream) {
      if (eventId !== undefined) received(eventId);
      yield data as T;
    }
  } finally {
    clearTimeout(idle);
    signal?.removeEventListener("abort", stop);
    controller.abort();
  }
}

function asConnectionError(failure: unknown): VendError {
  if (failure instanceof VendError) return failure;
  return new ConnectionError({
    code: "CONNECTION_ERROR",
    status: null,
    message: `the event stream could not be opened: ${failure instanceof Error ? failure.message : String(failure)}`,
    requestId: null,
    idempotencyKey: null,
    raw: null,
    headers: null,
    cause: failure,
  });
}
