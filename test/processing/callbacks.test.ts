import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { eq } from "drizzle-orm";
import { processingRunner } from "../../src/background.ts";
import { ledgerEntries, providerCallbacks, transactions } from "../../src/db/schema/index.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing, sandboxCallback } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let client: HttpClient;

beforeAll(async () => {
  server = await startTestServer(
    fastProcessing({
      providers: {
        sandbox: {
          callbackDelayMs: 3_600_000,
          callbackToken: "sandbox-callback-token",
          callbackSecret: "sandbox-callback-secret",
          latencyMs: 0,
        },
      },
    }),
  );
  client = (await fundedAccount(server, 5_000_000)).client;
});
afterAll(() => server.close());

const tick = () => processingRunner({ ...server.deps, apiBaseUrl: server.url }, "test-worker").tick();

/** A 4444 vend, processed to `pending` by one worker tick. */
async function pendingVend(): Promise<string> {
  const res = await client.post(
    "/api/v1/vend",
    { product_code: "mtn-airtime", phone_number: "08031234444", amount_kobo: 10_000 },
    idem(),
  );
  await tick();
  const reference: string = res.json.data.reference;
  expect((await client.get(`/api/v1/transactions/${reference}`)).json.data.status).toBe("pending");
  return reference;
}

const post = (provider: string, raw: string, headers: Record<string, string>) =>
  server.anonymous.post(`/callbacks/providers/${provider}`, undefined, { raw, headers });

