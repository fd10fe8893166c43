import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { components } from "../../generated/openapi-types.ts";
import { processingRunner } from "../../src/background.ts";
import type { Config } from "../../src/config.ts";
import { checkProviderBalances } from "../../src/jobs/tasks/provider-balances.ts";
import { processClaimed } from "../../src/orders/processing.ts";
import { claimDueTransactions } from "../../src/orders/statements/claim-due.ts";
import { commissionTable } from "../../src/providers/commission.ts";
import { cliEnv, removeConfigDirs, runCli, runJson } from "../cli/cli.ts";
import { idem } from "../helpers/accounts.ts";
import {
  ClubkonnectBook,
  clubkonnectHandlers,
  clubkonnectOrderPaths,
  clubkonnectTestConfig,
} from "../helpers/clubkonnect-mock.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing, transactionRow } from "../helpers/processing.ts";
import { startTestServer, type TestServer, testAdminToken } from "../helpers/server.ts";
import { setupMockFetch, VtuBook, type VtuPayBody, vtuHandlers, vtuTestConfig } from "../helpers/vtu-mock.ts";

type Schemas = components["schemas"];

// Two live providers behind msw reporting their floats; the test moves each float as the provider would
// (by the cost of what it delivered), then takes a sample with the balance task.
const network = setupMockFetch({ onUnhandledFrame: "bypass" });
const vtu = new VtuBook();
const ck = new ClubkonnectBook();

/** VTU airtime at 3% commission: a ₦100 order costs ₦97. ClubKonnect has none: it costs face value. */
const vtuCost = 10_000 - 300;
const ckCost = 10_000;

function floatConfig(): Partial<Config> {
  return fastProcessing({
    providers: { vtu: vtuTestConfig, clubkonnect: clubkonnectTestConfig },
    routing: {
      routes: [{ service: "airtime", providers: ["vtu", "clubkonnect"] }],
      commission: { vtu: { "airtime/*": { bps: 300 } } },
      floatToleranceKobo: { clubkonnect: 50 },
    },
  });
}

let server: TestServer;
let client: HttpClient;
const started = new Date(Date.now() - 1000).toISOString();

const sample = () => checkProviderBalances(server.deps);
const mismatches = async (provider: string) =>
  (await server.admin.get(`/admin/v1/anomalies?kind=float_mismatch&provider=${provider}`)).json.data.items as {
    message: string;
  }[];

/** `count` ₦100 MTN airtime orders, processed; their references. Phones ending 9999 are refused by VTU (moved on). */
async function vendAirtime(phones: string[]): Promise<string[]> {
  const references: string[] = [];
  for (const phone of phones) {
    const res = await client.post(
      "/api/v1/vend",
      { product_code: "mtn-airtime", phone_number: phone, amount_kobo: 10_000 },
      idem(),
    );
    expect(res.status).toBe(202);
    references.push(res.json.data.reference);
  }
  const runner = processingRunner({ ...server.deps, apiBaseUrl: server.url }, "float-worker");
  await runner.tick();
  for (const reference of references) {
    expect((await transactionRow(server.database.handle.db, reference)).status).toBe("successful");
  }
  return references;
}

async function mismatchCount(provider: string): Promise<number> {
  const metrics = await server.deps.metrics.scrape();
  const line = metrics.split("\n").find((l) => l.startsWith(`vend_provider_float_mismatch_total{provider="${provider}"}`));
  return Number(line?.split(" ").at(-1) ?? Number.NaN);
}

