import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { queryRows } from "../../src/db/rows.ts";
import { loadConfig } from "../../src/load-config.ts";
import type { LogInput } from "../../src/request-logs/statements/insert-logs.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import { HttpClient } from "../helpers/http.ts";
import { sandboxCallback } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * What the request log records of each kind of request, read from the table itself (real server over a socket,
 * real database): every field of the client API's, the admin API's and a provider callback's requests, the router's
 * own 404 and 405, a replayed idempotent answer, a body past the limit; and what it never records.
 */
const bodyBytes = 2048;
let server: TestServer;
let account: Awaited<ReturnType<typeof fundedAccount>>;

/** A stored record as read back: what the recorder wrote, with its id and its time in epoch ms. */
type LogRow = Omit<LogInput, "ord" | "age_ms"> & { id: string; created_ms: number };

const owner = () => server.database.handle.db;

/** The records of the requests sent with `X-Request-Id: id`, after every waiting record was written. */
async function recordsOf(requestId: string): Promise<LogRow[]> {
  await server.deps.requestLogs.flush();
  return queryRows<LogRow>(
    owner(),
    sql`select id::text, (extract(epoch from created_at) * 1000)::float8 as created_ms, request_id, account_id::text, mode, key_id::text, key_prefix, operator, method,
          route, path, query, status, error_code, idempotency_key, idempotent_replayed, duration_ms, client_ip, user_agent,
          request_body, request_body_truncated, response_body, response_body_truncated
        from request_logs where request_id = ${requestId} order by id`,
  );
}

async function recordOf(requestId: string): Promise<LogRow> {
  const rows = await recordsOf(requestId);
  expect(rows).toHaveLength(1);
  return rows[0] as LogRow;
}

let sent = 0;
/** A request id of its own for each request, so each record is found by it. */
const tagged = (headers: Record<string, string> = {}) => {
  const id = `req_test_${Date.now().toString(36)}_${sent++}`;
  return { id, headers: { "x-request-id": id, "user-agent": "request-log-test/1.0", ...headers } };
};

beforeAll(async () => {
  server = await startTestServer({ requestLogs: { ...loadConfig({}).requestLogs, bodyBytes } });
  account = await fundedAccount(server, 1_000_000, "recorded");
});
afterAll(() => server.close());

