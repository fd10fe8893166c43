import { afterEach, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { queryRows } from "../../src/db/rows.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { type ServiceBehindProxy, startServiceBehindProxy } from "../helpers/behind-proxy.ts";
import { fundDefaultAccount } from "../helpers/cluster.ts";
import { HttpClient } from "../helpers/http.ts";
import { processTestMs } from "../helpers/process.ts";

// The outage is a partition between one service process and PostgreSQL (a proxy that stops forwarding),
// so the PostgreSQL server everyone shares keeps running.
const baseUrl = process.env.DATABASE_URL;
let behind: ServiceBehindProxy | undefined;

afterEach(async () => {
  await behind?.stop();
  behind = undefined;
});

async function startBehindProxy(env: Record<string, string> = {}) {
  behind = await startServiceBehindProxy({ env: { DATABASE_POOL_SIZE: "4", RATE_LIMIT_PER_MINUTE: "0", ...env } });
  return behind;
}

async function timed<T>(run: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await run();
  return { result, ms: performance.now() - started };
}

const vendBody = { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 };

describe.skipIf(!baseUrl)("PostgreSQL stops answering", () => {
  test(
    "vends, wallet reads and /readyz answer 503 with Retry-After within bounds; the service recovers by itself; no money moves",
    async () => {
      const { url, key, client, proxy, database } = await startBehindProxy();
      await fundDefaultAccount(url, key, 1_000_000);
      const anonymous = new HttpClient(url);
      // Warm every pooled connection, so the partition catches connections in use as well as new ones.
      await Promise.all(Array.from({ length: 6 }, () => client.get("/api/v1/wallet")));

      proxy.blackhole();
      const [ready, vend, wallet] = await Promise.all([
        timed(() => anonymous.get("/readyz")),
        timed(() => client.post("/api/v1/vend", vendBody, { headers: { "idempotency-key": "outage-vend" } })),
        timed(() => client.get("/api/v1/wallet")),
      ]);
      expect(ready.result.status).toBe(503);
      expect(ready.ms).toBeLessThan(3000);
      for (const answer of [vend, wallet]) {
        expect(answer.result.status).toBe(503);
        expect(answer.result.json.code).toBe("SERVICE_UNAVAILABLE");
        expect(answer.result.headers.get("retry-after")).toBe("5");
        expect(answer.ms).toBeLessThan(7000);
      }

      proxy.heal();
      const healed = performance.now();
      let recovered = await client.get("/api/v1/wallet");
      while (recovered.status !== 200 && performance.now() - healed < 5000) recovered = await client.get("/api/v1/wallet");
      expect(recovered.status).toBe(200);
      expect(performance.now() - healed).toBeLessThan(3000);
      expect((await anonymous.get("/readyz")).status).toBe(200);

      // The failed vend stored nothing: its key is free, and the books hold only the vend made after healing.
      const retried = await client.post("/api/v1/vend", vendBody, { headers: { "idempotency-key": "outage-vend" } });
      expect(retried.status).toBe(202);
      expect(retried.headers.get("idempotent-replayed")).toBeNull();
      const db = database.handle.db;
      if (!db) throw new Error("no database");
      const [counts] = await queryRows<{ transactions: number; holds: number }>(
        db,
        sql`select (select count(*)::int from transactions) as transactions,
                 (select count(*)::int from ledger_entries where kind = 'hold') as holds`,
      );
      expect(counts).toEqual({ transactions: 1, holds: 1 });
      expect(await reconcileWallets(db)).toEqual([]);
    },
    processTestMs,
  );

  test(
    "SIGTERM exits within the grace bound while the database does not answer",
    async () => {
      const { client, proxy, service } = await startBehindProxy({ SHUTDOWN_GRACE_SECONDS: "2" });
      expect((await client.get("/api/v1/wallet")).status).toBe(200);
      proxy.blackhole();
      // A request stuck on the silent database while the signal arrives.
      const stuck = client.get("/api/v1/wallet").catch(() => undefined);
      const started = performance.now();
      const code = await service.stop("SIGTERM");
      expect(performance.now() - started).toBeLessThan(2000 + 5000 + 1000);
      expect([0, 1]).toContain(code ?? -1);
      await stuck;
    },
    processTestMs,
  );
});
