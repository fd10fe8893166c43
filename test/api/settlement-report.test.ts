import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { queryRows } from "../../src/db/rows.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing, untilPending } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

type Transaction = components["schemas"]["Transaction"];
type SettlementLine = components["schemas"]["SettlementLine"];

let server: TestServer;
let client: HttpClient;

/**
 * A vend answered once final, or once sent when it stays pending (4444); the destination's last four digits
 * choose the sandbox outcome.
 */
async function vend(body: Record<string, unknown>): Promise<Transaction> {
  const staysPending = String(body.phone_number).endsWith("4444");
  const res = await client.post("/api/v1/vend", body, { ...idem(), query: { wait: staysPending ? 0 : 10 } });
  expect(res.status).toBe(202);
  return staysPending ? untilPending(client, res.json.data.reference) : res.json.data;
}
const airtime = (network: string, phone: string, amountKobo: number) =>
  vend({ product_code: `${network}-airtime`, phone_number: phone, amount_kobo: amountKobo });

/** Puts a transaction where a test wants it: when it completed, and optionally with another provider or mode. */
async function place(txn: Transaction, completedAt: string, changes: { provider?: string; mode?: string } = {}) {
  await server.deps.db.execute(
    sql`update transactions set completed_at = ${completedAt}::timestamptz,
          provider = coalesce(${changes.provider ?? null}::text, provider), mode = coalesce(${changes.mode ?? null}::text, mode)
        where reference = ${txn.reference}`,
  );
}

/** The report's lines as our own sums of the orders: one line per service and network, by service then network. */
function linesOf(orders: Transaction[]): SettlementLine[] {
  const lines = new Map<string, SettlementLine>();
  for (const order of orders) {
    const key = `${order.service}/${order.network}`;
    const line = lines.get(key) ?? { service: order.service, network: order.network, count: 0, amount_kobo: 0, price_kobo: 0 };
    lines.set(key, {
      ...line,
      count: line.count + 1,
      amount_kobo: line.amount_kobo + order.amount_kobo,
      price_kobo: line.price_kobo + order.price_kobo,
    });
  }
  return [...lines.keys()].sort().map((key) => lines.get(key) as SettlementLine);
}

const report = (query: Record<string, string>) => server.admin.get("/admin/v1/reports/settlement", { query });

let onThe21st: Transaction[];
let earlyOnThe22nd: Transaction;
let lateOnThe20th: Transaction;
let liveVtu: Transaction;

beforeAll(async () => {
  server = await startTestServer(fastProcessing(), { background: true });
  ({ client } = await fundedAccount(server, 5_000_000, "Settlement Ltd"));
  const [first, second, third, glo, data, next, previous, vtu] = await Promise.all([
    airtime("mtn", "08031234567", 10_000),
    airtime("mtn", "08031234568", 25_000),
    airtime("mtn", "08031234569", 5_000),
    airtime("glo", "08051234567", 20_000),
    vend({ product_code: "mtn-data-1gb-1d", phone_number: "08031234570" }),
    airtime("mtn", "08031234571", 30_000),
    airtime("mtn", "08031234572", 40_000),
    airtime("airtel", "08021234567", 15_000),
  ]);
  for (const txn of [first, second, third, glo, data, next, previous, vtu]) expect(txn.status).toBe("successful");
  const failed = await airtime("mtn", "08031231111", 12_000);
  const pending = await airtime("mtn", "08031234444", 13_000);
  expect([failed.status, pending.status]).toEqual(["failed", "pending"]);

  // 2026-11-21 in Lagos (UTC+01:00) runs from 2026-11-20T23:00Z to 2026-11-21T23:00Z.
  await place(first, "2026-11-20T23:30:00Z");
  await place(second, "2026-11-21T12:00:00Z");
  await place(third, "2026-11-21T22:59:59.999Z");
  await place(glo, "2026-11-21T08:15:00Z");
  await place(data, "2026-11-20T23:00:00Z");
  await place(next, "2026-11-21T23:00:00Z");
  await place(previous, "2026-11-20T22:59:59.999Z");
  await place(vtu, "2026-11-21T10:00:00Z", { provider: "vtu", mode: "live" });
  await place(failed, "2026-11-21T12:00:00Z");
  await place(pending, "2026-11-21T12:00:00Z");
  onThe21st = [first, second, third, glo, data];
  earlyOnThe22nd = next;
  lateOnThe20th = previous;
  liveVtu = vtu;
}, 60_000);
afterAll(() => server.close());

