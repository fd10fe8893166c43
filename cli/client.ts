import { createVendClient, type VendClient } from "../generated/openapi-fetch-client.ts";
import type { ResolvedConfig } from "./config.ts";
import { debugMiddleware } from "./debug.ts";
import { ApiError, type FieldProblem, UnreachableError, UsageError } from "./errors.ts";

export type { VendClient };

export interface ClientOptions {
  /** Log each request and response on stderr, secrets redacted. */
  debug?: boolean;
  /** Values to redact wherever they appear in that log (the configured key and token). */
  secrets?: (string | undefined)[];
}

/** The generated openapi-fetch client for one base URL and bearer token; a failed connection becomes UnreachableError. */
export function buildClient(baseUrl: string, token?: string, options: ClientOptions = {}): VendClient {
  const client = createVendClient({
    baseUrl,
    headers: { "user-agent": "vendctl", ...(token ? { authorization: `Bearer ${token}` } : {}) },
  });
  client.use({ onError: ({ error }) => new UnreachableError(baseUrl, error) });
  if (options.debug) {
    const secrets = [token, ...(options.secrets ?? [])].filter((s): s is string => Boolean(s));
    client.use(debugMiddleware(secrets));
  }
  return client;
}

/** Clients for the resolved configuration, built on first use so a missing credential is reported only when needed. */
export class Clients {
  constructor(readonly config: ResolvedConfig) {}

  private build(token?: string): VendClient {
    const { baseUrl, debug, apiKey, adminToken } = this.config;
    return buildClient(baseUrl, token, { debug, secrets: [apiKey, adminToken] });
  }

  /** Authenticated with the API key (`/api/v1`). */
  api(): VendClient {
    if (!this.config.apiKey) {
      throw new UsageError("no API key: pass --api-key, set VENDCTL_API_KEY or run `vendctl login`");
    }
    return this.build(this.config.apiKey);
  }

  /** Authenticated with the operator token (`/admin/v1`). */
  admin(): VendClient {
    if (!this.config.adminToken) {
      throw new UsageError("no admin token: pass --admin-token, set VENDCTL_ADMIN_TOKEN or run `vendctl login`");
    }
    return this.build(this.config.adminToken);
  }

  /** Without credentials (health, provider callbacks with their own headers). */
  anonymous(): VendClient {
    return this.build();
  }
}

export interface CallResult<Envelope> {
  data?: Envelope;
  error?: unknown;
  response: Response;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null;

function problemsOf(data: unknown): FieldProblem[] {
  if (!isRecord(data) || !Array.isArray(data.errors)) return [];
  return data.errors.filter(
    (e): e is FieldProblem => isRecord(e) && typeof e.field === "string" && typeof e.message === "string",
  );
}

/**
 * The API's error envelope as an ApiError with the answer's request id; anything else (a proxy's HTML page) keeps
 * its HTTP status.
 */
export function apiErrorOf(error: unknown, response: Response): ApiError {
  if (isRecord(error) && typeof error.code === "string" && typeof error.message === "string") {
    const retryAfter = response.status === 429 ? response.headers.get("retry-after") : null;
    const message = retryAfter ? `${error.message} (retry in ${retryAfter} s)` : error.message;
    const requestId = response.headers.get("x-request-id") ?? undefined;
    return new ApiError(error.code, message, response.status, problemsOf(error.data), requestId);
  }
  const text = typeof error === "string" ? error.trim().slice(0, 200) : "";
  return new ApiError(`HTTP_${response.status}`, text || response.statusText || "unexpected answer", response.status);
}

/** Awaits a client call and returns the envelope's `data` and the response; throws ApiError on an error answer. */
export async function call<Envelope extends { data: unknown }>(
  pending: Promise<CallResult<Envelope>>,
): Promise<{ data: Envelope["data"]; response: Response }> {
  const { data, error, response } = await pending;
  if (!response.ok || data === undefined) throw apiErrorOf(error, response);
  return { data: data.data, response };
}

/** Awaits a client call and returns the envelope's `data`. */
export async function unwrap<Envelope extends { data: unknown }>(
  pending: Promise<CallResult<Envelope>>,
): Promise<Envelope["data"]> {
  return (await call(pending)).data;
}
