import { Writable } from "node:stream";
import { startBackground } from "../../src/background.ts";
import type { Config } from "../../src/config.ts";
import { openDatabase } from "../../src/db/client.ts";
import type { AppDeps } from "../../src/deps.ts";
import { loadConfig } from "../../src/load-config.ts";
import { createLogger } from "../../src/logger.ts";
import type { ProviderAdapter } from "../../src/providers/types.ts";
import { createDeps, type RunningServer, startServer } from "../../src/server.ts";
import type { SpanExporter } from "../../src/tracing/tracing.ts";
import { asServiceRole, createTestDatabase, type TestDatabase } from "./database.ts";
import { HttpClient } from "./http.ts";

export const testAdminToken = "test-admin-token-0123456789abcdef";

export interface TestServer {
  url: string;
  deps: AppDeps;
  database: TestDatabase;
  server: RunningServer;
  /** Admin-authenticated client. */
  admin: HttpClient;
  /** Client with no credentials. */
  anonymous: HttpClient;
  client(apiKey: string): HttpClient;
  /** Creates an account; returns its id and both keys. */
  createAccount(name?: string): Promise<{ id: string; testKey: string; liveKey: string }>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  /** Run the background worker and webhook delivery in the server process (as `npm start` does). */
  background?: boolean;
  /** Live-mode provider adapters to use instead of configuration (e.g. a VTU adapter on a mocked fetch). */
  liveProviders?: ProviderAdapter[];
  /** Takes the spans (SimpleSpanProcessor) when tracing is on (`operations.otlpEndpoint` set), instead of OTLP. */
  spanExporter?: SpanExporter;
}

/** The real server on a free port against a fresh database. */
export async function startTestServer(overrides: Partial<Config> = {}, options: TestServerOptions = {}): Promise<TestServer> {
  const database = await createTestDatabase();
  const defaults = loadConfig({});
  const config: Config = {
    ...defaults,
    databaseUrl: database.url,
    host: "127.0.0.1",
    port: 0,
    adminToken: testAdminToken,
    logLevel: "silent",
    rateLimitPerMinute: 0,
    // Like the rate limit, the failed-authentication throttle is off unless a test turns it on.
    authFailuresPerMinute: 0,
    // Test webhook receivers listen on 127.0.0.1; tests of the refusal pass their own `webhooks`.
    webhooks: { ...defaults.webhooks, allowPrivateUrls: true },
    ...overrides,
  };
  // On PostgreSQL the server runs as the run's service role (DML only, owning nothing), as deployed; the test keeps
  // the owner's handle (`database.handle`) for what only an owner may do.
  const serviceHandle = database.url
    ? await openDatabase({ databaseUrl: asServiceRole(database.url), maxConnections: 20 })
    : database.handle;
  const deps = await createDeps(
    config,
    serviceHandle,
    createLogger(config.logLevel),
    options.liveProviders,
    options.spanExporter,
  );
  const server = startServer(deps, { port: 0, hostname: "127.0.0.1" });
  const background = options.background ? startBackground(deps, server.url) : undefined;
  const client = (key?: string) => new HttpClient(server.url, key);
  const admin = client(testAdminToken);
  return {
    url: server.url,
    deps,
    database,
    server,
    admin,
    anonymous: client(),
    client: (key) => client(key),
    async createAccount(name = "acme") {
      const res = await admin.post("/admin/v1/accounts", { name });
      if (res.status !== 201) throw new Error(`createAccount failed: ${res.status} ${res.text}`);
      const data = res.json.data as { account: { id: string }; keys: { mode: string; key: string }[] };
      const key = (mode: string) => data.keys.find((k) => k.mode === mode)?.key ?? "";
      return { id: data.account.id, testKey: key("test"), liveKey: key("live") };
    },
    async close() {
      await background?.stop();
      await server.stop();
      await deps.requestLogs.stop();
      await deps.waiters.stop();
      await deps.credentialSync.stop();
      await deps.providers.health.stop();
      deps.metrics.close();
      await deps.tracing.shutdown();
      await deps.reads.close();
      if (serviceHandle !== database.handle) await serviceHandle.close();
      await database.drop();
    },
  };
}

/**
 * Sends the server's logs at `level` and above to memory from now on; `restore` puts its own logger back. `warn`
 * leaves out the access lines, whose writing would slow a server being timed against one that writes none.
 */
export function captureLogs(server: TestServer, level: "info" | "warn" = "info"): { lines: string[]; restore(): void } {
  const lines: string[] = [];
  const original = server.deps.logger;
  server.deps.logger = createLogger(
    level,
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    }),
  );
  return {
    lines,
    restore: () => {
      server.deps.logger = original;
    },
  };
}
