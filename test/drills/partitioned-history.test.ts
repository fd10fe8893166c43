import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { danglingReferences } from "../../src/db/partition-references.ts";
import { monthStart, partitionName } from "../../src/db/partitions.ts";
import { queryRows } from "../../src/db/rows.ts";
import type { Executor } from "../../src/db/transaction.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { apiUrl, fundDefaultAccount, summarise, vendMany } from "../helpers/cluster.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { childEnv, processTestMs, type StartedProcess, spawnProcess } from "../helpers/process.ts";
import { waitUntil } from "../helpers/wait.ts";

// Converting the history to monthly partitions is a PostgreSQL operator step (`vend partition`).
const postgres = Boolean(process.env.DATABASE_URL);
const processes: StartedProcess[] = [];
let database: TestDatabase | undefined;
let receiver: ReturnType<typeof Bun.serve> | undefined;

afterAll(async () => {
  await Promise.all(processes.splice(0).map((p) => p.stop("SIGKILL")));
  await receiver?.stop(true);
  await database?.drop();
});

const tables = ["transactions", "ledger_entries", "events"] as const;
const env = { WORKER_POLL_MS: "50" };
const logs = () => processes.map((p) => p.output().slice(-2000)).join("\n");

/** Each table's rows and a digest of their whole contents: equal before and after means nothing was lost or changed. */
async function contents(db: Executor): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const table of tables) {
    const [row] = await queryRows<{ n: number; digest: string }>(
      db,
      sql.raw(
        `select count(*)::int as n, md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as digest from ${table} t`,
      ),
    );
    out[table] = `${row?.n}:${row?.digest}`;
  }
  return out;
}

/** Rows not in the partition of their own month (none once partitioned; every row while unpartitioned). */
async function misplacedRows(db: Executor): Promise<number> {
  let misplaced = 0;
  for (const table of tables) {
    const [row] = await queryRows<{ n: number }>(
      db,
      sql.raw(`select count(*)::int as n from ${table} t
        where t.tableoid::regclass::text <> '${table}_y' || to_char(t.created_at at time zone 'UTC', 'YYYY"m"MM')`),
    );
    misplaced += Number(row?.n ?? 0);
  }
  return misplaced;
}

const partitionCli = (url: string) =>
  spawnProcess([process.execPath, join(import.meta.dir, "../../src/main.ts"), "partition"], childEnv({ DATABASE_URL: url }));

/** `npm start` (API and worker in one process, so the sandbox's callbacks reach its API). */
async function startService(url: string): Promise<{ base: string; key?: string }> {
  const api = spawnProcess(
    [process.execPath, join(import.meta.dir, "../../src/main.ts")],
    childEnv({ DATABASE_URL: url, PORT: "0", RATE_LIMIT_PER_MINUTE: "0", WEBHOOK_ALLOW_PRIVATE_URLS: "true", ...env }),
  );
  processes.push(api);
  const base = await apiUrl(api);
  const keyLine = /Test API key \(shown once, store it now\): (rg_test_\w+)/;
  return { base, key: keyLine.test(api.output()) ? api.output().match(keyLine)?.[1] : undefined };
}

const get = async (url: string, key: string) => {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as { data: unknown } };
};

