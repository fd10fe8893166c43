import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { apiKeys, idempotencyRecords, ledgerEntries, transactions, wallets } from "../../src/db/schema/index.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

let server: TestServer;
// Trusts X-Forwarded-For, so a test can speak from any address (IPv6 and IPv4-mapped included).
let proxied: TestServer;

beforeAll(async () => {
  // The shortest propagation bound the configuration allows: revocations and grace-0 rolls wait at most that.
  server = await startTestServer({ keyPropagationMs: 200 });
  proxied = await startTestServer({ trustProxy: true });
});
afterAll(async () => {
  await server.close();
  await proxied.close();
});

interface CreatedKey {
  id: string;
  key: string;
  prefix: string;
  expires_at: string | null;
  allowed_ips: string[] | null;
}

async function createKey(on: TestServer, accountId: string, body: Record<string, unknown>): Promise<CreatedKey> {
  const res = await on.admin.post(`/admin/v1/accounts/${accountId}/keys`, { mode: "test", ...body });
  if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${res.text}`);
  return res.json.data;
}

/** Polls (bounded) until `probe` answers `status`: expiry is checked against the clock, not slept past. */
function eventually<R extends { status: number }>(probe: () => Promise<R>, status: number, withinMs = 30_000): Promise<R> {
  return waitUntil(
    async () => {
      const answer = await probe();
      return answer.status === status && answer;
    },
    { what: `an answer ${status}`, timeoutMs: withinMs, intervalMs: 100 },
  );
}

const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();

describe("creating keys with an expiry and an allow-list", () => {
  test.each([
    ["an expiry in the past", { expires_at: "2020-01-01T00:00:00Z" }, "expires_at"],
    ["an address that is not one", { allowed_ips: ["127.0.0.1", "10.0.0.300"] }, "allowed_ips[1]"],
    ["a prefix over 32", { allowed_ips: ["10.0.0.0/33"] }, "allowed_ips[0]"],
    ["a prefix over 128", { allowed_ips: ["2001:db8::/129"] }, "allowed_ips[0]"],
    ["a shorthand IPv4 form", { allowed_ips: ["127.1"] }, "allowed_ips[0]"],
    ["a host name", { allowed_ips: ["example.com"] }, "allowed_ips[0]"],
    ["an empty list", { allowed_ips: [] }, "allowed_ips"],
    ["51 entries", { allowed_ips: Array.from({ length: 51 }, (_, i) => `10.0.${i}.0/24`) }, "allowed_ips"],
  ])("%s is 400 naming the field, and no key is made", async (_label, body, field) => {
    const account = await server.createAccount("bad-keys");
    const res = await server.admin.post(`/admin/v1/accounts/${account.id}/keys`, { mode: "test", ...body });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe("VALIDATION_FAILED");
    expect(res.json.data.errors.map((e: { field: string }) => e.field)).toContain(field);
    const rows = await server.deps.db.select().from(apiKeys).where(eq(apiKeys.accountId, account.id));
    expect(rows).toHaveLength(2);
  });

  test("entries are stored in canonical form: bare addresses are single-address blocks, host bits cleared", async () => {
    const account = await server.createAccount("canonical");
    const key = await createKey(server, account.id, {
      allowed_ips: ["10.1.2.3/8", "::1", "2001:DB8:0:0::7/48", "127.0.0.1", "127.0.0.1/32"],
      expires_at: inSeconds(3600),
    });
    expect(key.allowed_ips).toEqual(["10.0.0.0/8", "::1/128", "2001:db8::/48", "127.0.0.1/32"]);
    expect(key.expires_at).not.toBeNull();
    const listed = await server.admin.get(`/admin/v1/accounts/${account.id}/keys`);
    const row = listed.json.data.find((k: { id: string }) => k.id === key.id);
    expect(row).toMatchObject({
      allowed_ips: key.allowed_ips,
      expires_at: key.expires_at,
      last_used_at: null,
      rolled_from: null,
    });
  });
});

describe("an expired key", () => {
  test("is 401 from its expiry on, even while authentication remembers it, and the key is never echoed", async () => {
    const account = await server.createAccount("expiring");
    const key = await createKey(server, account.id, { expires_at: inSeconds(2) });
    const client = server.client(key.key);
    expect((await client.get("/api/v1/wallet")).status).toBe(200);
    const refused = await eventually(() => client.get("/api/v1/wallet"), 401);
    expect(refused.status).toBe(401);
    expect(refused.json.code).toBe("UNAUTHENTICATED");
    expect(refused.json.message).toContain("expired");
    expect(refused.text).not.toContain(key.key);
    // As for a rolled key below: refused once the expiry has passed on the database's clock as the process last
    // measured it, erring late by half a heartbeat's round trip (never honoured past its time), so up to that
    // early on this clock (1 ms in one CI run).
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(key.expires_at ?? "") - 100);
  });
});

/** What a refused request must not have written for the account: its transactions, ledger entries, idempotency records. */
async function footprint(on: TestServer, accountId: string) {
  const db = on.deps.db;
  const counted = async (query: Promise<{ n: number }[]>) => (await query)[0]?.n;
  const count = sql<number>`count(*)::int`;
  return {
    transactions: await counted(db.select({ n: count }).from(transactions).where(eq(transactions.accountId, accountId))),
    ledgerEntries: await counted(
      db
        .select({ n: count })
        .from(ledgerEntries)
        .innerJoin(wallets, eq(wallets.id, ledgerEntries.walletId))
        .where(eq(wallets.accountId, accountId)),
    ),
    idempotencyRecords: await counted(
      db
        .select({ n: count })
        .from(idempotencyRecords)
        .where(eq(idempotencyRecords.scope, `account:${accountId}:test`)),
    ),
  };
}

describe("the IP allow-list", () => {
  test("a key used from outside its list is 403 IP_NOT_ALLOWED and nothing is done", async () => {
    const account = await fundedAccount(server, 100_000, "walled");
    const key = await createKey(server, account.id, { allowed_ips: ["10.0.0.0/8", "2001:db8::/32"] });
    const client = server.client(key.key);
    const before = await footprint(server, account.id);
    const vend = { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 };
    const refused = await client.post("/api/v1/vend", vend, idem("walled-1"));
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ success: false, code: "IP_NOT_ALLOWED", data: null });
    expect(refused.json.message).toContain("127.0.0.1");
    for (const path of ["/api/v1/wallet", "/api/v1/keys", "/api/v1/transactions"]) {
      expect((await client.get(path)).json.code).toBe("IP_NOT_ALLOWED");
    }
    expect((await client.post("/api/v1/keys/roll", { grace_seconds: 0 })).status).toBe(403);
    // Nothing written: no transaction, no hold in the ledger, no idempotency record, no new key, and the
    // wallets still equal their ledgers.
    expect(await footprint(server, account.id)).toEqual(before);
    expect(before).toMatchObject({ transactions: 0, ledgerEntries: 1, idempotencyRecords: 1 });
    expect(await server.deps.db.select().from(apiKeys).where(eq(apiKeys.accountId, account.id))).toHaveLength(3);
    const reconciliation = await server.admin.get("/admin/v1/reconciliation", { query: { account_id: account.id } });
    expect(reconciliation.json.data).toMatchObject({ balanced: true, discrepancies: [] });
    // The same Idempotency-Key is still free for a key that may be used from here.
    const allowed = await createKey(server, account.id, { allowed_ips: ["127.0.0.0/8"] });
    const accepted = await server.client(allowed.key).post("/api/v1/vend", vend, idem("walled-1"));
    expect(accepted.status).toBe(202);
    expect(accepted.headers.get("idempotent-replayed")).toBeNull();
  });

  test("a key used from inside its list works", async () => {
    const account = await server.createAccount("inside");
    for (const allowed_ips of [["127.0.0.1"], ["127.0.0.0/8", "2001:db8::/32"], ["::ffff:127.0.0.0/104"]]) {
      const key = await createKey(server, account.id, { allowed_ips });
      expect({ allowed_ips, status: (await server.client(key.key).get("/api/v1/wallet")).status }).toEqual({
        allowed_ips,
        status: 200,
      });
    }
  });

  const cases: [string[], string, number][] = [
    [["2001:db8::/32"], "2001:db8:1::5", 200],
    [["2001:db8::/32"], "2001:db9::1", 403],
    [["::1"], "::1", 200],
    [["::1"], "127.0.0.1", 403],
    [["10.0.0.0/8"], "::ffff:10.1.2.3", 200],
    [["10.0.0.0/8"], "::ffff:11.1.2.3", 403],
    [["::ffff:10.0.0.0/104"], "10.200.0.1", 200],
    [["203.0.113.7"], "203.0.113.7", 200],
    [["203.0.113.7"], "203.0.113.8", 403],
  ];
  test.each(cases)("allowed %p, calling from %s: %d", async (allowed_ips, from, status) => {
    const account = await proxied.createAccount("proxied");
    const key = await createKey(proxied, account.id, { allowed_ips });
    const res = await proxied.client(key.key).get("/api/v1/wallet", { headers: { "x-forwarded-for": `198.51.100.1, ${from}` } });
    expect(res.status).toBe(status);
    if (status === 403) expect(res.json.code).toBe("IP_NOT_ALLOWED");
  });
});

async function lastUsedAt(on: TestServer, keyId: string): Promise<Date | null> {
  const [row] = await on.deps.db.select({ at: apiKeys.lastUsedAt }).from(apiKeys).where(eq(apiKeys.id, keyId));
  return row?.at ?? null;
}

describe("last_used_at", () => {
  test("is set on use and not rewritten within a minute", async () => {
    const account = await server.createAccount("usage");
    const key = await createKey(server, account.id, {});
    expect(await lastUsedAt(server, key.id)).toBeNull();
    const client = server.client(key.key);
    await client.get("/api/v1/wallet");
    await server.deps.keyUsage.settle();
    const first = await lastUsedAt(server, key.id);
    expect(first).not.toBeNull();
    for (let i = 0; i < 3; i++) await client.get("/api/v1/wallet");
    await server.deps.keyUsage.settle();
    expect(await lastUsedAt(server, key.id)).toEqual(first);
    const listed = await client.get("/api/v1/keys");
    expect(listed.json.data.find((k: { id: string }) => k.id === key.id).last_used_at).toBe(first?.toISOString());
  });

  test("the database guard keeps another process from rewriting it within a minute, and lets it after", async () => {
    const account = await server.createAccount("usage-guard");
    const key = await createKey(server, account.id, {});
    await server.client(key.key).get("/api/v1/wallet");
    await server.deps.keyUsage.settle();
    const first = await lastUsedAt(server, key.id);
    // A process whose own memory is a minute ahead writes, but the guard refuses within the minute.
    const recorder = server.deps.keyUsage;
    recorder.record(server.deps.db, server.deps.logger, key.id, Date.now() + 61_000);
    await recorder.settle();
    expect(await lastUsedAt(server, key.id)).toEqual(first);
    await server.deps.db.update(apiKeys).set({ lastUsedAt: sql`now() - interval '2 minutes'` }).where(eq(apiKeys.id, key.id));
    recorder.record(server.deps.db, server.deps.logger, key.id, Date.now() + 122_000);
    await recorder.settle();
    const rewritten = await lastUsedAt(server, key.id);
    expect(rewritten?.getTime()).toBeGreaterThan((first?.getTime() ?? 0) - 1000);
  });
});

describe("GET /api/v1/keys", () => {
  test("lists the account's keys of the caller's mode, prefixes only, marks the caller, shows revoked and expired", async () => {
    const account = await server.createAccount("lister");
    const other = await server.createAccount("someone-else");
    const second = await createKey(server, account.id, { allowed_ips: ["127.0.0.1"] });
    const revoked = await createKey(server, account.id, {});
    await server.admin.delete(`/admin/v1/keys/${revoked.id}`);
    const expiring = await createKey(server, account.id, { expires_at: inSeconds(1) });
    const res = await eventually(async () => {
      const answer = await server.client(account.testKey).get("/api/v1/keys");
      const row = answer.json.data.find((k: { id: string }) => k.id === expiring.id);
      return { ...answer, status: Date.parse(row.expires_at) <= Date.now() ? answer.status : 0 };
    }, 200);
    const keys = res.json.data as { id: string; mode: string; current: boolean; revoked_at: string | null; prefix: string }[];
    expect(keys).toHaveLength(4);
    expect(new Set(keys.map((k) => k.mode))).toEqual(new Set(["test"]));
    expect(keys.filter((k) => k.current)).toHaveLength(1);
    expect(keys.find((k) => k.current)?.prefix).toBe(account.testKey.slice(0, 12));
    expect(keys.find((k) => k.id === revoked.id)?.revoked_at).not.toBeNull();
    expect(keys.find((k) => k.id === second.id)).toMatchObject({ current: false, allowed_ips: ["127.0.0.1/32"] });
    for (const secret of [account.testKey, account.liveKey, second.key, other.testKey]) expect(res.text).not.toContain(secret);
    expect(res.text).not.toContain("hash");
    const live = await server.client(account.liveKey).get("/api/v1/keys");
    expect(live.json.data.map((k: { mode: string }) => k.mode)).toEqual(["live"]);
  });
});

interface Rolled {
  key: CreatedKey & { rolled_from: string; mode: string };
  previous: { id: string; expires_at: string };
}

const roll = (client: HttpClient, body?: unknown) => client.post("/api/v1/keys/roll", body);

describe("POST /api/v1/keys/roll", () => {
  test("issues a new key with the old one's mode and allow-list; the old one works through the grace, then 401", async () => {
    const account = await server.createAccount("roller");
    const old = await createKey(server, account.id, { allowed_ips: ["127.0.0.1"] });
    const oldClient = server.client(old.key);
    expect((await oldClient.get("/api/v1/wallet")).status).toBe(200);
    const started = Date.now();
    const res = await roll(oldClient, { grace_seconds: 2 });
    expect(res.status).toBe(201);
    const rolled = res.json.data as Rolled;
    expect(rolled.key).toMatchObject({ mode: "test", allowed_ips: ["127.0.0.1/32"], rolled_from: old.id, expires_at: null });
    expect(rolled.previous.id).toBe(old.id);
    const expiry = Date.parse(rolled.previous.expires_at);
    expect(expiry).toBeGreaterThan(started - 1000);
    expect(expiry).toBeLessThan(Date.now() + 3000);
    expect((await server.client(rolled.key.key).get("/api/v1/wallet")).status).toBe(200);
    const oldAnswer = await oldClient.get("/api/v1/wallet");
    if (Date.now() < expiry) expect(oldAnswer.status).toBe(200);
    const refused = await eventually(() => oldClient.get("/api/v1/wallet"), 401);
    expect(refused.json.code).toBe("UNAUTHENTICATED");
    // Refused once the expiry has passed on the database's clock as the process last measured it, erring late by
    // half a heartbeat's round trip (never honoured past its time): up to that early on this clock (1 ms in one CI run).
    expect(Date.now()).toBeGreaterThanOrEqual(expiry - 100);
    expect((await server.client(rolled.key.key).get("/api/v1/wallet")).status).toBe(200);
  });

  test("grace 0 ends the old key by the answer: refused right after it, its recorded expiry between the call and the answer; the default grace is an hour", async () => {
    const account = await server.createAccount("roll-grace");
    const before = Date.now();
    const now = await roll(server.client(account.testKey), { grace_seconds: 0 });
    const answered = Date.now();
    expect(now.status).toBe(201);
    // The recorded expiry is when every process refuses the key, which the answer waited for.
    const ends = Date.parse((now.json.data as Rolled).previous.expires_at ?? "");
    expect(ends).toBeGreaterThanOrEqual(before - 50);
    expect(ends).toBeLessThanOrEqual(answered + 50);
    expect((await server.client(account.testKey).get("/api/v1/wallet")).status).toBe(401);
    const next = (now.json.data as Rolled).key.key;
    const defaulted = await roll(server.client(next));
    expect(defaulted.status).toBe(201);
    const expiry = Date.parse((defaulted.json.data as Rolled).previous.expires_at);
    expect(Math.abs(expiry - (Date.now() + 3_600_000))).toBeLessThan(120_000);
  });

  test("an earlier expiry is kept", async () => {
    const account = await server.createAccount("roll-earlier");
    const old = await createKey(server, account.id, { expires_at: inSeconds(600) });
    const res = await roll(server.client(old.key), { grace_seconds: 86_400 });
    expect(res.status).toBe(201);
    expect((res.json.data as Rolled).previous.expires_at).toBe(old.expires_at ?? "");
  });

  test.each([
    [{ grace_seconds: 86_401 }, "grace_seconds"],
    [{ grace_seconds: -1 }, "grace_seconds"],
    [{ grace_seconds: 1.5 }, "grace_seconds"],
    [{ grace: 10 }, "grace"],
  ])("%p is 400 and nothing changes", async (body, field) => {
    const account = await server.createAccount("roll-bad");
    const res = await roll(server.client(account.testKey), body);
    expect(res.status).toBe(400);
    expect(res.json.data.errors[0].field).toBe(field);
    const rows = await server.deps.db.select().from(apiKeys).where(eq(apiKeys.accountId, account.id));
    expect(rows.map((row) => row.expiresAt)).toEqual([null, null]);
    expect(rows).toHaveLength(2);
  });

  test("a retried roll leaves one working successor; once that is in use, rolling the old key again is 409", async () => {
    const account = await server.createAccount("roll-retry");
    const oldClient = server.client(account.testKey);
    const first = (await roll(oldClient, { grace_seconds: 3600 })).json.data as Rolled;
    // The answer was "lost": the client rolls again with the old key.
    const again = await roll(oldClient, { grace_seconds: 3600 });
    expect(again.status).toBe(201);
    const second = again.json.data as Rolled;
    expect(second.key.id).not.toBe(first.key.id);
    // The unused successor is revoked by the time the retry is answered.
    const listedFirst = ((await oldClient.get("/api/v1/keys")).json.data as { id: string; revoked_at: string | null }[]).find(
      (k) => k.id === first.key.id,
    );
    expect(Date.parse(listedFirst?.revoked_at ?? "")).toBeLessThanOrEqual(Date.now());
    expect((await server.client(first.key.key).get("/api/v1/wallet")).status).toBe(401);
    expect((await server.client(second.key.key).get("/api/v1/wallet")).status).toBe(200);
    await server.deps.keyUsage.settle();
    const conflict = await roll(oldClient, { grace_seconds: 3600 });
    expect(conflict.status).toBe(409);
    expect(conflict.json.code).toBe("CONFLICT");
    expect(conflict.json.message).toContain(second.key.prefix);
    const listed = (await oldClient.get("/api/v1/keys")).json.data as { id: string; revoked_at: string | null }[];
    expect(listed.filter((k) => k.revoked_at === null).map((k) => k.id)).toEqual([second.previous.id, second.key.id]);
    expect((await server.client(second.key.key).get("/api/v1/wallet")).status).toBe(200);
  });
});

describe("PATCH /api/v1/keys/{id}", () => {
  const patch = (client: HttpClient, id: string, body: unknown) => client.request("PATCH", `/api/v1/keys/${id}`, body);

  test("sets and clears another key's allow-list, effective from the next request even while the key is cached", async () => {
    const account = await server.createAccount("patcher");
    const manager = server.client(account.testKey);
    const worker = await createKey(server, account.id, {});
    const workerClient = server.client(worker.key);
    expect((await workerClient.get("/api/v1/wallet")).status).toBe(200);
    const walled = await patch(manager, worker.id, { allowed_ips: ["10.1.2.3/8", "2001:db8::1"] });
    expect(walled.status).toBe(200);
    expect(walled.json.data).toMatchObject({ id: worker.id, allowed_ips: ["10.0.0.0/8", "2001:db8::1/128"], current: false });
    expect((await workerClient.get("/api/v1/wallet")).json.code).toBe("IP_NOT_ALLOWED");
    const opened = await patch(manager, worker.id, { allowed_ips: null });
    expect(opened.json.data.allowed_ips).toBeNull();
    expect((await workerClient.get("/api/v1/wallet")).status).toBe(200);
  });

  test("on the calling key, a list without the caller's address is 400 unless allow_lockout", async () => {
    const account = await server.createAccount("self-patcher");
    const client = server.client(account.testKey);
    const keyId = (await client.get("/api/v1/keys")).json.data.find((k: { current: boolean }) => k.current).id;
    const refused = await patch(client, keyId, { allowed_ips: ["10.0.0.0/8"] });
    expect(refused.status).toBe(400);
    expect(refused.json.data.errors[0]).toMatchObject({ field: "allowed_ips" });
    expect(refused.json.data.errors[0].message).toContain("127.0.0.1");
    expect((await client.get("/api/v1/wallet")).status).toBe(200);
    expect((await patch(client, keyId, { allowed_ips: ["127.0.0.0/8"] })).status).toBe(200);
    const locked = await patch(client, keyId, { allowed_ips: ["10.0.0.0/8"], allow_lockout: true });
    expect(locked.status).toBe(200);
    expect((await client.get("/api/v1/wallet")).json.code).toBe("IP_NOT_ALLOWED");
  });

  test("another account's or mode's key is 404, a revoked one 409, a bad entry 400; nothing changes", async () => {
    const account = await server.createAccount("patch-scope");
    const other = await server.createAccount("patch-other");
    const client = server.client(account.testKey);
    const keysOf = async (id: string) => server.deps.db.select().from(apiKeys).where(eq(apiKeys.accountId, id));
    const otherTest = (await keysOf(other.id)).find((k) => k.mode === "test");
    const ownLive = (await keysOf(account.id)).find((k) => k.mode === "live");
    const revoked = await createKey(server, account.id, {});
    await server.admin.delete(`/admin/v1/keys/${revoked.id}`);
    const body = { allowed_ips: ["127.0.0.1"] };
    expect((await patch(client, otherTest?.id ?? "", body)).status).toBe(404);
    expect((await patch(client, ownLive?.id ?? "", body)).status).toBe(404);
    expect((await patch(client, crypto.randomUUID(), body)).status).toBe(404);
    const conflict = await patch(client, revoked.id, body);
    expect([conflict.status, conflict.json.code]).toEqual([409, "CONFLICT"]);
    const bad = await patch(client, revoked.id, { allowed_ips: ["127.0.0.1", "nope"] });
    expect(bad.json.data.errors.map((e: { field: string }) => e.field)).toEqual(["allowed_ips[1]"]);
    const all = [...(await keysOf(account.id)), ...(await keysOf(other.id))];
    expect(all.every((k) => k.allowedCidrs === null)).toBe(true);
  });
});
