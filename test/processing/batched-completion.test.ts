import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, asc, eq, inArray } from "drizzle-orm";
import { processingRunner } from "../../src/background.ts";
import { events, ledgerEntries, transactions, wallets } from "../../src/db/schema/index.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { finalChannel, parseFinalAnnouncements } from "../../src/orders/announcements.ts";
import {
  type CompletionRequest,
  completeTransaction,
  completeTransactions,
  completionBatcher,
} from "../../src/orders/completion.ts";
import { type ClaimedTransaction, claimDueTransactions } from "../../src/orders/statements/claim-due.ts";
import type { TransactionRow } from "../../src/orders/view.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { expireLease, fastProcessing, vendAirtime } from "../helpers/processing.ts";
import { captureLogs, startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer(fastProcessing());
});
afterAll(() => server.close());

const db = () => server.database.handle.db;

/** `count` vends on one account's wallet; their references. */
const vendMany = (client: HttpClient, count: number) => Promise.all(Array.from({ length: count }, () => vendAirtime(client)));

/** Claims `references` (and only them) for `worker`, in reference order. */
async function claim(worker: string, references: string[]): Promise<ClaimedTransaction[]> {
  const claimed = await claimDueTransactions(db(), worker, 1000, 30);
  const mine = claimed.filter((c) => references.includes(c.reference));
  expect(mine.length).toBe(references.length);
  return references.map((reference) => mine.find((c) => c.reference === reference) as ClaimedTransaction);
}

const success = (c: ClaimedTransaction): CompletionRequest => ({
  id: c.id,
  outcome: { status: "successful", providerReference: `P-${c.reference}` },
  known: c.row,
  lease: c,
});
const failure = (c: ClaimedTransaction): CompletionRequest => ({
  id: c.id,
  outcome: { status: "failed", reason: "Declined", failureCode: "provider_refused" },
  known: c.row,
  lease: c,
});

async function walletOf(accountId: string) {
  const [wallet] = await db()
    .select()
    .from(wallets)
    .where(and(eq(wallets.accountId, accountId), eq(wallets.mode, "test")));
  if (!wallet) throw new Error("no wallet");
  return wallet;
}

/** The wallet's ledger, replayed from zero one entry after another: each entry's running balances must match. */
async function expectSequentialReplay(walletId: string) {
  const entries = await db()
    .select()
    .from(ledgerEntries)
    .where(eq(ledgerEntries.walletId, walletId))
    .orderBy(asc(ledgerEntries.id));
  let balance = 0;
  let held = 0;
  for (const entry of entries) {
    balance += entry.balanceDeltaKobo;
    held += entry.heldDeltaKobo;
    expect({ id: entry.id, balance: entry.balanceAfterKobo, held: entry.heldAfterKobo }).toEqual({ id: entry.id, balance, held });
  }
  const wallet = await db().select().from(wallets).where(eq(wallets.id, walletId));
  expect(wallet[0]).toMatchObject({ balanceKobo: balance, heldKobo: held });
  return entries;
}

/** Per transaction, how many capture/release entries it has (exactly one each: money moved once). */
async function settlementsOf(ids: string[]): Promise<Map<string, string[]>> {
  const entries = await db()
    .select()
    .from(ledgerEntries)
    .where(inArray(ledgerEntries.transactionId, ids))
    .orderBy(asc(ledgerEntries.id));
  const byTransaction = new Map<string, string[]>(ids.map((id) => [id, []]));
  for (const e of entries) if (e.kind !== "hold" && e.transactionId) byTransaction.get(e.transactionId)?.push(e.kind);
  return byTransaction;
}

const statusOf = async (ids: string[]) =>
  new Map(
    (await db().select().from(transactions).where(inArray(transactions.id, ids))).map((r): [string, TransactionRow] => [r.id, r]),
  );

