import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type SQL, sql } from "drizzle-orm";
import { queryRows } from "../../src/db/rows.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { idem, newKey } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

async function createOperator(name: string, role: "viewer" | "operator" | "admin", by: HttpClient = server.admin) {
  const res = await by.post("/admin/v1/operators", { name, role });
  expect(res.status).toBe(201);
  return {
    id: res.json.data.operator.id as string,
    token: res.json.data.token as string,
    client: server.client(res.json.data.token),
  };
}

async function auditCount(): Promise<number> {
  const [row] = await queryRows<{ n: number }>(server.deps.db, sql`select count(*)::int as n from audit_entries`);
  return Number(row?.n);
}

async function ledgerCount(): Promise<number> {
  const [row] = await queryRows<{ n: number }>(server.deps.db, sql`select count(*)::int as n from ledger_entries`);
  return Number(row?.n);
}

/** The database's refusal of a statement (drizzle wraps it), or "accepted". */
async function refusal(statement: SQL): Promise<string> {
  try {
    await server.deps.db.execute(statement);
    return "accepted";
  } catch (error) {
    return String((error as { cause?: Error }).cause?.message ?? error);
  }
}

async function audit(query: Record<string, string> = {}) {
  const res = await server.admin.get("/admin/v1/audit", { query });
  expect(res.status).toBe(200);
  return res.json.data.items as {
    operator: string;
    operator_id: string | null;
    action: string;
    target_type: string;
    target_id: string;
    request_id: string;
    before: unknown;
    after: Record<string, unknown> | null;
    note: string | null;
  }[];
}

