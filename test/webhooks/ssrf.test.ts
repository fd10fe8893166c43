import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { webhookEndpoints } from "../../src/db/schema/index.ts";
import { webhookRunner } from "../../src/jobs/queues/delivery-queue.ts";
import { loadConfig } from "../../src/load-config.ts";
import { createWebhookEndpoint } from "../../src/webhooks/manage-endpoints.ts";
import { generateWebhookSecret } from "../../src/webhooks/secret.ts";
import type { HostResolver } from "../../src/webhooks/url-guard.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import {
  enqueueTestEvent,
  startHangingReceiver,
  startWebhookReceiver,
  type WebhookReceiver,
} from "../helpers/webhook-receiver.ts";

/** What a production process gets without WEBHOOK_ALLOW_PRIVATE_URLS: the default with DATABASE_URL set. */
const productionDefaults = loadConfig({ DATABASE_URL: "postgres://db.internal:5432/vend" }).webhooks;
const refusedMessage = "refused: private or loopback address";

let strict: TestServer;
let permissive: TestServer;
let receiver: WebhookReceiver;
const port = () => new URL(receiver.url).port;

beforeAll(async () => {
  strict = await startTestServer({ webhooks: { ...productionDefaults, retrySchedule: [0, 3600], timeoutMs: 2000 } });
  permissive = await startTestServer({
    webhooks: { ...productionDefaults, allowPrivateUrls: true, retrySchedule: [0, 3600], timeoutMs: 300 },
  });
  receiver = startWebhookReceiver();
});
afterAll(async () => {
  await receiver.close();
  await strict.close();
  await permissive.close();
});

