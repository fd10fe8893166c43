import type { ServiceCode } from "../generated/constants.ts";
import { withFailoverDefaults } from "./db/postgres-url.ts";
import { type RetentionSettings, readRetentionSettings } from "./retention/retention-settings.ts";
import { noteSettingRead } from "./settings/reads.ts";

export interface Config {
  databaseUrl: string | undefined;
  /** `transaction`: DATABASE_URL names a pooler in transaction mode (PgBouncer); `none`: a server or a session pooler. */
  databasePooler: "transaction" | "none";
  /** A direct (or session-pooled) URL for LISTEN/NOTIFY and migrations; needed behind a transaction pooler. */
  databaseDirectUrl: string | undefined;
  /** The owner role's URL, for `vend migrate` only (DATABASE_MIGRATION_URL); unset: the service's own role migrates. */
  databaseMigrationUrl: string | undefined;
  /** Where operator reads and the catalogue go while the replica keeps up (DATABASE_READ_URL); undefined: the primary. */
  readReplica: ReadReplicaConfig | undefined;
  databasePoolSize: number;
  /** Bound on opening a PostgreSQL connection. */
  databaseConnectTimeoutSeconds: number;
  /** How long a starting process retries a database that does not answer before it gives up (DATABASE_START_TIMEOUT_SECONDS). */
  databaseStartTimeoutSeconds: number;
  /** Server-side bound on one statement (PostgreSQL statement_timeout). */
  databaseStatementTimeoutMs: number;
  /** On SIGTERM: how long in-flight requests get to finish before their connections are closed. */
  shutdownGraceSeconds: number;
  /**
   * On SIGTERM: how long to keep serving, unready, before the listener closes (for a load balancer to notice).
   * Default 2 on PostgreSQL (0 on the embedded default, which has no balancer): above a balancer's detection time, which for ops/haproxy.cfg (a check every 500 ms, down after
   * 2 failures) is 1 s, doubled for margin. At 0 a rolling restart behind HAProxy answered 120 of 8,611 requests 503.
   */
  shutdownDelaySeconds: number;
  dataDir: string;
  /** Start on a schema a newer release migrated (rolling back to an expand-compatible release); off: refuse. */
  allowNewerSchema: boolean;
  port: number;
  host: string;
  adminToken: string | undefined;
  cursorSecret: string | undefined;
  maxWaitSeconds: number;
  requestTimeoutSeconds: number;
  logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  rateLimitPerMinute: number;
  /** The most of a key's budget a process claims from the database at once (0: no bound; 1: a statement per request). */
  rateLimitMaxBlock: number;
  /** Failed authentications one client address may make per minute before it is answered 429 (0: no limit). */
  authFailuresPerMinute: number;
  /**
   * How long a key change (a roll with grace 0, a revocation) may take to reach every process: it is
   * recorded to take effect this long after the call, and a process that cannot prove it is this current
   * asks the database.
   */
  keyPropagationMs: number;
  /** Take the client address from the last X-Forwarded-For entry (set only behind one trusted proxy). */
  trustProxy: boolean;
  callbacks: {
    /** How far a provider signature's timestamp may be from now, either way (providers that sign one). */
    replayWindowSeconds: number;
    /** Refused callbacks stored per provider per minute per process; the rest are answered but not stored. */
    rejectedPerMinute: number;
  };
  /** Base URL at which this service is reachable (a provider that calls back from inside this process posts there). */
  publicBaseUrl: string | undefined;
  worker: {
    /** Transactions a worker process handles at once, at most. */
    concurrency: number;
    /**
     * Rows one claim takes, at least and at most: the claim size starts at the least, doubles while
     * claims come back full (a backlog) and halves when they come back less than half full.
     */
    claimMin: number;
    claimMax: number;
    pollMs: number;
    leaseSeconds: number;
    /** Seconds between re-queries of a pending transaction; the last value repeats. */
    requerySchedule: number[];
    /** Sends after which a re-query's "never received" fails the order instead of sending it again. */
    maxSends: number;
    /** Age (since acceptance) after which a re-query's "never received" fails the order instead of sending it again. */
    maxResendAgeSeconds: number;
  };
  /** Each provider plugin's settings under its name, read by the plugin itself; undefined when not configured. */
  providers: ProviderConfigs;
  /** Which live provider carries which vends, the providers' own product codes, and their health rules. */
  routing: RoutingConfig;
  /** Metrics, tracing and stuck orders (docs/operating.md). */
  operations: OperationsConfig;
  webhooks: {
    retrySchedule: number[];
    timeoutMs: number;
    /**
     * Which endpoints may target private, loopback and other non-public addresses: `true` both modes,
     * `"test"` test-mode endpoints only, `false` none (WEBHOOK_ALLOW_PRIVATE_URLS).
     */
    allowPrivateUrls: PrivateUrlsSetting;
    /** Deliveries one process keeps in flight. */
    concurrency: number;
    /** Of those, at most this many for any one endpoint, so a slow endpoint cannot take every slot. */
    endpointConcurrency: number;
    /** An endpoint whose every attempt has failed for this long is disabled at its next failure; 0: never (WEBHOOK_DISABLE_AFTER_SECONDS). */
    disableAfterSeconds: number;
  };
  /** How long operational rows are kept (docs/scaling.md, Retention). */
  retention: RetentionSettings;
  /** Recording every API request (src/request-logs/, docs/operating.md). */
  requestLogs: RequestLogSettings;
}