describe("POST /callbacks/providers/{provider} (openapi.yaml, receiveProviderCallback)", () => {
  test("applies a final outcome once; the same outcome again is 200 and changes nothing; a contradiction is 409", async () => {
    const reference = await pendingVend();
    const success = sandboxCallback({
      event_id: "e1",
      reference,
      status: "successful",
      provider_reference: "P-1",
      token: "1111-2222",
    });
    const first = await post("sandbox", success.raw, success.headers);
    expect(first.status).toBe(200);
    expect(first.json.data).toMatchObject({ reference, status: "successful" });
    const db = server.database.handle.db;
    const [row] = await db.select().from(transactions).where(eq(transactions.reference, reference));
    const entries = async () =>
      db
        .select()
        .from(ledgerEntries)
        .where(eq(ledgerEntries.transactionId, row?.id ?? ""));
    const afterFirst = await entries();
    expect(afterFirst.map((e) => e.kind).sort()).toEqual(["capture", "hold"]);

    const repeat = await post("sandbox", success.raw, success.headers);
    expect(repeat.status).toBe(200);
    expect(repeat.json.data.completed_at).toBe(first.json.data.completed_at);
    expect(await entries()).toHaveLength(2);

    const contradiction = sandboxCallback({ event_id: "e2", reference, status: "failed", provider_reference: "P-1" });
    const conflict = await post("sandbox", contradiction.raw, contradiction.headers);
    expect(conflict.status).toBe(409);
    expect(conflict.json.code).toBe("CALLBACK_CONFLICT");
    expect(await entries()).toHaveLength(2);
    expect((await client.get(`/api/v1/transactions/${reference}`)).json.data.status).toBe("successful");
    expect(await reconcileWallets(db)).toEqual([]);
  });

  test("bad signature, bad or missing token: 401, nothing changes", async () => {
    const reference = await pendingVend();
    const good = sandboxCallback({ event_id: "e3", reference, status: "successful", provider_reference: "P-3" });
    const forged = sandboxCallback(
      { event_id: "e3", reference, status: "successful", provider_reference: "P-3" },
      "not-the-secret",
    );
    expect((await post("sandbox", forged.raw, forged.headers)).status).toBe(401);
    const tampered = good.raw.replace("P-3", "P-4");
    expect((await post("sandbox", tampered, good.headers)).status).toBe(401);
    expect((await post("sandbox", good.raw, { ...good.headers, authorization: "Bearer wrong" })).status).toBe(401);
    const { authorization: _drop, ...noToken } = good.headers;
    expect((await post("sandbox", good.raw, noToken)).status).toBe(401);
    expect((await client.get(`/api/v1/transactions/${reference}`)).json.data.status).toBe("pending");
  });

  test("unknown reference or provider: 404; a body that is not the callback format: 400 after authentication", async () => {
    const unknown = sandboxCallback({
      event_id: "e4",
      reference: "txn_doesnotexist000000000000",
      status: "successful",
      provider_reference: "P",
    });
    expect((await post("sandbox", unknown.raw, unknown.headers)).status).toBe(404);
    expect((await post("acme", unknown.raw, unknown.headers)).status).toBe(404);
    const bad = sandboxCallback({ event_id: "e5", reference: "txn_x", status: "maybe" });
    const res = await post("sandbox", bad.raw, bad.headers);
    expect(res.status).toBe(400);
    expect(res.json.data.errors.map((e: { field: string }) => e.field).sort()).toEqual(["provider_reference", "status"]);
  });

  test("every callback is stored with its outcome; operators list and replay it through the same path", async () => {
    const reference = await pendingVend();
    const forged = sandboxCallback({ event_id: "e6", reference, status: "failed", provider_reference: "P-6" }, "wrong-secret");
    await post("sandbox", forged.raw, forged.headers);
    const good = sandboxCallback({
      event_id: "e7",
      reference,
      status: "failed",
      provider_reference: "P-7",
      message: "Declined upstream",
    });
    await post("sandbox", good.raw, good.headers);

    const listed = await server.admin.get("/admin/v1/callbacks", { query: { reference } });
    expect(listed.status).toBe(200);
    const items = listed.json.data.items as {
      id: string;
      http_status: number;
      result_code: string;
      signature_valid: boolean;
      event_id: string;
    }[];
    expect(items.map((c) => [c.event_id, c.http_status, c.result_code, c.signature_valid])).toEqual([
      ["e7", 200, "OK", true],
      ["e6", 401, "UNAUTHENTICATED", false],
    ]);
    const replayGood = await server.admin.post(`/admin/v1/callbacks/${items[0]?.id}/replay`);
    expect(replayGood.status).toBe(200);
    expect(replayGood.json.data).toMatchObject({ replay_of: items[0]?.id, http_status: 200, result_code: "OK" });
    const replayForged = await server.admin.post(`/admin/v1/callbacks/${items[1]?.id}/replay`);
    expect(replayForged.json.data).toMatchObject({ replay_of: items[1]?.id, http_status: 401, signature_valid: false });
    const stored = await server.database.handle.db
      .select()
      .from(providerCallbacks)
      .where(eq(providerCallbacks.reference, reference));
    expect(stored).toHaveLength(4);
    expect(stored.every((s) => !JSON.stringify(s.headers).includes("sandbox-callback-token"))).toBe(true);
    expect((await server.admin.post("/admin/v1/callbacks/00000000-0000-4000-8000-000000000000/replay")).status).toBe(404);
    const txn = (await client.get(`/api/v1/transactions/${reference}`)).json.data;
    expect(txn.status).toBe("failed");
  });

  test("a replay of a stored callback makes a 4444 final, like a live one", async () => {
    const res = await client.post(
      "/api/v1/vend",
      { product_code: "mtn-airtime", phone_number: "08031234444", amount_kobo: 10_000 },
      idem(),
    );
    const reference: string = res.json.data.reference;
    // Authentic but early: the order has not reached the provider yet, so it is refused and stored whole.
    const early = sandboxCallback({ event_id: "e8", reference, status: "successful", provider_reference: "P-8" });
    expect((await post("sandbox", early.raw, early.headers)).status).toBe(409);
    await tick();
    const [stored] = (await server.admin.get("/admin/v1/callbacks", { query: { reference } })).json.data.items;
    const replay = await server.admin.post(`/admin/v1/callbacks/${stored.id}/replay`);
    expect(replay.json.data.http_status).toBe(200);
    expect((await client.get(`/api/v1/transactions/${reference}`)).json.data.status).toBe("successful");
  });
});

