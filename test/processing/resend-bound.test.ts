import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { processingRunner } from "../../src/background.ts";
import { ledgerEntries } from "../../src/db/schema/index.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { loadConfig } from "../../src/load-config.ts";
import { createVtuProvider } from "../../src/providers/vtu/client.ts";
import { idem } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing, transactionRow, vendAirtime } from "../helpers/processing.ts";
import { changeTransactions } from "../helpers/queue.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { setupMockFetch, VtuBook, type VtuPayBody, vtuHandlers, vtuTestConfig } from "../helpers/vtu-mock.ts";

// A provider that never accepts the order: every pay answers 502 and never reaches its books, so every
// re-query answers "not found" (VTU code 015) unless the test makes the re-query unreachable.
const maxSends = 3;
const maxResendAgeSeconds = 3600;
const network = setupMockFetch({ onUnhandledFrame: "bypass" });
const book = new VtuBook();
const unreachable = new Set<string>();
let server: TestServer;
let client: HttpClient;

beforeAll(async () => {
  network.enable();
  network.use(
    ...vtuHandlers({
      book,
      pay: { kind: "server-error", outcome: "not-received" },
      requery: (requestId) => (unreachable.has(requestId) ? { kind: "network-error" } : undefined),
    }),
  );
  const worker = { ...loadConfig({}).worker, pollMs: 50, leaseSeconds: 5, requerySchedule: [0.2], maxSends, maxResendAgeSeconds };
  server = await startTestServer(fastProcessing({ providers: { vtu: vtuTestConfig }, worker }), {
    liveProviders: [createVtuProvider(vtuTestConfig)],
  });
  const account = await server.createAccount("Lost Orders Co");
  const credit = await server.admin.post(
    `/admin/v1/accounts/${account.id}/wallet/credit`,
    { mode: "live", amount_kobo: 1_000_000, note: "float" },
    idem(),
  );
  expect(credit.status).toBe(200);
  client = server.client(account.liveKey);
});
afterAll(async () => {
  await server.close();
  network.disable();
});

const db = () => server.database.handle.db;
const vend = (phone: string) => vendAirtime(client, phone);
const row = (reference: string) => transactionRow(db(), reference);
const tick = () => processingRunner({ ...server.deps, apiBaseUrl: server.url }, "bound-worker").tick();
const requeryNow = () => changeTransactions(db(), sql`update transactions set next_attempt_at = now() where status = 'pending'`);
const pays = (reference: string) => book.requestsTo("pay").filter((r) => (r.body as VtuPayBody).request_id === reference).length;

async function ledgerKinds(transactionId: string): Promise<string[]> {
  const entries = await db().select().from(ledgerEntries).where(eq(ledgerEntries.transactionId, transactionId));
  return entries.map((e) => e.kind).sort();
}

const wallet = async () => (await client.get("/api/v1/wallet")).json.data;

/** Re-queries until the transaction is final, at most `rounds` times. */
async function requeryUntilFinal(reference: string, rounds: number): Promise<void> {
  for (let i = 0; i < rounds && !["successful", "failed"].includes((await row(reference)).status); i++) {
    await requeryNow();
    await tick();
  }
}

describe("an order the provider never accepts", () => {
  test(`is failed after WORKER_MAX_SENDS (${maxSends}) sends when the re-query still answers not found; the hold is released once`, async () => {
    const reference = await vend("08031230001");
    await tick();
    expect((await row(reference)).status).toBe("pending");
    expect((await wallet()).held_kobo).toBe(9_700);

    await requeryUntilFinal(reference, 10);
    const failed = await row(reference);
    expect(failed.status).toBe("failed");
    expect(failed.failureReason).toMatch(/never received the order after 3 sends/);
    // The provider saw exactly N pays; our books hold one hold and one release, and nothing is held.
    expect(pays(reference)).toBe(maxSends);
    expect(failed.providerSends).toBe(maxSends);
    expect(await ledgerKinds(failed.id)).toEqual(["hold", "release"]);
    expect((await wallet()).held_kobo).toBe(0);
    expect(await reconcileWallets(db())).toEqual([]);
    const shown = await client.get(`/api/v1/transactions/${reference}`);
    expect(shown.json.data.status).toBe("failed");
  });

  test("whose re-query is unreachable stays pending with its hold, however often; only a definitive not found fails it", async () => {
    const heldBefore = (await wallet()).held_kobo;
    const reference = await vend("08031230002");
    await tick();
    for (let send = 2; send <= maxSends; send++) {
      await requeryNow();
      await tick();
    }
    expect(pays(reference)).toBe(maxSends);

    unreachable.add(reference);
    for (let i = 0; i < 3; i++) {
      await requeryNow();
      await tick();
      const pending = await row(reference);
      expect(pending.status).toBe("pending");
      expect(pending.failureReason).toBeNull();
    }
    expect((await wallet()).held_kobo).toBe(heldBefore + 9_700);
    expect(pays(reference)).toBe(maxSends);

    unreachable.delete(reference);
    await requeryNow();
    await tick();
    const failed = await row(reference);
    expect(failed.status).toBe("failed");
    expect(pays(reference)).toBe(maxSends);
    expect(await ledgerKinds(failed.id)).toEqual(["hold", "release"]);
    expect((await wallet()).held_kobo).toBe(heldBefore);
    expect(await reconcileWallets(db())).toEqual([]);
  });

  test("older than WORKER_MAX_RESEND_AGE_SECONDS is failed instead of re-sent, even below WORKER_MAX_SENDS", async () => {
    const reference = await vend("08031230003");
    await tick();
    expect(pays(reference)).toBe(1);
    await db().execute(
      sql`update transactions set created_at = now() - make_interval(secs => ${maxResendAgeSeconds + 60}) where reference = ${reference}`,
    );
    await requeryNow();
    await tick();
    const failed = await row(reference);
    expect(failed.status).toBe("failed");
    expect(failed.failureReason).toMatch(/never received the order after 1 send\b/);
    expect(pays(reference)).toBe(1);
    expect(await ledgerKinds(failed.id)).toEqual(["hold", "release"]);
    expect(await reconcileWallets(db())).toEqual([]);
  });
});