/** REQUEST_LOGS_*: whether requests are recorded, the buffer, how often it is written, the bodies' limit. */
export interface RequestLogSettings {
  enabled: boolean;
  /** Records waiting to be written, at most; past it a record is dropped (and counted). */
  bufferRows: number;
  /** How long a record waits at most before its batch is written. */
  flushMs: number;
  /** Each body is cut to this many bytes of UTF-8. */
  bodyBytes: number;
}

export interface ReadReplicaConfig {
  /** A postgres URL, one host or several (DATABASE_READ_URL). */
  url: string;
  /** Reads go to the replica only while its replay lag is under this (READ_REPLICA_MAX_LAG_MS). */
  maxLagMs: number;
}

/** WEBHOOK_ALLOW_PRIVATE_URLS: `true` (both modes), `"test"` (test-mode endpoints only) or `false`. */
export type PrivateUrlsSetting = boolean | "test";

export interface OperationsConfig {
  /** Serve Prometheus metrics at `GET /metrics` (METRICS_ENABLED). */
  metricsEnabled: boolean;
  /** When set, `/metrics` asks for `Authorization: Bearer <token>` (METRICS_TOKEN). */
  metricsToken: string | undefined;
  /**
   * A worker-only process (`vend work`) serves its own `/metrics` on this port (METRICS_PORT). One fixed port, as
   * scrape configurations name it: two workers on one host need one each, and a port taken stops the start in one
   * line. 0: a free port, printed at start (tests).
   */
  metricsPort: number;
  /** OTLP/HTTP traces endpoint, e.g. http://collector:4318/v1/traces; tracing is off without it (OTEL_EXPORTER_OTLP_ENDPOINT). */
  otlpEndpoint: string | undefined;
  /** `service.name` on every span (OTEL_SERVICE_NAME). */
  serviceName: string;
  /** A pending order older than this is raised to operators as stuck (STUCK_AFTER_MINUTES). */
  stuckAfterMinutes: number;
  /** Re-queries of a pending order stop past this age; the order is left for operators (REQUERY_MAX_AGE_HOURS). */
  requeryMaxAgeHours: number;
  /** Where stuck orders are also posted, signed like client webhooks (OPERATOR_WEBHOOK_URL). */
  operatorWebhookUrl: string | undefined;
  /** The Standard Webhooks secret (`whsec_…`) operator webhooks are signed with (OPERATOR_WEBHOOK_SECRET). */
  operatorWebhookSecret: string | undefined;
  /** How often the worker compares each provider's plan list with the catalogue, reporting only (CATALOGUE_SYNC_INTERVAL); undefined: never. */
  catalogueSyncIntervalMs: number | undefined;
}

