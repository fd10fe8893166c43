import { describe, expect, test } from "bun:test";
import { retryDelayMs } from "../../sdk/src/core/transport.ts";
import {
  ConflictError,
  ConnectionError,
  RateLimitError,
  ServiceUnavailableError,
  VendClient,
  type VendClientOptions,
} from "../../sdk/src/index.ts";

const transaction = { reference: "txn_x", status: "queued" };
const envelope = (data: unknown) => ({ success: true, code: "OK", message: "OK", data });
const failure = (code: string) => ({ success: false, code, message: code, data: null });

interface Sent {
  method: string;
  path: string;
  idempotencyKey: string | null;
  body: string;
}

/** A client whose requests are answered, in order, by `answers` (a thrown error is a failed connection). */
function clientAnswering(answers: (() => Response)[], options: Partial<VendClientOptions> = {}) {
  const sent: Sent[] = [];
  const vend = new VendClient({
    apiKey: "rg_test_0123456789abcdef0123456789abcdef",
    baseUrl: "http://vend.invalid",
    fetch: async (request) => {
      sent.push({
        method: request.method,
        path: new URL(request.url).pathname,
        idempotencyKey: request.headers.get("idempotency-key"),
        body: await request.text(),
      });
      const answer = answers[sent.length - 1];
      if (!answer) throw new Error("no more answers");
      return answer();
    },
    ...options,
  });
  return { vend, sent };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  () =>
    Response.json(body, { status, headers: { "x-request-id": `req_${status}`, ...headers } });
const unreachable = () => {
  throw new TypeError("fetch failed");
};
const airtime = { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 };

describe("retries", () => {
  test("a vend answered 503 and 409 IDEMPOTENCY_IN_PROGRESS is sent again with the same key and body", async () => {
    const { vend, sent } = clientAnswering([
      json(503, failure("SERVICE_UNAVAILABLE"), { "retry-after": "0" }),
      json(409, failure("IDEMPOTENCY_IN_PROGRESS"), { "retry-after": "0" }),
      json(202, envelope(transaction)),
    ]);
    expect(await vend.vends.create(airtime)).toEqual(transaction as never);
    expect(sent).toHaveLength(3);
    expect(new Set(sent.map((request) => request.idempotencyKey)).size).toBe(1);
    expect(sent[0]?.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(sent.map((request) => request.body))).toEqual(new Set([JSON.stringify(airtime)]));
  });

  test("a failed connection is retried for a vend (its key given) and for a read, up to maxRetries", async () => {
    const vending = clientAnswering([unreachable, json(202, envelope(transaction))]);
    await vending.vend.vends.create(airtime, { idempotencyKey: "order-1" });
    expect(vending.sent.map((request) => request.idempotencyKey)).toEqual(["order-1", "order-1"]);

    const reading = clientAnswering([unreachable, unreachable, unreachable], { maxRetries: 1 });
    const error = await reading.vend.wallet.balance().catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ code: "CONNECTION_ERROR", status: null, message: expect.stringContaining("2 attempt(s)") });
    expect(reading.sent).toHaveLength(2);
  });

  test("a POST without an Idempotency-Key is never sent twice, whatever the failure", async () => {
    const answered = clientAnswering([json(503, failure("SERVICE_UNAVAILABLE"), { "retry-after": "0" })]);
    const error = await answered.vend.webhooks.endpoints.create({ url: "https://example.com/hooks" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(answered.sent).toHaveLength(1);
    expect(answered.sent[0]?.idempotencyKey).toBeNull();

    const lost = clientAnswering([unreachable, json(201, envelope({}))]);
    expect(await lost.vend.keys.roll().catch((e: unknown) => e)).toBeInstanceOf(ConnectionError);
    expect(lost.sent).toHaveLength(1);
  });

  test("429 is retried after Retry-After; when retries run out the error says how long to wait", async () => {
    const limited = json(429, failure("RATE_LIMITED"), { "retry-after": "0" });
    const { vend, sent } = clientAnswering([limited, limited], { maxRetries: 1 });
    const error = await vend.transactions.get("txn_x").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ status: 429, code: "RATE_LIMITED", requestId: "req_429", retryAfter: 0 });
    expect(sent).toHaveLength(2);
  });

  test("a Retry-After beyond a minute is not waited out, and other conflicts are not retried", async () => {
    const far = clientAnswering([json(503, failure("SERVICE_UNAVAILABLE"), { "retry-after": "3600" })]);
    expect(await far.vend.wallet.balance().catch((e: unknown) => e)).toBeInstanceOf(ServiceUnavailableError);
    expect(far.sent).toHaveLength(1);

    const conflict = clientAnswering([json(409, failure("CONFLICT"))]);
    expect(await conflict.vend.vends.create(airtime).catch((e: unknown) => e)).toBeInstanceOf(ConflictError);
    expect(conflict.sent).toHaveLength(1);
  });

  test("each attempt has its own timeout", async () => {
    const sent: Request[] = [];
    const hanging = new VendClient({
      apiKey: "rg_test_0123456789abcdef0123456789abcdef",
      baseUrl: "http://vend.invalid",
      maxRetries: 1,
      timeoutMs: 50,
      fetch: (request) => {
        sent.push(request);
        return new Promise((_, reject) => request.signal.addEventListener("abort", () => reject(request.signal.reason)));
      },
    });
    const error = await hanging.wallet.balance().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toContain("timed out after 50 ms");
    expect(sent).toHaveLength(2);
  });

  test("backoff doubles from 0.5 s up to 8 s with jitter, unless the server said when", () => {
    const low = () => 0;
    const high = () => 1;
    expect([0, 1, 2, 3, 4, 5].map((attempt) => retryDelayMs(attempt, null, low))).toEqual([250, 500, 1000, 2000, 4000, 4000]);
    expect([0, 1, 2, 3, 4, 5].map((attempt) => retryDelayMs(attempt, null, high))).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
    expect(retryDelayMs(0, "2")).toBe(2000);
    expect(retryDelayMs(3, "0")).toBe(0);
    const inThreeSeconds = new Date(Date.now() + 3000).toUTCString();
    expect(retryDelayMs(0, inThreeSeconds)).toBeGreaterThan(1000);
    expect(retryDelayMs(0, inThreeSeconds)).toBeLessThanOrEqual(3000);
  });
});

