import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { VendAdmin } from "../../sdk/src/admin.ts";
import {
  AuthenticationError,
  InsufficientFundsError,
  NotFoundError,
  type RequestLog,
  VendClient,
  type VendError,
} from "../../sdk/src/index.ts";
import { startTestServer, type TestServer, testAdminToken } from "../helpers/server.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";
import { waitUntil } from "../helpers/wait.ts";

let server: TestServer;
let admin: VendAdmin;

beforeAll(async () => {
  server = await startTestServer();
  admin = new VendAdmin({ token: testAdminToken, baseUrl: server.url });
});
afterAll(() => server.close());

async function newClient(name: string, baseUrl = server.url): Promise<{ vend: VendClient; accountId: string; key: string }> {
  const created = await admin.accounts.create({ name });
  const key = created.keys.find((k) => k.mode === "test")?.key ?? "";
  return { vend: new VendClient({ apiKey: key, baseUrl }), accountId: created.account.id, key };
}

/** A refused vend (the wallet is empty): the SDK's error, with the request id to look it up by. */
async function refusedVend(vend: VendClient): Promise<VendError> {
  const error = await vend.vends
    .create({ product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 })
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(InsufficientFundsError);
  expect((error as VendError).requestId).toBeString();
  return error as VendError;
}

/** Records are written a moment after the answer: retrieve until it is there. */
function retrievedSoon(vend: VendClient, requestId: string) {
  return waitUntil(() => vend.requestLogs.retrieve(requestId).catch(() => undefined), {
    what: `request log ${requestId}`,
    timeoutMs: 10_000,
    intervalMs: 100,
  });
}

/** The next `count` records of a stream (left open for more), or fails after `timeoutMs`. */
async function take(
  stream: AsyncGenerator<RequestLog, void, undefined>,
  count: number,
  timeoutMs = 10_000,
): Promise<RequestLog[]> {
  const taken: RequestLog[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${taken.length} of ${count} records within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    while (taken.length < count) {
      const next = await Promise.race([stream.next(), late]);
      if (next.done) throw new Error(`the stream ended after ${taken.length} of ${count} records`);
      taken.push(next.value);
    }
  } finally {
    clearTimeout(timer);
  }
  return taken;
}