describe("GET /admin/v1/reports/settlement", () => {
  test("counts and sums the provider's successful orders completed on the Lagos day, per service and network", async () => {
    const res = await report({ provider: "sandbox", date: "2026-11-21", mode: "test" });
    expect(res.status).toBe(200);
    const lines = linesOf(onThe21st);
    expect(res.json.data).toEqual({
      provider: "sandbox",
      mode: "test",
      date: "2026-11-21",
      timezone: "Africa/Lagos",
      from: "2026-11-20T23:00:00.000Z",
      to: "2026-11-21T23:00:00.000Z",
      count: 5,
      amount_kobo: onThe21st.reduce((sum, order) => sum + order.amount_kobo, 0),
      price_kobo: onThe21st.reduce((sum, order) => sum + order.price_kobo, 0),
      by_service: lines,
    });
    expect(lines.map((line) => [line.service, line.network, line.count])).toEqual([
      ["airtime", "glo", 1],
      ["airtime", "mtn", 3],
      ["data", "mtn", 1],
    ]);
    // Clients paid what the report says: one capture entry per order in their wallet's ledger, for its price.
    const references = onThe21st.map((order) => order.reference);
    const [captured] = await queryRows<{ kobo: number | string; entries: number | string }>(
      server.deps.db,
      sql`select coalesce(sum(l.amount_kobo), 0) as kobo, count(*) as entries from ledger_entries l
          join transactions t on t.id = l.transaction_id
          where l.kind = 'capture' and t.reference in (${sql.join(references, sql`, `)})`,
    );
    expect([Number(captured?.kobo), Number(captured?.entries)]).toEqual([res.json.data.price_kobo, 5]);
  });

  test("day boundaries are Lagos midnights: 23:30 UTC on the 20th is the 21st, 23:00 UTC on the 21st is the 22nd", async () => {
    const day = async (date: string) => (await report({ provider: "sandbox", date, mode: "test" })).json.data;
    const twentySecond = await day("2026-11-22");
    expect(twentySecond).toMatchObject({ from: "2026-11-21T23:00:00.000Z", to: "2026-11-22T23:00:00.000Z", count: 1 });
    expect(twentySecond.amount_kobo).toBe(earlyOnThe22nd.amount_kobo);
    const twentieth = await day("2026-11-20");
    expect(twentieth).toMatchObject({ count: 1, amount_kobo: lateOnThe20th.amount_kobo, price_kobo: lateOnThe20th.price_kobo });
    // 23:30 UTC on the 20th, 23:00:00.000 UTC on the 20th and 22:59:59.999 UTC on the 21st are all the 21st.
    expect((await day("2026-11-21")).count).toBe(5);
    expect((await day("2026-11-23")).by_service).toEqual([]);
  });

  test("live by default; other providers, failed and pending orders are left out; an unknown provider is a report of zeros", async () => {
    const live = await report({ provider: "sandbox", date: "2026-11-21" });
    expect(live.json.data).toMatchObject({ mode: "live", count: 0, amount_kobo: 0, price_kobo: 0, by_service: [] });
    const vtu = await report({ provider: "vtu", date: "2026-11-21" });
    expect(vtu.json.data).toMatchObject({
      provider: "vtu",
      mode: "live",
      count: 1,
      amount_kobo: liveVtu.amount_kobo,
      price_kobo: liveVtu.price_kobo,
      by_service: [
        { service: "airtime", network: "airtel", count: 1, amount_kobo: liveVtu.amount_kobo, price_kobo: liveVtu.price_kobo },
      ],
    });
    expect((await report({ provider: "vtu", date: "2026-11-21", mode: "test" })).json.data.count).toBe(0);
    const unknown = await report({ provider: "clubkonnect", date: "2026-11-21" });
    expect(unknown.status).toBe(200);
    expect(unknown.json.data).toMatchObject({ provider: "clubkonnect", count: 0, by_service: [] });
  });

  test("bad input is a 400 naming the field; no admin token is 401", async () => {
    const cases: [string, Record<string, string>, string][] = [
      ["no provider", { date: "2026-11-21" }, "provider"],
      ["no date", { provider: "vtu" }, "date"],
      ["provider with spaces", { provider: "v tu", date: "2026-11-21" }, "provider"],
      ["a day that does not exist", { provider: "vtu", date: "2026-02-30" }, "date"],
      ["a day before 2000", { provider: "vtu", date: "1999-12-31" }, "date"],
      ["year 0", { provider: "vtu", date: "0000-01-01" }, "date"],
      ["a date the other way round", { provider: "vtu", date: "21-11-2026" }, "date"],
      ["a date-time", { provider: "vtu", date: "2026-11-21T00:00:00Z" }, "date"],
      ["unknown mode", { provider: "vtu", date: "2026-11-21", mode: "sandbox" }, "mode"],
    ];
    for (const [name, query, field] of cases) {
      const res = await report(query);
      expect([name, res.status, res.json.code]).toEqual([name, 400, "VALIDATION_FAILED"]);
      expect([name, res.json.data.errors[0].field]).toEqual([name, field]);
    }
    const anonymous = await server.anonymous.get("/admin/v1/reports/settlement", {
      query: { provider: "vtu", date: "2026-11-21" },
    });
    expect(anonymous.status).toBe(401);
  });
});
