import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { processingRunner } from "../../src/background.ts";
import type { Config } from "../../src/config.ts";
import { queryRows } from "../../src/db/rows.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { cliEnv, removeConfigDirs, runCli, runJson } from "../cli/cli.ts";
import { idem } from "../helpers/accounts.ts";
import {
  ClubkonnectBook,
  type ClubkonnectOrderRequest,
  clubkonnectHandlers,
  clubkonnectOrderPaths,
  clubkonnectTestConfig,
} from "../helpers/clubkonnect-mock.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing } from "../helpers/processing.ts";
import { changeTransactions } from "../helpers/queue.ts";
import { startTestServer, type TestServer, testAdminToken } from "../helpers/server.ts";
import { setupMockFetch, VtuBook, type VtuPayBody, vtuHandlers, vtuTestConfig } from "../helpers/vtu-mock.ts";

type Schemas = components["schemas"];
type GroupBy = Schemas["MarginGroupBy"];

// Two live providers behind msw, three services, two accounts; 300 vends. Every expected figure below is
// computed here from what the test sent and the commissions written out below, never from the service's sums.
const network = setupMockFetch({ onUnhandledFrame: "bypass" });
const vtu = new VtuBook();
const ck = new ClubkonnectBook();
const dataProduct = "mtn-data-1gb-1d";
const dataPriceKobo = 50_000;

/** Destinations ending in 7001: VTU refuses (the order moves to ClubKonnect); 7002: VTU refuses an electricity order (it fails). */
const refusedAtVtu = (code: string) => code.endsWith("7001") || code.endsWith("7002");

function costConfig(): Partial<Config> {
  return fastProcessing({
    providers: { vtu: vtuTestConfig, clubkonnect: clubkonnectTestConfig },
    routing: {
      routes: [
        { service: "airtime", network: "mtn", providers: ["vtu", "clubkonnect"] },
        { service: "airtime", network: "glo", providers: ["clubkonnect", "vtu"] },
        { service: "data", network: "mtn", providers: ["clubkonnect", "vtu"] },
        { service: "electricity", providers: ["vtu"] },
      ],
      productCodes: { vtu: { [dataProduct]: "mtn-1gb-daily" }, clubkonnect: { [dataProduct]: "1000.01" } },
      commission: {
        vtu: { "airtime/mtn": { bps: 300 }, "airtime/*": { bps: 250 }, "electricity/*": { fixedKobo: 10_000 } },
        clubkonnect: { "airtime/*": { bps: 350 }, "data/mtn": { bps: 400 }, "*/*": { bps: 100 } },
      },
    },
  });
}

/** The commissions above, written out again: what each provider charges for one order. */
function expectedCost(provider: string, service: string, networkCode: string, amount: number): number {
  const off = (bps: number) => Math.floor((amount * bps) / 10_000);
  if (provider === "vtu") {
    if (service === "airtime") return amount - off(networkCode === "mtn" ? 300 : 250);
    if (service === "electricity") return amount - 10_000;
    return amount;
  }
  if (service === "airtime") return amount - off(350);
  if (service === "data" && networkCode === "mtn") return amount - off(400);
  return amount - off(100);
}

interface Sent {
  reference: string;
  account: string;
  service: string;
  network: string;
  amount: number;
  price: number;
  /** Who delivers it by the routes and scenarios; null: nobody (it fails). */
  deliverer: string | null;
  /** Provider requests it takes: one per provider it is sent to. */
  requests: number;
}

let server: TestServer;
const sent: Sent[] = [];
const accounts: { id: string; client: HttpClient }[] = [];

