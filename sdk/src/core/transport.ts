import { ConnectionError, isRecord, retryAfterSeconds } from "./errors.js";

export type FetchLike = (request: Request) => Promise<Response>;

export interface RetryPolicy {
  /** Retries after the first attempt (default 2). */
  maxRetries: number;
  /** Per attempt, in milliseconds (default 60000; a long-poll `wait` counts). */
  timeoutMs: number;
}

export interface CallOptions extends Partial<RetryPolicy> {
  /** Aborts the call, retries and the waits between them included. */
  signal?: AbortSignal;
}

export const defaultRetryPolicy: RetryPolicy = { maxRetries: 2, timeoutMs: 60_000 };

/** The longest `Retry-After` honoured; a longer one is not waited out (the call fails with the last answer). */
const maxRetryAfterSeconds = 60;

/**
 * The delay before retry number `attempt + 1`: the server's `Retry-After` when it sent one, else exponential
 * backoff from 0.5 s (doubling, at most 8 s) with jitter (half to all of it), so clients that failed together
 * do not come back together.
 */
export function retryDelayMs(attempt: number, retryAfter: string | null, random: () => number = Math.random): number {
  const told = retryAfterSeconds(retryAfter);
  if (told !== null) return told * 1000;
  const ceiling = Math.min(500 * 2 ** attempt, 8000);
  return ceiling / 2 + (ceiling / 2) * random();
}

/**
 * May this request be sent again? Reads are; a POST only with an `Idempotency-Key`, so that the server answers a
 * retry with the first attempt's result and never charges twice. (PATCH and DELETE here set a state: repeating
 * them changes nothing.)
 */
export function isRepeatable(request: Request): boolean {
  return request.method !== "POST" || request.headers.has("idempotency-key");
}

/**
 * Is this answer worth retrying? `429` and `503` (nothing was done; the server says when to come back) and
 * `409 IDEMPOTENCY_IN_PROGRESS` (the first attempt with this key is still running).
 */
export async function isRetryableResponse(response: Response): Promise<boolean> {
  if (response.status === 429 || response.status === 503) return true;
  if (response.status !== 409) return false;
  const body: unknown = await response
    .clone()
    .json()
    .catch(() => undefined);
  return isRecord(body) && body.code === "IDEMPOTENCY_IN_PROGRESS";
}

/**
 * A `fetch` that retries what may be retried (see `isRepeatable`, `isRetryableResponse`, and failed connections)
 * up to `maxRetries` times, each attempt the same request (same body, same `Idempotency-Key`) with its own
 * timeout. Answers that are not successes are returned, not thrown; failed connections throw `ConnectionError`.
 */
export function retryingFetch(fetchImpl: FetchLike, policy: RetryPolicy, signal?: AbortSignal): FetchLike {
  return async (request) => {
    const repeatable = isRepeatable(request);
    const idempotencyKey = request.headers.get("idempotency-key");
    for (let attempt = 0; ; attempt++) {
      const timeout = AbortSignal.timeout(policy.timeoutMs);
      const attemptSignal = signal ? AbortSignal.any([signal, timeout]) : timeout;
      const mayRetry = repeatable && attempt < policy.maxRetries;
      let response: Response;
      try {
        response = await fetchImpl(new Request(request.clone(), { signal: attemptSignal }));
      } catch (cause) {
        if (signal?.aborted) throw signal.reason;
        if (mayRetry) {
          await sleep(retryDelayMs(attempt, null), signal);
          continue;
        }
        const reason = timeout.aborted ? `timed out after ${policy.timeoutMs} ms` : describe(cause);
        throw new ConnectionError({
          code: "CONNECTION_ERROR",
          status: null,
          message: `${request.method} ${new URL(request.url).pathname} got no answer after ${attempt + 1} attempt(s): ${reason}`,
          requestId: null,
          idempotencyKey,
          raw: null,
          headers: null,
          cause,
        });
      }
      if (!mayRetry || !(await isRetryableResponse(response))) return response;
      const retryAfter = response.headers.get("retry-after");
      const told = retryAfterSeconds(retryAfter);
      if (told !== null && told > maxRetryAfterSeconds) return response;
      await response.body?.cancel();
      await sleep(retryDelayMs(attempt, retryAfter), signal);
    }
  };
}

/** A failed connection's reason, with the cause's own when it has one. */
export function describe(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : "";
  return `${cause.message}${inner}`;
}

/** Waits `ms`; rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