/** The sandbox scheme, written out here so the test states it: `t=<unix seconds>,sha256=<hex HMAC of "<t>.<raw>">`. */
const hmacHex = (text: string, secret = "sandbox-callback-secret") => createHmac("sha256", secret).update(text).digest("hex");
const nowSeconds = () => Math.floor(Date.now() / 1000);

function signedAt(t: number, body: Record<string, unknown>) {
  const raw = JSON.stringify(body);
  return {
    raw,
    headers: {
      authorization: "Bearer sandbox-callback-token",
      "x-provider-signature": `t=${t},sha256=${hmacHex(`${t}.${raw}`)}`,
      "content-type": "application/json",
    },
  };
}

describe("sandbox callback signatures carry a timestamp; a replay window bounds them (default 300 s)", () => {
  test("signed now: applied", async () => {
    const reference = await pendingVend();
    const fresh = signedAt(nowSeconds(), { event_id: "t1", reference, status: "successful", provider_reference: "P-T1" });
    const res = await post("sandbox", fresh.raw, fresh.headers);
    expect(res.status).toBe(200);
    expect(res.json.data.status).toBe("successful");
  });

  test("correctly signed but outside the window (either way), or without a timestamp: 401 and nothing changes; an operator replay still applies", async () => {
    const reference = await pendingVend();
    const body = (event_id: string) => ({ event_id, reference, status: "successful", provider_reference: "P-OLD" });
    const hourAgo = signedAt(nowSeconds() - 3600, body("old-past"));
    const past = await post("sandbox", hourAgo.raw, hourAgo.headers);
    expect(past.status).toBe(401);
    expect(past.json.message).toContain("replay window");
    const ahead = signedAt(nowSeconds() + 3600, body("old-future"));
    expect((await post("sandbox", ahead.raw, ahead.headers)).status).toBe(401);
    const legacyRaw = JSON.stringify(body("old-legacy"));
    const legacy = await post("sandbox", legacyRaw, {
      authorization: "Bearer sandbox-callback-token",
      "x-provider-signature": `sha256=${hmacHex(legacyRaw)}`,
      "content-type": "application/json",
    });
    expect(legacy.status).toBe(401);
    expect(legacy.json.message).toContain("t=<unix seconds>");

    // Nothing changed: still pending, only the hold in the ledger, every wallet equal to its ledger.
    const db = server.database.handle.db;
    const [row] = await db.select().from(transactions).where(eq(transactions.reference, reference));
    expect(row?.status).toBe("pending");
    const entries = async () =>
      (
        await db
          .select()
          .from(ledgerEntries)
          .where(eq(ledgerEntries.transactionId, row?.id ?? ""))
      ).map((e) => e.kind);
    expect(await entries()).toEqual(["hold"]);
    expect(await reconcileWallets(db)).toEqual([]);

    // Stored as refused; the stale ones are authentic (their signature matches).
    const items = (await server.admin.get("/admin/v1/callbacks", { query: { reference } })).json.data.items as {
      id: string;
      event_id: string;
      http_status: number;
      signature_valid: boolean;
    }[];
    expect(items.map((c) => [c.event_id, c.http_status, c.signature_valid])).toEqual([
      ["old-legacy", 401, false],
      ["old-future", 401, true],
      ["old-past", 401, true],
    ]);
    // The operator's deliberate replay re-verifies the signature but is not bound by the window.
    const stale = items.find((c) => c.event_id === "old-past");
    const replay = await server.admin.post(`/admin/v1/callbacks/${stale?.id}/replay`);
    expect(replay.json.data).toMatchObject({ replay_of: stale?.id, http_status: 200, result_code: "OK" });
    expect((await client.get(`/api/v1/transactions/${reference}`)).json.data.status).toBe("successful");
    expect((await entries()).sort()).toEqual(["capture", "hold"]);
    expect(await reconcileWallets(db)).toEqual([]);
    // The legacy form is not replayable either: the sandbox only knows the timestamped scheme.
    const legacyItem = items.find((c) => c.event_id === "old-legacy");
    const legacyReplay = await server.admin.post(`/admin/v1/callbacks/${legacyItem?.id}/replay`);
    expect(legacyReplay.json.data).toMatchObject({ http_status: 401, signature_valid: false });
  });
});