describe("operators: tokens and roles", () => {
  test("ADMIN_TOKEN creates operators; the token is shown once, stored as a hash; a taken or reserved name is 409", async () => {
    const created = await server.admin.post("/admin/v1/operators", { name: "ada", role: "admin" });
    expect(created.status).toBe(201);
    const token: string = created.json.data.token;
    expect(token).toMatch(/^op_[0-9A-Za-z]{40}$/);
    expect(created.json.data.operator).toMatchObject({ name: "ada", role: "admin", created_by: "ADMIN_TOKEN", revoked_at: null });
    const stored = await queryRows<{ token_hash: string }>(
      server.deps.db,
      sql`select token_hash from operators where name = 'ada'`,
    );
    expect(stored[0]?.token_hash).toHaveLength(64);
    expect(stored[0]?.token_hash).not.toContain(token);
    const listed = await server.admin.get("/admin/v1/operators");
    expect(listed.text).not.toContain(token);
    expect(listed.json.data.items.map((o: { name: string }) => o.name)).toContain("ada");

    const again = await server.admin.post("/admin/v1/operators", { name: "ada", role: "viewer" });
    expect(again.status).toBe(409);
    expect(again.json.code).toBe("CONFLICT");
    const reserved = await server.admin.post("/admin/v1/operators", { name: "ADMIN_TOKEN", role: "viewer" });
    expect(reserved.status).toBe(409);
    const bad = await server.admin.post("/admin/v1/operators", { name: "has space", role: "boss" });
    expect(bad.status).toBe(400);
    expect(bad.json.data.errors.map((e: { field: string }) => e.field).sort()).toEqual(["name", "role"]);
  });

  test("who am I: an operator, and the bootstrap token as the admin ADMIN_TOKEN", async () => {
    const vera = await createOperator("vera-me", "viewer");
    const me = await vera.client.get("/admin/v1/operators/me");
    expect(me.status).toBe(200);
    expect(me.json.data).toMatchObject({ id: vera.id, name: "vera-me", role: "viewer" });
    const bootstrap = await server.admin.get("/admin/v1/operators/me");
    expect(bootstrap.json.data).toMatchObject({ id: null, name: "ADMIN_TOKEN", role: "admin" });
  });

  test("a viewer reads but cannot credit (403, nothing written); an operator credits but cannot manage operators", async () => {
    const account = await server.createAccount("Roles Ltd");
    const viewer = await createOperator("vic", "viewer");
    const operator = await createOperator("olu", "operator");
    expect((await viewer.client.get(`/admin/v1/accounts/${account.id}`)).status).toBe(200);
    expect((await viewer.client.get("/admin/v1/reconciliation")).status).toBe(200);

    const entriesBefore = await ledgerCount();
    const auditBefore = await auditCount();
    const credit = { mode: "live", amount_kobo: 500_000, note: "bank ref 1" };
    const refused = await viewer.client.post(`/admin/v1/accounts/${account.id}/wallet/credit`, credit, idem());
    expect(refused.status).toBe(403);
    expect(refused.json.code).toBe("FORBIDDEN");
    expect(refused.json.message).toContain("operator role");
    expect((await viewer.client.delete(`/admin/v1/keys/${account.id}`)).status).toBe(403);
    expect((await operator.client.post("/admin/v1/operators", { name: "sneaky", role: "admin" })).status).toBe(403);
    // Nothing was done: no ledger entry, no audit entry, no operator.
    expect(await ledgerCount()).toBe(entriesBefore);
    expect(await auditCount()).toBe(auditBefore);
    expect((await server.admin.get("/admin/v1/operators")).text).not.toContain("sneaky");

    const done = await operator.client.post(`/admin/v1/accounts/${account.id}/wallet/credit`, credit, idem());
    expect(done.status).toBe(200);
    expect(await ledgerCount()).toBe(entriesBefore + 1);
    expect(await reconcileWallets(server.deps.db)).toEqual([]);
  });

  test("a revoked operator's token is refused at once (401); revoking twice is harmless; the name stays taken", async () => {
    const gone = await createOperator("gone", "operator");
    expect((await gone.client.get("/admin/v1/accounts")).status).toBe(200);
    const revoked = await server.admin.delete(`/admin/v1/operators/${gone.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.json.data.revoked_at).toBeString();
    const refused = await gone.client.get("/admin/v1/accounts");
    expect(refused.status).toBe(401);
    expect(refused.json.message).toContain("unknown or revoked");
    const twice = await server.admin.delete(`/admin/v1/operators/${gone.id}`);
    expect(twice.json.data.revoked_at).toBe(revoked.json.data.revoked_at);
    expect((await server.admin.post("/admin/v1/operators", { name: "gone", role: "viewer" })).status).toBe(409);
    expect((await server.admin.delete("/admin/v1/operators/00000000-0000-4000-8000-000000000000")).status).toBe(404);
    expect((await server.admin.delete("/admin/v1/operators/not-a-uuid")).status).toBe(400);
  });

  test("an unknown op_ token is 401; a malformed bearer is 401", async () => {
    const unknown = await server.client(`op_${"A".repeat(40)}`).get("/admin/v1/accounts");
    expect(unknown.status).toBe(401);
    expect((await server.client("op_short").get("/admin/v1/accounts")).status).toBe(401);
  });
});

describe("audit trail", () => {
  test("every operator action appears with its operator, target, request id, before/after; secrets are not stored", async () => {
    const otto = await createOperator("otto", "operator");
    const requestId = `req-audit-${newKey()}`;
    const createdAccount = await otto.client.request(
      "POST",
      "/admin/v1/accounts",
      { name: "Audited Ltd" },
      {
        headers: { "x-request-id": requestId },
      },
    );
    expect(createdAccount.status).toBe(201);
    const accountId: string = createdAccount.json.data.account.id;
    const liveKey: string = createdAccount.json.data.keys[1].key;

    const key = await otto.client.post(`/admin/v1/accounts/${accountId}/keys`, { mode: "test" });
    const keyId: string = key.json.data.id;
    expect((await otto.client.delete(`/admin/v1/keys/${keyId}`)).status).toBe(200);
    const idemKey = idem();
    const credit = { mode: "live", amount_kobo: 250_000, note: "transfer 77" };
    expect((await otto.client.post(`/admin/v1/accounts/${accountId}/wallet/credit`, credit, idemKey)).status).toBe(200);
    // A replay changes nothing, so it is not audited again.
    const replay = await otto.client.post(`/admin/v1/accounts/${accountId}/wallet/credit`, credit, idemKey);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    const disabled = await otto.client.post("/admin/v1/providers/sandbox/disable", { reason: "drill 12" });
    expect(disabled.status).toBe(200);
    expect((await otto.client.post("/admin/v1/providers/sandbox/enable")).status).toBe(200);
    const product = await otto.client.request("PATCH", "/admin/v1/products/mtn-airtime", { active: false });
    expect(product.status).toBe(200);
    await otto.client.request("PATCH", "/admin/v1/products/mtn-airtime", { active: true });

    const entries = await audit({ operator: "otto" });
    const byAction = (action: string) => entries.filter((e) => e.action === action);
    expect(entries.every((e) => e.operator === "otto" && e.operator_id === otto.id)).toBe(true);
    expect(entries.map((e) => e.action)).toEqual([
      "updateProduct",
      "updateProduct",
      "enableProvider",
      "disableProvider",
      "creditWallet",
      "revokeApiKey",
      "createApiKey",
      "createAccount",
    ]);
    const [accountEntry] = byAction("createAccount");
    expect(accountEntry).toMatchObject({ target_type: "account", target_id: accountId, request_id: requestId });
    expect(JSON.stringify(accountEntry?.after)).not.toContain(liveKey);
    expect(JSON.stringify(accountEntry?.after)).toContain("[redacted]");
    expect(JSON.stringify(byAction("createApiKey")[0]?.after)).not.toContain(key.json.data.key);
    expect(byAction("revokeApiKey")[0]).toMatchObject({ target_type: "api_key", target_id: keyId });
    expect(byAction("creditWallet")[0]).toMatchObject({ target_type: "account", target_id: accountId, note: "transfer 77" });
    expect(byAction("disableProvider")[0]).toMatchObject({ target_type: "provider", target_id: "sandbox", note: "drill 12" });
    expect(byAction("disableProvider")[0]?.before).toMatchObject({ name: "sandbox", enabled: true });
    expect(byAction("disableProvider")[0]?.after).toMatchObject({ enabled: false });
    const [productOn, productOff] = byAction("updateProduct");
    expect(productOff).toMatchObject({ target_type: "product", target_id: "mtn-airtime" });
    expect(productOff?.before).toMatchObject({ active: true });
    expect(productOff?.after).toMatchObject({ active: false });
    expect(productOn?.before).toMatchObject({ active: false });

    // Reads and refusals are not audited.
    const before = await auditCount();
    await otto.client.get("/admin/v1/accounts");
    await otto.client.post("/admin/v1/operators", { name: "nope", role: "viewer" });
    expect(await auditCount()).toBe(before);
  });

  test("the bootstrap token is audited as ADMIN_TOKEN; filters by action and target; pages with a cursor", async () => {
    const account = await server.createAccount("Filtered Ltd");
    for (const amount of [100, 200, 300]) {
      const res = await server.admin.post(
        `/admin/v1/accounts/${account.id}/wallet/credit`,
        { mode: "test", amount_kobo: amount, note: `n${amount}` },
        idem(),
      );
      expect(res.status).toBe(200);
    }
    const credits = await audit({ action: "creditWallet", target_id: account.id });
    expect(credits.map((e) => e.note)).toEqual(["n300", "n200", "n100"]);
    expect(credits.every((e) => e.operator === "ADMIN_TOKEN" && e.operator_id === null)).toBe(true);

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const query: Record<string, string> = { action: "creditWallet", target_id: account.id, limit: "1" };
      if (cursor) query.cursor = cursor;
      const page = await server.admin.get("/admin/v1/audit", { query });
      expect(page.status).toBe(200);
      seen.push(...page.json.data.items.map((e: { note: string }) => e.note));
      cursor = page.json.data.page.next_cursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(["n300", "n200", "n100"]);
    const foreign = await server.admin.get("/admin/v1/audit", { query: { action: "createAccount", cursor: "abc.def" } });
    expect(foreign.status).toBe(400);
  });

  test("entries cannot be changed or deleted, even in SQL", async () => {
    await server.admin.post("/admin/v1/operators", { name: "sql-proof", role: "viewer" });
    const count = await auditCount();
    expect(count).toBeGreaterThan(0);
    expect(await refusal(sql`update audit_entries set operator_name = 'someone else'`)).toContain("append-only");
    expect(await refusal(sql`delete from audit_entries`)).toContain("append-only");
    expect(await auditCount()).toBe(count);
    expect((await audit({ operator: "someone else" })).length).toBe(0);
  });
});

describe("operators without ADMIN_TOKEN", () => {
  test("an operator token works; any other bearer finds no admin API (404)", async () => {
    const viewer = await createOperator("solo", "viewer");
    const bare = await startTestServer({ adminToken: undefined });
    try {
      // Its own database: the first operator is created there directly, as `npm run operator:create` does.
      const { createOperator: create } = await import("../../src/admin/operators.ts");
      const created = await create(bare.deps.db, { name: "solo", role: "operator" }, "bootstrap");
      expect((await bare.client(created.token).get("/admin/v1/accounts")).status).toBe(200);
      expect((await bare.client(viewer.token).get("/admin/v1/accounts")).status).toBe(401);
      expect((await bare.client("anything-else-at-all-12345").get("/admin/v1/accounts")).status).toBe(404);
      expect((await bare.anonymous.get("/admin/v1/accounts")).status).toBe(404);
    } finally {
      await bare.close();
    }
  });
});