/** A resolver the test controls (no real DNS), answering from `answers` in turn; the last answer repeats. */
function scriptedResolver(answers: string[][]): HostResolver & { calls: number } {
  let calls = 0;
  const resolve = async () => {
    const answer = answers[Math.min(calls, answers.length - 1)] ?? [];
    calls += 1;
    resolve.calls = calls;
    return answer.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  resolve.calls = 0;
  return resolve;
}

/** The deliveries of the account's newest event, as the events API shows them to the client. */
async function deliveriesShown(server: TestServer, testKey: string) {
  const res = await server.client(testKey).get("/api/v1/events", { query: { limit: 1 } });
  expect(res.status).toBe(200);
  return { text: res.text, deliveries: res.json.data.items[0].deliveries as { last_error: string | null }[] };
}

describe("private and loopback targets", () => {
  test("by default (DATABASE_URL set) a test-mode endpoint on 127.0.0.1 is refused with 400 naming url", async () => {
    expect(productionDefaults.allowPrivateUrls).toBe(false);
    const { testKey } = await strict.createAccount();
    const client = strict.client(testKey);
    for (const url of [receiver.url, `http://localhost:${port()}/`, `http://[::ffff:7f00:1]:${port()}/`]) {
      const res = await client.post("/api/v1/webhook-endpoints", { url });
      expect(res.status).toBe(400);
      expect(res.json.code).toBe("VALIDATION_FAILED");
      expect(res.json.data.errors).toHaveLength(1);
      expect(res.json.data.errors[0].field).toBe("url");
    }
    expect((await client.get("/api/v1/webhook-endpoints")).json.data).toEqual([]);
  });

  test("stored endpoints that point inside are refused at send time; the client sees only the generic outcome", async () => {
    const account = await strict.createAccount();
    // Registered before the rule applied to test mode (or by an operator): the send-time check still holds.
    const urls = [
      receiver.url,
      `http://localhost:${port()}/`,
      `http://[::ffff:7f00:1]:${port()}/`,
      `http://[2002:7f00:1::]:${port()}/`,
      `http://[64:ff9b::7f00:1]:${port()}/`,
    ];
    await strict.database.handle.db
      .insert(webhookEndpoints)
      .values(urls.map((url) => ({ accountId: account.id, mode: "test" as const, url, secret: generateWebhookSecret() })));
    const before = receiver.received.length;
    await enqueueTestEvent(strict, account.id);
    expect(await webhookRunner(strict.deps, "ssrf").tick()).toBe(urls.length);
    expect(receiver.received.length).toBe(before);
    const shown = await deliveriesShown(strict, account.testKey);
    expect(shown.deliveries.map((d) => d.last_error)).toEqual(urls.map(() => refusedMessage));
    // Address forms only (with their colons): a random UUID in the answer may well contain "ffff".
    expect(shown.text).not.toMatch(/127\.0\.0\.1|localhost|::1|2002:|::ffff|64:ff9b|ECONN|getaddrinfo/);
  });

  test("DNS rebinding: public when checked at creation, private at connect time: refused at connect", async () => {
    const account = await strict.createAccount();
    const resolver = scriptedResolver([["93.184.216.34"], ["127.0.0.1"]]);
    const scope = { accountId: account.id, mode: "test" as const };
    const url = `http://hooks.rebind.test:${port()}/`;
    await createWebhookEndpoint(strict.deps.db, scope, { url }, { allowPrivateUrls: false, resolveHost: resolver });
    expect(resolver.calls).toBe(1);
    const before = receiver.received.length;
    await enqueueTestEvent(strict, account.id);
    expect(await webhookRunner({ ...strict.deps, resolveHost: resolver }, "rebind").tick()).toBe(1);
    // One resolution at send time, and it is the one the socket used: no check-then-connect gap to rebind in.
    expect(resolver.calls).toBe(2);
    expect(receiver.received.length).toBe(before);
    expect((await deliveriesShown(strict, account.testKey)).deliveries.map((d) => d.last_error)).toEqual([refusedMessage]);
  });

  test("a live https host that resolves inside is refused by the socket's own lookup, before TLS", async () => {
    const account = await strict.createAccount();
    const resolver = scriptedResolver([["127.0.0.1"]]);
    const url = `https://hooks.tls.test:${port()}/`;
    await strict.database.handle.db
      .insert(webhookEndpoints)
      .values({ accountId: account.id, mode: "live", url, secret: generateWebhookSecret() });
    await enqueueTestEvent(strict, account.id, "live");
    expect(await webhookRunner({ ...strict.deps, resolveHost: resolver }, "tls").tick()).toBe(1);
    expect(resolver.calls).toBe(1);
    // A connection would have failed the TLS handshake with the plain-HTTP receiver ("unreachable").
    expect((await deliveriesShown(strict, account.liveKey)).deliveries.map((d) => d.last_error)).toEqual([refusedMessage]);
  });
});

describe("allowed targets", () => {
  test("the socket connects to the address the check resolved, with the original Host", async () => {
    const account = await permissive.createAccount();
    // No real DNS knows this name: only the injected resolution can have led the request to the receiver.
    const resolver = scriptedResolver([["127.0.0.1"]]);
    const url = `http://hooks.pinned.test:${port()}/pinned`;
    const scope = { accountId: account.id, mode: "test" as const };
    await createWebhookEndpoint(permissive.deps.db, scope, { url }, { allowPrivateUrls: true, resolveHost: resolver });
    const before = receiver.received.length;
    await enqueueTestEvent(permissive, account.id);
    expect(await webhookRunner({ ...permissive.deps, resolveHost: resolver }, "pinned").tick()).toBe(1);
    expect(resolver.calls).toBe(1);
    const arrived = receiver.received.slice(before);
    expect(arrived.map((r) => [r.path, r.headers.host])).toEqual([["/pinned", `hooks.pinned.test:${port()}`]]);
    expect((await deliveriesShown(permissive, account.testKey)).deliveries).toMatchObject([{ last_error: null }]);
  });

  test("connection refused, timeout and a redirect show 'unreachable', 'timed out' and 'HTTP 302'", async () => {
    const closed = startWebhookReceiver();
    await closed.close();
    const hanging = startHangingReceiver();
    const redirecting = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () => new Response(null, { status: 302, headers: { location: `${receiver.url}/redirected` } }),
    });
    try {
      const cases = [
        [`${closed.url}/hooks`, "unreachable"],
        [`${hanging.url}/hooks`, "timed out"],
        [`http://127.0.0.1:${redirecting.port}/hooks`, "HTTP 302"],
      ] as const;
      for (const [url, expected] of cases) {
        const account = await permissive.createAccount();
        const created = await permissive.client(account.testKey).post("/api/v1/webhook-endpoints", { url });
        expect(created.status).toBe(201);
        await enqueueTestEvent(permissive, account.id);
        expect(await webhookRunner(permissive.deps, "outcomes").tick()).toBe(1);
        const shown = await deliveriesShown(permissive, account.testKey);
        expect(shown.deliveries.map((d) => d.last_error)).toEqual([expected]);
        expect(shown.text).not.toMatch(/ECONN|connect|socket|Unable|127\.0\.0\.1/i);
      }
      expect(receiver.received.some((r) => r.path === "/redirected")).toBe(false);
    } finally {
      await hanging.close();
      redirecting.stop(true);
    }
  });
});