describe("completing a batch in one statement", () => {
  test("many completions on one wallet: running balances as a sequential replay, the wallet equals its ledger", async () => {
    const account = await fundedAccount(server, 1_000_000, "one-wallet");
    const references = await vendMany(account.client, 40);
    const claims = await claim("w-one", references);
    const requests = claims.map((c, n) => (n % 4 === 3 ? failure(c) : success(c)));
    const results = await completeTransactions(db(), requests);
    expect(results.every((r) => r.changed)).toBe(true);
    expect(results.map((r) => r.row.status)).toEqual(requests.map((r) => r.outcome.status));

    const wallet = await walletOf(account.id);
    const entries = await expectSequentialReplay(wallet.id);
    // One statement: every settlement carries the same transaction time, and they follow the request order.
    const settled = entries.filter((e) => e.kind !== "hold" && e.kind !== "fund");
    expect(new Set(settled.map((e) => e.createdAt.getTime())).size).toBe(1);
    expect(settled.map((e) => e.transactionId)).toEqual(claims.map((c) => c.id));
    // Money moved once: one settlement entry per transaction, captures = successes, and the wallet lost
    // exactly the successes' prices with nothing left held.
    const successes = requests.filter((r) => r.outcome.status === "successful");
    expect(settled.filter((e) => e.kind === "capture").length).toBe(successes.length);
    expect([...(await settlementsOf(claims.map((c) => c.id))).values()].every((kinds) => kinds.length === 1)).toBe(true);
    const charged = successes.reduce((sum, r) => sum + r.known.priceKobo, 0);
    expect(await walletOf(account.id)).toMatchObject({ balanceKobo: 1_000_000 - charged, heldKobo: 0 });
    expect(await reconcileWallets(db())).toEqual([]);
    const emitted = await db()
      .select()
      .from(events)
      .where(
        inArray(
          events.transactionId,
          claims.map((c) => c.id),
        ),
      );
    expect(emitted.length).toBe(claims.length);
    // The batch statement writes a failure's reason with its status, into the row and its event alike.
    const stored = await statusOf(claims.map((c) => c.id));
    const reasonOf = (metadata: Record<string, string> | undefined) => [metadata?.failure_code, metadata?.failure_message];
    for (const [n, c] of claims.entries()) {
      const expected =
        requests[n]?.outcome.status === "failed" ? ["provider_refused", expect.any(String)] : [undefined, undefined];
      const payload = emitted.find((e) => e.transactionId === c.id)?.payload as { data: { metadata: Record<string, string> } };
      expect(reasonOf(stored.get(c.id)?.metadata)).toEqual(expected);
      expect(reasonOf(payload.data.metadata)).toEqual(expected);
    }
  });

  test("a batch mixing successes, failures, one completed by a callback and one whose lease was taken over", async () => {
    const account = await fundedAccount(server, 1_000_000, "mixed");
    const references = await vendMany(account.client, 8);
    const claims = await claim("w-mixed", references);
    const [byCallback, takenOver] = claims as [ClaimedTransaction, ClaimedTransaction];
    // A callback completes the first meanwhile (no lease, as the callback path does).
    expect(
      (
        await completeTransaction(db(), byCallback.id, {
          status: "failed",
          reason: "callback says no",
          failureCode: "not_delivered",
        })
      ).changed,
    ).toBe(true);
    // Another worker takes over the second.
    await expireLease(db(), takenOver.reference);
    const [retaken] = await claimDueTransactions(db(), "w-other", 1, 30);
    expect(retaken?.id).toBe(takenOver.id);

    // The third is asked twice in the same batch: the second asking runs after, alone, and finds it final.
    const requests = [...claims.map((c, n) => (n % 2 === 0 ? success(c) : failure(c))), success(claims[2] as ClaimedTransaction)];
    const results = await completeTransactions(db(), requests);
    expect(results.map((r) => r.changed)).toEqual([...claims.map((_, n) => n >= 2), false]);
    expect(results.at(-1)?.row.status).toBe("successful");
    // Unchanged, exactly as a lone completion answers: the callback's final row, and the other worker's row.
    expect(results[0]?.row).toMatchObject({ status: "failed", failureReason: "callback says no" });
    expect(results[1]?.row).toMatchObject({ status: "processing", leaseOwner: "w-other" });
    const rows = await statusOf(claims.map((c) => c.id));
    expect(rows.get(byCallback.id)?.status).toBe("failed");
    expect(rows.get(takenOver.id)?.status).toBe("processing");

    // Money moved once: counting ledger entries per transaction, the callback's one has its single
    // release, the taken-over one none yet, every other exactly one (capture or release as asked).
    const settlements = await settlementsOf(claims.map((c) => c.id));
    expect(settlements.get(byCallback.id)).toEqual(["release"]);
    expect(settlements.get(takenOver.id)).toEqual([]);
    claims.slice(2).forEach((c, n) => {
      expect(settlements.get(c.id)).toEqual([(n + 2) % 2 === 0 ? "capture" : "release"]);
    });
    // The other worker still completes its claim, once.
    expect((await completeTransactions(db(), [success(retaken as ClaimedTransaction)]))[0]?.changed).toBe(true);
    expect((await settlementsOf([takenOver.id])).get(takenOver.id)).toEqual(["capture"]);
    await expectSequentialReplay((await walletOf(account.id)).id);
    expect(await reconcileWallets(db())).toEqual([]);
  });

  test("the worker's batcher: a batch that fails (a missing hold) is completed one by one, so only the faulty one fails", async () => {
    const good = await fundedAccount(server, 1_000_000, "good");
    const broken = await fundedAccount(server, 1_000_000, "broken");
    const references = [...(await vendMany(good.client, 3)), ...(await vendMany(broken.client, 1))];
    const claims = await claim("w-fallback", references);
    // The broken account's hold has gone missing: capturing it would take held_kobo below zero.
    await db()
      .update(wallets)
      .set({ heldKobo: 0 })
      .where(eq(wallets.id, (await walletOf(broken.id)).id));
    const complete = completionBatcher(db());
    const results = await Promise.all(claims.map((c) => complete(success(c)).catch((error: unknown) => error)));
    expect(results.slice(0, 3).map((r) => (r as { changed: boolean }).changed)).toEqual([true, true, true]);
    expect(results[3]).toBeInstanceOf(Error);
    // Money moved once: one capture for each good one, none for the broken one (still processing).
    const settlements = await settlementsOf(claims.map((c) => c.id));
    expect(claims.map((c) => settlements.get(c.id))).toEqual([["capture"], ["capture"], ["capture"], []]);
    expect((await statusOf([claims[3]?.id ?? ""])).get(claims[3]?.id ?? "")?.status).toBe("processing");
    await expectSequentialReplay((await walletOf(good.id)).id);
    // Put the hold back and complete it, so the books balance again.
    await db()
      .update(wallets)
      .set({ heldKobo: claims[3]?.row.priceKobo ?? 0 })
      .where(eq(wallets.id, (await walletOf(broken.id)).id));
    expect((await complete(success(claims[3] as ClaimedTransaction))).changed).toBe(true);
    expect(await reconcileWallets(db())).toEqual([]);
  });

  test("the same transactions completed by two batches at once, in opposite orders: no deadlock, each settled once", async () => {
    const first = await fundedAccount(server, 1_000_000, "race-1");
    const second = await fundedAccount(server, 1_000_000, "race-2");
    for (let round = 0; round < 3; round++) {
      const references = (await Promise.all([vendMany(first.client, 10), vendMany(second.client, 10)])).flat();
      const claims = await claim(`w-race-${round}`, references);
      // Without a lease, as operator and callback paths complete: both batches may change every row.
      const requests = claims.map((c) => ({ ...success(c), lease: undefined }));
      const [a, b] = await Promise.all([
        completeTransactions(db(), requests),
        completeTransactions(db(), [...requests].reverse()),
      ]);
      // Each transaction changed by exactly one of the two batches; the other found it final.
      const changedBy = claims.map((_, n) => Number(a?.[n]?.changed) + Number(b?.[claims.length - 1 - n]?.changed));
      expect(changedBy).toEqual(claims.map(() => 1));
      // Money moved once: one capture entry per transaction, and the books balance.
      expect([...(await settlementsOf(claims.map((c) => c.id))).values()]).toEqual(claims.map(() => ["capture"]));
    }
    for (const account of [first, second]) await expectSequentialReplay((await walletOf(account.id)).id);
    expect(await reconcileWallets(db())).toEqual([]);
  });

  test("two worker runners completing on the same wallets at once: no deadlock, books balance", async () => {
    const accounts = await Promise.all([1, 2, 3].map((n) => fundedAccount(server, 1_000_000, `runners-${n}`)));
    const references = (await Promise.all(accounts.map((a) => vendMany(a.client, 20)))).flat();
    const logs = captureLogs(server);
    const deps = { ...server.deps, apiBaseUrl: server.url };
    const runners = ["w-run-a", "w-run-b"].map((id) => processingRunner(deps, id));
    try {
      while ((await Promise.all(runners.map((r) => r.tick({ limit: 8 })))).some((n) => n > 0)) {}
    } finally {
      logs.restore();
    }
    const rows = await db().select().from(transactions).where(inArray(transactions.reference, references));
    expect(rows.map((r) => r.status)).toEqual(references.map(() => "successful"));
    // No job failed, no lease was lost (a deadlock would have failed a batch statement: logged, or retried alone).
    expect(logs.lines.filter((line) => /"level":(40|50)/.test(line))).toEqual([]);
    // Money moved once: one capture per transaction, each wallet charged exactly its 20 vends.
    expect([...(await settlementsOf(rows.map((r) => r.id))).values()]).toEqual(rows.map(() => ["capture"]));
    for (const account of accounts) {
      const charged = rows.filter((r) => r.accountId === account.id).reduce((sum, r) => sum + r.priceKobo, 0);
      expect(await walletOf(account.id)).toMatchObject({ balanceKobo: 1_000_000 - charged, heldKobo: 0 });
      await expectSequentialReplay((await walletOf(account.id)).id);
    }
    expect(await reconcileWallets(db())).toEqual([]);
  });
});

