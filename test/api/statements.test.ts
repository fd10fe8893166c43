import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { queryRows } from "../../src/db/rows.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing, untilPending } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

type StatementEntry = components["schemas"]["StatementEntry"];
type Query = Record<string, string | number | undefined>;
type Buyer = Awaited<ReturnType<typeof fundedAccount>>;

let server: TestServer;
let a: Buyer;
let b: Buyer;
/** Reference → final status of A's vends. */
const vends = new Map<string, string>();

/**
 * ₦100 of MTN airtime, answered once final, or once sent when it stays pending (4444); the last four digits
 * choose the sandbox outcome.
 */
async function vend(client: HttpClient, phone: string): Promise<{ reference: string; status: string }> {
  const staysPending = phone.endsWith("4444");
  const res = await client.post(
    "/api/v1/vend",
    { product_code: "mtn-airtime", phone_number: phone, amount_kobo: 10_000 },
    { ...idem(), query: { wait: staysPending ? 0 : 10 } },
  );
  expect(res.status).toBe(202);
  const answer = staysPending ? await untilPending(client, res.json.data.reference) : res.json.data;
  return { reference: answer.reference, status: answer.status };
}

/** The ids of a wallet's ledger entries, newest first, straight from the table. */
async function ledgerIds(accountId: string, mode: string): Promise<number[]> {
  const rows = await queryRows<{ id: number | string }>(
    server.deps.db,
    sql`select l.id from ledger_entries l join wallets w on w.id = l.wallet_id
        where w.account_id = ${accountId}::uuid and w.mode = ${mode} order by l.id desc`,
  );
  return rows.map((row) => Number(row.id));
}

/** Follows `next_cursor` to the end, checking each page's shape; `between` runs after every page but the last. */
async function walk(client: HttpClient, query: Query, limit: number, between?: () => Promise<void>) {
  const entries: StatementEntry[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const res = await client.get("/api/v1/wallet/ledger", { query: { ...query, limit, cursor } });
    expect(res.status).toBe(200);
    const { items, page } = res.json.data as { items: StatementEntry[]; page: { next_cursor: string | null; has_more: boolean } };
    expect(page.has_more ? items.length : limit).toBe(limit);
    expect(page.has_more).toBe(page.next_cursor !== null);
    entries.push(...items);
    cursor = page.next_cursor ?? undefined;
    pages += 1;
    if (cursor && between) await between();
  } while (cursor);
  return { entries, pages };
}

beforeAll(async () => {
  server = await startTestServer(fastProcessing(), { background: true });
  a = await fundedAccount(server, 1_000_000, "Statement A");
  for (const amount of [20_000, 30_000, 40_000]) {
    expect((await a.client.post("/api/v1/wallet/fund", { amount_kobo: amount, note: `top-up ${amount}` }, idem())).status).toBe(
      200,
    );
  }
  for (const phone of ["08031234567", "08031231111", "08031234568", "08031234444", "08031239999", "08051231111"]) {
    const { reference, status } = await vend(a.client, phone);
    vends.set(reference, status);
  }
  b = await fundedAccount(server, 70_000, "Statement B");
  await vend(b.client, "08031234567");
}, 60_000);
afterAll(() => server.close());

