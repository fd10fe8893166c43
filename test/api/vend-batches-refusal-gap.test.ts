import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
}, 60_000);
afterAll(() => server.close());

/** MTN airtime of `amountKobo` to a phone ending in `n`; its price is 97% of the amount (the 3% discount). */
const airtime = (n: number, amountKobo: number) => ({
  service: "airtime",
  product_code: "mtn-airtime",
  phone_number: `0803200000${n}`,
  amount_kobo: amountKobo,
  client_reference: `gap-${n}`,
});

const naira = (kobo: number) => `NGN ${(kobo / 100).toFixed(2)}`;

interface StatementEntry {
  kind: string;
  amount_kobo: number;
  balance_delta_kobo: number;
  held_delta_kobo: number;
  balance_after_kobo: number;
  held_after_kobo: number;
  reference: string | null;
}

async function wholeStatement(client: HttpClient): Promise<StatementEntry[]> {
  const entries: StatementEntry[] = [];
  let cursor: string | undefined;
  do {
    const res = await client.get("/api/v1/wallet/ledger", { query: { limit: 100, cursor } });
    expect(res.status).toBe(200);
    entries.push(...res.json.data.items);
    cursor = res.json.data.page.next_cursor ?? undefined;
  } while (cursor);
  return entries;
}

describe("POST /api/v1/vend/batches: a refusal for funds does not stop the orders after it", () => {
  test("an expensive order is refused 402 and later, cheaper orders that fit are accepted; the wallet reconciles", async () => {
    // Funded for exactly orders 0, 2 and 4: 9,700 + 19,400 + 19,400.
    const funded = 48_500;
    const { id, client } = await fundedAccount(server, funded, "Gap Ltd");
    const orders = [
      airtime(0, 10_000), // 9,700: fits (38,800 left)
      airtime(1, 100_000), // 97,000: refused, 38,800 available
      airtime(2, 20_000), // 19,400: fits (19,400 left)
      airtime(3, 30_000), // 29,100: refused, 19,400 available
      airtime(4, 20_000), // 19,400: fits exactly (0 left)
      airtime(5, 10_000), // 9,700: refused, nothing available
    ];
    const prices = [9_700, 97_000, 19_400, 29_100, 19_400, 9_700];
    const res = await client.post("/api/v1/vend/batches", { orders }, idem());
    expect(res.status).toBe(202);
    const batch = res.json.data;
    expect(batch).toMatchObject({ mode: "test", order_count: 6, completed_at: null });
    expect(batch.counts).toEqual({ queued: 3, processing: 0, pending: 0, successful: 0, failed: 0, refused: 3, invalid: 0 });

    // Per order: each refusal names what was available when its turn came, after the accepted orders before it.
    const refusal = (index: number, availableKobo: number) => ({
      index,
      client_reference: `gap-${index}`,
      status: 402,
      error: {
        code: "WALLET_INSUFFICIENT_FUNDS",
        message: `Insufficient wallet balance: available ${naira(availableKobo)}, required ${naira(prices[index] ?? 0)}`,
        data: null,
      },
    });
    expect(batch.rejections).toEqual([refusal(1, 38_800), refusal(3, 19_400), refusal(5, 0)]);

    const listed = await client.get("/api/v1/transactions", { query: { batch_id: batch.id, limit: 100 } });
    expect(listed.status).toBe(200);
    const accepted = listed.json.data.items as {
      reference: string;
      client_reference: string;
      status: string;
      price_kobo: number;
    }[];
    expect(accepted.map((t) => [t.client_reference, t.status, t.price_kobo]).sort()).toEqual([
      ["gap-0", "queued", 9_700],
      ["gap-2", "queued", 19_400],
      ["gap-4", "queued", 19_400],
    ]);
    const read = await client.get(`/api/v1/vend/batches/${batch.id}`);
    expect(read.status).toBe(200);
    expect(read.json.data.batch.counts).toEqual(batch.counts);
    expect(read.json.data.batch.rejections).toEqual(batch.rejections);
    expect(read.json.data.orders.items.map((t: { reference: string }) => t.reference).sort()).toEqual(
      accepted.map((t) => t.reference).sort(),
    );

    // No money created or lost. Money enters a wallet only by a `fund` (or `credit`) entry, and an accept moves it
    // from available to held without changing the balance. So: the balance is exactly what was funded; the hold
    // is exactly the prices of the three accepted orders, one `hold` entry each, naming them; the refused orders
    // have no transaction and no entry; available is what is left. The ledger's deltas sum to the wallet's
    // figures, and the operators' reconciliation finds every wallet equal to its ledger.
    const heldForAccepted = 9_700 + 19_400 + 19_400;
    const wallet = (await client.get("/api/v1/wallet")).json.data;
    expect(wallet).toMatchObject({ balance_kobo: funded, held_kobo: heldForAccepted, available_kobo: funded - heldForAccepted });
    expect(wallet.available_kobo).toBe(0);

    const entries = await wholeStatement(client);
    expect(entries).toHaveLength(4);
    const funds = entries.filter((e) => e.kind === "fund");
    const holds = entries.filter((e) => e.kind === "hold");
    expect(funds.map((e) => e.amount_kobo)).toEqual([funded]);
    expect(holds).toHaveLength(3);
    expect(new Set(holds.map((e) => e.reference))).toEqual(new Set(accepted.map((t) => t.reference)));
    expect(holds.map((e) => e.amount_kobo).sort((a, b) => a - b)).toEqual([9_700, 19_400, 19_400]);
    const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
    expect(sum(entries.map((e) => e.balance_delta_kobo))).toBe(wallet.balance_kobo);
    expect(sum(entries.map((e) => e.held_delta_kobo))).toBe(wallet.held_kobo);
    expect(entries[0]).toMatchObject({ balance_after_kobo: wallet.balance_kobo, held_after_kobo: wallet.held_kobo });

    const reconciliation = await server.admin.get("/admin/v1/reconciliation", { query: { account_id: id } });
    expect(reconciliation.status).toBe(200);
    expect(reconciliation.json.data).toMatchObject({ balanced: true, discrepancies: [] });
  });
});
