import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq, gt } from "drizzle-orm";
import { requestLogs } from "../../src/db/schema/index.ts";
import type { RequestLog } from "../../src/request-logs/view.ts";
import type { HttpClient, HttpResult } from "../helpers/http.ts";
import { type LogStream, openLogStream } from "../helpers/log-stream.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

type Account = { id: string; testKey: string; liveKey: string };

const onPostgres = Boolean(process.env.DATABASE_URL);
let server: TestServer;
let a: Account;
let b: Account;
let clientA: HttpClient;
const opened: LogStream[] = [];

beforeAll(async () => {
  server = await startTestServer();
  a = await server.createAccount("Streamed A");
  b = await server.createAccount("Streamed B");
  clientA = server.client(a.testKey);
}, 60_000);
afterAll(async () => {
  for (const stream of opened) stream.close();
  await server.close();
});

const requestIdOf = (res: HttpResult) => res.headers.get("x-request-id") ?? "";

/** Opens a stream on this file's server and waits for its first comment: from then on it receives what is written. */
async function open(path: string, token: string, options: Parameters<typeof openLogStream>[3] = {}) {
  const stream = await openLogStream(server.url, path, token, options);
  opened.push(stream);
  expect(stream.response.status).toBe(200);
  await stream.waitForComment(/^stream of request logs$/);
  return stream;
}

/** Writes what the recorder holds now: its batch's notification wakes the streams (no waiting on its timer). */
const recorded = () => server.deps.requestLogs.flush();

/** The records of these requests as the list answers them (contract-checked), in the order given. */
async function listed(ids: string[], by: HttpClient = server.admin): Promise<RequestLog[]> {
  const path = by === server.admin ? "/admin/v1/request-logs" : "/api/v1/request-logs";
  const found = await Promise.all(ids.map((id) => by.get(path, { query: { request_id: id } })));
  return found.map((res) => res.json.data.items[0]);
}