beforeAll(async () => {
  network.enable();
  network.use(
    ...vtuHandlers({
      book: vtu,
      pay: (body: VtuPayBody) =>
        body.billersCode.endsWith("9999")
          ? { kind: "refuse", code: "018", description: "LOW WALLET BALANCE" }
          : { kind: "deliver" },
    }),
    ...clubkonnectHandlers({ book: ck, vend: () => ({ kind: "deliver" }) }),
  );
  server = await startTestServer(floatConfig());
  const account = await server.createAccount("Float Co");
  await server.admin.post(
    `/admin/v1/accounts/${account.id}/wallet/credit`,
    { mode: "live", amount_kobo: 10_000_000, note: "float" },
    idem(),
  );
  client = server.client(account.liveKey);
  vtu.balanceKobo = 10_000_000;
  ck.balanceKobo = 5_000_000;
});
afterAll(async () => {
  removeConfigDirs();
  await server.close();
  network.disable();
});

describe("float reconciliation between consecutive samples", () => {
  test("a float that drops by exactly the costs raises nothing; a refusal moved on nets to nothing at the first provider", async () => {
    expect(await sample()).toBe(2);
    await vendAirtime(["08031110001", "08031110002", "08031110003", "08031119999"]);
    // VTU delivered 3 (₦97 each) and refused one (no charge); ClubKonnect delivered the refused one at face value.
    expect(vtu.requestsTo("pay").length).toBe(4);
    expect(ck.requests.filter((r) => clubkonnectOrderPaths.includes(r.path)).length).toBe(1);
    vtu.balanceKobo -= 3 * vtuCost;
    ck.balanceKobo -= ckCost;
    await sample();
    expect(await mismatches("vtu")).toHaveLength(0);
    expect(await mismatches("clubkonnect")).toHaveLength(0);
    expect(await mismatchCount("vtu")).toBe(0);
  });

  test("a float that drops by one vend's cost more than the costs raises exactly one anomaly, counted once", async () => {
    await vendAirtime(["08031110011", "08031110012"]);
    vtu.balanceKobo -= 3 * vtuCost;
    await sample();
    const raised = await mismatches("vtu");
    expect(raised).toHaveLength(1);
    expect(raised[0]?.message).toContain("a difference of NGN -97.00, beyond the tolerance of NGN 1.00");
    expect(await mismatchCount("vtu")).toBe(1);
    // The next pair agrees (nothing happened): nothing more is raised.
    await sample();
    expect(await mismatches("vtu")).toHaveLength(1);
    expect(await mismatches("clubkonnect")).toHaveLength(0);
    expect(await mismatchCount("vtu")).toBe(1);
  });

  test("a recorded top-up explains a rise: no anomaly; within the tolerance is no anomaly either", async () => {
    const key = idem();
    const body = { amount_kobo: 5_000_000, note: "GTB transfer ref 55120" };
    const topup = await server.admin.post("/admin/v1/providers/vtu/float-topups", body, key);
    expect(topup.status).toBe(201);
    // A retry with the same key records it once: the same answer, replayed.
    const retried = await server.admin.post("/admin/v1/providers/vtu/float-topups", body, key);
    expect(retried.status).toBe(201);
    expect(retried.headers.get("idempotent-replayed")).toBe("true");
    expect(retried.json.data).toEqual(topup.json.data);
    const reused = await server.admin.post("/admin/v1/providers/vtu/float-topups", { ...body, amount_kobo: 1 }, key);
    expect(reused.status).toBe(422);
    expect(topup.json.data).toMatchObject({ provider: "vtu", amount_kobo: 5_000_000, note: "GTB transfer ref 55120" });
    vtu.balanceKobo += 5_000_000;
    ck.balanceKobo -= 50; // ClubKonnect's tolerance is 50 kobo
    await sample();
    expect(await mismatches("vtu")).toHaveLength(1);
    expect(await mismatches("clubkonnect")).toHaveLength(0);

    const listed = await server.admin.get("/admin/v1/providers/vtu/float-topups");
    expect(listed.status).toBe(200);
    expect(listed.json.data.items).toEqual([topup.json.data]);
    const audit = await server.admin.get("/admin/v1/audit?action=recordFloatTopup");
    expect(audit.json.data.items).toHaveLength(1);
    expect(audit.json.data.items[0]).toMatchObject({ target_type: "provider", target_id: "vtu", note: "GTB transfer ref 55120" });
  });

  test("the walk shows each pair: top-ups, costs, reversals, expected, actual, difference; vendctl prints the same", async () => {
    const to = new Date(Date.now() + 1000).toISOString();
    const res = await server.admin.get(`/admin/v1/providers/vtu/float-reconciliation?from=${started}&to=${to}`);
    expect(res.status).toBe(200);
    const walk = res.json.data;
    expect(walk).toMatchObject({ provider: "vtu", tolerance_kobo: 100, samples: 5, truncated: false });
    const pick = (step: Record<string, unknown>) => [
      step.topups_kobo,
      step.costs_kobo,
      step.reversals_kobo,
      step.expected_change_kobo,
      step.actual_change_kobo,
      step.difference_kobo,
      step.in_flight_start_kobo,
      step.in_flight_end_kobo,
      step.within_tolerance,
    ];
    expect(walk.steps.map(pick)).toEqual([
      // 3 delivered and 1 refused (taken, then reversed in the same interval)
      [0, 4 * vtuCost, vtuCost, -3 * vtuCost, -3 * vtuCost, 0, 0, 0, true],
      [0, 2 * vtuCost, 0, -2 * vtuCost, -3 * vtuCost, -vtuCost, 0, 0, false],
      [0, 0, 0, 0, 0, 0, 0, 0, true],
      [5_000_000, 0, 0, 5_000_000, 5_000_000, 0, 0, 0, true],
    ]);
    const ckWalk = (await server.admin.get(`/admin/v1/providers/clubkonnect/float-reconciliation?from=${started}&to=${to}`)).json
      .data;
    expect(ckWalk.steps.map(pick)).toEqual([
      [0, ckCost, 0, -ckCost, -ckCost, 0, 0, 0, true],
      [0, 0, 0, 0, 0, 0, 0, 0, true],
      [0, 0, 0, 0, 0, 0, 0, 0, true],
      [0, 0, 0, 0, -50, -50, 0, 0, true],
    ]);

    const asAdmin = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_ADMIN_TOKEN: testAdminToken });
    const json = await runJson(["providers", "reconcile", "vtu", "--from", started, "--to", to], asAdmin);
    expect(json).toEqual(walk);
    const table = await runCli(["providers", "reconcile", "vtu", "--from", started, "--to", to, "--table"], asAdmin);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain("5 samples, 4 steps, 1 beyond the tolerance of 100 kobo");
  });

  test.each<[string, Record<string, unknown>, string]>([
    ["no amount", { note: "x" }, "amount_kobo"],
    ["a zero amount", { amount_kobo: 0, note: "x" }, "amount_kobo"],
    ["a fractional amount", { amount_kobo: 1.5, note: "x" }, "amount_kobo"],
    ["no note", { amount_kobo: 100 }, "note"],
    ["an empty note", { amount_kobo: 100, note: "" }, "note"],
    ["a time in the future", { amount_kobo: 100, note: "x", occurred_at: "2999-01-01T00:00:00Z" }, "occurred_at"],
    ["a time that is no time", { amount_kobo: 100, note: "x", occurred_at: "yesterday" }, "occurred_at"],
    ["an unknown field", { amount_kobo: 100, note: "x", currency: "NGN" }, "currency"],
  ])("a top-up with %s: 400 naming the field, nothing written", async (_, body, field) => {
    const res = await server.admin.post("/admin/v1/providers/vtu/float-topups", body, idem());
    expect(res.status).toBe(400);
    expect(res.json.data.errors.map((e: { field: string }) => e.field)).toContain(field);
    const listed = await server.admin.get("/admin/v1/providers/vtu/float-topups");
    expect(listed.json.data.items).toHaveLength(1);
  });

  test("an unknown provider is 404; a walk without its range is 400", async () => {
    const unknown = await server.admin.post("/admin/v1/providers/nope/float-topups", { amount_kobo: 100, note: "x" }, idem());
    expect(unknown.status).toBe(404);
    const keyless = await server.admin.post("/admin/v1/providers/vtu/float-topups", { amount_kobo: 100, note: "x" });
    expect(keyless.status).toBe(400);
    expect((await server.admin.get("/admin/v1/providers/nope/float-topups")).status).toBe(404);
    const missing = await server.admin.get("/admin/v1/providers/vtu/float-reconciliation?from=2026-11-01T00:00:00Z");
    expect(missing.status).toBe(400);
    expect(missing.json.data.errors[0].field).toBe("to");
    const reversed = await server.admin.get(
      "/admin/v1/providers/vtu/float-reconciliation?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z",
    );
    expect(reversed.status).toBe(400);
  });

  test("vendctl providers topup records one (its key printed, a retry with it recorded once); topups lists them", async () => {
    const asAdmin = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_ADMIN_TOKEN: testAdminToken });
    const args = ["providers", "topup", "clubkonnect", "2500.50", "--note", "Zenith ref 9", "--occurred-at", started];
    const first = await runCli([...args, "--json"], asAdmin);
    expect(first.code).toBe(0);
    const key = /Idempotency-Key: (\S+)/.exec(first.stderr)?.[1] ?? "";
    expect(key).not.toBe("");
    const recorded = JSON.parse(first.stdout);
    expect(recorded).toMatchObject({ provider: "clubkonnect", amount_kobo: 250_050, note: "Zenith ref 9", occurred_at: started });
    const again = await runJson([...args, "--idempotency-key", key], asAdmin);
    expect(again).toEqual(recorded);
    const listed = await runJson<unknown[]>(["providers", "topups", "clubkonnect"], asAdmin);
    expect(listed).toEqual([recorded]);
    const bad = await runCli(["providers", "topup", "clubkonnect", "0", "--note", "x"], asAdmin);
    expect(bad.code).not.toBe(0);
  });

  test("an order in flight at a sample is no mismatch on either side of it; a shortfall beyond it still is", async () => {
    const raisedBefore = (await mismatches("vtu")).length;
    const res = await client.post(
      "/api/v1/vend",
      { product_code: "mtn-airtime", phone_number: "08031110021", amount_kobo: 10_000 },
      idem(),
    );
    expect(res.status).toBe(202);
    const db = server.database.handle.db;
    // Claimed (its attempt and cost recorded) but not yet at VTU when the float is read: the float has not moved.
    const [claim] = await claimDueTransactions(db, "w-flight", 10, 30, commissionTable(server.deps.config.routing));
    if (!claim) throw new Error("nothing claimed");
    await sample();
    // Then VTU takes it and delivers: the float drops in the next pair.
    await processClaimed(server.deps, claim);
    expect((await transactionRow(db, res.json.data.reference)).status).toBe("successful");
    vtu.balanceKobo -= vtuCost;
    await sample();
    expect(await mismatches("vtu")).toHaveLength(raisedBefore);
    // A shortfall larger than what was in flight at the start of its pair is raised.
    vtu.balanceKobo -= 101;
    await sample();
    expect(await mismatches("vtu")).toHaveLength(raisedBefore + 1);

    const to = new Date(Date.now() + 1000).toISOString();
    const walk = (await server.admin.get(`/admin/v1/providers/vtu/float-reconciliation?from=${started}&to=${to}`)).json.data;
    const last = walk.steps
      .slice(-3)
      .map((step: Schemas["FloatReconciliationStep"]) => [
        step.costs_kobo,
        step.difference_kobo,
        step.in_flight_start_kobo,
        step.in_flight_end_kobo,
        step.within_tolerance,
      ]);
    expect(last).toEqual([
      [vtuCost, vtuCost, 0, vtuCost, true],
      [0, -vtuCost, vtuCost, 0, true],
      [0, -101, 0, 0, false],
    ]);
  });
});
