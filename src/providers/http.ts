import { startChildSpan, type TraceSpan } from "../tracing/tracing.ts";
import { type ProviderNotFound, type ProviderOutcome, ProviderUnavailableError } from "./types.ts";

export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

/** An answer that says nothing we can act on: the order's fate stays unknown. */
export interface Unrecognised {
  status: "unrecognised";
  reason: string;
}

export interface JsonAnswer {
  httpStatus: number;
  body: unknown;
}

/** One provider's HTTP calls: who it is, how long a call may take, and what must never reach a message. */
export interface ProviderHttp {
  provider: string;
  timeoutMs: number;
  /** Defaults to the global fetch, looked up on every call (so msw can patch it after creation). */
  fetch?: FetchFunction;
  /** Removes secrets a message could quote (a key sent in the URL). */
  redact?: (text: string) => string;
}

/** The provider's fate of a call is unknown; `answered` when an HTTP answer did come back. */
export function unavailable(http: ProviderHttp, message: string, answered: boolean): ProviderUnavailableError {
  return new ProviderUnavailableError(http.provider, http.redact ? http.redact(message) : message, answered);
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.name === "TimeoutError" ? "timed out" : error.message || error.name;
  return String(error);
}

/**
 * One call, bounded by the provider's timeout, and its JSON answer. No answer (timeout, broken connection),
 * a redirect, a 5xx or a body that is not JSON throws ProviderUnavailableError; a 4xx is returned for the
 * caller to judge. `what` names the call in messages.
 */
export async function fetchJson(http: ProviderHttp, what: string, url: string, init: RequestInit): Promise<JsonAnswer> {
  const span = clientSpan(http, what, url, init);
  try {
    const answer = await fetchJsonOnce(http, what, url, span ? withTraceparent(init, span) : init);
    span?.setAttributes({ "http.response.status_code": answer.httpStatus });
    return answer;
  } catch (error) {
    span?.fail(error instanceof Error ? error.message : String(error));
    throw error;
  } finally {
    span?.end();
  }
}

/** The call's CLIENT span, a child of the job's; none when no span is active (tracing off). */
function clientSpan(http: ProviderHttp, what: string, url: string, init: RequestInit): TraceSpan | undefined {
  const method = init.method ?? "GET";
  return startChildSpan(`${method} ${http.provider} ${what}`, {
    kind: "client",
    attributes: { "http.request.method": method, "server.address": new URL(url).hostname, "vend.provider": http.provider },
  });
}

/** The provider continues our trace if it reads W3C trace context. */
function withTraceparent(init: RequestInit, span: TraceSpan): RequestInit {
  if (!span.traceparent) return init;
  const headers = new Headers(init.headers);
  headers.set("traceparent", span.traceparent);
  return { ...init, headers };
}

async function fetchJsonOnce(http: ProviderHttp, what: string, url: string, init: RequestInit): Promise<JsonAnswer> {
  const send: FetchFunction = http.fetch ?? ((input, options) => fetch(input, options));
  let response: Response;
  let text: string;
  try {
    response = await send(url, { ...init, redirect: "manual", signal: AbortSignal.timeout(http.timeoutMs) });
    text = await response.text();
  } catch (error) {
    const reason = describeError(error);
    const how = reason === "timed out" ? `timed out after ${http.timeoutMs} ms` : `failed: ${reason}`;
    throw unavailable(http, `${what} ${how}`, false);
  }
  if (response.status < 200 || response.status >= 500 || (response.status >= 300 && response.status < 400)) {
    throw unavailable(http, `${what} answered HTTP ${response.status}`, true);
  }
  try {
    return { httpStatus: response.status, body: JSON.parse(text) as unknown };
  } catch {
    throw unavailable(http, `${what} answered HTTP ${response.status} with a body that is not JSON`, true);
  }
}

/**
 * What an answer says about an order, when it can be believed: an unrecognised answer is unavailability,
 * and a 4xx is believed only when it says the order failed or is unknown.
 */
export function believe<T extends ProviderOutcome | ProviderNotFound>(
  http: ProviderHttp,
  what: string,
  answered: JsonAnswer,
  answer: T | Unrecognised,
): T {
  if (answer.status === "unrecognised")
    throw unavailable(http, `${what} answered HTTP ${answered.httpStatus}: ${answer.reason}`, true);
  if (answered.httpStatus >= 400 && answer.status !== "failed" && answer.status !== "not_found") {
    throw unavailable(http, `${what} answered HTTP ${answered.httpStatus}`, true);
  }
  return answer;
}
