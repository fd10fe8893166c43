import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { loadSpec, type OperationSpec } from "../../src/http/spec.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import { contractFetch } from "../helpers/contract.ts";
import { arbitraryFor, nastyString } from "../helpers/schema-arbitrary.ts";
import { startTestServer, type TestServer, testAdminToken } from "../helpers/server.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

/**
 * Mutated requests to every operation of openapi.yaml, generated from its own schemas. Whatever is sent,
 * the answer is never a 5xx (a declared 503 NO_ROUTE aside), always carries X-Request-Id, and is a status
 * the contract declares for the operation with a body that matches it (contractFetch checks both).
 * Bounded and seeded so CI runs the same few thousand requests every time; FUZZ_SEED / FUZZ_RUNS widen it.
 */
const runsPerOperation = Number(process.env.FUZZ_RUNS ?? 60);
const seed = Number(process.env.FUZZ_SEED ?? 20261122);

const spec = loadSpec();
let server: TestServer;
let known: Record<string, string[]>;
let keys: { test: string; live: string };
/** The endpoint's target: a local receiver, so a ping (or anything else that sends) never leaves the machine. */
let receiver: WebhookReceiver;

beforeAll(async () => {
  server = await startTestServer();
  const funded = await fundedAccount(server, 50_000_000, "fuzz");
  const other = await server.createAccount("fuzz-other");
  keys = { test: funded.testKey, live: funded.liveKey };
  const vend = await funded.client.post(
    "/api/v1/vend",
    { product_code: "mtn-airtime", phone_number: "08031234444", amount_kobo: 10_000 },
    idem(),
  );
  receiver = startWebhookReceiver();
  const endpoint = await funded.client.post("/api/v1/webhook-endpoints", { url: `${receiver.url}/hook` });
  const sacrificial = await server.admin.post(`/admin/v1/accounts/${other.id}/keys`, { mode: "test" });
  known = {
    reference: [vend.json.data.reference, "txn_doesnotexist"],
    account_id: [funded.id, other.id, funded.id.toUpperCase()],
    id: [endpoint.json.data?.id ?? "", crypto.randomUUID()],
    key_id: [sacrificial.json.data?.id ?? "", crypto.randomUUID()],
    code: ["mtn-airtime", "nope"],
    provider: ["sandbox", "vtu", "nope"],
  };
});
afterAll(async () => {
  await server.close();
  await receiver.close();
});

const headerSafe = (value: string) => /^[\x20-\x7e]*$/.test(value);

function requestArbitrary(op: OperationSpec) {
  const pathParams = op.parameters.filter((p) => p.in === "path");
  const queryParams = op.parameters.filter((p) => p.in === "query");
  const path = fc
    .tuple(
      fc.tuple(
        ...pathParams.map((p) =>
          fc.oneof(
            { weight: 4, arbitrary: fc.constantFrom(...(known[p.name] ?? ["x"])).map(encodeURIComponent) },
            { weight: 1, arbitrary: nastyString.map(encodeURIComponent) },
            { weight: 1, arbitrary: fc.constantFrom("%00", "%ZZ", "a%2Fb", "..", "%2e") },
          ),
        ),
      ),
      fc.boolean(),
    )
    .map(([values, slash]) => {
      let i = 0;
      const filled = op.path.replace(/\{[^}]+\}/g, () => values[i++] ?? "x");
      return slash ? `${filled}/` : filled;
    });
  const query = fc.record(
    Object.fromEntries([
      ...queryParams.map((p) => [p.name, arbitraryFor(spec.document, p.schema, 0, p.name)]),
      ["unknown_param", nastyString],
    ]),
    { requiredKeys: [] },
  );
  const body = op.bodyPointer
    ? fc.oneof(
        { weight: 6, arbitrary: arbitraryFor(spec.document, { $ref: op.bodyPointer }).map((v) => JSON.stringify(v)) },
        { weight: 1, arbitrary: fc.oneof(nastyString, fc.constantFrom("{", "[]", "null", '{"a":1', "\u0000")) },
        { weight: 1, arbitrary: fc.constant(undefined) },
      )
    : fc.constant(undefined);
  const authorization = fc.oneof(
    { weight: 6, arbitrary: fc.constant(op.security === "admin" ? `Bearer ${testAdminToken}` : `Bearer ${keys.test}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        `Bearer ${keys.live}`,
        "Bearer rg_test_unknown0000000000000000000000000",
        "Basic eA==",
        "Bearer",
        "",
      ),
    },
  );
  const idempotencyKey = fc.oneof({ weight: 4, arbitrary: fc.uuid() }, { weight: 1, arbitrary: nastyString.filter(headerSafe) });
  const contentType = fc.constantFrom(
    "application/json",
    "application/json",
    "application/json",
    "text/plain",
    "application/x+json",
    "",
  );
  const method = fc.oneof(
    { weight: 9, arbitrary: fc.constant(op.method) },
    { weight: 1, arbitrary: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS") },
  );
  return fc.record({ path, query, body, authorization, idempotencyKey, contentType, method });
}

const queryString = (query: Record<string, unknown>) => {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) params.set(name, typeof value === "string" ? value : JSON.stringify(value));
  const text = params.toString();
  return text ? `?${text}` : "";
};

test(`fuzz: ${runsPerOperation} mutated requests per operation, never a 5xx, always a declared envelope`, async () => {
  const failures: string[] = [];
  let sent = 0;
  for (const op of spec.operations) {
    await fc
      .assert(
        fc.asyncProperty(requestArbitrary(op), async (request) => {
          const headers: Record<string, string> = { "idempotency-key": request.idempotencyKey };
          if (request.authorization) headers.authorization = request.authorization;
          if (request.contentType) headers["content-type"] = request.contentType;
          const withBody = request.body !== undefined && request.method !== "GET" && request.method !== "HEAD";
          const url = `${server.url}${request.path}${queryString(request.query)}`;
          const where = `${op.operationId}: ${request.method} ${url.slice(server.url.length, 300)}`;
          sent += 1;
          let response: Response;
          try {
            response = await contractFetch(url, { method: request.method, headers, body: withBody ? request.body : undefined });
          } catch (error) {
            failures.push(`${where}: ${error instanceof Error ? error.message.slice(0, 400) : String(error)}`);
            return false;
          }
          const text = await response.text();
          const code = response.headers.get("content-type")?.includes("json")
            ? (JSON.parse(text) as { code?: string }).code
            : undefined;
          if (response.status >= 500 && code !== "NO_ROUTE") {
            failures.push(`${where} → ${response.status} ${text.slice(0, 300)}`);
            return false;
          }
          return true;
        }),
        { numRuns: runsPerOperation, seed, endOnFailure: true },
      )
      .catch(() => {});
  }
  expect(failures).toEqual([]);
  expect(sent).toBeGreaterThanOrEqual(spec.operations.length * runsPerOperation);
  // Whatever was accepted or refused, the books still balance.
  expect(await reconcileWallets(server.deps.db)).toEqual([]);
}, 300_000);