function readReadReplica(env: Env, databaseUrl: string | undefined): ReadReplicaConfig | undefined {
  const url = readOptional(env, "DATABASE_READ_URL");
  noteSettingRead(env, "DATABASE_READ_URL", { kind: "postgres-url" });
  if (url === undefined) return undefined;
  if (!databaseUrl) throw new ConfigError("DATABASE_READ_URL", "needs DATABASE_URL (the embedded database has no replicas)");
  if (!/^postgres(ql)?:\/\//.test(url)) throw new ConfigError("DATABASE_READ_URL", "must be a postgres:// or postgresql:// URL");
  return { url, maxLagMs: readInteger(env, "READ_REPLICA_MAX_LAG_MS", 1000, 1, 3_600_000) };
}

function readOperations(env: Env): OperationsConfig {
  const operatorWebhookUrl = readUrl(env, "OPERATOR_WEBHOOK_URL");
  const operatorWebhookSecret = readOptional(env, "OPERATOR_WEBHOOK_SECRET", 16);
  if (operatorWebhookUrl && !operatorWebhookSecret)
    throw new ConfigError("OPERATOR_WEBHOOK_SECRET", "must be set when OPERATOR_WEBHOOK_URL is (operator webhooks are signed)");
  return {
    metricsEnabled: readBoolean(env, "METRICS_ENABLED", false),
    metricsToken: readOptional(env, "METRICS_TOKEN", 16),
    metricsPort: readInteger(env, "METRICS_PORT", 9464, 0, 65535),
    otlpEndpoint: readUrl(env, "OTEL_EXPORTER_OTLP_ENDPOINT"),
    serviceName: readText(env, "OTEL_SERVICE_NAME", "vend-service"),
    stuckAfterMinutes: readInteger(env, "STUCK_AFTER_MINUTES", 30, 1, 10_080),
    requeryMaxAgeHours: readInteger(env, "REQUERY_MAX_AGE_HOURS", 72, 1, 8760),
    operatorWebhookUrl,
    operatorWebhookSecret,
    catalogueSyncIntervalMs: readInterval(env, "CATALOGUE_SYNC_INTERVAL", 60_000, 7 * 86_400_000),
  };
}

const intervalUnits: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration (`90s`, `15m`, `6h`, `1d`; a bare number is minutes) between `min` and `max` ms; unset, `0` or `off`: undefined. */
function readInterval(env: Env, name: string, min: number, max: number): number | undefined {
  noteSettingRead(env, name, { kind: "duration", min, max, bounds: `${durationText(min)} to ${durationText(max)}` });
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "" || raw === "0" || raw === "off") return undefined;
  const match = /^(\d+)\s*([smhd]?)$/.exec(raw);
  if (!match)
    throw new ConfigError(name, `must be a duration such as 30m, 6h or 1d (a bare number is minutes), or off; got "${raw}"`);
  const ms = Number(match[1]) * (intervalUnits[match[2] || "m"] ?? 60_000);
  if (ms < min || ms > max) throw new ConfigError(name, `must be between 1m and 7d, got "${raw}"`);
  return ms;
}

