import { join } from "node:path";
import { apiUrl } from "./cluster.ts";
import { createTestDatabase, type TestDatabase } from "./database.ts";
import { HttpClient } from "./http.ts";
import { childEnv, type StartedProcess, spawnProcess } from "./process.ts";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy.ts";

const main = join(import.meta.dir, "../../src/main.ts");

/** A service process on a test database of its own, every connection of it through a TCP proxy. */
export interface ServiceBehindProxy {
  database: TestDatabase;
  proxy: TcpProxy;
  service: StartedProcess;
  url: string;
  /** The test API key it printed at start. */
  key: string;
  client: HttpClient;
  /** Kills the process, closes the proxy, drops the database. */
  stop(): Promise<void>;
}

/**
 * Starts `src/main.ts` with `args` (e.g. `serve`) on a new test database reached through a proxy
 * (PostgreSQL only: DATABASE_URL names the server), so a test can cut or rewrite its traffic without
 * touching the server others share. `env` adds to PORT=0 and the proxied DATABASE_URL.
 */
export async function startServiceBehindProxy(
  options: { args?: string[]; env?: Record<string, string> } = {},
): Promise<ServiceBehindProxy> {
  const database = await createTestDatabase({ maxConnections: 2 });
  const upstream = new URL(process.env.DATABASE_URL ?? "");
  const proxy = await startTcpProxy({ host: upstream.hostname, port: Number(upstream.port || 5432) });
  const service = spawnProcess(
    [process.execPath, main, ...(options.args ?? [])],
    childEnv({ DATABASE_URL: proxy.url(database.url ?? ""), PORT: "0", ...options.env }),
  );
  const stop = async () => {
    await service.stop("SIGKILL");
    await proxy.close();
    await database.drop();
  };
  try {
    const url = await apiUrl(service);
    const [, key = ""] = await service.waitFor(/Test API key \(shown once, store it now\): (rg_test_\w+)/);
    return { database, proxy, service, url, key, client: new HttpClient(url, key), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
