import { type Client, createClient } from "../generated/client/client/index.js";
import { ConnectionError, errorFromResponse } from "./errors.js";
import { type CallOptions, defaultRetryPolicy, describe, type FetchLike, type RetryPolicy, retryingFetch } from "./transport.js";

export interface ConnectionOptions {
  /** The service's address, e.g. `https://vend.example.com`. Required: there is no default. */
  baseUrl: string;
  /** Retries of a retryable failure after the first attempt (default 2). */
  maxRetries?: number;
  /** Timeout of each attempt in milliseconds (default 60000). */
  timeoutMs?: number;
  /** A `fetch` to send requests with (default `globalThis.fetch`). */
  fetch?: (input: Request) => Promise<Response>;
}

/** What every generated operation answers with `throwOnError: false`. */
interface OperationResult<T> {
  data?: { data: T } | undefined;
  error?: unknown;
  request?: Request;
  response?: Response;
}

/** Sends the generated operations: one hey-api client per SDK instance, retries and errors on top. */
export class Requester {
  readonly client: Client;
  private readonly fetchImpl: FetchLike;
  private readonly policy: RetryPolicy;

  constructor(options: ConnectionOptions, token: string) {
    if (typeof options.baseUrl !== "string" || options.baseUrl.trim() === "")
      throw new TypeError("baseUrl is required: the address of the Vend service, e.g. https://vend.example.com");
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch {
      throw new TypeError(`baseUrl is not a URL: ${options.baseUrl}`);
    }
    this.fetchImpl = options.fetch ?? ((request) => globalThis.fetch(request));
    this.policy = {
      maxRetries: options.maxRetries ?? defaultRetryPolicy.maxRetries,
      timeoutMs: options.timeoutMs ?? defaultRetryPolicy.timeoutMs,
    };
    this.client = createClient({ baseUrl: url.href.replace(/\/+$/, ""), auth: token });
  }

  /** The options every generated operation takes: this client, and a fetch with this call's retry policy. */
  with(call: CallOptions = {}): { client: Client; fetch: typeof fetch } {
    const policy = {
      maxRetries: call.maxRetries ?? this.policy.maxRetries,
      timeoutMs: call.timeoutMs ?? this.policy.timeoutMs,
    };
    const send = retryingFetch(this.fetchImpl, policy, call.signal);
    return { client: this.client, fetch: ((input: Request) => send(input)) as typeof fetch };
  }

  /** Retries of a failed call after the first attempt, as configured. */
  get maxRetries(): number {
    return this.policy.maxRetries;
  }

  /**
   * The options of one connection of an event stream: this client, and a fetch without the per-attempt timeout
   * (the answer stays open) or retries (the stream reconnects by itself), which throws the mapped `VendError` for
   * an answer that is not a success and `ConnectionError` when none came. When `signal` aborts, the answer's body
   * ends as if the server had ended it, so that whoever reads it sees an end, not an error.
   */
  streaming(signal: AbortSignal): { client: Client; fetch: typeof fetch } {
    const send = async (request: Request): Promise<Response> => {
      let response: Response;
      try {
        response = await this.fetchImpl(new Request(request, { signal }));
      } catch (cause) {
        if (signal.aborted) return new Response(null, { status: 204 });
        throw new ConnectionError({
          code: "CONNECTION_ERROR",
          status: null,
          message: `${request.method} ${new URL(request.url).pathname} got no answer: ${describe(cause)}`,
          requestId: null,
          idempotencyKey: null,
          raw: null,
          headers: null,
          cause,
        });
      }
      if (response.ok) return new Response(endingOnAbort(response.body, signal), response);
      const text = await response.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not an envelope: the error keeps the text
      }
      throw errorFromResponse(response.status, body, response.headers, null);
    };
    return { client: this.client, fetch: send as typeof fetch };
  }

  /** The resource in a success envelope's `data`; otherwise the mapped `VendError` is thrown. */
  async unwrap<T>(pending: Promise<OperationResult<T>>): Promise<T> {
    const { data, error, request, response } = await pending;
    if (!response) throw error;
    if (response.ok && data !== undefined) return data.data;
    throw errorFromResponse(response.status, error, response.headers, request?.headers.get("idempotency-key") ?? null);
  }
}

/** An `Idempotency-Key` for a call: the caller's, else a new UUID (the same one on each of its retries). */
export function idempotencyKey(given: string | undefined): string {
  return given ?? globalThis.crypto.randomUUID();
}

/** The per-attempt timeout of a call that long-polls `wait` seconds: long enough for the wait to end. */
export function waitingCall<T extends CallOptions>(options: T, wait: number | undefined): T {
  if (wait === undefined) return options;
  const floor = (wait + 10) * 1000;
  return { ...options, timeoutMs: Math.max(options.timeoutMs ?? defaultRetryPolicy.timeoutMs, floor) };
}

/** `body` until `signal` aborts, then ended (not errored): the read that was waiting sees the end. */
function endingOnAbort(body: ReadableStream<Uint8Array> | null, signal: AbortSignal): ReadableStream<Uint8Array> | null {
  if (!body) return null;
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = await reader.read();
        if (chunk.done) controller.close();
        else controller.enqueue(chunk.value);
      } catch (error) {
        if (signal.aborted) controller.close();
        else controller.error(error);
      }
    },
    cancel(reason) {
      return reader.cancel(reason).catch(() => undefined);
    },
  });
}
