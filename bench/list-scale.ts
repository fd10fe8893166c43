/**
 * Listing at scale (issue 11): the first page (default size) of every filter and search of
 * GET /api/v1/transactions and GET /admin/v1/transactions over 1,000,000 transactions, 500,000 of them in
 * the listed account and mode, through the real server in its own process. Each case's median is divided
 * by the unfiltered first page's, measured in the same interleaved rounds. Target: every ratio ≤ 2.
 * A search of 4 digits is the last four, read newest first from their own index; a substring of 5 digits or more
 * reads every row whose destination holds it (fewer than 0.01% of the table) before it can tell the newest.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/list-scale.ts
 *
 * BENCH_ROWS (default 1,000,000) and BENCH_ROUNDS (default 40) scale it down for a quick look. Creates its
 * own database (and the migrated template it is cloned from) and drops both, on error or Ctrl-C too.
 */
import { join } from "node:path";
import postgres from "postgres";
import { insertBulkTransactionsUnindexed } from "../test/helpers/bulk-transactions.ts";
import { createTestDatabase, dropAllTestDatabases, type TestDatabase } from "../test/helpers/database.ts";
import { childEnv, type StartedProcess, spawnProcess } from "../test/helpers/process.ts";

const totalRows = Number(process.env.BENCH_ROWS ?? 1_000_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 40);
const warmupRounds = 3;
const otherAccounts = 200;
const adminToken = "bench-admin-token-0123456789abcdef";

if (!process.env.DATABASE_URL) {
  console.error("Set DATABASE_URL to a PostgreSQL server (the bench creates and drops its own database).");
  process.exit(2);
}

interface Case {
  name: string;
  path: string;
  query: Record<string, string>;
  admin?: boolean;
}

async function seed(url: string, accountId: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql`insert into accounts (name) select 'other ' || n from generate_series(1, ${otherAccounts}) n`;
    await insertBulkTransactionsUnindexed(sql, accountId, totalRows);
    await sql.unsafe("vacuum analyze transactions");
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Values picked from the data, so each case finds rows (a search that finds nothing would be cheap). */
async function pickCases(url: string, accountId: string): Promise<Case[]> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ reference: string; client_reference: string; destination: string; created_at: Date }[]>`
      select reference, client_reference, destination, created_at from transactions
      where account_id = ${accountId} and mode = 'test' and service = 'airtime' and client_reference is not null
      order by created_at desc offset ${Math.floor(totalRows / 200)} limit 1`;
    if (!row) throw new Error("no row to search for");
    const phone = row.destination;
    const day = 86_400_000;
    const from = new Date(row.created_at.getTime() - day).toISOString();
    const to = row.created_at.toISOString();
    const api = "/api/v1/transactions";
    const admin = "/admin/v1/transactions";
    return [
      { name: "unfiltered (anchor)", path: api, query: {} },
      { name: "destination= (phone, 234… form)", path: api, query: { destination: `234${phone.slice(1)}` } },
      { name: "search= reference", path: api, query: { search: row.reference } },
      { name: "search= client reference (whole)", path: api, query: { search: row.client_reference } },
      { name: "search= client reference prefix", path: api, query: { search: row.client_reference.slice(0, 10) } },
      { name: "search= destination substring (5 digits)", path: api, query: { search: phone.slice(5, 10) } },
      { name: "search= destination substring (6 digits)", path: api, query: { search: phone.slice(5, 11) } },
      { name: "search= last 4 digits", path: api, query: { search: phone.slice(-4) } },
      { name: "search= phone (+234… form)", path: api, query: { search: `+234${phone.slice(1)}` } },
      { name: "status=failed (12%)", path: api, query: { status: "failed" } },
      { name: "status=processing (1%)", path: api, query: { status: "processing" } },
      { name: "network=glo", path: api, query: { network: "glo" } },
      { name: "service=cable (5%)", path: api, query: { service: "cable" } },
      { name: "from/to (one day)", path: api, query: { from, to } },
      { name: "status=pending + service=data", path: api, query: { status: "pending", service: "data" } },
      { name: "admin: unfiltered", path: admin, query: {}, admin: true },
      { name: "admin: search= reference", path: admin, query: { search: row.reference }, admin: true },
      {
        name: "admin: search= destination substring (5 digits)",
        path: admin,
        query: { search: phone.slice(5, 10) },
        admin: true,
      },
      { name: "admin: search= last 4 digits", path: admin, query: { search: phone.slice(-4) }, admin: true },
      { name: "admin: search= client reference", path: admin, query: { search: row.client_reference }, admin: true },
      { name: "admin: destination=", path: admin, query: { destination: phone }, admin: true },
      { name: "admin: status=processing", path: admin, query: { status: "processing" }, admin: true },
      { name: "admin: account_id + search= phone", path: admin, query: { account_id: accountId, search: phone }, admin: true },
    ];
  } finally {
    await sql.end({ timeout: 5 });
  }
}