/** A whole number of ms in its largest whole unit (`1m`, `7d`). */
function durationText(ms: number): string {
  const [unit, size] = Object.entries(intervalUnits).findLast(([, size]) => ms % size === 0) ?? ["ms", 1];
  return `${ms / size}${unit}`;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Invalid configuration: ${variable} ${problem}`);
  }
}

export type Env = Record<string, string | undefined>;

function readInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  noteSettingRead(env, name, { kind: "integer", fallback: String(fallback), min, max });
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function readOptional(env: Env, name: string, minLength = 1): string | undefined {
  noteSettingRead(env, name, { kind: "text", ...(minLength > 1 ? { minLength } : {}) });
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  if (raw.length < minLength) throw new ConfigError(name, `must be at least ${minLength} characters long`);
  return raw;
}

/** Text with a default for unset or empty. */
function readText(env: Env, name: string, fallback: string): string {
  noteSettingRead(env, name, { kind: "text", fallback });
  return env[name] || fallback;
}

/** A PostgreSQL URL, one host or several (failover); see src/db/postgres-url.ts. */
function readPostgresUrl(env: Env, name: string): string | undefined {
  const raw = readOptional(env, name);
  noteSettingRead(env, name, { kind: "postgres-url" });
  if (raw === undefined) return undefined;
  try {
    withFailoverDefaults(raw);
  } catch (error) {
    throw new ConfigError(name, error instanceof Error ? error.message : String(error));
  }
  return raw;
}

function readPooler(env: Env, databaseUrl: string | undefined, directUrl: string | undefined): Config["databasePooler"] {
  noteSettingRead(env, "DATABASE_POOLER", { kind: "choice", fallback: "none", choices: ["none", "session", "transaction"] });
  const raw = env.DATABASE_POOLER || "none";
  if (raw === "session") return "none";
  if (raw !== "none" && raw !== "transaction")
    throw new ConfigError("DATABASE_POOLER", `must be none, session or transaction, got "${raw}"`);
  if (raw === "transaction" && !databaseUrl) throw new ConfigError("DATABASE_POOLER", "needs DATABASE_URL (the pooler's URL)");
  if (raw === "transaction" && !directUrl)
    throw new ConfigError(
      "DATABASE_DIRECT_URL",
      "must be set when DATABASE_POOLER=transaction: LISTEN and migrations need a session of their own (the server, or a session-mode pooler)",
    );
  if (directUrl && !databaseUrl) throw new ConfigError("DATABASE_DIRECT_URL", "needs DATABASE_URL as well");
  return raw;
}

function readMigrationUrl(env: Env, databaseUrl: string | undefined): string | undefined {
  const url = readPostgresUrl(env, "DATABASE_MIGRATION_URL");
  if (url && !databaseUrl)
    throw new ConfigError("DATABASE_MIGRATION_URL", "needs DATABASE_URL as well (the embedded database has no roles)");
  return url;
}

function readSchedule(env: Env, name: string, fallback: number[]): number[] {
  noteSettingRead(env, name, { kind: "seconds-list", fallback: fallback.join(",") });
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const parts = raw.split(",").map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => !/^\d+(\.\d+)?$/.test(p))) {
    throw new ConfigError(name, `must be a comma-separated list of seconds, got "${raw}"`);
  }
  return parts.map(Number);
}

function readBoolean(env: Env, name: string, fallback: boolean): boolean {
  noteSettingRead(env, name, { kind: "boolean", fallback: String(fallback), choices: ["true", "false", "1", "0"] });
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (raw === "true" || raw === "1") return true;
  if (raw === "false" || raw === "0") return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function readUrl(env: Env, name: string): string | undefined {
  const raw = readOptional(env, name);
  noteSettingRead(env, name, { kind: "http-url" });
  if (raw === undefined) return undefined;
  try {
    const url = new URL(raw);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("protocol");
  } catch {
    throw new ConfigError(name, `must be an http(s) URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, "");
}

/** The readers a provider plugin parses its own variables with; each throws ConfigError naming the variable. */
export interface EnvReader {
  integer(name: string, fallback: number, min: number, max: number): number;
  /** The value; undefined when unset or empty. */
  text(name: string, minLength?: number): string | undefined;
  /** An http(s) URL without trailing slashes; undefined when unset or empty. */
  url(name: string): string | undefined;
  /**
   * A secret (key, token, signing secret); undefined when unset or empty. In the environment it is read like
   * `text`; in the providers file it must be given as `<key>_env`, the name of the variable that holds it.
   */
  secret(name: string): string | undefined;
  refuse(name: string, problem: string): never;
}

function envReader(env: Env): EnvReader {
  return {
    integer: (name, fallback, min, max) => readInteger(env, name, fallback, min, max),
    text: (name, minLength) => readOptional(env, name, minLength),
    url: (name) => readUrl(env, name),
    secret: (name) => readOptional(env, name),
    refuse: (name, problem) => {
      throw new ConfigError(name, problem);
    },
  };
}

/** The longest one provider call can take, and the variable that sets it. */
export interface ProviderCallBound {
  ms: number;
  variable: string;
}

/** Room for the database work around a provider call (claim to call, call to the guarded completion). */
const leaseMarginMs = 5000;

