export interface Config {
  databaseUrl: string | undefined;
  databasePoolSize: number;
  dataDir: string;
  port: number;
  host: string;
  adminToken: string | undefined;
  cursorSecret: string | undefined;
  maxWaitSeconds: number;
  requestTimeoutSeconds: number;
  logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  rateLimitPerMinute: number;
  /** Base URL at which this service is reachable (sandbox callbacks are sent there). */
  publicBaseUrl: string | undefined;
  worker: {
    concurrency: number;
    pollMs: number;
    leaseSeconds: number;
    /** Seconds between re-queries of a pending transaction; the last value repeats. */
    requerySchedule: number[];
  };
  sandbox: { callbackDelayMs: number; callbackToken: string; callbackSecret: string; latencyMs: number };
  vtu:
    | { baseUrl: string; apiKey: string; secretKey: string; callbackToken: string; callbackSecret: string; timeoutMs: number }
    | undefined;
  webhooks: { retrySchedule: number[]; timeoutMs: number; allowPrivateUrls: boolean };
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Invalid configuration: ${variable} ${problem}`);
  }
}

type Env = Record<string, string | undefined>;

function readInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function readOptional(env: Env, name: string, minLength = 1): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  if (raw.length < minLength) throw new ConfigError(name, `must be at least ${minLength} characters long`);
  return raw;
}

function readSchedule(env: Env, name: string, fallback: number[]): number[] {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const parts = raw.split(",").map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => !/^\d+(\.\d+)?$/.test(p))) {
    throw new ConfigError(name, `must be a comma-separated list of seconds, got "${raw}"`);
  }
  return parts.map(Number);
}

function readBoolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (raw === "true" || raw === "1") return true;
  if (raw === "false" || raw === "0") return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function readUrl(env: Env, name: string): string | undefined {
  const raw = readOptional(env, name);
  if (raw === undefined) return undefined;
  try {
    const url = new URL(raw);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("protocol");
  } catch {
    throw new ConfigError(name, `must be an http(s) URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, "");
}

/** The live VTU provider: all of its variables, or none. */
function readVtu(env: Env): Config["vtu"] {
  const baseUrl = readUrl(env, "VTU_BASE_URL");
  if (!baseUrl) return undefined;
  const required = (name: string) => {
    const value = readOptional(env, name);
    if (!value) throw new ConfigError(name, "is required when VTU_BASE_URL is set");
    return value;
  };
  return {
    baseUrl,
    apiKey: required("VTU_API_KEY"),
    secretKey: required("VTU_SECRET_KEY"),
    callbackToken: required("VTU_CALLBACK_TOKEN"),
    callbackSecret: required("VTU_CALLBACK_SECRET"),
    timeoutMs: readInteger(env, "VTU_TIMEOUT_MS", 15_000, 100, 120_000),
  };
}

const logLevels = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/** Parses and validates the environment once; throws ConfigError naming the bad variable. */
export function loadConfig(env: Env = process.env): Config {
  const databaseUrl = readOptional(env, "DATABASE_URL");
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError("DATABASE_URL", "must be a postgres:// or postgresql:// URL");
  }
  const requestTimeoutSeconds = readInteger(env, "REQUEST_TIMEOUT_SECONDS", 30, 2, 600);
  const maxWaitSeconds = readInteger(env, "MAX_WAIT_SECONDS", 25, 0, 600);
  const logLevel = env.LOG_LEVEL ?? "info";
  if (!(logLevels as readonly string[]).includes(logLevel)) {
    throw new ConfigError("LOG_LEVEL", `must be one of ${logLevels.join(", ")}`);
  }
  return {
    databaseUrl,
    databasePoolSize: readInteger(env, "DATABASE_POOL_SIZE", 10, 1, 500),
    dataDir: env.VEND_DATA_DIR || "./.data",
    port: readInteger(env, "PORT", 8080, 0, 65535),
    host: env.HOST || "0.0.0.0",
    adminToken: readOptional(env, "ADMIN_TOKEN", 16),
    cursorSecret: readOptional(env, "CURSOR_SECRET", 32),
    maxWaitSeconds,
    requestTimeoutSeconds,
    logLevel: logLevel as Config["logLevel"],
    rateLimitPerMinute: readInteger(env, "RATE_LIMIT_PER_MINUTE", 600, 0, 1_000_000),
    publicBaseUrl: readUrl(env, "PUBLIC_BASE_URL"),
    worker: {
      concurrency: readInteger(env, "WORKER_CONCURRENCY", 8, 1, 256),
      pollMs: readInteger(env, "WORKER_POLL_MS", 1000, 10, 60_000),
      leaseSeconds: readInteger(env, "WORKER_LEASE_SECONDS", 30, 1, 3600),
      requerySchedule: readSchedule(env, "REQUERY_SCHEDULE", [15, 30, 60, 120, 300, 600, 1800, 3600]),
    },
    sandbox: {
      callbackDelayMs: readInteger(env, "SANDBOX_CALLBACK_DELAY_MS", 2000, 0, 3_600_000),
      callbackToken: env.SANDBOX_CALLBACK_TOKEN || "sandbox-callback-token",
      callbackSecret: env.SANDBOX_CALLBACK_SECRET || "sandbox-callback-secret",
      latencyMs: readInteger(env, "SANDBOX_LATENCY_MS", 0, 0, 60_000),
    },
    vtu: readVtu(env),
    webhooks: {
      retrySchedule: readSchedule(env, "WEBHOOK_RETRY_SCHEDULE", [0, 5, 300, 1800, 7200, 18000, 36000, 36000]),
      timeoutMs: readInteger(env, "WEBHOOK_TIMEOUT_MS", 10_000, 100, 120_000),
      allowPrivateUrls: readBoolean(env, "WEBHOOK_ALLOW_PRIVATE_URLS", false),
    },
  };
}