describe("the client API", () => {
  test("an accepted vend: every field, the destination masked in the body sent, the answer as sent", async () => {
    const request = tagged(idem("vend-recorded-1").headers);
    const before = Date.now();
    const body = { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 };
    const res = await account.client.post("/api/v1/vend", body, { headers: request.headers });
    expect(res.status).toBe(202);
    const row = await recordOf(request.id);
    const [key] = await queryRows<{ id: string; prefix: string }>(
      owner(),
      sql`select id::text, prefix from api_keys where account_id = ${account.id}::uuid and mode = 'test'`,
    );
    expect(row).toMatchObject({
      request_id: request.id,
      account_id: account.id,
      mode: "test",
      key_id: key?.id,
      key_prefix: account.testKey.slice(0, 12),
      operator: null,
      method: "POST",
      route: "/api/v1/vend",
      path: "/api/v1/vend",
      query: null,
      status: 202,
      error_code: null,
      idempotency_key: "vend-recorded-1",
      idempotent_replayed: false,
      client_ip: "127.0.0.1",
      user_agent: "request-log-test/1.0",
      request_body_truncated: false,
      response_body_truncated: false,
    });
    expect(row.key_prefix).toBe(key?.prefix ?? "");
    expect(row.duration_ms).toBeGreaterThan(0);
    // Arrival on the database's clock, within the test's window (both clocks are this machine's).
    expect(row.created_ms).toBeGreaterThanOrEqual(before - 1000);
    expect(row.created_ms).toBeLessThanOrEqual(Date.now() + 1000);
    expect(JSON.parse(row.request_body ?? "")).toEqual({ ...body, phone_number: "0803****567" });
    expect(row.response_body).toBe(res.text);
  });

  test("the same Idempotency-Key again: the replay is recorded as one", async () => {
    const key = idem("vend-recorded-2").headers;
    const body = { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 };
    const first = tagged(key);
    const again = tagged(key);
    expect((await account.client.post("/api/v1/vend", body, { headers: first.headers })).status).toBe(202);
    const replayed = await account.client.post("/api/v1/vend", body, { headers: again.headers });
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(await recordOf(first.id)).toMatchObject({ idempotent_replayed: false, status: 202 });
    expect(await recordOf(again.id)).toMatchObject({ idempotent_replayed: true, status: 202, response_body: replayed.text });
  });

  test.each([
    ["400", "recorded", { product_code: "mtn-airtime", phone_number: "08031234567" }, 400, "VALIDATION_FAILED"],
    [
      "402",
      "broke",
      { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 },
      402,
      "WALLET_INSUFFICIENT_FUNDS",
    ],
  ] as const)(
    "a failed vend (%s): its status, error code, the body sent and the envelope answered",
    async (_, who, body, status, code) => {
      const caller = who === "broke" ? await fundedAccount(server, 0, "broke") : account;
      const request = tagged(idem().headers);
      const res = await caller.client.post("/api/v1/vend", body, { headers: request.headers });
      expect(res.status).toBe(status);
      const row = await recordOf(request.id);
      expect(row).toMatchObject({ status, error_code: code, account_id: caller.id, route: "/api/v1/vend" });
      expect(JSON.parse(row.request_body ?? "").phone_number).toBe("0803****567");
      expect(row.response_body).toBe(res.text);
    },
  );

  test("a query string is recorded without its ?, the path as requested", async () => {
    const request = tagged();
    const res = await account.client.get("/api/v1/transactions?limit=2&status=successful", { headers: request.headers });
    expect(res.status).toBe(200);
    expect(await recordOf(request.id)).toMatchObject({
      route: "/api/v1/transactions",
      path: "/api/v1/transactions",
      query: "limit=2&status=successful",
      status: 200,
    });
  });

  test("a body past REQUEST_LOGS_BODY_BYTES is cut on a character boundary and marked; the request is not", async () => {
    const request = tagged(idem().headers);
    const note = "€".repeat(1000);
    const raw = JSON.stringify({ product_code: "mtn-airtime", amount_kobo: 10_000, metadata: { note } });
    const res = await account.client.post("/api/v1/vend", undefined, { raw, headers: request.headers });
    expect(res.status).toBe(400);
    const row = await recordOf(request.id);
    const stored = row.request_body ?? "";
    expect(row.request_body_truncated).toBe(true);
    expect(Buffer.byteLength(stored)).toBeLessThanOrEqual(bodyBytes);
    // A whole number of characters (the euro sign is 3 bytes): no replacement character, a prefix of what was sent.
    expect(Buffer.byteLength(stored)).toBeGreaterThan(bodyBytes - 3);
    expect(stored).not.toContain("\uFFFD");
    expect(raw.startsWith(stored)).toBe(true);
    expect(row.response_body_truncated).toBe(false);
  });

  test("a body holding a NUL character is stored, the NUL as U+FFFD, and so is the rest of its batch", async () => {
    const withNul = tagged(idem().headers);
    const after = tagged();
    // A raw NUL inside a JSON string: invalid JSON (400), and text PostgreSQL refuses.
    const raw = '{"product_code":"mtn-airtime","metadata":{"note":"a\u0000b"}}';
    expect((await account.client.post("/api/v1/vend", undefined, { raw, headers: withNul.headers })).status).toBe(400);
    expect((await account.client.get("/api/v1/wallet", { headers: after.headers })).status).toBe(200);
    expect((await recordOf(withNul.id)).request_body).toBe(raw.replace("\u0000", "\uFFFD"));
    expect(await recordsOf(after.id)).toHaveLength(1);
  });

  test("the list of request logs is recorded: it is an API request like any other", async () => {
    const request = tagged();
    const res = await account.client.get("/api/v1/request-logs", { headers: request.headers });
    expect(res.status).toBe(200);
    expect(await recordOf(request.id)).toMatchObject({ route: "/api/v1/request-logs", status: 200, account_id: account.id });
  });

  test("a record reaches the table by itself within a flush interval or two", async () => {
    const request = tagged();
    expect((await account.client.get("/api/v1/wallet", { headers: request.headers })).status).toBe(200);
    const found = await waitUntil(
      async () =>
        (
          await queryRows<{ n: number }>(
            owner(),
            sql`select count(*)::int as n from request_logs where request_id = ${request.id}`,
          )
        )[0]?.n === 1,
      { what: "the wallet request's record", timeoutMs: 5000 },
    );
    expect(found).toBe(true);
  });
});

