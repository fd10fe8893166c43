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
  };
}