/**
 * The shortest lease that outlasts the longest a job spends at a provider: a re-query followed by a
 * send, each up to the provider timeout, plus a margin. Heartbeats extend the lease while a job runs;
 * this bound keeps the job its own even when a heartbeat cannot get through. Only providers with a
 * call bound count: one answering from this service's own database books a repeated order once.
 */
export function minimumLeaseSeconds(longestCall: ProviderCallBound | undefined): number {
  return longestCall ? Math.ceil((2 * longestCall.ms + leaseMarginMs) / 1000) : 1;
}

function readWorker(env: Env, longestCall: ProviderCallBound | undefined): Config["worker"] {
  // Completions are group-committed, so more jobs in flight make larger (cheaper per vend) batches.
  const concurrency = readInteger(env, "WORKER_CONCURRENCY", 64, 1, 256);
  const claimMin = readInteger(env, "WORKER_CLAIM_MIN", 1, 1, 256);
  const claimMax = readInteger(env, "WORKER_CLAIM_MAX", Math.max(claimMin, Math.min(64, concurrency)), 1, 256);
  if (claimMax < claimMin)
    throw new ConfigError("WORKER_CLAIM_MAX", `must be at least WORKER_CLAIM_MIN (${claimMin}), got ${claimMax}`);
  const leaseSeconds = readInteger(env, "WORKER_LEASE_SECONDS", 60, 1, 3600);
  const minimum = minimumLeaseSeconds(longestCall);
  if (longestCall && leaseSeconds < minimum) {
    const given = env.WORKER_LEASE_SECONDS ? String(leaseSeconds) : `${leaseSeconds} (the default)`;
    throw new ConfigError(
      "WORKER_LEASE_SECONDS",
      `must be at least ${minimum} (twice ${longestCall.variable} of ${longestCall.ms} ms for a re-query then a send, plus ${leaseMarginMs / 1000} s), got ${given}`,
    );
  }
  return {
    concurrency,
    claimMin,
    claimMax,
    pollMs: readInteger(env, "WORKER_POLL_MS", 5000, 10, 60_000),
    leaseSeconds,
    requerySchedule: readSchedule(env, "REQUERY_SCHEDULE", [15, 30, 60, 120, 300, 600, 1800, 3600]),
    maxSends: readInteger(env, "WORKER_MAX_SENDS", 3, 1, 100),
    maxResendAgeSeconds: readInteger(env, "WORKER_MAX_RESEND_AGE_SECONDS", 3600, 1, 2_592_000),
  };
}

/**
 * `test`, or the old boolean spellings. The embedded database (a laptop running `npm start` with a
 * receiver on localhost) allows private targets for test-mode endpoints only, so a live key cannot aim
 * deliveries at the machine's own network; a server on PostgreSQL refuses them unless told otherwise.
 */
function readPrivateUrls(env: Env, databaseUrl: string | undefined): PrivateUrlsSetting {
  const fallback = databaseUrl === undefined ? "test" : "false";
  noteSettingRead(env, "WEBHOOK_ALLOW_PRIVATE_URLS", { kind: "choice", fallback, choices: ["false", "test", "true", "0", "1"] });
  const raw = env.WEBHOOK_ALLOW_PRIVATE_URLS;
  if (raw === undefined || raw === "") return databaseUrl === undefined ? "test" : false;
  if (raw === "test") return "test";
  if (raw === "true" || raw === "1") return true;
  if (raw === "false" || raw === "0") return false;
  throw new ConfigError("WEBHOOK_ALLOW_PRIVATE_URLS", `must be false, test or true, got "${raw}"`);
}

function readWebhooks(env: Env, databaseUrl: string | undefined): Config["webhooks"] {
  const concurrency = readInteger(env, "WEBHOOK_CONCURRENCY", 32, 1, 1024);
  const endpointConcurrency = readInteger(env, "WEBHOOK_ENDPOINT_CONCURRENCY", 2, 1, 1024);
  if (endpointConcurrency > concurrency) {
    throw new ConfigError(
      "WEBHOOK_ENDPOINT_CONCURRENCY",
      `must not exceed WEBHOOK_CONCURRENCY (${concurrency}), got ${endpointConcurrency}`,
    );
  }
  return {
    retrySchedule: readSchedule(env, "WEBHOOK_RETRY_SCHEDULE", [0, 5, 300, 1800, 7200, 18000, 36000, 36000]),
    timeoutMs: readInteger(env, "WEBHOOK_TIMEOUT_MS", 10_000, 100, 120_000),
    allowPrivateUrls: readPrivateUrls(env, databaseUrl),
    concurrency,
    endpointConcurrency,
    disableAfterSeconds: readInteger(env, "WEBHOOK_DISABLE_AFTER_SECONDS", 259_200, 0, 31_536_000),
  };
}

