import { afterEach, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { queryRows } from "../../src/db/rows.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { startFakeClubkonnectServer } from "../helpers/clubkonnect-mock.ts";
import { apiUrl, spawnService, vtuFileEnv, vtuProviderEntry, writeProvidersFile } from "../helpers/cluster.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startFakeVtuServer } from "../helpers/fake-vtu-server.ts";
import type { StartedProcess } from "../helpers/process.ts";
import { processTestMs } from "../helpers/process.ts";

// Real processes (an API, two workers) on one PostgreSQL database, two providers as real HTTP servers.
const postgres = Boolean(process.env.DATABASE_URL);
const adminToken = "drill-admin-token-0123456789abcdef";
const processes: StartedProcess[] = [];
const cleanups: (() => unknown)[] = [];
let database: TestDatabase | undefined;

afterEach(async () => {
  await Promise.all(processes.splice(0).map((p) => p.stop("SIGKILL")));
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await database?.drop();
  database = undefined;
});

/** A providers file routing airtime to ClubKonnect first, then VTU; secrets by variable. */
async function providersFile(ckUrl: string, vtuUrl: string): Promise<Record<string, string>> {
  const file = await writeProvidersFile(
    `providers:
  clubkonnect:
    base_url: ${ckUrl}
    user_id: "CK100000001"
    api_key_env: DRILL_CK_KEY
    timeout_ms: 1000
${vtuProviderEntry(vtuUrl)}routes:
  - service: airtime
    providers: [clubkonnect, vtu]
breaker:
  failures: 3
  cooldown_seconds: 1
health_refresh_ms: 200
`,
  );
  cleanups.push(file.remove);
  return {
    PROVIDERS_FILE: file.path,
    DRILL_CK_KEY: "CKTESTAPIKEY0123456789SECRET",
    ...vtuFileEnv,
    ADMIN_TOKEN: adminToken,
    REQUERY_SCHEDULE: "0.3",
    WORKER_POLL_MS: "50",
    WORKER_LEASE_SECONDS: "8",
  };
}

async function call(url: string, method: string, path: string, token: string, body?: unknown, key?: string) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(key ? { "idempotency-key": key } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as { code: string; data: Record<string, unknown> } };
}

/** A live account with a float; its live key. */
async function liveAccount(url: string): Promise<string> {
  const account = await call(url, "POST", "/admin/v1/accounts", adminToken, { name: "Drill Co" });
  const data = account.json.data as { account: { id: string }; keys: { mode: string; key: string }[] };
  const credited = await call(
    url,
    "POST",
    `/admin/v1/accounts/${data.account.id}/wallet/credit`,
    adminToken,
    { mode: "live", amount_kobo: 500_000_000, note: "float" },
    "float",
  );
  if (credited.status !== 200) throw new Error(`credit: ${credited.status} ${JSON.stringify(credited.json)}`);
  return data.keys.find((k) => k.mode === "live")?.key ?? "";
}

const vendAirtime = (url: string, key: string, i: number) =>
  call(
    url,
    "POST",
    "/api/v1/vend",
    key,
    { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 },
    `drill-${i}`,
  );