describe("GET /api/v1/request-logs/stream", () => {
  test("a key's own records as they are written, in id order, each as listed; not another account's, mode's or the operator's", async () => {
    const stream = await open("/api/v1/request-logs/stream", a.testKey);
    expect(stream.response.headers.get("content-type")).toBe("text/event-stream");
    expect(stream.response.headers.get("cache-control")).toBe("no-cache");
    expect(stream.response.headers.get("x-request-id")).toMatch(/^req_/);
    const mine = [await clientA.get("/api/v1/wallet")];
    await server.client(b.testKey).get("/api/v1/wallet");
    await server.client(a.liveKey).get("/api/v1/wallet");
    await server.admin.get("/admin/v1/accounts");
    mine.push(await clientA.get("/api/v1/transactions/txn_none"));
    await recorded();
    // A last one of A's, written after the others: had any other reached the stream, it would be before this.
    mine.push(await clientA.get("/api/v1/wallet"));
    await recorded();
    const events = await stream.waitForEvents(3);
    expect(events.map((event) => event.data.request_id)).toEqual(mine.map(requestIdOf));
    expect(events.map((event) => event.data.status)).toEqual([200, 404, 200]);
    const ids = events.map((event) => Number(event.id));
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(events.map((event) => event.data)).toEqual(await listed(mine.map(requestIdOf), clientA));
    expect(events.every((event) => event.id === event.data.id)).toBe(true);
    stream.close();
    await stream.ended;
    // The stream itself is no request log: a tail would record its own reading.
    await recorded();
    const streamRows = await server.database.handle.db
      .select()
      .from(requestLogs)
      .where(eq(requestLogs.route, "/api/v1/request-logs/stream"));
    expect(streamRows).toEqual([]);
  });

  test("filters as the list's: the stream and the list answer the same records", async () => {
    const query = { status: "4xx", path: "/api/v1/transactions" };
    const marker = await clientA.get("/api/v1/wallet");
    await recorded();
    const [before] = await listed([requestIdOf(marker)], clientA);
    const stream = await open("/api/v1/request-logs/stream", a.testKey, { query });
    await clientA.get("/api/v1/transactions/txn_one");
    await clientA.get("/api/v1/transactions", { query: { limit: 0 } });
    await clientA.get("/api/v1/wallet/transactions-not-here");
    await clientA.get("/api/v1/transactions");
    await server.client(b.testKey).get("/api/v1/transactions/txn_b");
    const last = await clientA.get("/api/v1/transactions/txn_two");
    await recorded();
    const list = await clientA.get("/api/v1/request-logs", { query: { ...query, limit: 100 } });
    const expected = (list.json.data.items as RequestLog[]).filter((item) => Number(item.id) > Number(before?.id)).reverse();
    expect(expected.map((item) => item.status)).toEqual([404, 400, 404]);
    const events = await stream.waitForEvents(expected.length);
    expect(events.map((event) => event.data)).toEqual(expected);
    expect(events.at(-1)?.data.request_id).toBe(requestIdOf(last));
    expect(stream.events).toHaveLength(expected.length);
  });

  test("Last-Event-ID: the records after it that match come first, then the live ones, none twice", async () => {
    const sent: HttpResult[] = [];
    for (let n = 0; n < 6; n++) sent.push(await clientA.get(n % 2 ? "/api/v1/wallet" : "/api/v1/transactions/txn_gone"));
    await recorded();
    const records = await listed(sent.map(requestIdOf), clientA);
    const resumed = await open("/api/v1/request-logs/stream", a.testKey, {
      lastEventId: records[1]?.id,
      query: { status: "404" },
    });
    const missed = records.slice(2).filter((record) => record.status === 404);
    expect(missed).toHaveLength(2);
    expect((await resumed.waitForEvents(missed.length)).map((event) => event.data)).toEqual(missed);
    const live = await clientA.get("/api/v1/transactions/txn_after");
    await recorded();
    const events = await resumed.waitForEvents(missed.length + 1);
    expect(events.at(-1)?.data.request_id).toBe(requestIdOf(live));
    const ids = resumed.events.map((event) => Number(event.id));
    expect(ids).toEqual([...new Set(ids)].sort((x, y) => x - y));
  });

  test("Last-Event-ID with more than 1,000 missed: the newest 1,000, oldest first, then the live ones", async () => {
    const busy = await server.createAccount("Busy");
    const marker = await server.client(busy.testKey).get("/api/v1/wallet");
    await recorded();
    const [before] = await listed([requestIdOf(marker)]);
    // 1,010 requests, ten at a time.
    for (let n = 0; n < 101; n++)
      await Promise.all(
        Array.from({ length: 10 }, () =>
          fetch(`${server.url}/api/v1/wallet`, { headers: { authorization: `Bearer ${busy.testKey}` } }).then((res) =>
            res.arrayBuffer(),
          ),
        ),
      );
    await recorded();
    const written = await server.database.handle.db
      .select({ id: requestLogs.id })
      .from(requestLogs)
      .where(and(eq(requestLogs.accountId, busy.id), gt(requestLogs.id, Number(before?.id))));
    expect(written).toHaveLength(1_010);
    const newest = written
      .map((row) => String(row.id))
      .sort((x, y) => Number(x) - Number(y))
      .slice(-1_000);
    const resumed = await open("/api/v1/request-logs/stream", busy.testKey, { lastEventId: before?.id });
    expect((await resumed.waitForEvents(1_000)).map((event) => event.id)).toEqual(newest);
    const live = await server.client(busy.testKey).get("/api/v1/wallet");
    await recorded();
    expect((await resumed.waitForEvents(1_001)).at(-1)?.data.request_id).toBe(requestIdOf(live));
  }, 60_000);

  test.each([
    [{ status: "4x" }, {}, "status"],
    [{ method: "FETCH" }, {}, "method"],
    [{ cursor: "x" }, {}, "cursor"],
    [{}, { "last-event-id": "abc" }, "Last-Event-ID"],
  ] as [Record<string, string>, Record<string, string>, string][])(
    "%j %j is refused, naming %s",
    async (query, headers, field) => {
      const refused = await openLogStream(server.url, "/api/v1/request-logs/stream", a.testKey, { query, headers });
      expect(refused.response.status).toBe(400);
      const body = await refused.response.json();
      expect(body.data.errors.map((error: { field: string }) => error.field)).toContain(field);
    },
  );

  test("without a working key: 401, nothing streamed", async () => {
    const refused = await openLogStream(server.url, "/api/v1/request-logs/stream", "rg_test_NotAKeyAtAll000000000000000");
    expect(refused.response.status).toBe(401);
    expect(refused.response.headers.get("content-type")).toStartWith("application/json");
  });
});