describe("GET /api/v1/wallet/ledger", () => {
  test("small pages walk every entry once, newest first; the deltas add up to the wallet and each entry follows from the one before", async () => {
    expect([...vends.values()].sort()).toEqual(["failed", "failed", "pending", "successful", "successful", "successful"]);
    const { entries, pages } = await walk(a.client, {}, 4);
    const ids = entries.map((entry) => entry.id);
    // 4 fundings, 6 holds, 3 captures, 2 releases; the pending vend's hold stays.
    expect(ids).toEqual(await ledgerIds(a.id, "test"));
    expect(ids.length).toBe(15);
    expect(pages).toBe(4);

    const wallet = (await a.client.get("/api/v1/wallet")).json.data;
    const sum = (pick: (entry: StatementEntry) => number) => entries.reduce((total, entry) => total + pick(entry), 0);
    expect(sum((entry) => entry.balance_delta_kobo)).toBe(wallet.balance_kobo);
    expect(sum((entry) => entry.held_delta_kobo)).toBe(wallet.held_kobo);
    const [newest] = entries;
    expect(newest).toMatchObject({
      balance_after_kobo: wallet.balance_kobo,
      held_after_kobo: wallet.held_kobo,
      available_after_kobo: wallet.available_kobo,
    });
    // Oldest to newest: every entry's figures are the previous entry's plus its own deltas.
    const chronological = [...entries].reverse();
    let balance = 0;
    let held = 0;
    for (const entry of chronological) {
      balance += entry.balance_delta_kobo;
      held += entry.held_delta_kobo;
      expect([entry.balance_after_kobo, entry.held_after_kobo, entry.available_after_kobo]).toEqual([
        balance,
        held,
        balance - held,
      ]);
    }

    const byKind = (kind: string) => entries.filter((entry) => entry.kind === kind);
    expect(byKind("fund").map((entry) => [entry.amount_kobo, entry.balance_delta_kobo, entry.reference])).toEqual([
      [40_000, 40_000, null],
      [30_000, 30_000, null],
      [20_000, 20_000, null],
      [1_000_000, 1_000_000, null],
    ]);
    expect(byKind("fund")[0]?.note).toBe("top-up 40000");
    const referencesOf = (kind: string) => new Set(byKind(kind).map((entry) => entry.reference));
    const withStatus = (...statuses: string[]) =>
      new Set([...vends].filter(([, status]) => statuses.includes(status)).map(([reference]) => reference));
    expect(referencesOf("hold")).toEqual(new Set(vends.keys()));
    expect(referencesOf("capture")).toEqual(withStatus("successful"));
    expect(referencesOf("release")).toEqual(withStatus("failed"));
    for (const entry of byKind("capture"))
      expect([entry.balance_delta_kobo, entry.held_delta_kobo]).toEqual([-entry.amount_kobo, -entry.amount_kobo]);
    for (const entry of byKind("release"))
      expect([entry.balance_delta_kobo, entry.held_delta_kobo]).toEqual([0, -entry.amount_kobo]);
  });

  test("entries added while paging do not shift the pages: no duplicates, no gaps", async () => {
    const before = await ledgerIds(a.id, "test");
    const buyer = await fundedAccount(server, 10_000, "Statement busy");
    const ownBefore = await ledgerIds(buyer.id, "test");
    const fundMore = async () => {
      expect((await buyer.client.post("/api/v1/wallet/fund", { amount_kobo: 100 }, idem())).status).toBe(200);
    };
    const { entries } = await walk(buyer.client, {}, 1, fundMore);
    expect(entries.map((entry) => entry.id)).toEqual(ownBefore);
    const again = await walk(a.client, {}, 2, async () => {
      expect((await a.client.post("/api/v1/wallet/fund", { amount_kobo: 100 }, idem())).status).toBe(200);
    });
    expect(again.entries.map((entry) => entry.id)).toEqual(before);
    expect((await ledgerIds(a.id, "test")).length).toBe(before.length + again.pages - 1);
  });

  test("a key sees only its own wallet: another account's entries and its own other mode never appear", async () => {
    const own = (await walk(b.client, {}, 100)).entries;
    expect(own.map((entry) => entry.id)).toEqual(await ledgerIds(b.id, "test"));
    expect(own.map((entry) => entry.kind)).toEqual(["capture", "hold", "fund"]);
    const aIds = new Set(await ledgerIds(a.id, "test"));
    expect(own.some((entry) => aIds.has(entry.id))).toBe(false);

    const live = server.client(a.liveKey);
    expect((await walk(live, {}, 10)).entries).toEqual([]);
    const credit = await server.admin.post(
      `/admin/v1/accounts/${a.id}/wallet/credit`,
      { mode: "live", amount_kobo: 250_000, note: "Bank transfer 7" },
      idem(),
    );
    expect(credit.status).toBe(200);
    const liveEntries = (await walk(live, {}, 10)).entries;
    expect(liveEntries).toEqual([
      {
        id: credit.json.data.entry.id,
        kind: "credit",
        amount_kobo: 250_000,
        balance_delta_kobo: 250_000,
        held_delta_kobo: 0,
        balance_after_kobo: 250_000,
        held_after_kobo: 0,
        available_after_kobo: 250_000,
        reference: null,
        note: "Bank transfer 7",
        created_at: credit.json.data.entry.created_at,
      },
    ]);
  });

  test("kind and from/to filter the entries; a cursor keeps its filters", async () => {
    const all = await ledgerIds(a.id, "test");
    const captures = (await walk(a.client, { kind: "capture" }, 2)).entries;
    expect(captures.map((entry) => entry.kind)).toEqual(["capture", "capture", "capture"]);

    // The five oldest entries move two days back; a day ago splits the statement in two.
    const oldest = all.slice(-5);
    await server.deps.db.execute(
      sql`update ledger_entries set created_at = created_at - interval '2 days' where id in (${sql.join(oldest, sql`, `)})`,
    );
    const dayAgo = new Date(Date.now() - 86_400_000).toISOString();
    const before = (await walk(a.client, { to: dayAgo }, 2)).entries.map((entry) => entry.id);
    const after = (await walk(a.client, { from: dayAgo }, 3)).entries.map((entry) => entry.id);
    expect(before).toEqual(oldest);
    expect(after).toEqual(all.slice(0, -5));
    const funds = (await walk(a.client, { to: dayAgo, kind: "fund" }, 10)).entries;
    expect(funds.every((entry) => entry.kind === "fund" && oldest.includes(entry.id))).toBe(true);
    expect(funds.length).toBe(4);
    const empty = await a.client.get("/api/v1/wallet/ledger", { query: { from: dayAgo, to: dayAgo } });
    expect(empty.status).toBe(200);
    expect(empty.json.data).toEqual({ items: [], page: { next_cursor: null, has_more: false } });
  });

  test("bad input is a 400 naming the field, never a 5xx", async () => {
    const first = await a.client.get("/api/v1/wallet/ledger", { query: { limit: 2 } });
    const cursor = first.json.data.page.next_cursor as string;
    const bOwn = await b.client.get("/api/v1/wallet/ledger", { query: { limit: 1 } });
    const cases: [string, Query, string][] = [
      ["garbage cursor", { cursor: "not-a-cursor" }, "cursor"],
      ["tampered cursor", { cursor: `${cursor.slice(0, -2)}xx` }, "cursor"],
      ["cursor reused with another filter", { cursor, kind: "hold" }, "cursor"],
      ["another account's cursor", { cursor: bOwn.json.data.page.next_cursor }, "cursor"],
      ["unknown kind", { kind: "refund" }, "kind"],
      ["from not a time", { from: "yesterday" }, "from"],
      ["from in year 0", { from: "0000-01-01T00:00:00Z" }, "from"],
      ["to past year 9999", { to: "9999-12-31T23:59:59-01:00" }, "to"],
      ["from after to", { from: "2026-11-22T00:00:00Z", to: "2026-11-21T00:00:00Z" }, "from"],
      ["limit 0", { limit: 0 }, "limit"],
      ["unknown parameter", { account_id: b.id }, "account_id"],
    ];
    for (const [name, query, field] of cases) {
      const res = await a.client.get("/api/v1/wallet/ledger", { query });
      expect([name, res.status, res.json.code]).toEqual([name, 400, "VALIDATION_FAILED"]);
      expect([name, res.json.data.errors[0].field]).toEqual([name, field]);
    }
    expect((await server.anonymous.get("/api/v1/wallet/ledger")).status).toBe(401);
  });
});
