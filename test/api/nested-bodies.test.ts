import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { queryRows } from "../../src/db/rows.ts";
import { loadSpec } from "../../src/http/spec.ts";
import { maxBodyDepth } from "../../src/http/validation.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import { HttpClient } from "../helpers/http.ts";
import { startTestServer, type TestServer, testAdminToken } from "../helpers/server.ts";

/**
 * A body nesting arrays or objects deeper than the documented limit is refused with a 400 before anything
 * walks it, on every operation that takes a body (the list comes from openapi.yaml): 14,000 levels used to
 * exhaust the call stack (500) in the check for unstorable text.
 */
const spec = loadSpec();
const withBody = spec.operations.filter((op) => op.bodyPointer);
let server: TestServer;
let apiKey: string;

beforeAll(async () => {
  server = await startTestServer();
  apiKey = (await fundedAccount(server, 1_000_000, "nested")).testKey;
});
afterAll(() => server.close());

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

/**
 * Rows in every table of the schema: a refused request writes none. Rate-limit windows aside (every request counts),
 * and the request log (every request is recorded, refused ones too: test/api/request-log-recording.test.ts).
 */
async function rowCounts(): Promise<Record<string, number>> {
  const tables = await queryRows<{ name: string }>(
    server.deps.db,
    sql`select table_name as name from information_schema.tables
        where table_schema = 'public' and table_type = 'BASE TABLE' and table_name not like '%rate_limit%'
          and table_name not like '__drizzle%' and table_name <> 'request_logs' order by 1`,
  );
  const counts: Record<string, number> = {};
  for (const { name } of tables) {
    const [row] = await queryRows<{ n: number }>(server.deps.db, sql`select count(*)::int as n from ${sql.identifier(name)}`);
    counts[name] = row?.n ?? -1;
  }
  return counts;
}

function send(op: (typeof withBody)[number], body: string) {
  const path = op.path.replace(/\{[^}]+\}/g, (name) =>
    name === "{code}"
      ? "mtn-airtime"
      : name === "{provider}"
        ? "sandbox"
        : name === "{reference}"
          ? "txn_none"
          : crypto.randomUUID(),
  );
  const token = op.security === "admin" ? testAdminToken : op.security === "apiKey" ? apiKey : undefined;
  return new HttpClient(server.url, token).request(op.method, path, undefined, {
    raw: body,
    headers: idem().headers,
  });
}

describe("bodies nested too deeply", () => {
  test("the operations with a body are the ones openapi.yaml lists, admin ones included", () => {
    expect(withBody.length).toBeGreaterThan(10);
    expect(withBody.some((op) => op.security === "admin")).toBe(true);
    expect(withBody.map((op) => op.operationId)).toContain("fundWallet");
  });

  test.each(withBody.flatMap((op) => [14_000, maxBodyDepth + 1].map((depth) => [op.operationId, depth] as const)))(
    "%s, %d levels: 400 naming the limit, nothing written",
    async (operationId, depth) => {
      const op = spec.byId.get(operationId);
      if (!op) throw new Error(operationId);
      const before = await rowCounts();
      const res = await send(op, nested(depth));
      expect(res.status).toBe(400);
      expect(res.json.code).toBe("VALIDATION_FAILED");
      expect(res.json.message).toBe("JSON request body is nested too deeply");
      expect(res.json.data.errors).toEqual([{ field: "body", message: "nests arrays and objects more than 64 levels deep" }]);
      expect(await rowCounts()).toEqual(before);
    },
  );

  test.each(withBody.map((op) => op.operationId))(
    "%s, 64 levels: answered as any other body (no nesting refusal, no 5xx)",
    async (operationId) => {
      const op = spec.byId.get(operationId);
      if (!op) throw new Error(operationId);
      const res = await send(op, nested(maxBodyDepth));
      expect(res.status).toBeLessThan(500);
      expect(res.text).not.toContain("nested too deeply");
    },
  );

  test("brackets inside strings do not count, and a body at the limit is served", async () => {
    const client = server.client(apiKey);
    const deepString = "[".repeat(1000);
    const res = await client.post(
      "/api/v1/vend",
      {
        product_code: "mtn-airtime",
        phone_number: "08031234567",
        amount_kobo: 10_000,
        client_reference: deepString.slice(0, 100),
      },
      idem(),
    );
    expect(res.status).toBe(202);
    // 200 braces inside a string are text, not nesting.
    const fund = await client.request("POST", "/api/v1/wallet/fund", undefined, {
      raw: `{"amount_kobo": 100, "note": "${"{".repeat(200)}"}`,
      headers: idem().headers,
    });
    expect(fund.text).not.toContain("nested too deeply");
    expect(await reconcileWallets(server.deps.db)).toEqual([]);
  });
});
