import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { generateApiKey } from "../../src/auth/keys.ts";
import { queryRows } from "../../src/db/rows.ts";
import { randomBase62 } from "../../src/lib/random.ts";
import { loadConfig } from "../../src/load-config.ts";
import { generateWebhookSecret } from "../../src/webhooks/secret.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import { HttpClient } from "../helpers/http.ts";
import { sandboxCallback, vendAirtime } from "../helpers/processing.ts";
import { startTestServer, type TestServer, testAdminToken } from "../helpers/server.ts";

/**
 * Secrets planted in every place a request or its answer can carry one, then searched for in the text of every
 * row of request_logs (all its columns): none is found, while the records of those requests are there, with
 * `[redacted]` where each was. Destinations in the bodies sent are stored masked.
 */
const defaults = loadConfig({});
const callbackToken = `cb-token-${randomBase62(24)}`;
const callbackSecret = `cb-secret-${randomBase62(24)}`;
let server: TestServer;
/** What must appear in no record, by where it was planted. */
const planted: Record<string, string> = {};

/** Rows of request_logs whose text (every column) contains `text`. */
async function rowsHolding(text: string): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    server.database.handle.db,
    sql`select count(*)::int as n from request_logs r where r::text like '%' || ${text} || '%'`,
  );
  return row?.n ?? -1;
}

async function recordedRoutes(): Promise<string[]> {
  const rows = await queryRows<{ route: string }>(
    server.database.handle.db,
    sql`select distinct method || ' ' || route as route from request_logs order by 1`,
  );
  return rows.map((row) => row.route);
}

