import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac, randomBytes } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { processingRunner } from "../../src/background.ts";
import { ledgerEntries, providerCallbacks, transactions } from "../../src/db/schema/index.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

/**
 * Only callbacks from a known provider with its bearer token are stored. Those refused after that (bad
 * signature, stale timestamp, bad body) are stored in bounded form: the raw body cut to 4 KiB with a
 * marker, and at most `rejectedPerMinute` of them per provider per minute. Accepted ones are stored whole.
 */
const token = "sandbox-callback-token";
const secret = "sandbox-callback-secret";
const rejectedPerMinute = 20;
const keptBytes = 4096;

let server: TestServer;
let client: HttpClient;

beforeAll(async () => {
  server = await startTestServer(
    fastProcessing({
      providers: { sandbox: { callbackDelayMs: 3_600_000, callbackToken: token, callbackSecret: secret, latencyMs: 0 } },
      callbacks: { replayWindowSeconds: 300, rejectedPerMinute },
    }),
  );
  client = (await fundedAccount(server, 1_000_000)).client;
});
afterAll(() => server.close());

const db = () => server.database.handle.db;
const storedRows = async () => (await db().select({ n: sql<number>`count(*)::int` }).from(providerCallbacks))[0]?.n ?? 0;
const storedBytes = async () =>
  (await db().select({ n: sql<number>`coalesce(sum(octet_length(raw_body)), 0)::int` }).from(providerCallbacks))[0]?.n ?? 0;
const post = (provider: string, raw: string, headers: Record<string, string>) =>
  server.anonymous.post(`/callbacks/providers/${provider}`, undefined, { raw, headers });

/** A 60 KB JSON body of random text: the drill's junk. */
const junkBody = () => JSON.stringify({ reference: "txn_junk", pad: randomBytes(45_000).toString("base64") });
const timestamped = (raw: string, t = Math.floor(Date.now() / 1000)) =>
  `t=${t},sha256=${createHmac("sha256", secret).update(`${t}.${raw}`).digest("hex")}`;

async function sendAll(count: number, make: () => { provider: string; raw: string; headers: Record<string, string> }) {
  const statuses: number[] = [];
  for (let sent = 0; sent < count; sent += 10) {
    const batch = Array.from({ length: Math.min(10, count - sent) }, () => {
      const request = make();
      return post(request.provider, request.raw, request.headers);
    });
    statuses.push(...(await Promise.all(batch)).map((r) => r.status));
  }
  return statuses;
}

describe("callback storage is bounded (anyone can reach the endpoint)", () => {
  test("text PostgreSQL cannot store in a refused callback is stored replaced, and answered 401, not 500", async () => {
    const raw = JSON.stringify({ event_id: "nul\u0000id", reference: "txn_\u0000", status: "successful" });
    const res = await post("sandbox", raw, { authorization: `Bearer ${token}`, "x-provider-signature": timestamped("x") });
    expect(res.status).toBe(401);
    const [row] = await db().select().from(providerCallbacks).where(eq(providerCallbacks.eventId, "nul\uFFFDid"));
    expect(row?.reference).toBe("txn_\uFFFD");
    expect(row?.rawBody).toBe(raw);
  });

  test("200 junk bodies with a wrong token, or to an unknown provider: answered, nothing stored", async () => {
    const before = await storedRows();
    const wrongToken = await sendAll(200, () => ({
      provider: "sandbox",
      raw: junkBody(),
      headers: { authorization: "Bearer not-the-token", "x-provider-signature": `sha256=${"0".repeat(64)}` },
    }));
    expect(new Set(wrongToken)).toEqual(new Set([401]));
    const unknownProvider = await sendAll(20, () => ({
      provider: "acme",
      raw: junkBody(),
      headers: { authorization: `Bearer ${token}`, "x-provider-signature": `sha256=${"0".repeat(64)}` },
    }));
    expect(new Set(unknownProvider)).toEqual(new Set([404]));
    expect(await storedRows()).toBe(before);
  });

  test("200 junk bodies with the right token and a bad signature: at most the per-minute cap stored, each cut to 4 KiB", async () => {
    const before = await storedRows();
    const statuses = await sendAll(200, () => ({
      provider: "sandbox",
      raw: junkBody(),
      headers: { authorization: `Bearer ${token}`, "x-provider-signature": timestamped("something else") },
    }));
    expect(new Set(statuses)).toEqual(new Set([401]));
    const stored = await db().select().from(providerCallbacks).where(eq(providerCallbacks.reference, "txn_junk"));
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.length).toBeLessThanOrEqual(rejectedPerMinute);
    expect(await storedRows()).toBe(before + stored.length);
    for (const row of stored) {
      expect(Buffer.byteLength(row.rawBody)).toBeLessThanOrEqual(keptBytes);
      expect(row.headers["body-truncated"]).toMatch(/^kept 4096 of \d+ bytes$/);
      expect(row.signatureValid).toBe(false);
    }
    expect(await storedBytes()).toBeLessThanOrEqual(rejectedPerMinute * keptBytes);
  });

  test("accepted callbacks are stored whole, and operator replays are stored past the cap", async () => {
    const vend = await client.post(
      "/api/v1/vend",
      { product_code: "mtn-airtime", phone_number: "08031234444", amount_kobo: 10_000 },
      idem(),
    );
    await processingRunner({ ...server.deps, apiBaseUrl: server.url }, "test-worker").tick();
    const reference: string = vend.json.data.reference;
    const raw = JSON.stringify({
      event_id: "whole-1",
      reference,
      status: "successful",
      provider_reference: "P-W",
      message: "m".repeat(500),
    });
    const applied = await post("sandbox", raw, {
      authorization: `Bearer ${token}`,
      "x-provider-signature": timestamped(raw),
    });
    expect(applied.status).toBe(200);
    const [row] = await db().select().from(providerCallbacks).where(eq(providerCallbacks.eventId, "whole-1"));
    expect(row?.rawBody).toBe(raw);
    // The cap is exhausted by the previous test, yet the operator's replay is stored (and changes nothing).
    const replay = await server.admin.post(`/admin/v1/callbacks/${row?.id}/replay`);
    expect(replay.status).toBe(200);
    expect(replay.json.data).toMatchObject({ replay_of: row?.id, http_status: 200 });
    const [txn] = await db().select().from(transactions).where(eq(transactions.reference, reference));
    const entries = await db()
      .select()
      .from(ledgerEntries)
      .where(eq(ledgerEntries.transactionId, txn?.id ?? ""));
    // Money: one hold and one capture, however many times the callback is applied.
    expect(entries.map((e) => e.kind).sort()).toEqual(["capture", "hold"]);
    expect(await reconcileWallets(db())).toEqual([]);
  });
});
