import { describe, expect, test } from "bun:test";
import {
  APIError,
  AuthenticationError,
  ConflictError,
  InsufficientFundsError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ServiceUnavailableError,
  ValidationError,
  VendClient,
  VendError,
} from "../../sdk/src/index.ts";

const envelope = (data: unknown) => ({ success: true, code: "OK", message: "OK", data });

/** A client over a fake server; `answer` sees each request. */
function clientOf(answer: (request: Request) => Response | Promise<Response>) {
  return new VendClient({ apiKey: "rg_test_abc", baseUrl: "http://vend.invalid", maxRetries: 0, fetch: async (r) => answer(r) });
}

describe("auto-paging", () => {
  /** 7 transactions served 3 to a page, with the cursor naming where the next page starts. */
  function pagedServer() {
    const queries: URLSearchParams[] = [];
    const all = Array.from({ length: 7 }, (_, index) => ({ reference: `txn_${index}` }));
    const vend = clientOf((request) => {
      const query = new URL(request.url).searchParams;
      queries.push(query);
      const start = Number(query.get("cursor") ?? 0);
      const items = all.slice(start, start + 3);
      const more = start + 3 < all.length;
      return Response.json(envelope({ items, page: { next_cursor: more ? String(start + 3) : null, has_more: more } }));
    });
    return { vend, queries };
  }

  test("for await follows next_cursor through every page, keeping the filters", async () => {
    const { vend, queries } = pagedServer();
    const seen: string[] = [];
    for await (const transaction of vend.transactions.list({ status: "failed", limit: 3 })) seen.push(transaction.reference);
    expect(seen).toEqual(["txn_0", "txn_1", "txn_2", "txn_3", "txn_4", "txn_5", "txn_6"]);
    expect(queries.map((query) => query.get("cursor"))).toEqual([null, "3", "6"]);
    expect(queries.every((query) => query.get("status") === "failed" && query.get("limit") === "3")).toBe(true);
  });

  test("firstPage reads one page; toArray stops at its limit; breaking out stops fetching", async () => {
    const { vend, queries } = pagedServer();
    const first = await vend.transactions.list().firstPage();
    expect(first.items).toHaveLength(3);
    expect(first.page).toEqual({ next_cursor: "3", has_more: true });
    expect(await vend.transactions.list().toArray({ limit: 4 })).toHaveLength(4);
    expect(queries).toHaveLength(3);
    for await (const _ of vend.transactions.list()) break;
    expect(queries).toHaveLength(4);
    expect(await vend.transactions.list().toArray({ limit: 0 })).toEqual([]);
    expect(queries).toHaveLength(4);
  });
});

describe("errors", () => {
  const cases: { status: number; code: string; type: typeof VendError }[] = [
    { status: 400, code: "VALIDATION_FAILED", type: ValidationError },
    { status: 401, code: "UNAUTHENTICATED", type: AuthenticationError },
    { status: 402, code: "WALLET_INSUFFICIENT_FUNDS", type: InsufficientFundsError },
    { status: 403, code: "IP_NOT_ALLOWED", type: PermissionError },
    { status: 404, code: "NOT_FOUND", type: NotFoundError },
    { status: 409, code: "CONFLICT", type: ConflictError },
    { status: 422, code: "IDEMPOTENCY_KEY_REUSED", type: ValidationError },
    { status: 429, code: "RATE_LIMITED", type: RateLimitError },
    { status: 500, code: "INTERNAL_ERROR", type: APIError },
    { status: 502, code: "PROVIDER_ERROR", type: APIError },
    { status: 503, code: "NO_ROUTE", type: ServiceUnavailableError },
  ];
  for (const { status, code, type } of cases)
    test(`${status} ${code} throws ${type.name} with the code, status, message, request id and body`, async () => {
      const body = { success: false, code, message: `it was ${code}`, data: null };
      const vend = clientOf(() => Response.json(body, { status, headers: { "x-request-id": "req_abc" } }));
      const error = await vend.vends
        .create({ product_code: "mtn-airtime", phone_number: "08031234567" }, { idempotencyKey: "k-1" })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(type);
      expect(error).toBeInstanceOf(VendError);
      expect(error).toMatchObject({
        name: type.name,
        code,
        status,
        message: `it was ${code}`,
        requestId: "req_abc",
        idempotencyKey: "k-1",
        raw: body,
      });
    });

  test("a validation error lists its fields; an answer that is not the envelope still maps by status", async () => {
    const errors = [{ field: "amount_kobo", message: "must be at least 5000" }];
    const invalid = clientOf(() =>
      Response.json(
        { success: false, code: "VALIDATION_FAILED", message: "Request validation failed", data: { errors } },
        { status: 400 },
      ),
    );
    const error = await invalid.wallet.balance().catch((e: unknown) => e);
    expect((error as ValidationError).fieldErrors).toEqual(errors);
    expect((error as ValidationError).requestId).toBeNull();

    const gateway = clientOf(
      () => new Response("<html>Bad gateway</html>", { status: 502, headers: { "content-type": "text/html" } }),
    );
    expect(await gateway.wallet.balance().catch((e: unknown) => e)).toMatchObject({
      name: "APIError",
      code: "HTTP_502",
      status: 502,
      raw: "<html>Bad gateway</html>",
    });
  });

  test("a success answers the resource, not the envelope", async () => {
    const vend = clientOf(() => Response.json(envelope({ balance_kobo: 5, held_kobo: 0 })));
    expect(await vend.wallet.balance()).toEqual({ balance_kobo: 5, held_kobo: 0 } as never);
  });
});

describe("waitFor", () => {
  test("long-polls until the transaction is final, then answers it", async () => {
    const waits: (string | null)[] = [];
    const states = ["processing", "successful"];
    const vend = clientOf((request) => {
      waits.push(new URL(request.url).searchParams.get("wait"));
      return Response.json(envelope({ reference: "txn_x", status: states[waits.length - 1] ?? "successful" }));
    });
    expect((await vend.transactions.waitFor("txn_x", { timeout: 30 })).status).toBe("successful");
    // Each poll asks for the longest wait (25 s), within what is left of the timeout.
    expect(waits).toEqual(["25", "25"]);
  });

  test("when the timeout has passed it answers the transaction as it stands", async () => {
    const vend = clientOf(() => Response.json(envelope({ reference: "txn_x", status: "pending" })));
    expect((await vend.transactions.waitFor("txn_x", { timeout: 0 })).status).toBe("pending");
  });
});