beforeAll(async () => {
  server = await startTestServer({
    providers: { ...defaults.providers, sandbox: { ...defaults.providers.sandbox, callbackToken, callbackSecret } },
  });
  const account = await fundedAccount(server, 1_000_000, "secrets");
  planted["client key (Authorization, and account creation's answer)"] = account.testKey;
  planted["live key (account creation's answer)"] = account.liveKey;
  planted["admin token (Authorization)"] = testAdminToken;

  // Key creation's answer, then the new key rolled: the roll's answer holds the next one.
  const created = await server.admin.post(`/admin/v1/accounts/${account.id}/keys`, { mode: "test" });
  expect(created.status).toBe(201);
  planted["key creation's answer"] = created.json.data.key;
  const rolled = await server.client(created.json.data.key).post("/api/v1/keys/roll", { grace_seconds: 60 });
  expect(rolled.status).toBe(201);
  planted["roll's answer"] = rolled.json.data.key.key;

  // An operator: its token in creation's answer, then as the Authorization of an admin request.
  const operator = await server.admin.post("/admin/v1/operators", { name: "secret-keeper", role: "viewer" });
  expect(operator.status).toBe(201);
  planted["operator token (creation's answer, Authorization)"] = operator.json.data.token;
  expect((await new HttpClient(server.url, operator.json.data.token).get("/admin/v1/accounts")).status).toBe(200);

  // Webhook secrets: endpoint creation's answer and rotate-secret's.
  const endpoint = await account.client.post("/api/v1/webhook-endpoints", { url: "https://example.com/hooks" });
  expect(endpoint.status).toBe(201);
  planted["webhook secret (endpoint creation's answer)"] = endpoint.json.data.secret;
  const rotated = await account.client.post(`/api/v1/webhook-endpoints/${endpoint.json.data.id}/rotate-secret`, {
    overlap_seconds: 60,
  });
  expect(rotated.status).toBe(200);
  planted["webhook secret (rotate-secret's answer)"] = rotated.json.data.secret;

  // A provider callback: its bearer token and signature header (neither stored: no header is), and the provider's
  // credentials sent back in a body (replaced because the process knows them).
  const reference = await vendAirtime(account.client, "08031234444");
  const callback = sandboxCallback(
    { event_id: "evt-secret", reference, status: "successful", provider_reference: "P-secret" },
    callbackSecret,
    callbackToken,
  );
  const applied = await new HttpClient(server.url).post("/callbacks/providers/sandbox", undefined, {
    raw: callback.raw,
    headers: callback.headers,
  });
  // Accepted (its token and signature good); the order was never sent (no worker runs here): a conflict.
  expect(applied.status).toBe(409);
  planted["callback bearer token (Authorization)"] = callbackToken;
  planted["callback signature (X-Provider-Signature)"] = callback.headers["x-provider-signature"];
  planted["callback signature's HMAC"] = callback.headers["x-provider-signature"].split("sha256=")[1] ?? "";
  const echoed = await new HttpClient(server.url).post("/callbacks/providers/sandbox", undefined, {
    raw: JSON.stringify({ event_id: "evt-echo", reference, status: "successful", note: `${callbackToken} ${callbackSecret}` }),
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${callbackToken}`,
      "x-provider-signature": "t=1,sha256=00",
    },
  });
  expect(echoed.status).toBe(401);
  planted["callback signing secret (in a body)"] = callbackSecret;

  // Credentials sent where no field is named for one, and secrets in fields named for one.
  const fakeLiveKey = generateApiKey("live").key;
  const fakeSecret = generateWebhookSecret();
  planted["a key-shaped string in a body field"] = fakeLiveKey;
  planted["a webhook-secret-shaped string in a body field"] = fakeSecret;
  planted["a password in a body field named password"] = `correct-horse-${randomBase62(12)}`;
  planted["a token in a body field named api_token"] = `plain-token-${randomBase62(12)}`;
  const vendWithSecrets = await account.client.post(
    "/api/v1/vend",
    {
      product_code: "mtn-airtime",
      phone_number: "08031234567",
      amount_kobo: 10_000,
      metadata: {
        note: fakeLiveKey,
        other: fakeSecret,
        password: planted["a password in a body field named password"],
        api_token: planted["a token in a body field named api_token"],
      },
    },
    idem(),
  );
  expect([202, 400]).toContain(vendWithSecrets.status);

  // In a query string: a key-shaped search, an operator-token-shaped client reference, a parameter named token.
  const fakeOperatorToken = `op_${randomBase62(40)}`;
  planted["a key-shaped string in a query"] = generateApiKey("test").key;
  planted["an operator-token-shaped string in a query"] = fakeOperatorToken;
  planted["a query parameter named token"] = `query-token-${randomBase62(12)}`;
  const searched = await account.client.get("/api/v1/transactions", {
    query: { search: planted["a key-shaped string in a query"], client_reference: fakeOperatorToken },
  });
  expect(searched.status).toBe(200);
  const tokenQuery = await account.client.get(`/api/v1/transactions?token=${planted["a query parameter named token"]}`);
  expect(tokenQuery.status).toBe(400);

  // In the path, and in the headers that are stored (User-Agent, X-Request-Id, Idempotency-Key).
  planted["a key-shaped path segment"] = generateApiKey("test").key;
  expect((await account.client.get(`/api/v1/${planted["a key-shaped path segment"]}`)).status).toBe(404);
  planted["a key in User-Agent"] = generateApiKey("live").key;
  planted["an operator token in X-Request-Id"] = `op_${randomBase62(40)}`;
  planted["a webhook secret in Idempotency-Key"] = `whsec_${randomBase62(32)}`;
  const headed = await account.client.get("/api/v1/wallet", {
    headers: {
      "user-agent": `curl/8 ${planted["a key in User-Agent"]}`,
      "x-request-id": planted["an operator token in X-Request-Id"] ?? "",
      "idempotency-key": planted["a webhook secret in Idempotency-Key"] ?? "",
    },
  });
  expect(headed.status).toBe(200);

  await server.deps.requestLogs.flush();
});
afterAll(() => server.close());

test("the requests that carried them are recorded", async () => {
  const routes = await recordedRoutes();
  for (const route of [
    "POST /admin/v1/accounts",
    "POST /admin/v1/accounts/{account_id}/keys",
    "POST /api/v1/keys/roll",
    "POST /admin/v1/operators",
    "GET /admin/v1/accounts",
    "POST /api/v1/webhook-endpoints",
    "POST /api/v1/webhook-endpoints/{id}/rotate-secret",
    "POST /callbacks/providers/{provider}",
    "POST /api/v1/vend",
    "GET /api/v1/transactions",
    "GET /api/v1/wallet",
    "GET (unmatched)",
  ])
    expect(routes).toContain(route);
  expect(await rowsHolding("[redacted]")).toBeGreaterThanOrEqual(10);
  expect(Object.keys(planted).length).toBeGreaterThanOrEqual(12);
});

test.each(Object.keys({ ...plantedNames() }))("%s: in no record", async (where) => {
  const secret = planted[where] ?? "";
  expect(secret.length).toBeGreaterThan(8);
  expect(await rowsHolding(secret)).toBe(0);
});

test("destinations in the bodies sent are stored masked", async () => {
  expect(await rowsHolding("08031234567")).toBe(0);
  expect(await rowsHolding("08031234444")).toBe(0);
  expect(await rowsHolding("0803****567")).toBeGreaterThanOrEqual(1);
  expect(await rowsHolding("0803****444")).toBeGreaterThanOrEqual(1);
});

/** The places planted, named before they are filled (test.each needs its rows when the file loads). */
function plantedNames(): Record<string, true> {
  return Object.fromEntries(
    [
      "client key (Authorization, and account creation's answer)",
      "live key (account creation's answer)",
      "admin token (Authorization)",
      "key creation's answer",
      "roll's answer",
      "operator token (creation's answer, Authorization)",
      "webhook secret (endpoint creation's answer)",
      "webhook secret (rotate-secret's answer)",
      "callback bearer token (Authorization)",
      "callback signature (X-Provider-Signature)",
      "callback signature's HMAC",
      "callback signing secret (in a body)",
      "a key-shaped string in a body field",
      "a webhook-secret-shaped string in a body field",
      "a password in a body field named password",
      "a token in a body field named api_token",
      "a key-shaped string in a query",
      "an operator-token-shaped string in a query",
      "a query parameter named token",
      "a key-shaped path segment",
      "a key in User-Agent",
      "an operator token in X-Request-Id",
      "a webhook secret in Idempotency-Key",
    ].map((name) => [name, true]),
  );
}