describe("GET /admin/v1/request-logs/stream", () => {
  test("every account's records and those of no account; narrowed by account, mode and status as asked", async () => {
    const everything = await open("/admin/v1/request-logs/stream", "test-admin-token-0123456789abcdef");
    const narrowed = await open("/admin/v1/request-logs/stream", "test-admin-token-0123456789abcdef", {
      query: { account_id: b.id, mode: "test", status: "2xx" },
    });
    const sent = [
      await clientA.get("/api/v1/wallet"),
      await server.client(b.testKey).get("/api/v1/wallet"),
      await server.client(b.testKey).get("/api/v1/transactions/txn_none"),
      await server.client(b.liveKey).get("/api/v1/wallet"),
      await server.client("rg_test_NotAKeyAtAll000000000000000").get("/api/v1/wallet"),
      await server.client(b.testKey).get("/api/v1/wallet"),
    ];
    await recorded();
    const all = await everything.waitForEvents(sent.length);
    expect(all.map((event) => event.data.request_id)).toEqual(sent.map(requestIdOf));
    expect(all[4]?.data).toMatchObject({ account_id: null, key_id: null, status: 401, error_code: "UNAUTHENTICATED" });
    const hers = await narrowed.waitForEvents(2);
    expect(hers.map((event) => event.data.request_id)).toEqual([
      requestIdOf(sent[1] as HttpResult),
      requestIdOf(sent[5] as HttpResult),
    ]);
    expect(narrowed.events).toHaveLength(2);
  });

  test("a key cannot open it", async () => {
    const refused = await openLogStream(server.url, "/admin/v1/request-logs/stream", a.testKey);
    expect(refused.response.status).toBe(401);
  });
});

