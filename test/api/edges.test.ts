import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { sql } from "drizzle-orm";
import { queryRows } from "../../src/db/rows.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { fundedAccount, idem, newKey } from "../helpers/accounts.ts";
import { captureLogs, startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const count = async (query: ReturnType<typeof sql>) =>
  Number((await queryRows<{ n: number }>(server.deps.db, query))[0]?.n ?? -1);

describe("one Idempotency-Key is one operation, whatever the spelling of its path", () => {
  test("POST /api/v1/vend and /api/v1/vend/ with one key: one transaction, one hold, the second a replay", async () => {
    const { id, client } = await fundedAccount(server, 100_000);
    const key = idem();
    const body = { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 };
    const first = await client.post("/api/v1/vend", body, key);
    const second = await client.post("/api/v1/vend/", body, key);
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.text).toBe(first.text);
    // Money: one transaction, one hold entry, and the wallet holds one price only.
    expect(await count(sql`select count(*)::int as n from transactions where account_id = ${id}::uuid`)).toBe(1);
    const wallet = (await client.get("/api/v1/wallet")).json.data;
    expect(wallet.held_kobo).toBe(first.json.data.price_kobo);
    expect(await reconcileWallets(server.deps.db)).toEqual([]);
  });

  test("admin credit to /{id}, /{ID} and /credit/ with one key credits once", async () => {
    const { id, testKey } = await server.createAccount("credit-spellings");
    const key = idem();
    const body = { mode: "test", amount_kobo: 70_000, note: "float" };
    const answers = [
      await server.admin.post(`/admin/v1/accounts/${id}/wallet/credit`, body, key),
      await server.admin.post(`/admin/v1/accounts/${id.toUpperCase()}/wallet/credit`, body, key),
      await server.admin.post(`/admin/v1/accounts/${id}/wallet/credit/`, body, key),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers.slice(1).every((a) => a.headers.get("idempotent-replayed") === "true" && a.text === answers[0]?.text)).toBe(
      true,
    );
    // Money: one credit ledger entry, and the balance is the amount once.
    const credits = await count(
      sql`select count(*)::int as n from ledger_entries l join wallets w on w.id = l.wallet_id
          where w.account_id = ${id}::uuid and l.kind = 'credit'`,
    );
    expect(credits).toBe(1);
    expect((await server.client(testKey).get("/api/v1/wallet")).json.data.balance_kobo).toBe(70_000);
  });

  test("POST /api/v1/wallet/fund/ after /api/v1/wallet/fund with one key funds once", async () => {
    const { testKey } = await server.createAccount("fund-spellings");
    const client = server.client(testKey);
    const key = idem();
    await client.post("/api/v1/wallet/fund", { amount_kobo: 5_000 }, key);
    const again = await client.post("/api/v1/wallet/fund/", { amount_kobo: 5_000 }, key);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await client.get("/api/v1/wallet")).json.data.balance_kobo).toBe(5_000);
  });

  test("a wrong method on a path spelled with a trailing slash is 405, like without it", async () => {
    const { testKey } = await server.createAccount();
    const res = await server.client(testKey).get("/api/v1/vend/");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });
});

