/**
 * `wait` wake-up latency (issue 4, bench b). Run by hand:
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/wait-latency.ts
 * (without DATABASE_URL it runs in one process on PGlite). For each sample a long-poll
 * GET /api/v1/transactions/{reference}?wait=10 is waiting on a non-final transaction; the bench
 * then completes it (the service's own completion statement) and measures from the moment that
 * commit returns to the moment the long-poll's answer arrives. Baseline: a bare HTTP round trip
 * (GET /healthz) to the same server in the same run. Prints p50/p95 and the ratio (target ≤ 3×).
 * Its database and the template it was cloned from are dropped at the end, also on an error or Ctrl-C.
 */
import { eq } from "drizzle-orm";
import { transactions } from "../src/db/schema/index.ts";
import { completeTransaction } from "../src/orders/completion.ts";
import { idem } from "../test/helpers/accounts.ts";
import { dropTestTemplate } from "../test/helpers/database.ts";
import { startTestServer } from "../test/helpers/server.ts";
import { onCleanup, runBench } from "./lib/cleanup.ts";

const samples = Number(process.env.BENCH_SAMPLES ?? 200);
const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? 0;

await runBench(async () => {
  // Registered first, so it runs last: the template the test database was cloned from.
  onCleanup("drop the template database", dropTestTemplate);
  const server = await startTestServer({ maxWaitSeconds: 15, logLevel: "silent" });
  onCleanup("stop the server, drop its database", () => server.close());
  const { testKey } = await server.createAccount("bench");
  const headers = { authorization: `Bearer ${testKey}` };
  await server.client(testKey).post("/api/v1/wallet/fund", { amount_kobo: 1_000_000_000 }, idem());
  const db = server.database.handle.db;

  const roundTrips: number[] = [];
  for (let i = 0; i < samples + 20; i++) {
    const started = performance.now();
    await (await fetch(`${server.url}/healthz`)).arrayBuffer();
    if (i >= 20) roundTrips.push(performance.now() - started);
  }

  const wakeUps: number[] = [];
  for (let i = 0; i < samples; i++) {
    // No worker runs here: the vend stays queued until the bench moves it on.
    const accepted = await server
      .client(testKey)
      .post("/api/v1/vend", { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 5000 }, idem());
    const reference: string = accepted.json.data.reference;
    const [row] = await db
      .update(transactions)
      .set({ status: "processing" })
      .where(eq(transactions.reference, reference))
      .returning();
    if (!row) throw new Error("no row");
    const answered = fetch(`${server.url}/api/v1/transactions/${reference}?wait=10`, { headers }).then(async (res) => {
      await res.arrayBuffer();
      return performance.now();
    });
    await Bun.sleep(5); // let the long-poll register before the state changes
    await completeTransaction(db, row.id, { status: "successful" }, row);
    const committed = performance.now();
    wakeUps.push((await answered) - committed);
  }

  const rt = percentile(roundTrips, 0.5);
  const wake = percentile(wakeUps, 0.5);
  console.log(`engine ${server.database.handle.kind}; ${samples} samples each`);
  console.log(`bare HTTP round trip (GET /healthz):  p50 ${rt.toFixed(2)} ms  p95 ${percentile(roundTrips, 0.95).toFixed(2)} ms`);
  console.log(`wait wake-up (commit → answer):       p50 ${wake.toFixed(2)} ms  p95 ${percentile(wakeUps, 0.95).toFixed(2)} ms`);
  console.log(`\nratio wake-up / round trip (p50): ${(wake / rt).toFixed(2)}  (target ≤ 3)`);
});