describe.skipIf(!postgres)("history partitioned by month (vend partition)", () => {
  test(
    "rows across 4 months are all kept, each in its month's partition; the service vends, lists, finds and delivers on it; the runner makes next months",
    async () => {
      database = await createTestDatabase({ maxConnections: 2 });
      const url = database.url ?? "";
      const db = database.handle.db;
      const delivered = new Set<string>();
      receiver = Bun.serve({
        port: 0,
        hostname: "127.0.0.1",
        fetch: async (req) => {
          delivered.add(((await req.json()) as { id: string }).id);
          return new Response("ok");
        },
      });

      // History: orders made through the service, then moved back 0 to 3 months with their ledger entries and events.
      const first = await startService(url);
      const key = first.key ?? "";
      expect(key).not.toBe("");
      const endpoint = await fetch(`${first.base}/api/v1/webhook-endpoints`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ url: `http://127.0.0.1:${receiver.port}/hooks` }),
      });
      expect(endpoint.status).toBe(201);
      await fundDefaultAccount(first.base, key, 100_000_000);
      const old = await vendMany([first.base], key, 24, 8);
      const finalCount = async () => {
        const [row] = await queryRows<{ n: number }>(
          db,
          sql`select count(*)::int as n from transactions where status in ('successful', 'failed')`,
        );
        return Number(row?.n ?? 0);
      };
      await waitUntil(async () => (await finalCount()) === 24, {
        what: "24 orders final",
        timeoutMs: 60_000,
        intervalMs: 100,
        detail: logs,
      });
      await Promise.all(processes.splice(0).map((p) => p.stop("SIGTERM")));
      await queryRows(
        db,
        sql`with moved as (
              update transactions set created_at = created_at - make_interval(months => abs(hashtext(id::text)) % 4)
              returning id, abs(hashtext(id::text)) % 4 as back
            ), entries as (
              update ledger_entries l set created_at = l.created_at - make_interval(months => m.back) from moved m where l.transaction_id = m.id
            )
            update events e set created_at = e.created_at - make_interval(months => m.back) from moved m where e.transaction_id = m.id`,
      );
      const [spread] = await queryRows<{ months: number }>(
        db,
        sql`select count(distinct date_trunc('month', created_at))::int as months from transactions`,
      );
      expect(spread?.months).toBeGreaterThanOrEqual(3);
      const before = await contents(db);
      expect(await misplacedRows(db)).toBeGreaterThan(0);

      const started = performance.now();
      const run = partitionCli(url);
      await run.proc.exited;
      const took = performance.now() - started;
      expect(run.proc.exitCode).toBe(0);
      expect(run.output()).toContain("transactions: partitioned by month (24 rows in");
      const again = partitionCli(url);
      await again.proc.exited;
      expect(again.output()).toContain("transactions: already partitioned");
      expect(again.output()).toContain("events: already partitioned");
      console.log(`vend partition took ${Math.round(took)} ms`);

      const [kinds] = await queryRows<{ partitioned: number }>(
        db,
        sql`select count(*)::int as partitioned from pg_partitioned_table p join pg_class c on c.oid = p.partrelid
            where c.relname in ('transactions', 'ledger_entries', 'events')`,
      );
      expect(kinds?.partitioned).toBe(3);
      expect(await contents(db)).toEqual(before);
      expect(await misplacedRows(db)).toBe(0);

      // The farthest partitions made ahead are gone; the runner makes them again when it starts.
      const farthest = monthStart(new Date(), 3);
      for (const table of tables) await queryRows(db, sql.raw(`drop table ${partitionName(table, farthest)}`));
      const partitionsAhead = async () => {
        const [row] = await queryRows<{ n: number }>(
          db,
          sql`select count(*)::int as n from pg_class where relname in (${sql.join(
            tables.map((table) => sql`${partitionName(table, farthest)}`),
            sql`, `,
          )})`,
        );
        return Number(row?.n ?? 0);
      };
      expect(await partitionsAhead()).toBe(0);

      const second = await startService(url);
      await waitUntil(async () => (await partitionsAhead()) === 3, {
        what: "the runner making the dropped partitions",
        intervalMs: 100,
      });
      // vendMany's keys again would be replays of the first orders: these take keys of their own.
      const fresh: string[] = [];
      for (let i = 0; i < 8; i++) {
        const res = await fetch(`${second.base}/api/v1/vend`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": `partitioned-${i}` },
          body: JSON.stringify({ product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 }),
        });
        expect(res.status).toBe(202);
        fresh.push(((await res.json()) as { data: { reference: string } }).data.reference);
      }
      await waitUntil(async () => (await finalCount()) === 32, {
        what: "32 orders final",
        timeoutMs: 60_000,
        intervalMs: 100,
        detail: logs,
      });

      for (const reference of [old[0], old[23], fresh[0]]) {
        const found = await get(`${second.base}/api/v1/transactions/${reference}`, key);
        expect(found.status).toBe(200);
        expect((found.body.data as { reference: string }).reference).toBe(reference ?? "");
      }
      expect((await get(`${second.base}/api/v1/transactions/txn_nosuchreference000000000`, key)).status).toBe(404);
      const list = await get(`${second.base}/api/v1/transactions?limit=50`, key);
      expect(list.status).toBe(200);
      const listed = (list.body.data as { items: { reference: string }[] }).items.map((t) => t.reference);
      expect(new Set(listed)).toEqual(new Set([...old, ...fresh]));
      const statement = await get(`${second.base}/api/v1/wallet/ledger?limit=100`, key);
      expect(statement.status).toBe(200);
      const [ledger] = await queryRows<{ n: number }>(db, sql`select count(*)::int as n from ledger_entries`);
      expect((statement.body.data as { items: unknown[] }).items.length).toBe(ledger?.n ?? -1);

      // Every event, old and new, reached the endpoint once it was delivered.
      const allEvents = async () => queryRows<{ id: string }>(db, sql`select id from events`);
      await waitUntil(async () => (await allEvents()).every((e) => delivered.has(e.id)), {
        what: "every event delivered",
        timeoutMs: 30_000,
        intervalMs: 100,
      });
      expect((await allEvents()).length).toBe(32);

      // Books: one hold and one settlement per order, every wallet equal to its ledger, every reference resolves.
      const books = await summarise(database.handle);
      expect(books.transactions).toBe(32);
      expect(books.maxSettlementsPerTransaction).toBe(1);
      expect(books.captures + books.releases).toBe(32);
      expect(books.maxEventsPerTransaction).toBe(1);
      expect(books.heldKobo).toBe(0);
      expect(await reconcileWallets(db)).toEqual([]);
      expect(await danglingReferences(db)).toEqual({
        "provider_attempts.transaction_id": 0,
        "provider_anomalies.transaction_id": 0,
        "webhook_deliveries.event_id": 0,
      });
      expect(await misplacedRows(db)).toBe(0);
    },
    processTestMs,
  );
});
