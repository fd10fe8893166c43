import { afterEach, describe, expect, test } from "bun:test";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { apiUrl, spawnService, summarise, vtuFileEnv, vtuProviderEntry, writeProvidersFile } from "../helpers/cluster.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startFakeVtuServer } from "../helpers/fake-vtu-server.ts";
import type { StartedProcess } from "../helpers/process.ts";
import { testAdminToken } from "../helpers/server.ts";

// Several processes on one database need a real PostgreSQL server (CI always has one).
const postgres = Boolean(process.env.DATABASE_URL);
const processes: StartedProcess[] = [];
let database: TestDatabase | undefined;
const cleanups: (() => Promise<void>)[] = [];
let provider: ReturnType<typeof startFakeVtuServer> | undefined;

afterEach(async () => {
  await Promise.all(processes.splice(0).map((p) => p.stop("SIGKILL")));
  await provider?.stop();
  await database?.drop();
  database = undefined;
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

const orders = 240;
const leaseSeconds = 8;

/**
 * Live mode through the VTU adapter to the fake; a lease that holds a re-query plus a send (2 × 1 s + margin).
 * The provider's breaker keeps its default threshold but cools down in 1 s: the slow orders open it
 * now and then, and at the default 30 s cool-down three openings alone would outlast the drill's deadline.
 */
async function serviceEnv(providerUrl: string): Promise<Record<string, string>> {
  const file = await writeProvidersFile(`providers:\n${vtuProviderEntry(providerUrl)}breaker:\n  cooldown_seconds: 1\n`);
  cleanups.push(file.remove);
  return {
    ADMIN_TOKEN: testAdminToken,
    DATABASE_POOL_SIZE: "3",
    PROVIDERS_FILE: file.path,
    ...vtuFileEnv,
    WORKER_LEASE_SECONDS: String(leaseSeconds),
    WORKER_POLL_MS: "50",
    REQUERY_SCHEDULE: "1",
    SHUTDOWN_GRACE_SECONDS: "10",
  };
}

interface Outcome {
  answered: number;
  /** Connection errors on requests the server had started to answer (anything but a refused connection). */
  cut: string[];
}

/**
 * One client order: POST with its own Idempotency-Key, retried on the other API when a connection is
 * refused (a stopped API), and after `Retry-After` on a 503 (the slow provider's breaker open: every API
 * refuses new orders for its cool-down), exactly as a careful integrator would, for up to 30 s. Every
 * request uses a fresh connection so a refused connection is never confused with a cut one.
 */
async function placeOrder(urls: string[], key: string, index: number, outcome: Outcome): Promise<void> {
  const body = JSON.stringify({ product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 });
  const deadline = Date.now() + 30_000;
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    let waitMs = 100;
    const url = urls[(index + attempt) % urls.length];
    try {
      const res = await fetch(`${url}/api/v1/vend`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": "application/json",
          "idempotency-key": `drill-order-${index}`,
          connection: "close",
        },
        body,
      });
      await res.text();
      if (res.status === 202) {
        outcome.answered += 1;
        return;
      }
      if (res.status !== 503 && res.status !== 409) throw new Error(`order ${index}: ${res.status}`);
      if (res.status === 503) waitMs = Math.min(5, Number(res.headers.get("retry-after") ?? 0) || 0.1) * 1000;
    } catch (error) {
      const code = (error as { code?: string }).code ?? String(error);
      if (code !== "ConnectionRefused" && code !== "ECONNREFUSED") outcome.cut.push(`order ${index}: ${code}`);
    }
    await Bun.sleep(waitMs);
  }
  throw new Error(`order ${index} was never accepted within 30 s`);
}

describe.skipIf(!postgres)("drill: 2 APIs + 2 workers, a provider slower than the lease, SIGKILL and SIGTERM under load", () => {
  test("every order reaches the provider at most once, every in-flight request is answered, wallets reconcile", async () => {
    // One order in four answers after 9 s: slower than the 8 s lease and far past the 1 s provider timeout.
    provider = startFakeVtuServer({
      delayMs: (order) => (order.request_id.charCodeAt(order.request_id.length - 1) % 4 === 0 ? 9_000 : 150),
    });
    database = await createTestDatabase({ maxConnections: 2 });
    const url = database.url ?? "";
    const env = await serviceEnv(provider.url);
    const apis = [spawnService(url, "api", env), spawnService(url, "api", env)];
    const workers = [spawnService(url, "worker", env), spawnService(url, "worker", env)];
    processes.push(...apis, ...workers);
    const urls = await Promise.all(apis.map(apiUrl));
    await Promise.all(workers.map((w) => w.waitFor(/worker running/)));

    const admin = { authorization: `Bearer ${testAdminToken}`, "content-type": "application/json" };
    const created = await fetch(`${urls[0]}/admin/v1/accounts`, { method: "POST", headers: admin, body: '{"name":"drill"}' });
    const account = ((await created.json()) as { data: { account: { id: string }; keys: { mode: string; key: string }[] } }).data;
    const liveKey = account.keys.find((k) => k.mode === "live")?.key ?? "";
    const credit = await fetch(`${urls[0]}/admin/v1/accounts/${account.account.id}/wallet/credit`, {
      method: "POST",
      headers: { ...admin, "idempotency-key": "drill-credit" },
      body: JSON.stringify({ mode: "live", amount_kobo: 100_000_000, note: "drill float" }),
    });
    expect(credit.status).toBe(200);

    const outcome: Outcome = { answered: 0, cut: [] };
    let next = 0;
    const load = Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < orders) await placeOrder(urls, liveKey, next++, outcome);
      }),
    );
    while (outcome.answered < orders / 3) await Bun.sleep(20);
    // Mid-load: a worker dies without warning, an API is asked to stop while requests are in flight.
    const [doomedWorker, doomedApi] = [workers[0], apis[1]];
    await doomedWorker?.stop("SIGKILL");
    const apiExit = doomedApi?.stop("SIGTERM");
    await load;
    expect(await apiExit).toBe(0);
    expect(outcome.cut).toEqual([]);
    expect(outcome.answered).toBe(orders);

    // The surviving worker finishes everything, the killed worker's leases included once they lapse.
    const deadline = Date.now() + 90_000;
    let books = await summarise(database.handle);
    while (books.final < orders && Date.now() < deadline) {
      await Bun.sleep(250);
      books = await summarise(database.handle);
    }
    expect(books).toMatchObject({ transactions: orders, final: orders, notFinal: 0, captures: orders, releases: 0, heldKobo: 0 });
    expect(books.maxSettlementsPerTransaction).toBe(1);
    expect(books.maxEventsPerTransaction).toBe(1);
    // The provider's own log: every order received, none accepted twice.
    const accepted = new Map<string, number>();
    for (const pay of provider.pays.filter((p) => p.accepted))
      accepted.set(pay.requestId, (accepted.get(pay.requestId) ?? 0) + 1);
    expect(accepted.size).toBe(orders);
    expect(Math.max(...accepted.values())).toBe(1);
    expect([...provider.book.transactions.values()].every((t) => t.status === "delivered")).toBe(true);
    expect(await reconcileWallets(database.handle.db)).toEqual([]);
  }, 180_000);
});
