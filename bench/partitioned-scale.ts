/**
 * Partitioned history at scale (issue 25): the latency of accepting a vend (POST /api/v1/vend), of the first page
 * of GET /api/v1/transactions and of GET /api/v1/transactions/{reference}, through the real service, over
 * BENCH_ROWS seeded transactions (3 s apart, half in the listed account and mode; 1,000,000 by default), on
 * transactions partitioned by month (BENCH_PARTITIONED=1, the default; as `vend partition` leaves them)
 * or not (0). One request at a time; prints min / median / max per operation and the seeding time.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres BENCH_ROWS=10000000 bun bench/partitioned-scale.ts
 *
 * BENCH_REQUESTS (default 200) per operation, after 20 of warm-up. Creates and drops its own database.
 */
import postgres from "postgres";
import { createPartition, monthStart, partitionHistory } from "../src/db/partitions.ts";
import { insertBulkTransactionsUnindexed } from "../test/helpers/bulk-transactions.ts";
import { benchAdminToken, fundTestWallet, vendBody } from "./lib/accounts.ts";
import { envNumber, requirePostgres, runBench } from "./lib/cleanup.ts";
import { benchClient, serviceDatabase } from "./lib/databases.ts";
import { apiUrl, startService } from "./lib/processes.ts";
import { printFigure } from "./lib/stats.ts";

const rows = envNumber("BENCH_ROWS", 1_000_000);
const partitioned = process.env.BENCH_PARTITIONED !== "0";
const requests = envNumber("BENCH_REQUESTS", 200);
const warmup = 20;

/** Seeds `rows` transactions, indexes dropped during the load and built after it, as the migration defines them. */
async function seed(sql: postgres.Sql, accountId: string): Promise<void> {
  await sql`insert into accounts (name) select 'other ' || n from generate_series(1, 200) n`;
  if (partitioned) {
    await partitionHistory(sql);
    const oldest = new Date(Date.now() - rows * 3000 - 86_400_000);
    for (let month = monthStart(oldest); month < new Date(); month = monthStart(month, 1))
      await sql.unsafe(createPartition("transactions", month));
  }
  await insertBulkTransactionsUnindexed(sql, accountId, rows);
  await sql.unsafe("vacuum analyze transactions");
}

async function timed(run: () => Promise<Response>): Promise<number> {
  const started = performance.now();
  const res = await run();
  await res.text();
  const ms = performance.now() - started;
  if (res.status >= 300) throw new Error(`answered ${res.status}`);
  return ms;
}

await runBench(async () => {
  const url = await serviceDatabase(requirePostgres());
  const sql = benchClient(url);
  const api = startService(url, "api", { ADMIN_TOKEN: benchAdminToken });
  const base = await apiUrl(api);
  const created = (await fetch(`${base}/admin/v1/accounts`, {
    method: "POST",
    headers: { authorization: `Bearer ${benchAdminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "listed" }),
  }).then((r) => r.json())) as { data: { account: { id: string }; keys: { mode: string; key: string }[] } };
  const key = created.data.keys.find((k) => k.mode === "test")?.key ?? "";
  await fundTestWallet(base, key, 10_000_000_000);

  const started = performance.now();
  await seed(sql, created.data.account.id);
  const [shape] = await sql<{ partitions: number }[]>`
    select count(*)::int as partitions from pg_inherits where inhparent = 'transactions'::regclass`;
  console.log(
    `${rows} transactions seeded in ${((performance.now() - started) / 1000).toFixed(0)} s; ` +
      `${partitioned ? `partitioned by month (${shape?.partitions} partitions)` : "unpartitioned"}`,
  );
  const [{ reference = "" } = {}] = await sql<{ reference: string }[]>`
    select reference from transactions where account_id = ${created.data.account.id} and mode = 'test'
    order by created_at limit 1 offset ${Math.floor(rows / 4)}`;

  const auth = { authorization: `Bearer ${key}` };
  let n = 0;
  const operations: [string, () => Promise<Response>][] = [
    [
      "accept (POST /api/v1/vend)",
      () =>
        fetch(`${base}/api/v1/vend`, {
          method: "POST",
          headers: { ...auth, "content-type": "application/json", "idempotency-key": `scale-${n++}` },
          body: vendBody,
        }),
    ],
    ["first list page (GET /api/v1/transactions)", () => fetch(`${base}/api/v1/transactions`, { headers: auth })],
    ["get by reference (an old one)", () => fetch(`${base}/api/v1/transactions/${reference}`, { headers: auth })],
  ];
  const samples = operations.map((): number[] => []);
  for (let i = 0; i < warmup + requests; i++)
    for (const [index, [, run]] of operations.entries()) {
      const ms = await timed(run);
      if (i >= warmup) samples[index]?.push(ms);
    }
  console.log(`\n${requests} requests each, interleaved, one at a time; ms min / median / max`);
  for (const [index, [label]] of operations.entries()) printFigure(label, samples[index] ?? [], "ms", 44);
});
