import { afterEach, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { queryRows } from "../../src/db/rows.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { apiUrl, spawnService, vtuFileEnv, vtuProviderEntry, writeProvidersFile } from "../helpers/cluster.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startFakeVtuServer } from "../helpers/fake-vtu-server.ts";
import { processTestMs, type StartedProcess } from "../helpers/process.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";
import { waitUntil } from "../helpers/wait.ts";

// A worker process reaches PostgreSQL through a proxy the test cuts for 10 s while it holds orders whose pays
// the provider (a real HTTP server) has received; the API process and the test reach the database directly.
// The lease stays at its default (60 s), so only the worker noticing the fault can finish them promptly.
const postgres = Boolean(process.env.DATABASE_URL);
const adminToken = "recovery-admin-token-0123456789abcdef";
const outageMs = 10_000;
const processes: StartedProcess[] = [];
const cleanups: (() => unknown)[] = [];
let database: TestDatabase | undefined;

afterEach(async () => {
  await Promise.all(processes.splice(0).map((p) => p.stop("SIGKILL")));
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await database?.drop();
  database = undefined;
});

async function call(url: string, path: string, token: string, body: unknown, key: string) {
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as { data: Record<string, unknown> } };
}

/** A live account with a float; its live key. */
async function liveAccount(url: string): Promise<string> {
  const account = await call(url, "/admin/v1/accounts", adminToken, { name: "Recovery Co" }, "account");
  const data = account.json.data as { account: { id: string }; keys: { mode: string; key: string }[] };
  const credit = { mode: "live", amount_kobo: 100_000_000, note: "float" };
  const credited = await call(url, `/admin/v1/accounts/${data.account.id}/wallet/credit`, adminToken, credit, "float");
  if (credited.status !== 200) throw new Error(`credit: ${credited.status} ${JSON.stringify(credited.json)}`);
  return data.keys.find((k) => k.mode === "live")?.key ?? "";
}

async function vend(url: string, key: string, name: string): Promise<string> {
  const body = { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 };
  const answer = await call(url, "/api/v1/vend", key, body, name);
  if (answer.status !== 202) throw new Error(`vend ${name}: ${answer.status} ${JSON.stringify(answer.json)}`);
  return String(answer.json.data.reference);
}

interface Fault {
  name: string;
  cut(proxy: TcpProxy): void;
}

const faults: Fault[] = [
  // A partition: sockets stay open, nothing passes either way; the worker finds out through its own timeouts.
  { name: "the network to the database goes silent", cut: (proxy) => proxy.blackhole() },
  // A pooler restarting (or a primary failing over): every connection drops at once, new ones get no answer.
  {
    name: "every connection drops and new ones get no answer",
    cut: (proxy) => {
      proxy.disconnectAll();
      proxy.blackhole();
    },
  },
];

describe.skipIf(!postgres)("orders in flight when the worker's database stops answering for 10 s", () => {
  for (const fault of faults) {
    test(
      `${fault.name}: each is final within 5 s of recovery (lease 60 s), sent to the provider once, books balanced`,
      async () => {
        // Each pay takes 600 ms (within the provider's 1 s timeout): the answers arrive after the cut.
        const vtu = startFakeVtuServer({ delayMs: () => 600 });
        cleanups.push(vtu.stop);
        const file = await writeProvidersFile(
          `providers:\n${vtuProviderEntry(vtu.url)}routes:\n  - service: airtime\n    providers: [vtu]\n`,
        );
        cleanups.push(file.remove);
        const env = { PROVIDERS_FILE: file.path, ...vtuFileEnv, ADMIN_TOKEN: adminToken };
        database = await createTestDatabase({ maxConnections: 4 });
        const dbUrl = database.url ?? "";
        const upstream = new URL(dbUrl);
        const proxy = await startTcpProxy({ host: upstream.hostname, port: Number(upstream.port || 5432) });
        cleanups.push(() => proxy.close());
        const api = spawnService(dbUrl, "api", env);
        processes.push(api);
        const url = await apiUrl(api);
        // WORKER_LEASE_SECONDS and WORKER_POLL_MS at their defaults (60 s, 5 s).
        const worker = spawnService(proxy.url(dbUrl), "worker", { ...env, WORKER_CONCURRENCY: "16", DATABASE_POOL_SIZE: "4" });
        processes.push(worker);
        const key = await liveAccount(url);
        await worker.waitFor(/worker running/i);

        // 12 orders reach the provider; the database goes away while their answers are on their way.
        const sentBefore = await Promise.all(Array.from({ length: 12 }, (_, i) => vend(url, key, `before-${i}`)));
        await waitUntil(() => vtu.pays.length >= sentBefore.length, {
          what: "every pay at the provider",
          detail: () => worker.output(),
        });
        fault.cut(proxy);
        // 4 more accepted by the API during the outage: the worker cannot claim them until it is over.
        const acceptedDuring = await Promise.all(Array.from({ length: 4 }, (_, i) => vend(url, key, `during-${i}`)));
        const references = [...sentBefore, ...acceptedDuring];
        const db = database.handle.db;
        const [midway] = await queryRows<{ open: number }>(
          db,
          sql`select count(*)::int as open from transactions where status not in ('successful', 'failed')`,
        );
        // Time passing is the behaviour under test: the outage lasts this long.
        await Bun.sleep(outageMs);
        proxy.heal();
        const healedAt = performance.now();

        const finalAfterMs = new Map<string, number>();
        await waitUntil(
          async () => {
            const rows = await queryRows<{ reference: string }>(
              db,
              sql`select reference from transactions where status in ('successful', 'failed')`,
            );
            for (const row of rows)
              if (!finalAfterMs.has(row.reference)) finalAfterMs.set(row.reference, performance.now() - healedAt);
            return finalAfterMs.size >= references.length;
          },
          // Long enough to see the lease run out when nothing else finishes them, so the timings print either way.
          { what: "every order final", timeoutMs: 90_000, intervalMs: 50, detail: () => worker.output() },
        );
        const timing = (reference: string) => Math.round(finalAfterMs.get(reference) ?? Number.NaN);
        console.log(
          `prompt recovery (${fault.name}): ${midway?.open} open at the cut; ms from recovery to final:\n` +
            `  sent before the cut:    ${sentBefore.map(timing).join(" ")}\n` +
            `  accepted during outage: ${acceptedDuring.map(timing).join(" ")}`,
        );
        expect(midway?.open).toBe(references.length);
        expect(Math.max(...references.map(timing))).toBeLessThan(5000);

        // Money moved once: one pay per order at the provider, each delivered and captured once.
        const paysPerOrder = new Map<string, number>();
        for (const pay of vtu.pays) paysPerOrder.set(pay.requestId, (paysPerOrder.get(pay.requestId) ?? 0) + 1);
        expect([...paysPerOrder.keys()].sort()).toEqual([...references].sort());
        expect(Math.max(...paysPerOrder.values())).toBe(1);
        const [books] = await queryRows<Record<string, number>>(
          db,
          sql`select (select count(*)::int from transactions where status = 'successful') as successful,
                     (select count(*)::int from ledger_entries where kind = 'capture') as captures,
                     (select count(*)::int from ledger_entries where kind = 'release') as releases,
                     (select coalesce(max(provider_sends), 0)::int from transactions) as max_sends,
                     (select coalesce(sum(held_kobo), 0)::int from wallets) as held`,
        );
        expect(books).toEqual({ successful: 16, captures: 16, releases: 0, max_sends: 1, held: 0 });
        expect(await reconcileWallets(db)).toEqual([]);
        expect(worker.proc.exitCode).toBeNull();
      },
      processTestMs,
    );
  }
});
