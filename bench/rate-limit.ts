/**
 * What the shared rate limit costs per request (issue 14, item 7). Run by hand against PostgreSQL:
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/rate-limit.ts
 * Spawns the real API (no worker) three times, each on its own database: the limit off
 * (RATE_LIMIT_PER_MINUTE=0), on with blocks claimed from the database (the default), and on with one
 * claim per request (RATE_LIMIT_MAX_BLOCK=1, what a plain upsert per request would cost). The limit is
 * high enough never to refuse. Rounds alternate between them, each driving a cheap authenticated GET
 * (`/api/v1/catalogue/networks`) with BENCH_CONCURRENCY connections (default 32) over BENCH_KEYS keys
 * (default 4); prints min/median/max requests/s and the ratios against the limit off.
 * BENCH_ROUNDS (default 5), BENCH_SECONDS per round (default 5).
 */
import { benchAdminToken } from "./lib/accounts.ts";
import { envNumber, requirePostgres, runBench } from "./lib/cleanup.ts";
import { serviceDatabase } from "./lib/databases.ts";
import { type LoadResult, loops } from "./lib/load.ts";
import { apiUrl, startService } from "./lib/processes.ts";
import { printFigure, printRatio } from "./lib/stats.ts";

const rounds = envNumber("BENCH_ROUNDS", 5);
const seconds = envNumber("BENCH_SECONDS", 5);
const concurrency = envNumber("BENCH_CONCURRENCY", 32);
const keyCount = envNumber("BENCH_KEYS", 4);

interface Side {
  label: string;
  base: string;
  keys: string[];
  rates: number[];
}

async function createKeys(base: string, count: number): Promise<string[]> {
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await fetch(`${base}/admin/v1/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${benchAdminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: `bench-${i}` }),
    });
    const body = (await res.json()) as { data: { keys: { mode: string; key: string }[] } };
    const key = body.data.keys.find((k) => k.mode === "test")?.key;
    if (res.status !== 201 || !key) throw new Error(`account ${i}: ${res.status}`);
    keys.push(key);
  }
  return keys;
}

async function startSide(server: string, label: string, env: Record<string, string>): Promise<Side> {
  const database = await serviceDatabase(server);
  const api = startService(database, "api", { ADMIN_TOKEN: benchAdminToken, DATABASE_POOL_SIZE: "20", ...env });
  const base = await apiUrl(api);
  return { label, base, keys: await createKeys(base, keyCount), rates: [] };
}

function drive(side: Side, forSeconds: number): Promise<LoadResult> {
  const deadline = performance.now() + forSeconds * 1000;
  const url = `${side.base}/api/v1/catalogue/networks`;
  const headers = side.keys.map((key) => ({ authorization: `Bearer ${key}` }));
  return loops(
    concurrency,
    () => performance.now() < deadline,
    async (n) => {
      const res = await fetch(url, { headers: headers[n % headers.length] });
      await res.arrayBuffer();
      return res.status === 200 ? undefined : `${res.status}`;
    },
  );
}

await runBench(async () => {
  const server = requirePostgres();
  const limit = "1000000";
  const sides = [
    await startSide(server, "limit off", { RATE_LIMIT_PER_MINUTE: "0" }),
    await startSide(server, "limit on, blocks", { RATE_LIMIT_PER_MINUTE: limit }),
    await startSide(server, "limit on, a claim per request", { RATE_LIMIT_PER_MINUTE: limit, RATE_LIMIT_MAX_BLOCK: "1" }),
  ];
  for (const side of sides) await drive(side, 1);
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) {
      const result = await drive(side, seconds);
      if (result.failed > 0) throw new Error(`${side.label}: ${result.failed} failed (${result.failures.join("; ")})`);
      side.rates.push(result.perSecond);
    }
  }
  console.log(`\nGET /api/v1/catalogue/networks, ${concurrency} connections, ${keyCount} keys, ${rounds} × ${seconds} s`);
  for (const side of sides) printFigure(side.label, side.rates, "req/s");
  const [off, blocks, perRequest] = sides as [Side, Side, Side];
  printRatio("blocks / off", blocks.rates, off.rates, "≥ 0.95");
  printRatio("a claim per request / off", perRequest.rates, off.rates, "(for comparison)");
});