const logLevels = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/**
 * Each provider's settings under its name. Empty here: src/providers/registry.ts adds every registered
 * plugin's settings type (declaration merging), so this module never imports the providers.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging in src/providers/registry.ts
export interface ProviderConfigs {}

/** The live providers that carry one service (on one network, when `network` is set), in order of preference. */
export interface ProviderRoute {
  service: ServiceCode;
  network?: string;
  providers: string[];
}

/** A provider's commission on one order: basis points of face value (rounded down), or a fixed amount in kobo. */
export type Commission = { bps: number } | { fixedKobo: number };

/** Commissions keyed `service/network`, `service/*` or `*\/*`. */
export type CommissionSchedule = Record<string, Commission>;

/** Live routing, from the providers file (PROVIDERS_FILE) or, without one, the defaults. */
export interface RoutingConfig {
  /** The providers file's path; undefined when the providers come from the environment alone. */
  file: string | undefined;
  /**
   * A live vend takes the first route of its service and network, else the first of its service without a
   * network. Empty (no file): every configured live provider, in registry order, carries every service.
   */
  routes: ProviderRoute[];
  /** Each live provider's own codes for catalogue products: provider → catalogue product code → its code. */
  productCodes: Record<string, Record<string, string>>;
  /** Per provider: the float (kobo) below which its balance is raised to operators. */
  lowBalanceKobo: Record<string, number>;
  /**
   * Per live provider: its commission by `service/network`, `service/*` and `*\/*` (the most specific applies);
   * a provider or order without one costs its face value. See src/providers/commission.ts.
   */
  commission: Record<string, CommissionSchedule>;
  /** Per provider: the float reconciliation's tolerance in kobo (default `defaultFloatToleranceKobo`). */
  floatToleranceKobo: Record<string, number>;
  breaker: {
    /** Consecutive calls without a usable answer (timeouts, broken connections, 5xx, garbage) that open a provider's breaker. */
    failures: number;
    /** How long an open breaker keeps new orders off the provider before one probe is let through. */
    cooldownMs: number;
  };
  /** How often each process re-reads operators' enable/disable and the breakers other processes opened. */
  healthRefreshMs: number;
  /** How often providers that can report their float are asked for it. */
  balanceCheckMs: number;
}

/** A float that differs from what was expected by more than this (NGN 1) is raised, unless the file says otherwise. */
export const defaultFloatToleranceKobo = 100;

export const defaultRouting: Omit<
  RoutingConfig,
  "file" | "routes" | "productCodes" | "lowBalanceKobo" | "commission" | "floatToleranceKobo"
> = {
  breaker: { failures: 5, cooldownMs: 30_000 },
  healthRefreshMs: 30_000,
  balanceCheckMs: 300_000,
};

/** How the providers' settings are read: each plugin its own variables or the providers file (src/providers/registry.ts). */
export interface ProviderSettings {
  read(env: Env, read: EnvReader): { providers: ProviderConfigs; routing: RoutingConfig };
  longestCall(configs: ProviderConfigs): ProviderCallBound | undefined;
}

/**
 * Parses and validates the environment once, the providers' variables through `providers`; throws
 * ConfigError naming the bad variable. src/load-config.ts binds the registered providers.
 */