describe("text PostgreSQL cannot store, and ids that cannot exist, are input errors", () => {
  const nul = "a\u0000b";
  const lone = "x\ud800y";

  test.each([
    ["client_reference", { client_reference: nul }, "client_reference"],
    ["metadata value", { metadata: { order: nul } }, "metadata.order"],
    ["metadata key", { metadata: { [nul]: "v" } }, "metadata"],
    ["metadata unpaired surrogate", { metadata: { order: lone } }, "metadata.order"],
    ["phone number", { phone_number: `0803123456${nul}` }, "phone_number"],
  ])("NUL or unpaired surrogate in the vend body's %s: 400 naming the field, nothing written", async (_name, extra, field) => {
    const { id, client } = await fundedAccount(server, 50_000);
    const body = { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000, ...extra };
    const res = await client.post("/api/v1/vend", body, idem());
    expect(res.status).toBe(400);
    expect(res.json.code).toBe("VALIDATION_FAILED");
    expect(res.json.data.errors.map((e: { field: string }) => e.field)).toContain(field);
    expect(await count(sql`select count(*)::int as n from transactions where account_id = ${id}::uuid`)).toBe(0);
  });

  test("a metadata key __proto__ is refused, not silently dropped", async () => {
    const { client } = await fundedAccount(server, 50_000);
    const raw = '{"product_code":"mtn-airtime","phone_number":"08031234567","amount_kobo":10000,"metadata":{"__proto__":"x"}}';
    const res = await client.post("/api/v1/vend", undefined, { raw, headers: { "idempotency-key": newKey() } });
    expect(res.status).toBe(400);
    expect(res.json.data.errors).toEqual([{ field: "metadata", message: "must not have a key named __proto__" }]);
  });

  test("NUL in notes and names (wallet fund, admin credit, account and webhook endpoint)", async () => {
    const { id, testKey } = await server.createAccount();
    const client = server.client(testKey);
    const answers = [
      await client.post("/api/v1/wallet/fund", { amount_kobo: 100, note: nul }, idem()),
      await server.admin.post(`/admin/v1/accounts/${id}/wallet/credit`, { mode: "test", amount_kobo: 100, note: nul }, idem()),
      await server.admin.post("/admin/v1/accounts", { name: nul }),
      await client.post("/api/v1/webhook-endpoints", { url: "https://example.com/hook", description: nul }),
    ];
    expect(answers.map((a) => [a.status, a.json.data.errors[0].field])).toEqual([
      [400, "note"],
      [400, "note"],
      [400, "name"],
      [400, "description"],
    ]);
    expect((await client.get("/api/v1/wallet")).json.data.balance_kobo).toBe(0);
  });

  test("NUL in query parameters and path parameters: 400 naming the parameter", async () => {
    const { testKey } = await server.createAccount();
    const client = server.client(testKey);
    const search = await client.get("/api/v1/transactions", { query: { search: nul } });
    const destination = await client.get("/api/v1/transactions", { query: { destination: nul } });
    const reference = await client.get("/api/v1/transactions/txn_%00abc");
    const admin = await server.admin.get("/admin/v1/transactions", { query: { search: nul } });
    expect([search, destination, reference, admin].map((r) => [r.status, r.json.data.errors[0].field])).toEqual([
      [400, "search"],
      [400, "destination"],
      [400, "reference"],
      [400, "search"],
    ]);
  });

  test("a urn:uuid id on every uuid path parameter is 400 naming it; upper case is the same resource", async () => {
    const { id, testKey } = await server.createAccount();
    const urn = `urn:uuid:${id}`;
    const client = server.client(testKey);
    const answers = [
      await server.admin.get(`/admin/v1/accounts/${urn}`),
      await server.admin.get(`/admin/v1/accounts/${urn}/keys`),
      await server.admin.post(`/admin/v1/accounts/${urn}/keys`, { mode: "test" }),
      await server.admin.post(`/admin/v1/accounts/${urn}/wallet/credit`, { mode: "test", amount_kobo: 1 }, idem()),
      await server.admin.delete(`/admin/v1/keys/${urn}`),
      await server.admin.post(`/admin/v1/callbacks/${urn}/replay`),
      await client.delete(`/api/v1/webhook-endpoints/${urn}`),
    ];
    expect(answers.map((a) => a.status)).toEqual([400, 400, 400, 400, 400, 400, 400]);
    expect(answers.map((a) => a.json.data.errors[0].field)).toEqual([
      "account_id",
      "account_id",
      "account_id",
      "account_id",
      "key_id",
      "id",
      "id",
    ]);
    expect((await server.admin.get(`/admin/v1/accounts/${id.toUpperCase()}`)).json.data.id).toBe(id);
  });
});