async function vendOne(i: number): Promise<Sent> {
  const account = accounts[i % 2] ?? accounts[0];
  if (!account) throw new Error("no account");
  const suffix = i % 25 === 3 ? "7001" : i % 30 === 7 ? "7002" : String(1000 + (i % 900)).padStart(4, "0");
  const kind = i % 3;
  let body: Record<string, unknown>;
  let path = "/api/v1/vend";
  let service: string;
  let networkCode: string;
  let amount: number;
  let deliverer: string | null;
  let requests = 1;
  if (kind === 0) {
    const glo = i % 2 === 1;
    networkCode = glo ? "glo" : "mtn";
    service = "airtime";
    amount = 5_000 + ((i * 137) % 200) * 100 + (i % 7);
    const phone = `${glo ? "0805" : "0803"}${String(100 + (i % 800)).padStart(3, "0")}${suffix}`;
    body = { product_code: `${networkCode}-airtime`, phone_number: phone, amount_kobo: amount };
    deliverer = glo ? "clubkonnect" : refusedAtVtu(suffix) ? "clubkonnect" : "vtu";
    if (!glo && refusedAtVtu(suffix)) requests = 2;
  } else if (kind === 1) {
    service = "data";
    networkCode = "mtn";
    amount = dataPriceKobo;
    body = { product_code: dataProduct, phone_number: `0803${String(200 + (i % 700)).padStart(3, "0")}${suffix}` };
    deliverer = "clubkonnect";
  } else {
    service = "electricity";
    networkCode = "ikedc";
    amount = 100_000 + ((i * 53) % 400) * 1_000 + (i % 11);
    path = "/api/v1/bills/electricity";
    body = {
      network: "ikedc",
      meter_number: `4503${String(i).padStart(3, "0")}${suffix}`,
      amount_kobo: amount,
      meter_type: "prepaid",
    };
    deliverer = refusedAtVtu(suffix) ? null : "vtu";
  }
  const res = await account.client.post(path, body, idem());
  if (res.status !== 202) throw new Error(`vend ${i} failed: ${res.status} ${res.text}`);
  const data = res.json.data as Schemas["Transaction"];
  return {
    reference: data.reference,
    account: account.id,
    service,
    network: networkCode,
    amount,
    price: data.price_kobo,
    deliverer,
    requests,
  };
}

/** Ticks until nothing is left to do (every order here is final after its first processing). */
async function processAll(): Promise<void> {
  const runner = processingRunner({ ...server.deps, apiBaseUrl: server.url }, "margin-worker");
  for (let round = 0; round < 200; round++) {
    await runner.tick();
    const [open] = await queryRows<{ n: number | string }>(
      server.database.handle.db,
      sql`select count(*) as n from transactions where completed_at is null`,
    );
    if (Number(open?.n ?? 0) === 0) return;
  }
  throw new Error("orders still open after 200 ticks");
}

/** Lagos calendar day (UTC+01:00) of an instant. */
const lagosDay = (at: Date) => new Date(at.getTime() + 3_600_000).toISOString().slice(0, 10);

interface Expected {
  count: number;
  amount_kobo: number;
  price_kobo: number;
  cost_kobo: number;
  margin_kobo: number;
  uncosted: number;
}

function expectedReport(rows: { key: string; sent: Sent }[]): { rows: ({ key: string } & Expected)[]; total: Expected } {
  const groups = new Map<string, Expected>();
  const zero = (): Expected => ({ count: 0, amount_kobo: 0, price_kobo: 0, cost_kobo: 0, margin_kobo: 0, uncosted: 0 });
  const total = zero();
  for (const { key, sent: s } of rows) {
    const cost = expectedCost(s.deliverer ?? "", s.service, s.network, s.amount);
    for (const figures of [groups.get(key) ?? zero(), total]) {
      figures.count += 1;
      figures.amount_kobo += s.amount;
      figures.price_kobo += s.price;
      figures.cost_kobo += cost;
      figures.margin_kobo += s.price - cost;
      if (figures !== total) groups.set(key, figures);
    }
  }
  const keys = [...groups.keys()].sort();
  return { rows: keys.map((key) => ({ key, ...(groups.get(key) as Expected) })), total };
}

beforeAll(async () => {
  network.enable();
  network.use(
    ...vtuHandlers({
      book: vtu,
      pay: (body: VtuPayBody) =>
        refusedAtVtu(body.billersCode) ? { kind: "refuse", code: "018", description: "LOW WALLET BALANCE" } : { kind: "deliver" },
    }),
    ...clubkonnectHandlers({ book: ck, vend: (_: ClubkonnectOrderRequest) => ({ kind: "deliver" }) }),
  );
  server = await startTestServer(costConfig());
  for (const name of ["Margin One", "Margin Two"]) {
    const account = await server.createAccount(name);
    const credit = await server.admin.post(
      `/admin/v1/accounts/${account.id}/wallet/credit`,
      { mode: "live", amount_kobo: 1_000_000_000, note: "float" },
      idem(),
    );
    expect(credit.status).toBe(200);
    accounts.push({ id: account.id, client: server.client(account.liveKey) });
  }
  for (let i = 0; i < 300; i++) sent.push(await vendOne(i));
  await processAll();
}, 240_000);
afterAll(async () => {
  removeConfigDirs();
  await server.close();
  network.disable();
});