export function readConfig(env: Env, providers: ProviderSettings): Config {
  const databaseUrl = readPostgresUrl(env, "DATABASE_URL");
  const databaseDirectUrl = readPostgresUrl(env, "DATABASE_DIRECT_URL");
  const databasePooler = readPooler(env, databaseUrl, databaseDirectUrl);
  const requestTimeoutSeconds = readInteger(env, "REQUEST_TIMEOUT_SECONDS", 30, 2, 600);
  const maxWaitSeconds = readInteger(env, "MAX_WAIT_SECONDS", 25, 0, 600);
  noteSettingRead(env, "LOG_LEVEL", { kind: "choice", fallback: "info", choices: logLevels });
  const logLevel = env.LOG_LEVEL ?? "info";
  if (!(logLevels as readonly string[]).includes(logLevel)) {
    throw new ConfigError("LOG_LEVEL", `must be one of ${logLevels.join(", ")}`);
  }
  const settings = providers.read(env, envReader(env));
  return {
    databaseUrl,
    databasePooler,
    databaseDirectUrl,
    databaseMigrationUrl: readMigrationUrl(env, databaseUrl),
    readReplica: readReadReplica(env, databaseUrl),
    databasePoolSize: readInteger(env, "DATABASE_POOL_SIZE", 10, 1, 500),
    databaseConnectTimeoutSeconds: readInteger(env, "DATABASE_CONNECT_TIMEOUT_SECONDS", 5, 1, 300),
    databaseStartTimeoutSeconds: readInteger(env, "DATABASE_START_TIMEOUT_SECONDS", 300, 0, 86_400),
    databaseStatementTimeoutMs: readInteger(env, "DATABASE_STATEMENT_TIMEOUT_MS", 15_000, 100, 3_600_000),
    shutdownGraceSeconds: readInteger(env, "SHUTDOWN_GRACE_SECONDS", 10, 0, 3600),
    // The embedded default has no load balancer in front to wait for, and nobody else to reach it.
    shutdownDelaySeconds: readInteger(env, "SHUTDOWN_DELAY_SECONDS", databaseUrl ? 2 : 0, 0, 3600),
    dataDir: readText(env, "VEND_DATA_DIR", "./.data"),
    allowNewerSchema: readBoolean(env, "ALLOW_NEWER_SCHEMA", false),
    port: readInteger(env, "PORT", 8080, 0, 65535),
    host: readText(env, "HOST", databaseUrl ? "0.0.0.0" : "127.0.0.1"),
    adminToken: readOptional(env, "ADMIN_TOKEN", 16),
    cursorSecret: readOptional(env, "CURSOR_SECRET", 32),
    maxWaitSeconds,
    requestTimeoutSeconds,
    logLevel: logLevel as Config["logLevel"],
    rateLimitPerMinute: readInteger(env, "RATE_LIMIT_PER_MINUTE", 600, 0, 1_000_000),
    rateLimitMaxBlock: readInteger(env, "RATE_LIMIT_MAX_BLOCK", 0, 0, 1_000_000),
    authFailuresPerMinute: readInteger(env, "AUTH_FAILURES_PER_MINUTE", 60, 0, 1_000_000),
    keyPropagationMs: readInteger(env, "KEY_PROPAGATION_MS", 2000, 200, 60_000),
    trustProxy: readBoolean(env, "TRUST_PROXY", false),
    callbacks: {
      replayWindowSeconds: readInteger(env, "CALLBACK_REPLAY_WINDOW_SECONDS", 300, 1, 86_400),
      rejectedPerMinute: readInteger(env, "CALLBACK_REJECTED_PER_MINUTE", 60, 0, 1_000_000),
    },
    publicBaseUrl: readUrl(env, "PUBLIC_BASE_URL"),
    worker: readWorker(env, providers.longestCall(settings.providers)),
    providers: settings.providers,
    routing: settings.routing,
    operations: readOperations(env),
    webhooks: readWebhooks(env, databaseUrl),
    retention: readRetentionSettings(envReader(env)),
    requestLogs: {
      enabled: readBoolean(env, "REQUEST_LOGS_ENABLED", true),
      bufferRows: readInteger(env, "REQUEST_LOGS_BUFFER_ROWS", 10_000, 1, 1_000_000),
      flushMs: readInteger(env, "REQUEST_LOGS_FLUSH_MS", 200, 10, 60_000),
      bodyBytes: readInteger(env, "REQUEST_LOGS_BODY_BYTES", 16_384, 0, 1_048_576),
    },
  };
}
