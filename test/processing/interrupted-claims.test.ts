import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { queryRows } from "../../src/db/rows.ts";
import { ledgerEntries, sandboxOrders } from "../../src/db/schema/index.ts";
import { withTransaction } from "../../src/db/transaction.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { interruptedClaims, interruptedRetryMs } from "../../src/orders/interrupted-claims.ts";
import { unwatchedLease } from "../../src/orders/leases.ts";
import { processClaimed } from "../../src/orders/processing.ts";
import { claimDueTransactions } from "../../src/orders/statements/claim-due.ts";
import { releaseLeases } from "../../src/orders/statements/release-leases.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing, transactionRow, vendAirtime } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

// The worker's side of a database fault, one statement at a time: a job ended by the fault, or a claim whose
// answer was lost, leaves orders leased (60 s here) to a worker that runs no job for them; the next claim
// once the database answers gives them back, and the re-claim asks the provider before anything else.
let server: TestServer;
let client: HttpClient;
const leaseSeconds = 60;

beforeAll(async () => {
  server = await startTestServer(fastProcessing());
  client = (await fundedAccount(server, 10_000_000, "Fault Co")).client;
});
afterAll(() => server.close());

const db = () => server.database.handle.db;
const row = (reference: string) => transactionRow(db(), reference);
/** What postgres.js throws when the connection under a statement goes away. */
const connectionLost = () => Object.assign(new Error("write CONNECTION_CLOSED 127.0.0.1:5432"), { code: "CONNECTION_CLOSED" });

async function claimOne(workerId: string, reference: string) {
  const claimed = await claimDueTransactions(db(), workerId, 10, leaseSeconds);
  const claim = claimed.find((c) => c.reference === reference);
  if (!claim) throw new Error(`${workerId} did not claim ${reference}`);
  return claim;
}

async function sandboxVends(reference: string): Promise<number> {
  const [order] = await db().select().from(sandboxOrders).where(eq(sandboxOrders.reference, reference));
  return order?.vendCount ?? 0;
}

async function settlements(transactionId: string): Promise<string[]> {
  const entries = await db().select().from(ledgerEntries).where(eq(ledgerEntries.transactionId, transactionId));
  return entries.map((e) => e.kind).sort();
}

async function dueNow(transactionId: string): Promise<boolean | undefined> {
  const [queued] = await queryRows<{ due: boolean }>(
    db(),
    sql`select due_at <= now() as due from transaction_queue where transaction_id = ${transactionId}::uuid`,
  );
  return queued?.due;
}

describe("orders a database fault left leased", () => {
  test("a job whose completion failed is given back at the next claim and finished by a re-query: one send, one capture", async () => {
    const reference = await vendAirtime(client);
    const interrupted = interruptedClaims(server.deps, "w-fault");
    const claim = await claimOne("w-fault", reference);
    interrupted.running(claim);
    // The provider delivers; the completion's connection is gone.
    const ended = await processClaimed(server.deps, claim, unwatchedLease, async () => {
      throw connectionLost();
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(await sandboxVends(reference)).toBe(1);
    expect(interrupted.ended(claim, ended)).toBe(true);
    expect(interrupted.retryInMs()).toBe(interruptedRetryMs);
    expect((await claimDueTransactions(db(), "w-other", 10, leaseSeconds)).map((c) => c.reference)).toEqual([]);

    await interrupted.releaseDue();
    expect(await row(reference)).toMatchObject({ status: "processing", leaseOwner: "w-fault" });
    expect(await dueNow(claim.id)).toBe(true);
    const again = await claimOne("w-fault", reference);
    expect(again.previousStatus).toBe("processing");
    expect(await processClaimed(server.deps, again)).toMatchObject({ changed: true, row: { status: "successful" } });
    expect(await sandboxVends(reference)).toBe(1);
    expect(await settlements(claim.id)).toEqual(["capture", "hold"]);
    expect(await reconcileWallets(db())).toEqual([]);

    // One more look finds nothing left, and the worker goes back to its ordinary pace.
    expect(interrupted.retryInMs()).toBe(interruptedRetryMs);
    await interrupted.releaseDue();
    expect(interrupted.retryInMs()).toBeUndefined();
  });

  test("a running job keeps its lease; the orders of a claim whose answer was lost are given back", async () => {
    const running = await vendAirtime(client);
    const orphaned = await vendAirtime(client);
    const interrupted = interruptedClaims(server.deps, "w-lost");
    const kept = await claimOne("w-lost", running);
    // The claim took both; only the first reached a job (the other's answer "never arrived").
    const lost = await row(orphaned);
    expect(lost).toMatchObject({ status: "processing", leaseOwner: "w-lost" });
    interrupted.running(kept);
    expect(interrupted.failed(connectionLost())).toBe(true);

    await interrupted.releaseDue();
    const other = await claimDueTransactions(db(), "w-other", 10, leaseSeconds);
    expect(other.map((c) => c.reference)).toEqual([orphaned]);
    expect(await row(running)).toMatchObject({ status: "processing", leaseOwner: "w-lost", attempts: kept.attempts });

    for (const claim of [kept, ...other]) expect(await processClaimed(server.deps, claim)).toMatchObject({ changed: true });
    interrupted.ended(kept);
    expect([await sandboxVends(running), await sandboxVends(orphaned)]).toEqual([1, 1]);
    expect(await reconcileWallets(db())).toEqual([]);
  });

  test("a job that failed for another reason (not the database) is left to its lease", async () => {
    const reference = await vendAirtime(client);
    const interrupted = interruptedClaims(server.deps, "w-bug");
    const claim = await claimOne("w-bug", reference);
    interrupted.running(claim);
    expect(interrupted.ended(claim, new Error("a bug"))).toBe(false);
    expect(interrupted.retryInMs()).toBeUndefined();
    await interrupted.releaseDue();
    expect(await dueNow(claim.id)).toBe(false);
    await releaseLeases(db(), "w-bug");
    expect(await processClaimed(server.deps, await claimOne("w-bug", reference))).toMatchObject({ changed: true });
  });

  // Embedded, one connection serves everything: no other transaction can hold a row meanwhile.
  test.skipIf(!process.env.DATABASE_URL)(
    "a row another transaction holds is skipped and counted, and given back by a later release",
    async () => {
      const reference = await vendAirtime(client);
      const claim = await claimOne("w-locked", reference);
      const first = await withTransaction(db(), async (tx) => {
        await tx.execute(sql`select id from transactions where id = ${claim.id}::uuid for update`);
        return releaseLeases(db(), "w-locked");
      });
      expect(first).toEqual({ released: 0, skipped: 1 });
      expect(await releaseLeases(db(), "w-locked")).toEqual({ released: 1, skipped: 0 });
      expect(await processClaimed(server.deps, await claimOne("w-other", reference))).toMatchObject({ changed: true });
      expect(await sandboxVends(reference)).toBe(1);
    },
  );
});