describe("GET /admin/v1/reports/margin over 300 live vends, two providers, three services", () => {
  test("every order ended as the routes and scenarios say, and each provider received exactly the requests expected", async () => {
    const rows = await queryRows<{ reference: string; status: string; provider: string }>(
      server.database.handle.db,
      sql`select reference, status, provider from transactions where mode = 'live'`,
    );
    const byReference = new Map(rows.map((row) => [row.reference, row]));
    for (const s of sent) {
      const row = byReference.get(s.reference);
      expect({ reference: s.reference, status: row?.status, provider: s.deliverer ? row?.provider : null }).toEqual({
        reference: s.reference,
        status: s.deliverer ? "successful" : "failed",
        provider: s.deliverer,
      });
    }
    // Money is counted by the providers' own logs: one request per provider an order was sent to.
    const vtuPays = vtu.requestsTo("pay").length;
    const ckOrders = ck.requests.filter((r) => clubkonnectOrderPaths.includes(r.path)).length;
    expect(vtuPays + ckOrders).toBe(sent.reduce((n, s) => n + s.requests, 0));
    expect(sent.filter((s) => s.deliverer === null).length).toBeGreaterThan(0);
    expect(sent.filter((s) => s.requests === 2).length).toBeGreaterThan(0);
    expect(await reconcileWallets(server.database.handle.db)).toEqual([]);
    // An order moved on: each attempt carries its own provider's cost, and the delivering one is ClubKonnect's.
    const moved = sent.find((s) => s.requests === 2);
    if (!moved) throw new Error("no order moved on");
    const view = await server.admin.get(`/admin/v1/transactions/${moved.reference}`);
    expect(view.json.data.provider_attempts.map((a: Schemas["ProviderAttempt"]) => [a.provider, a.status, a.cost_kobo])).toEqual([
      ["vtu", "failed", expectedCost("vtu", "airtime", "mtn", moved.amount)],
      ["clubkonnect", "successful", expectedCost("clubkonnect", "airtime", "mtn", moved.amount)],
    ]);
  });

  test.each<GroupBy>(["provider", "service", "network", "account"])(
    "group_by=%s equals the sums computed here, to the kobo",
    async (groupBy) => {
      const today = lagosDay(new Date());
      const res = await server.admin.get(`/admin/v1/reports/margin?from=${today}&to=${today}&group_by=${groupBy}`);
      expect(res.status).toBe(200);
      const keyOf: Record<Exclude<GroupBy, "day">, (s: Sent) => string> = {
        provider: (s) => s.deliverer ?? "",
        service: (s) => s.service,
        network: (s) => s.network,
        account: (s) => s.account,
      };
      const delivered = sent.filter((s) => s.deliverer !== null);
      const expected = expectedReport(delivered.map((s) => ({ key: keyOf[groupBy as Exclude<GroupBy, "day">](s), sent: s })));
      expect(res.json.data).toMatchObject({
        mode: "live",
        group_by: groupBy,
        from_date: today,
        to_date: today,
        timezone: "Africa/Lagos",
      });
      expect(res.json.data.rows).toEqual(expected.rows);
      expect(res.json.data.total).toEqual(expected.total);
      expect(expected.total.count).toBe(delivered.length);
    },
  );

  test("group_by=day counts Lagos days (UTC+01:00), its edges included; out of range is left out", async () => {
    // A quarter of the orders moved to 2026-11-20 22:59:59.999Z (Lagos 2026-11-20) and another to 23:00Z (2026-11-21).
    const late = sent.filter((_, i) => i % 4 === 1).map((s) => s.reference);
    const early = sent.filter((_, i) => i % 4 === 2).map((s) => s.reference);
    const db = server.database.handle.db;
    const move = (refs: string[], at: string) =>
      changeTransactions(
        db,
        sql`update transactions set completed_at = ${at}::timestamptz where reference in (${sql.join(
          refs.map((r) => sql`${r}`),
          sql`, `,
        )})`,
      );
    await move(late, "2026-11-20T22:59:59.999Z");
    await move(early, "2026-11-20T23:00:00.000Z");
    const today = lagosDay(new Date());
    const dayOf = (s: Sent) => (late.includes(s.reference) ? "2026-11-20" : early.includes(s.reference) ? "2026-11-21" : today);
    const delivered = sent.filter((s) => s.deliverer !== null);

    const all = await server.admin.get(`/admin/v1/reports/margin?from=2026-11-20&to=${today}&group_by=day`);
    expect(all.status).toBe(200);
    const expected = expectedReport(delivered.map((s) => ({ key: dayOf(s), sent: s })));
    expect(all.json.data.rows).toEqual(expected.rows);
    expect(all.json.data.total).toEqual(expected.total);

    const one = await server.admin.get("/admin/v1/reports/margin?from=2026-11-21&to=2026-11-21&group_by=day");
    const onlyEarly = expectedReport(
      delivered.filter((s) => dayOf(s) === "2026-11-21").map((s) => ({ key: "2026-11-21", sent: s })),
    );
    expect(one.json.data).toMatchObject({ from: "2026-11-20T23:00:00.000Z", to: "2026-11-21T23:00:00.000Z" });
    expect(one.json.data.rows).toEqual(onlyEarly.rows);

    // The CLI prints the same figures, a total row last.
    const asAdmin = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_ADMIN_TOKEN: testAdminToken });
    const json = await runJson<Schemas["MarginReport"]>(
      ["report", "margin", "--from", "2026-11-20", "--to", today, "--group-by", "day"],
      asAdmin,
    );
    expect(json).toEqual(all.json.data);
    const csv = await runCli(["report", "margin", "--from", "2026-11-20", "--to", today, "--group-by", "day", "--csv"], asAdmin);
    expect(csv.code).toBe(0);
    const [header, ...lines] = parse(csv.stdout) as string[][];
    expect(header).toEqual(["key", "count", "amount_kobo", "price_kobo", "cost_kobo", "margin_kobo", "uncosted"]);
    const asText = (r: { key: string } & Expected) =>
      [r.key, r.count, r.amount_kobo, r.price_kobo, r.cost_kobo, r.margin_kobo, r.uncosted].map(String);
    expect(lines).toEqual([...expected.rows.map(asText), asText({ key: "TOTAL", ...expected.total })]);
  });

  test("test mode: sandbox orders cost nothing, and live orders are not in it", async () => {
    const testAccount = await server.createAccount("Margin Sandbox");
    const client = server.client(testAccount.testKey);
    expect((await client.post("/api/v1/wallet/fund", { amount_kobo: 1_000_000, note: "test" }, idem())).status).toBe(200);
    const prices: number[] = [];
    for (const amount of [10_000, 20_000, 30_000]) {
      const res = await client.post(
        "/api/v1/vend",
        { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: amount },
        idem(),
      );
      expect(res.status).toBe(202);
      prices.push(res.json.data.price_kobo);
    }
    await processAll();
    const today = lagosDay(new Date());
    const res = await server.admin.get(`/admin/v1/reports/margin?from=${today}&to=${today}&mode=test&group_by=provider`);
    const price = prices.reduce((a, b) => a + b, 0);
    const figures = { count: 3, amount_kobo: 60_000, price_kobo: price, cost_kobo: 0, margin_kobo: price, uncosted: 0 };
    expect(res.json.data.rows).toEqual([{ key: "sandbox", ...figures }]);
    expect(res.json.data.total).toEqual(figures);
  });

  test.each<[string, string, string]>([
    ["from is no day", "from=2026-13-01&to=2026-11-21", "from"],
    ["to before from", "from=2026-11-21&to=2026-11-20", "to"],
    ["over 366 days", "from=2025-01-01&to=2026-11-21", "to"],
    ["before 2000", "from=1999-12-31&to=2026-11-21", "from"],
    ["an unknown group", "from=2026-11-21&to=2026-11-21&group_by=product", "group_by"],
    ["to missing", "from=2026-11-21", "to"],
  ])("%s: 400 naming the field", async (_, query, field) => {
    const res = await server.admin.get(`/admin/v1/reports/margin?${query}`);
    expect(res.status).toBe(400);
    expect(res.json.code).toBe("VALIDATION_FAILED");
    expect(res.json.data.errors.map((e: { field: string }) => e.field)).toContain(field);
  });
});