describe("logs", () => {
  test("a failing query logs no driver parameters: the destination never reaches the log", async () => {
    const { lines, restore } = captureLogs(server);
    const { client } = await fundedAccount(server, 50_000);
    // Every insert into transactions now fails inside PostgreSQL, carrying the destination as a parameter. The
    // trigger is the owner's to make (on PostgreSQL the server runs as a role that owns nothing).
    const owner = server.database.handle.db;
    await owner.execute(
      sql.raw("create function edges_boom() returns trigger language plpgsql as $$ begin raise exception 'boom'; end $$"),
    );
    await owner.execute(
      sql.raw("create trigger edges_boom before insert on transactions for each row execute function edges_boom()"),
    );
    try {
      const phone = "08039998877";
      const res = await client.post(
        "/api/v1/vend",
        { product_code: "mtn-airtime", phone_number: phone, amount_kobo: 10_000 },
        idem(),
      );
      expect(res.status).toBe(500);
      await waitUntil(() => lines.join("").includes("unhandled error"), { what: "the 500's error line" });
      const text = lines.join("");
      expect(text).toContain("unhandled error");
      expect(text).not.toContain(phone);
      expect(text).not.toContain("9998877");
      expect(text).not.toContain("params:");
    } finally {
      await owner.execute(sql.raw("drop trigger edges_boom on transactions"));
      await owner.execute(sql.raw("drop function edges_boom()"));
      restore();
    }
  });
});

/** One raw HTTP/1.1 exchange, so nothing between the test and the server edits the request or the answer. */
function rawExchange(url: string, request: string, body?: Buffer): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      // No half-close: the client keeps its side open until the answer arrives, as HTTP clients do.
      socket.write(request);
      if (body) socket.write(body);
    });
    let answer = "";
    socket.on("data", (chunk) => {
      answer += chunk.toString("latin1");
    });
    socket.on("end", () => resolve(answer));
    socket.on("close", () => resolve(answer));
    socket.on("error", (error) => (answer ? resolve(answer) : reject(error)));
    socket.setTimeout(10_000, () => socket.destroy());
  });
}

const envelopeOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));

describe("every answer is the envelope with X-Request-Id and a declared status", () => {
  test("an unknown query parameter is a declared 400 on every operation that had none", async () => {
    const { testKey } = await server.createAccount();
    const client = server.client(testKey);
    // The contract checker in every client fails the test if 400 is not declared for the operation.
    for (const path of ["/healthz", "/readyz", "/openapi.yaml", "/docs", "/api/v1/wallet", "/api/v1/catalogue/services"]) {
      const res = await client.get(path, { query: { x: "1" } });
      expect([path, res.status, res.json?.data?.errors?.[0]?.field]).toEqual([path, 400, "x"]);
    }
  });

  test("a short Host header routes like any other (the router must not assume a host length)", async () => {
    const { testKey } = await server.createAccount();
    for (const host of ["x", "ab", "abc", "localhost"]) {
      const answer = await rawExchange(
        server.url,
        `GET /api/v1/wallet HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${testKey}\r\nConnection: close\r\n\r\n`,
      );
      expect([host, answer.slice(0, 15)]).toEqual([host, "HTTP/1.1 200 OK"]);
    }
  });

  test("TRACE and OPTIONS answer the 405 envelope with X-Request-Id", async () => {
    for (const method of ["TRACE", "OPTIONS"]) {
      const answer = await rawExchange(server.url, `${method} /api/v1/wallet HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(answer).toStartWith("HTTP/1.1 405");
      expect(answer.toLowerCase()).toContain("x-request-id: ");
      expect(envelopeOf(answer)).toMatchObject({ success: false, code: "METHOD_NOT_ALLOWED" });
    }
  });

  test.each([
    ["declared length", 2 * 1024 * 1024, false],
    ["chunked", 2 * 1024 * 1024, true],
    ["just over 64 KiB, chunked", 64 * 1024 + 1, true],
  ])("a body over the limit (%s) is the 413 envelope with X-Request-Id", async (_name, size, chunked) => {
    const { testKey } = await server.createAccount();
    const body = Buffer.alloc(size, "x");
    const head = [
      "POST /api/v1/vend HTTP/1.1",
      "Host: localhost",
      `Authorization: Bearer ${testKey}`,
      "Content-Type: application/json",
      "Idempotency-Key: big-body",
      "X-Request-Id: big-body-1",
      "Connection: close",
      chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${size}`,
    ].join("\r\n");
    const payload = chunked ? Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), body, Buffer.from("\r\n0\r\n\r\n")]) : body;
    const answer = await rawExchange(server.url, `${head}\r\n\r\n`, payload);
    expect(answer).toStartWith("HTTP/1.1 413");
    expect(answer).toContain("x-request-id: big-body-1");
    expect(envelopeOf(answer)).toMatchObject({ success: false, code: "PAYLOAD_TOO_LARGE" });
  });
});
