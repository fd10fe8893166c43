import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { apiUrl } from "../helpers/cluster.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { HttpClient } from "../helpers/http.ts";
import { childEnv, processTestMs, type StartedProcess, spawnProcess } from "../helpers/process.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";

// A partition between the API process and PostgreSQL (a proxy that stops forwarding), as in
// database-outage.test.ts, with the rate limit on and a claim for every request (RATE_LIMIT_MAX_BLOCK=1),
// so every request asks the unreachable database for budget.
const baseUrl = process.env.DATABASE_URL;
const main = join(import.meta.dir, "../../src/main.ts");
let database: TestDatabase | undefined;
let proxy: TcpProxy | undefined;
let service: StartedProcess | undefined;

afterAll(async () => {
  await service?.stop("SIGKILL");
  await proxy?.close();
  await database?.drop();
});

describe.skipIf(!baseUrl)("the rate limit while PostgreSQL does not answer", () => {
  test(
    "requests are not turned into 500s: the limiter fails open (one error line) and the request answers 503 like without it; then 200 again",
    async () => {
      database = await createTestDatabase({ maxConnections: 2 });
      const upstream = new URL(baseUrl ?? "");
      proxy = await startTcpProxy({ host: upstream.hostname, port: Number(upstream.port || 5432) });
      service = spawnProcess(
        [process.execPath, main, "--no-worker"],
        childEnv({
          DATABASE_URL: proxy.url(database.url ?? ""),
          PORT: "0",
          DATABASE_POOL_SIZE: "4",
          RATE_LIMIT_PER_MINUTE: "1000",
          RATE_LIMIT_MAX_BLOCK: "1",
          LOG_LEVEL: "error",
        }),
      );
      const url = await apiUrl(service);
      const [, key] = await service.waitFor(/Test API key \(shown once, store it now\): (rg_test_\w+)/);
      const client = new HttpClient(url, key);
      expect((await client.get("/api/v1/wallet")).status).toBe(200);

      proxy.blackhole();
      const answers = await Promise.all(Array.from({ length: 3 }, () => client.get("/api/v1/wallet")));
      for (const answer of answers) {
        expect(answer.status).toBe(503);
        expect(answer.json.code).toBe("SERVICE_UNAVAILABLE");
        expect(answer.headers.get("ratelimit-limit")).toBe("1000");
      }
      await service.waitFor(/rate limit store unavailable; counting in this process alone until the window ends/);
      const outageLines = service.output().match(/rate limit store unavailable/g) ?? [];
      // One line per window (two if the outage straddled a minute).
      expect(outageLines.length).toBeGreaterThanOrEqual(1);
      expect(outageLines.length).toBeLessThanOrEqual(2);

      proxy.heal();
      let recovered = await client.get("/api/v1/wallet");
      for (let i = 0; i < 100 && recovered.status !== 200; i++) recovered = await client.get("/api/v1/wallet");
      expect(recovered.status).toBe(200);
      expect(recovered.headers.get("ratelimit-limit")).toBe("1000");
    },
    processTestMs,
  );
});