describe("construction", () => {
  test("baseUrl is required (there is no localhost default) and the key names the mode", () => {
    expect(() => new VendClient({ apiKey: "rg_test_abc" } as VendClientOptions)).toThrow("baseUrl is required");
    expect(() => new VendClient({ apiKey: "rg_test_abc", baseUrl: "not a url" })).toThrow("baseUrl is not a URL");
    expect(() => new VendClient({ apiKey: "", baseUrl: "https://vend.example.com" })).toThrow("apiKey is required");
    expect(() => new VendClient({ apiKey: "sk_live_abc", baseUrl: "https://vend.example.com" })).toThrow("rg_test_");
    expect(new VendClient({ apiKey: "rg_live_abc", baseUrl: "https://vend.example.com" }).mode).toBe("live");
    expect(new VendClient({ apiKey: "rg_test_abc", baseUrl: "https://vend.example.com" }).mode).toBe("test");
  });

  test("requests go under the base URL, path prefix kept, with the key as a bearer token", async () => {
    const seen: Request[] = [];
    const vend = new VendClient({
      apiKey: "rg_test_abc",
      baseUrl: "https://gateway.example.com/vend/",
      fetch: async (request) => {
        seen.push(request);
        return Response.json(envelope({ balance_kobo: 0 }));
      },
    });
    await vend.wallet.balance();
    expect(seen[0]?.url).toBe("https://gateway.example.com/vend/api/v1/wallet");
    expect(seen[0]?.headers.get("authorization")).toBe("Bearer rg_test_abc");
  });
});