describe("requestLogs in the SDK", () => {
  test("a failed vend's requestId finds its record: the body sent and the envelope answered; list filters it", async () => {
    const { vend, accountId } = await newClient("sdk-logs");
    const error = await refusedVend(vend);
    const requestId = error.requestId ?? "";
    const log = await retrievedSoon(vend, requestId);
    expect(log).toMatchObject({
      request_id: requestId,
      account_id: accountId,
      mode: "test",
      method: "POST",
      path: "/api/v1/vend",
      status: 402,
      error_code: "WALLET_INSUFFICIENT_FUNDS",
    });
    expect(JSON.parse(log.request_body ?? "null")).toMatchObject({ product_code: "mtn-airtime", amount_kobo: 10_000 });
    expect(JSON.parse(log.response_body ?? "null")).toMatchObject({ success: false, code: "WALLET_INSUFFICIENT_FUNDS" });

    await vend.wallet.balance();
    // Reading the record before it was written answered 404s: they are 4xx too, on another path.
    const failed = await vend.requestLogs.list({ status: "4xx", path: "/api/v1/vend" }).toArray({ limit: 50 });
    expect(failed.map((l) => l.request_id)).toEqual([requestId]);
    const everything = await vend.requestLogs.list().toArray({ limit: 50 });
    expect(everything.length).toBeGreaterThan(failed.length);
    expect(everything.every((l) => l.account_id === accountId)).toBe(true);

    // Operators find it through the admin client, among every account's.
    expect((await admin.requestLogs.retrieve(requestId)).response_body).toBe(log.response_body);
    const byAccount = await admin.requestLogs.list({ account_id: accountId, status: "402" }).toArray({ limit: 10 });
    expect(byAccount.map((l) => l.request_id)).toEqual([requestId]);
  });

  test("another account's key gets NotFoundError for it", async () => {
    const { vend } = await newClient("sdk-logs-owner");
    const error = await refusedVend(vend);
    await retrievedSoon(vend, error.requestId ?? "");
    const { vend: other } = await newClient("sdk-logs-other");
    const refused = await other.requestLogs.retrieve(error.requestId ?? "").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(NotFoundError);
    expect(refused).toMatchObject({ code: "NOT_FOUND", status: 404 });
  });

  test("stream: from lastEventId, then live; admin streams an account's; a stopped signal ends it", async () => {
    const { vend, accountId } = await newClient("sdk-logs-stream");
    await vend.wallet.balance();
    const newest = await waitUntil(
      () =>
        vend.requestLogs
          .list()
          .firstPage()
          .then((page) => page.items[0]),
      {
        what: "the first record",
        timeoutMs: 10_000,
      },
    );
    // Made before the stream opens: it comes by resuming after `newest`, so no race with the connection.
    const missing = await vend.transactions.get("txn_streamresume0000000000").catch((e: VendError) => e);
    const stop = new AbortController();
    const stream = vend.requestLogs.stream({ path: "/api/v1/transactions" }, { signal: stop.signal, lastEventId: newest.id });
    const adminStream = admin.requestLogs.stream({ account_id: accountId, status: "404" }, { lastEventId: newest.id });
    const [first] = await take(stream, 1);
    expect(first).toMatchObject({ request_id: (missing as VendError).requestId ?? "", status: 404, error_code: "NOT_FOUND" });
    expect((await take(adminStream, 1))[0]?.request_id).toBe((missing as VendError).requestId ?? "");
    await adminStream.return();

    // The stream is open now: this one comes live.
    const live = await vend.transactions.get("txn_streamlive000000000000").catch((e: VendError) => e);
    const [second] = await take(stream, 1);
    expect(second?.request_id).toBe((live as VendError).requestId ?? "");
    expect(Number(second?.id)).toBeGreaterThan(Number(first?.id));

    stop.abort();
    expect(await stream.next()).toEqual({ done: true, value: undefined });
  });

  test("stream: reconnects after a dropped connection and resumes after the last record, nothing twice", async () => {
    const target = { host: "127.0.0.1", port: Number(new URL(server.url).port) };
    let proxy = await startTcpProxy(target);
    const { vend, key } = await newClient("sdk-logs-reconnect", `http://127.0.0.1:${proxy.port}`);
    const direct = new VendClient({ apiKey: key, baseUrl: server.url });
    await direct.wallet.balance();
    const wallet = { path: "/api/v1/wallet" };
    const newest = await waitUntil(
      () =>
        direct.requestLogs
          .list(wallet)
          .firstPage()
          .then((page) => page.items[0]),
      {
        what: "the first record",
        timeoutMs: 10_000,
      },
    );
    const stream = vend.requestLogs.stream(wallet, { lastEventId: newest.id });
    try {
      await direct.wallet.balance();
      const [before] = await take(stream, 1);

      // Down until the next request is recorded: it can only arrive by resuming with Last-Event-ID.
      await proxy.close();
      await direct.wallet.balance();
      await waitUntil(
        () =>
          direct.requestLogs
            .list(wallet)
            .firstPage()
            .then((p) => p.items.length >= 3),
        {
          what: "the third wallet read recorded",
          timeoutMs: 10_000,
        },
      );
      proxy = await startTcpProxy(target, proxy.port);
      const [after] = await take(stream, 1, 30_000);
      expect(Number(after?.id)).toBeGreaterThan(Number(before?.id));
      const recorded = await direct.requestLogs.list(wallet).toArray({ limit: 10 });
      expect(recorded.map((l) => l.id)).toEqual([after?.id ?? "", before?.id ?? "", newest.id]);
    } finally {
      await stream.return();
      await proxy.close();
    }
  });

  test("stream: a key the service refuses throws AuthenticationError instead of reconnecting", async () => {
    const stranger = new VendClient({ apiKey: "rg_test_NotAKeyOfThisService000000", baseUrl: server.url });
    const refused = await stranger.requestLogs
      .stream()
      .next()
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AuthenticationError);
    expect(refused).toMatchObject({ code: "UNAUTHENTICATED", status: 401, requestId: expect.any(String) });
  });
});
