import type { ProviderErrorKind } from "../metrics/metrics.ts";
import { ProviderUnavailableError } from "./types.ts";

/** What a call asks a provider: to vend, where an order stands, who a customer is, or its plan list. */
export type ProviderOperation = "vend" | "requery" | "verify" | "plans";

/** Where calls are counted (the process's metrics); absent where nothing is exposed. */
export interface ProviderCallDeps {
  metrics?: { providerCalled(provider: string, operation: string, seconds: number, error?: ProviderErrorKind): void };
}

/**
 * A provider's answer, or its absence: `unavailable` when it did not answer or its answer could not be read
 * (`ProviderUnavailableError`; `error.answered` tells which), so the order's fate there is unknown.
 * `answerMs` is how long it took either way.
 */
export type ProviderCallResult<T> =
  | { kind: "answered"; value: T; answerMs: number }
  | { kind: "unavailable"; error: ProviderUnavailableError; answerMs: number };

/**
 * THE way a provider is called (a vend, a re-query, a customer look-up): timed, counted in the metrics
 * (`vend_provider_request_seconds` by provider and operation, and `vend_provider_errors_total` by kind:
 * `unanswered` or `unreadable`), and its failure classified: a `ProviderUnavailableError` is an answer of its
 * own (`unavailable`); any other error is a bug and is thrown. Its HTTP request is traced by the adapter's
 * client span (`src/providers/http.ts`), a child of the caller's span (the job's, or the request's).
 */
export async function callProvider<T>(
  deps: ProviderCallDeps,
  provider: string,
  operation: ProviderOperation,
  call: () => Promise<T>,
): Promise<ProviderCallResult<T>> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  try {
    const value = await call();
    const ms = elapsed();
    deps.metrics?.providerCalled(provider, operation, ms / 1000);
    return { kind: "answered", value, answerMs: Math.round(ms) };
  } catch (error) {
    if (!(error instanceof ProviderUnavailableError)) throw error;
    const ms = elapsed();
    deps.metrics?.providerCalled(provider, operation, ms / 1000, error.answered ? "unreadable" : "unanswered");
    return { kind: "unavailable", error, answerMs: Math.round(ms) };
  }
}
