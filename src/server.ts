import { buildApp } from "./app.ts";
import { callbackProviders } from "./callbacks/service.ts";
import type { Config } from "./config.ts";
import type { DbHandle } from "./db/client.ts";
import { getOrCreateSetting } from "./db/settings.ts";
import type { AppDeps } from "./deps.ts";
import { RateLimiter } from "./http/rate-limit.ts";
import { loadSpec } from "./http/spec.ts";
import { compileValidators } from "./http/validation.ts";
import { createCaches, subscribeCacheEviction } from "./lib/caches.ts";
import { CursorCodec } from "./lib/cursor.ts";
import { randomBase62 } from "./lib/random.ts";
import type { Logger } from "./logger.ts";
import { FinalityWaiters } from "./processing/waiters.ts";
import { createProviders } from "./providers/registry.ts";
import type { ProviderAdapter } from "./providers/types.ts";
import { createVtuProvider, translateVtuCallback } from "./providers/vtu.ts";
import { workChannel } from "./worker/loop.ts";

/** At most one NOTIFY per interval, however many vends are accepted. */
function debouncedNotify(database: DbHandle, channel: string, logger: Logger, intervalMs = 20): () => void {
  let scheduled = false;
  return () => {
    if (scheduled) return;
    scheduled = true;
    setTimeout(() => {
      scheduled = false;
      database.notify(channel, "").catch((error) => logger.warn({ err: String(error) }, "work notify failed"));
    }, intervalMs);
  };
}

/**
 * Wires the dependencies once: spec and validators compiled, instance secrets resolved, providers
 * (the sandbox always; the VTU HTTP provider when configured, or `liveProviders` from a test).
 */
export async function createDeps(
  config: Config,
  database: DbHandle,
  logger: Logger,
  liveProviders?: ProviderAdapter[],
): Promise<AppDeps> {
  const spec = loadSpec();
  const cursorSecret = config.cursorSecret ?? (await getOrCreateSetting(database.db, "cursor_secret", () => randomBase62(48)));
  const caches = createCaches();
  await subscribeCacheEviction(database, caches, logger);
  return {
    config,
    database,
    db: database.db,
    logger,
    spec,
    validators: compileValidators(spec),
    rateLimiter: new RateLimiter(config.rateLimitPerMinute),
    cursors: new CursorCodec(cursorSecret),
    caches,
    providers: createProviders(database.db, config, liveProviders ?? (config.vtu ? [createVtuProvider(config.vtu)] : [])),
    callbackProviders: callbackProviders(config, translateVtuCallback),
    waiters: await FinalityWaiters.start(database),
    announceWork: debouncedNotify(database, workChannel, logger),
  };
}

export interface RunningServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** Bun's transport cap: bodies past it are cut off before the app sees them; 64 KiB..1 MiB get a 413 envelope. */
const transportBodyLimit = 1024 * 1024;

export function startServer(deps: AppDeps, options: { port: number; hostname: string }): RunningServer {
  const app = buildApp(deps);
  const server = Bun.serve({
    port: options.port,
    hostname: options.hostname,
    maxRequestBodySize: transportBodyLimit,
    // Long-polls run up to REQUEST_TIMEOUT_SECONDS; the idle timeout must not cut them short.
    idleTimeout: Math.min(255, deps.config.requestTimeoutSeconds + 10),
    fetch: (request) => app.fetch(request),
  });
  const port = server.port ?? options.port;
  const host = options.hostname === "0.0.0.0" ? "127.0.0.1" : options.hostname;
  return {
    url: `http://${host}:${port}`,
    port,
    stop: async () => {
      await server.stop(true);
    },
  };
}