async function timeOnce(base: string, key: string, item: Case): Promise<number> {
  const url = `${base}${item.path}?${new URLSearchParams(item.query)}`;
  const started = performance.now();
  const response = await fetch(url, { headers: { authorization: `Bearer ${item.admin ? adminToken : key}` } });
  const body = (await response.json()) as { data: { items: unknown[] } };
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`${item.name}: ${response.status} ${JSON.stringify(body)}`);
  if (body.data.items.length === 0) throw new Error(`${item.name}: found nothing`);
  return ms;
}

const median = (sorted: number[]) => sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;

async function run(database: TestDatabase): Promise<void> {
  const url = database.url ?? "";
  let server: StartedProcess | undefined;
  try {
    server = spawnProcess(
      [process.execPath, join(import.meta.dir, "../src/main.ts"), "serve"],
      childEnv({ DATABASE_URL: url, PORT: "0", ADMIN_TOKEN: adminToken, RATE_LIMIT_PER_MINUTE: "0", LOG_LEVEL: "error" }),
    );
    const [, base = ""] = await server.waitFor(/listening on (http:\/\/[^\s]+)/);
    const created = await fetch(`${base}/admin/v1/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "listed" }),
    }).then((r) => r.json());
    const key: string = created.data.keys.find((k: { mode: string }) => k.mode === "test").key;
    const accountId: string = created.data.account.id;

    const loadStarted = performance.now();
    await seed(url, accountId);
    console.log(
      `loaded ${totalRows} transactions (half in the listed account and mode) in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`,
    );

    const cases = await pickCases(url, accountId);
    const samples = new Map<string, number[]>(cases.map((c) => [c.name, []]));
    for (let round = 0; round < warmupRounds + rounds; round++) {
      for (const item of cases) {
        const ms = await timeOnce(base, key, item);
        if (round >= warmupRounds) samples.get(item.name)?.push(ms);
      }
    }
    const anchor = median([...(samples.get(cases[0]?.name ?? "") ?? [])].sort((x, y) => x - y));
    console.log(`\nfirst page (limit 25), ${rounds} interleaved rounds; ms min / median / max, ratio of medians to the anchor`);
    for (const item of cases) {
      const sorted = [...(samples.get(item.name) ?? [])].sort((x, y) => x - y);
      const figures = [sorted[0], median(sorted), sorted.at(-1)].map((ms) => (ms ?? Number.NaN).toFixed(2).padStart(7));
      const ratio = median(sorted) / anchor;
      console.log(`${item.name.padEnd(42)} ${figures.join(" /")}   ${ratio.toFixed(2)}×${ratio > 2 ? "  (over 2×)" : ""}`);
    }
  } finally {
    await server?.stop();
  }
}

const database = await createTestDatabase({ maxConnections: 1 });
let cleaned: Promise<void> | undefined;
const cleanUp = () => {
  cleaned ??= database
    .drop()
    .then(dropAllTestDatabases)
    .catch((error) => console.error("could not drop the bench databases:", error));
  return cleaned;
};
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void cleanUp().then(() => process.exit(130));
  });
}
try {
  await run(database);
} finally {
  await cleanUp();
}
