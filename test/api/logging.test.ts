import { afterAll, beforeAll, expect, test } from "bun:test";
import { captureLogs, startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

let server: TestServer;
let lines: string[];

beforeAll(async () => {
  server = await startTestServer();
  lines = captureLogs(server).lines;
});
afterAll(() => server.close());

test("request logs are structured JSON and never contain API keys or destinations", async () => {
  const { testKey } = await server.createAccount();
  const phone = "08031239876";
  await server
    .client(testKey)
    .post(
      "/api/v1/vend",
      { product_code: "mtn-airtime", phone_number: phone, amount_kobo: 10000 },
      { headers: { "idempotency-key": "log-test-1" } },
    );
  await server.client(testKey).get("/api/v1/transactions", { query: { destination: phone, search: phone } });
  await server.client("rg_test_notarealkeynotarealkeynotarealkey12").get("/api/v1/wallet");
  // The last request's access line is written after its answer; the earlier ones are written by then.
  await waitUntil(() => lines.some((line) => JSON.parse(line).status === 401), { what: "the 401's access line" });
  const text = lines.join("");
  const records = lines.map((line) => JSON.parse(line));
  expect(records.length).toBeGreaterThanOrEqual(3);
  expect(records.every((r) => typeof r.request_id === "string" && typeof r.status === "number")).toBe(true);
  expect(text).not.toContain(testKey);
  expect(text).not.toContain("notarealkey");
  expect(text).not.toContain(phone);
  expect(text).not.toContain("3123987");
});