describe("the admin API and the provider callbacks", () => {
  test("an admin request: the operator, no account, key or mode", async () => {
    const request = tagged();
    const res = await server.admin.get(`/admin/v1/accounts/${account.id}`, { headers: request.headers });
    expect(res.status).toBe(200);
    expect(await recordOf(request.id)).toMatchObject({
      operator: "ADMIN_TOKEN",
      account_id: null,
      mode: null,
      key_id: null,
      key_prefix: null,
      route: "/admin/v1/accounts/{account_id}",
      path: `/admin/v1/accounts/${account.id}`,
      status: 200,
      request_body: null,
      response_body: res.text,
    });
  });

  test("a provider callback: the route, the body it sent, the answer", async () => {
    const request = tagged();
    const callback = sandboxCallback({
      event_id: "evt-recorded",
      reference: "txn_unknown",
      status: "successful",
      provider_reference: "P-recorded",
    });
    const res = await new HttpClient(server.url).post("/callbacks/providers/sandbox", undefined, {
      raw: callback.raw,
      headers: { ...callback.headers, ...request.headers },
    });
    expect(res.status).toBe(404);
    expect(await recordOf(request.id)).toMatchObject({
      route: "/callbacks/providers/{provider}",
      path: "/callbacks/providers/sandbox",
      status: 404,
      error_code: "NOT_FOUND",
      request_body: callback.raw,
      response_body: res.text,
    });
  });
});

describe("what the router answers itself", () => {
  test.each([
    ["GET", "/api/v1/no-such-thing", 404, "NOT_FOUND"],
    ["DELETE", "/api/v1/wallet", 405, "METHOD_NOT_ALLOWED"],
  ])("%s %s: recorded with route (unmatched)", async (method, path, status, code) => {
    const request = tagged();
    const res = await account.client.request(method, path, undefined, { headers: request.headers });
    expect(res.status).toBe(status);
    expect(await recordOf(request.id)).toMatchObject({ route: "(unmatched)", path, method, status, error_code: code });
  });
});

describe("never recorded", () => {
  test.each([["/healthz"], ["/readyz"], ["/metrics"], ["/openapi.yaml"], ["/docs"], ["/docs/admin"], ["/docs/scalar.js"]])(
    "GET %s",
    async (path) => {
      const request = tagged();
      const res = await server.admin.get(path, { headers: request.headers });
      expect(res.status).toBeLessThan(500);
      // A request recorded after it proves the log was being written meanwhile.
      const after = tagged();
      expect((await account.client.get("/api/v1/wallet", { headers: after.headers })).status).toBe(200);
      expect(await recordsOf(after.id)).toHaveLength(1);
      expect(await recordsOf(request.id)).toEqual([]);
    },
  );

  test.each([
    ["the client's tail", () => account.client, "/api/v1/request-logs/stream"],
    ["the operators' tail", () => server.admin, "/admin/v1/request-logs/stream"],
  ])("%s", async (_, client, path) => {
    const request = tagged();
    const aborted = new AbortController();
    const stream = await fetch(new URL(path, server.url), {
      headers: { authorization: `Bearer ${client().token}`, ...request.headers },
      signal: aborted.signal,
    });
    expect(stream.status).toBe(200);
    aborted.abort();
    await stream.body?.cancel().catch(() => {});
    const after = tagged();
    expect((await account.client.get("/api/v1/wallet", { headers: after.headers })).status).toBe(200);
    expect(await recordsOf(after.id)).toHaveLength(1);
    expect(await recordsOf(request.id)).toEqual([]);
  });
});
