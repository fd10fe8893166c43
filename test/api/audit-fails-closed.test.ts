import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { queryRows } from "../../src/db/rows.ts";
import { loadConfig } from "../../src/load-config.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing, transactionRow } from "../helpers/processing.ts";
import { captureLogs, startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

const defaults = loadConfig({});

let server: TestServer;
let client: HttpClient;
let account: { id: string; testKey: string };
let pending: string;
let victimKeyId: string;

const db = () => server.deps.db;
/** The owner's handle, for the trigger (on PostgreSQL the server runs as a role that owns nothing). */
const owner = () => server.database.handle.db;

async function count(table: string): Promise<number> {
  const [row] = await queryRows<{ n: number }>(db(), sql`select count(*)::int as n from ${sql.raw(table)}`);
  return Number(row?.n);
}

/** Everything the changes below could touch, as stored (and as this process holds it in memory). */
async function snapshot() {
  const [product] = await queryRows(db(), sql`select * from products where code = 'mtn-airtime'`);
  const providerStates = await queryRows(
    db(),
    sql`select provider, enabled, disabled_reason, disabled_at from provider_states order by provider`,
  );
  const detail = await server.admin.get(`/admin/v1/accounts/${account.id}`);
  return {
    accounts: await count("accounts"),
    apiKeys: await count("api_keys"),
    operators: await count("operators"),
    ledgerEntries: await count("ledger_entries"),
    idempotencyRecords: await count("idempotency_records"),
    auditEntries: await count("audit_entries"),
    wallets: detail.json.data.wallets,
    product,
    providerStates,
    sandboxEnabled: server.deps.providers.health.switchOf("sandbox").enabled,
    pendingStatus: (await transactionRow(db(), pending)).status,
    revokedAt: (await queryRows(db(), sql`select revoked_at from api_keys where id = ${victimKeyId}`))[0],
    registeredKeys: server.deps.credentials.size.keys,
  };
}

const creditKey = idem();

/** One of each kind of admin change (operator role and above), by the bootstrap admin. */
const changes: { action: string; send: () => ReturnType<HttpClient["post"]> }[] = [
  { action: "createAccount", send: () => server.admin.post("/admin/v1/accounts", { name: "Never Ltd" }) },
  { action: "createApiKey", send: () => server.admin.post(`/admin/v1/accounts/${account.id}/keys`, { mode: "test" }) },
  { action: "revokeApiKey", send: () => server.admin.delete(`/admin/v1/keys/${victimKeyId}`) },
  {
    action: "creditWallet",
    send: () =>
      server.admin.post(
        `/admin/v1/accounts/${account.id}/wallet/credit`,
        { mode: "live", amount_kobo: 70_000, note: "bank ref 9" },
        creditKey,
      ),
  },
  {
    action: "updateProduct",
    send: () => server.admin.request("PATCH", "/admin/v1/products/mtn-airtime", { discount_bps: 125 }),
  },
  { action: "disableProvider", send: () => server.admin.post("/admin/v1/providers/sandbox/disable", { reason: "drill" }) },
  {
    action: "resolveTransaction",
    send: () => server.admin.post(`/admin/v1/transactions/${pending}/resolve`, { status: "failed", note: "refunded by ops" }),
  },
  { action: "createOperator", send: () => server.admin.post("/admin/v1/operators", { name: "never-op", role: "viewer" }) },
];

beforeAll(async () => {
  const fast = fastProcessing();
  // No re-query while the test runs: the pending order stays pending until an operator resolves it.
  server = await startTestServer(fastProcessing({ worker: { ...defaults.worker, ...fast.worker, requerySchedule: [3600] } }), {
    background: true,
  });
  const funded = await fundedAccount(server, 1_000_000, "Audited Ltd");
  account = funded;
  client = funded.client;
  const victim = await server.admin.post(`/admin/v1/accounts/${account.id}/keys`, { mode: "test" });
  expect(victim.status).toBe(201);
  victimKeyId = victim.json.data.id;
  // A sandbox order to a number ending 4444 stays pending with the provider.
  const order = await client.post(
    "/api/v1/vend",
    { product_code: "mtn-airtime", phone_number: "08031234444", amount_kobo: 10_000 },
    idem(),
  );
  expect(order.status).toBe(202);
  pending = order.json.data.reference;
  await waitUntil(async () => (await transactionRow(db(), pending)).status === "pending", { what: `${pending} pending` });
});
afterAll(() => server.close());

describe("an admin change commits with its audit entry or not at all", () => {
  test("when the audit entry cannot be written, every change answers 500 and nothing changed", async () => {
    await owner().execute(
      sql`create function refuse_audit() returns trigger language plpgsql as $$ begin raise exception 'audit refused by the test'; end $$`,
    );
    await owner().execute(
      sql`create trigger refuse_audit before insert on audit_entries for each row execute function refuse_audit()`,
    );
    const before = await snapshot();
    const logs = captureLogs(server);
    try {
      for (const change of changes) {
        const res = await change.send();
        expect({ action: change.action, status: res.status, code: res.json.code }).toEqual({
          action: change.action,
          status: 500,
          code: "INTERNAL_ERROR",
        });
        expect(res.json.success).toBe(false);
        expect(res.json.message).toContain("its audit entry could not be written");
        // No key or token of a change that did not happen is ever shown.
        expect(res.text).not.toMatch(/rg_(test|live)_|op_[0-9A-Za-z]{40}/);
      }
    } finally {
      logs.restore();
    }
    expect(await snapshot()).toEqual(before);
    const refusals = logs.lines.map((line) => JSON.parse(line)).filter((line) => line.level === 50);
    expect(refusals.map((line) => line.action)).toEqual(changes.map((change) => change.action));
    expect(refusals.every((line) => line.msg === "audit entry could not be written; the change is rolled back")).toBe(true);
  });

  test("once the audit entry can be written, the same changes succeed and each is audited once", async () => {
    await owner().execute(sql`drop trigger refuse_audit on audit_entries`);
    await owner().execute(sql`drop function refuse_audit()`);
    const before = await snapshot();
    const answers = new Map<string, Awaited<ReturnType<HttpClient["post"]>>>();
    for (const change of changes) {
      const res = await change.send();
      expect({ action: change.action, status: res.status }).toEqual({
        action: change.action,
        status: change.action.startsWith("create") ? 201 : 200,
      });
      // The credit's Idempotency-Key was left free by the rolled-back attempt: it runs now, not a replay.
      expect(res.headers.get("idempotent-replayed")).toBeNull();
      answers.set(change.action, res);
    }
    const after = await snapshot();
    expect(after.auditEntries).toBe(before.auditEntries + changes.length);
    expect(after.accounts).toBe(before.accounts + 1);
    expect(after.apiKeys).toBe(before.apiKeys + 3);
    expect(after.operators).toBe(before.operators + 1);
    expect(after.pendingStatus).toBe("failed");
    expect(after.sandboxEnabled).toBe(false);
    const live = (wallets: { mode: string; balance_kobo: number }[]) => wallets.find((w) => w.mode === "live")?.balance_kobo;
    expect(live(after.wallets)).toBe((live(before.wallets) ?? 0) + 70_000);
    expect(after.ledgerEntries).toBe(before.ledgerEntries + 2);
    // Newest first: one entry per change, in the order they were made.
    const entries = await server.admin.get("/admin/v1/audit", { query: { limit: "50" } });
    const actions = (entries.json.data.items as { action: string }[]).map((entry) => entry.action);
    expect(actions.slice(0, changes.length)).toEqual(changes.map((change) => change.action).reverse());
    // A key created by a committed change authenticates at once.
    const created = answers.get("createApiKey")?.json.data.key as string;
    expect((await server.client(created).get("/api/v1/wallet")).status).toBe(200);
    await server.admin.post("/admin/v1/providers/sandbox/enable");
  });
});
