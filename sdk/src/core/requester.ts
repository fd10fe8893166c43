import { type Client, createClient } from "../generated/client/client/index.js";
import { errorFromResponse } from "./errors.js";
import { type CallOptions, defaultRetryPolicy, type FetchLike, type RetryPolicy, retryingFetch } from "./transport.js";

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