describe.skipIf(!postgres)("two live providers under real processes", () => {
  test("A flaps up and down every second over 500 orders: each delivered at most once, every order final, books balanced", async () => {
    let flapping = true;
    const ck = startFakeClubkonnectServer({ delayMs: 20, down: () => flapping && Math.floor(Date.now() / 1000) % 2 === 0 });
    const vtu = startFakeVtuServer({ delayMs: () => 10 });
    cleanups.push(ck.stop, vtu.stop);
    const env = await providersFile(ck.url, vtu.url);
    database = await createTestDatabase({ maxConnections: 4 });
    const dbUrl = database.url ?? "";
    const api = spawnService(dbUrl, "api", env);
    processes.push(api);
    const url = await apiUrl(api);
    const spawned = Date.now();
    const workers = [1, 2].map(() => spawnService(dbUrl, "worker", { ...env, WORKER_CONCURRENCY: "16" }));
    processes.push(...workers);
    const key = await liveAccount(url);
    // The orders must meet A while it flaps (about 7 s): a worker still starting on a loaded machine would
    // take them only after, and then none is sent to A while it is down.
    await Promise.all(workers.map((worker) => worker.waitFor(/worker running/i)));
    console.log(`failover drill: workers running ${Date.now() - spawned} ms after their start`);

    // 500 orders over about 5 s, so they meet A both up and down.
    const refused: number[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => vendAirtime(url, key, batch * 50 + i)));
      for (const answer of answers) if (answer.status !== 202) refused.push(answer.status);
      await Bun.sleep(500);
    }
    // Accept-time routing never fails here: B is always up.
    expect(refused).toEqual([]);

    // Orders whose fate at A is unknown wait for A; once A stops flapping they settle.
    await Bun.sleep(2000);
    flapping = false;
    const deadline = Date.now() + 60_000;
    let open = 500;
    while (open > 0 && Date.now() < deadline) {
      const [row] = await queryRows<{ open: number }>(
        database.handle.db,
        sql`select count(*)::int as open from transactions where status not in ('successful', 'failed')`,
      );
      open = Number(row?.open);
      if (open > 0) await Bun.sleep(250);
    }
    expect(open).toBe(0);

    // At most once per provider (each books a request id once) and at most once across both.
    const delivered = new Map<string, number>();
    const count = (requestId: string) => {
      const reference = requestId.replace(/-\d+$/, "");
      delivered.set(reference, (delivered.get(reference) ?? 0) + 1);
    };
    for (const order of ck.book.orders.values()) if (order.status === "ORDER_COMPLETED") count(order.requestId);
    for (const entry of vtu.book.transactions.values()) if (entry.status === "delivered") count(entry.request_id);
    expect(Math.max(...delivered.values())).toBe(1);
    expect(vtu.pays.filter((p) => p.accepted).length).toBe(new Set(vtu.pays.map((p) => p.requestId)).size);

    const [books] = await queryRows<Record<string, number>>(
      database.handle.db,
      sql`select (select count(*)::int from transactions where status = 'successful') as successful,
                 (select count(*)::int from transactions where provider not in ('clubkonnect', 'vtu')) as unknown_provider,
                 (select count(*)::int from ledger_entries where kind = 'capture') as captures,
                 (select count(*)::int from transactions t where (select count(*) from provider_attempts a where a.transaction_id = t.id) > 1) as moved,
                 (select coalesce(sum(held_kobo), 0)::int from wallets) as held`,
    );
    expect(books?.successful).toBe(delivered.size);
    expect(books?.captures).toBe(delivered.size);
    expect(books?.unknown_provider).toBe(0);
    expect(books?.held).toBe(0);
    // The drill did make orders move from A to B.
    console.log(`failover drill: ${books?.moved} of ${books?.successful} orders moved from A to B`);
    expect(Number(books?.moved)).toBeGreaterThan(0);
    expect(await reconcileWallets(database.handle.db)).toEqual([]);
  }, 150_000);

  test(
    "an operator disables A on one API process: the other routes new orders to B within seconds",
    async () => {
      const ck = startFakeClubkonnectServer({ delayMs: 0 });
      const vtu = startFakeVtuServer({ delayMs: () => 0 });
      cleanups.push(ck.stop, vtu.stop);
      const env = await providersFile(ck.url, vtu.url);
      database = await createTestDatabase({ maxConnections: 4 });
      const dbUrl = database.url ?? "";
      const first = spawnService(dbUrl, "api", env);
      const second = spawnService(dbUrl, "api", env);
      processes.push(first, second);
      const [one, two] = [await apiUrl(first), await apiUrl(second)];
      const key = await liveAccount(one);
      const before = await vendAirtime(two, key, 1);
      expect(before.json.data.metadata).toMatchObject({ route: "clubkonnect" });

      const disabled = await call(one, "POST", "/admin/v1/providers/clubkonnect/disable", adminToken, { reason: "drill" });
      expect(disabled.status).toBe(200);
      const started = Date.now();
      let route = "clubkonnect";
      for (let i = 2; route === "clubkonnect" && Date.now() - started < 10_000; i++) {
        route = ((await vendAirtime(two, key, i)).json.data.metadata as { route: string }).route;
        if (route === "clubkonnect") await Bun.sleep(50);
      }
      expect(route).toBe("vtu");
      expect(Date.now() - started).toBeLessThan(3000);
      const listed = await call(two, "GET", "/admin/v1/providers", adminToken);
      const providers = listed.json.data.providers as { name: string; enabled: boolean }[];
      expect(providers.find((p) => p.name === "clubkonnect")?.enabled).toBe(false);
    },
    processTestMs,
  );
});