describe("a stream's life", () => {
  test("a client that goes away ends its stream on the server", async () => {
    const before = server.deps.requestLogStreams.size;
    const streams = await Promise.all([0, 1, 2].map(() => open("/api/v1/request-logs/stream", a.testKey)));
    expect(server.deps.requestLogStreams.size).toBe(before + 3);
    for (const stream of streams) stream.close();
    await waitUntil(() => server.deps.requestLogStreams.size === before, { what: "the streams forgotten" });
  });

  test.skipIf(!onPostgres)("open streams hold no database connection while they wait", async () => {
    const streams = await Promise.all([0, 1, 2, 3, 4].map(() => open("/api/v1/request-logs/stream", a.testKey)));
    await waitUntil(() => server.deps.database.connections().inUse === 0, { what: "no connection in use" });
    await clientA.get("/api/v1/wallet");
    await recorded();
    await Promise.all(streams.map((stream) => stream.waitForEvents(1)));
    for (const stream of streams) stream.close();
  });

  test("a revoked key's stream ends with a comment saying so; another key's goes on", async () => {
    const created = await server.admin.post(`/admin/v1/accounts/${a.id}/keys`, { mode: "test" });
    expect(created.status).toBe(201);
    const doomed = await open("/api/v1/request-logs/stream", created.json.data.key);
    const other = await open("/api/v1/request-logs/stream", a.testKey);
    const revoked = await server.admin.delete(`/admin/v1/keys/${created.json.data.id}`);
    expect(revoked.status).toBe(200);
    await doomed.waitForComment(/credential no longer works/);
    await doomed.ended;
    const after = await clientA.get("/api/v1/wallet");
    await recorded();
    expect((await other.waitForEvents(1))[0]?.data.request_id).toBe(requestIdOf(after));
    expect([doomed.events, other.isEnded]).toEqual([[], false]);
  });

  test("a revoked operator's stream ends too", async () => {
    const created = await server.admin.post("/admin/v1/operators", { name: "watcher", role: "viewer" });
    expect(created.status).toBe(201);
    const stream = await open("/admin/v1/request-logs/stream", created.json.data.token);
    expect((await server.admin.delete(`/admin/v1/operators/${created.json.data.operator.id}`)).status).toBe(200);
    await stream.waitForComment(/credential no longer works/);
    await stream.ended;
  });

  test("a client that stops reading is cut off once 4 MB wait for it, with a comment saying so", async () => {
    // The other streams of this file go, so that this one's end is seen in the count.
    for (const stream of opened.splice(0)) stream.close();
    await waitUntil(() => server.deps.requestLogStreams.size === 0, { what: "the other streams gone" });
    // The stream as the server hands it to the socket, never read: what it is sent waits in its queue.
    const body = await server.deps.requestLogStreams.open({
      filters: { accountId: a.id, mode: "test" },
      stillAllowed: async () => true,
      signal: new AbortController().signal,
    });
    expect(server.deps.requestLogStreams.size).toBe(1);
    // Records of about 4.6 KB each (a path as long as a record keeps, 4 KB): 1,000 of them are over 4 MB.
    const long = `/api/v1/transactions/${"x".repeat(4_100)}`;
    for (let n = 0; n < 100; n++) await Promise.all(Array.from({ length: 10 }, () => clientA.get(long)));
    await recorded();
    await waitUntil(() => server.deps.requestLogStreams.size === 0, { what: "the slow stream ended" });
    const text = await new Response(body).text();
    expect(text.trimEnd().split("\n").at(-1)).toBe(": stream ended: the client reads too slowly; reconnect with Last-Event-ID");
    const sent = text.split("\n\n").filter((block) => block.startsWith("event: request_log")).length;
    expect(sent).toBeGreaterThan(850);
    expect(sent).toBeLessThan(1_000);
  }, 60_000);

  test("shutdown ends every stream with a last comment, and opens no new one", async () => {
    const streams = await Promise.all([0, 1].map(() => open("/api/v1/request-logs/stream", a.testKey)));
    server.deps.requestLogStreams.drain();
    for (const stream of streams) {
      await stream.waitForComment(/server is shutting down/);
      await stream.ended;
    }
    expect(server.deps.requestLogStreams.size).toBe(0);
    const refused = await openLogStream(server.url, "/api/v1/request-logs/stream", a.testKey);
    expect([refused.response.status, refused.response.headers.get("retry-after")]).toEqual([503, "1"]);
  });
});

describe("keep-alive", () => {
  test("a quiet stream gets a comment before the server's idle timeout and outlives it", async () => {
    // REQUEST_TIMEOUT_SECONDS 2: connections idle out after 12 s, so keep-alives come every 6 s.
    const quiet = await startTestServer({ requestTimeoutSeconds: 2 });
    try {
      const account = await quiet.createAccount("quiet");
      const stream = await openLogStream(quiet.url, "/api/v1/request-logs/stream", account.testKey);
      opened.push(stream);
      const started = performance.now();
      await waitUntil(() => stream.comments.filter((text) => text === "keep-alive").length >= 3, {
        what: "three keep-alives",
        timeoutMs: 25_000,
        intervalMs: 100,
      });
      // Past the idle timeout by now, and still open: a record still arrives.
      expect(performance.now() - started).toBeGreaterThan(12_000);
      const late = await quiet.client(account.testKey).get("/api/v1/wallet");
      await quiet.deps.requestLogs.flush();
      expect((await stream.waitForEvents(1))[0]?.data.request_id).toBe(requestIdOf(late));
      stream.close();
    } finally {
      await quiet.close();
    }
  }, 40_000);
});
