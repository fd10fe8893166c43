import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { processingRunner } from "../../src/background.ts";
import { queryRows } from "../../src/db/rows.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { claimDueTransactions } from "../../src/orders/statements/claim-due.ts";
import { vacuumQueue } from "../../src/orders/statements/vacuum-queue.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing, transactionRow, vendAirtime } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let client: HttpClient;

beforeAll(async () => {
  server = await startTestServer(fastProcessing());
  client = (await fundedAccount(server, 50_000_000)).client;
});
afterAll(() => server.close());

const db = () => server.database.handle.db;
const queueRows = async () => (await queryRows<{ n: number }>(db(), sql`select count(*)::int as n from transaction_queue`))[0]?.n;

describe("the work queue", () => {
  test("holds an order from its acceptance until it is final, then lets it go; a vacuum leaves what is queued", async () => {
    const done = await vendAirtime(client);
    await processingRunner({ ...server.deps, apiBaseUrl: server.url }, "w-vacuum").tick();
    expect((await transactionRow(db(), done)).status).toBe("successful");
    expect(await queueRows()).toBe(0);
    const waiting = await vendAirtime(client);
    expect(await queueRows()).toBe(1);
    // The finished order's dead queue entries go; the waiting order stays, and is still claimed and completed once.
    await vacuumQueue(db());
    expect(await queueRows()).toBe(1);
    await processingRunner({ ...server.deps, apiBaseUrl: server.url }, "w-vacuum").tick();
    expect((await transactionRow(db(), waiting)).status).toBe("successful");
    expect(await queueRows()).toBe(0);
    // Money: each wallet equals its ledger.
    expect(await reconcileWallets(db())).toEqual([]);
  });
});

describe.skipIf(!process.env.DATABASE_URL)("a claim and a statement that holds an order (PostgreSQL: two connections)", () => {
  test("the claim skips an order another transaction holds, so that one may then move its queue row: no deadlock", async () => {
    const reference = await vendAirtime(client);
    const order = await transactionRow(db(), reference);
    const url = server.database.url ?? "";
    const holder = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await holder.begin(async (tx) => {
        // A completion's order: the transaction locked first, its queue row next.
        await tx`select id from transactions where id = ${order.id} for update`;
        const started = performance.now();
        const claimed = await claimDueTransactions(db(), "w-skip", 10, 30);
        // Before: the claim locked the queue row, then waited on the order; the holder's delete then waited on the
        // claim, and PostgreSQL broke the cycle after deadlock_timeout (1 s) by failing one of them.
        expect(claimed.map((c) => c.reference)).not.toContain(reference);
        expect(performance.now() - started).toBeLessThan(900);
        await tx`delete from transaction_queue where transaction_id = ${order.id}`;
        await tx`insert into transaction_queue (transaction_id, created_at, due_at) values (${order.id}, ${order.createdAt}, now())`;
      });
    } finally {
      await holder.end({ timeout: 5 });
    }
    // Released, the order is claimed and completed once; the wallets equal their ledgers.
    await processingRunner({ ...server.deps, apiBaseUrl: server.url }, "w-after").tick();
    expect((await transactionRow(db(), reference)).status).toBe("successful");
    expect(await reconcileWallets(db())).toEqual([]);
  });
});