describe("a batch's NOTIFYs", () => {
  test("wake the long-polls of every transaction of the batch, in few announcements within the size limit", async () => {
    const account = await fundedAccount(server, 1_000_000, "notify");
    const references = await vendMany(account.client, 30);
    const claims = await claim("w-notify", references);
    const payloads: string[] = [];
    const unlisten = await server.database.handle.listen(finalChannel, (payload) => payloads.push(payload));
    try {
      const polls = references.map((reference) =>
        account.client.get(`/api/v1/transactions/${reference}`, { query: { wait: 10 } }).then((res) => ({
          status: res.json.data.status as string,
          at: performance.now(),
        })),
      );
      // Every long-poll is waiting (subscribed, and has read the transaction as not final) before the batch completes.
      const waiting = server.deps.waiters as unknown as { waiting: Map<string, unknown> };
      await waitUntil(() => references.every((r) => waiting.waiting.has(r)), { what: "30 long-polls subscribed" });
      // Subscribed, then each reads the transaction: a moment for those reads, so the completion wakes them.
      await Bun.sleep(50);
      const completedAt = performance.now();
      await completeTransactions(db(), claims.map(success));
      const answers = await Promise.all(polls);
      // Woken by the announcement, not by the end of their 10 s wait.
      expect(answers.map((a) => a.status)).toEqual(references.map(() => "successful"));
      expect(Math.max(...answers.map((a) => a.at - completedAt))).toBeLessThan(5000);
      // The test listens on a connection of its own (on PostgreSQL the server's handle is another role's), which
      // may hear the announcements a moment after the server's listener woke the polls.
      const announced = () => payloads.flatMap((p) => parseFinalAnnouncements(p).map((a) => a.reference));
      await waitUntil(() => announced().length >= references.length, { what: "the batch's announcements heard" });
      expect(announced().sort()).toEqual([...references].sort());
      expect(payloads.length).toBeLessThan(references.length);
      for (const payload of payloads) expect(Buffer.byteLength(payload)).toBeLessThan(8000);
    } finally {
      await unlisten();
    }
    // Money moved once: one capture per transaction.
    expect([...(await settlementsOf(claims.map((c) => c.id))).values()]).toEqual(claims.map(() => ["capture"]));
  });
});
