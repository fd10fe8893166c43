// Runs once, in the embedded run: it never uses the suite's database (see test/helpers/runs-once.ts).
import { afterAll, describe, expect, test } from "bun:test";
import type { components } from "../../generated/openapi-types.ts";
import { webhookRunner } from "../../src/jobs/queues/delivery-queue.ts";
import { loadConfig } from "../../src/load-config.ts";
import { enqueueTestEvent, startWebhookReceiver, verifyWebhook } from "../helpers/webhook-receiver.ts";
import { cliServer, runCli, runJson } from "./cli.ts";

// No money moves here: the account is not funded and events come from fixture transaction rows.

type Schemas = components["schemas"];
type Endpoint = Schemas["WebhookEndpointCreated"];

const cli = cliServer({
  config: { webhooks: { ...loadConfig({}).webhooks, allowPrivateUrls: true, retrySchedule: [0] } },
  account: { name: "webhooks-control", kobo: 0 },
});
const receiver = startWebhookReceiver();
afterAll(() => receiver.close());

describe("vendctl webhooks: subscribe, update, rotate, ping, resend-failed", () => {
  test("add --events subscribes; list and get show it; update changes it; bad types are usage errors", async () => {
    const env = cli.apiEnv();
    const created = await runJson<Endpoint>(["webhooks", "add", receiver.url, "--events", "transaction.failed"], env);
    expect(created.event_types).toEqual(["transaction.failed"]);
    const table = await runCli(["webhooks", "list", "--table"], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain("transaction.failed");
    expect(table.stdout).toContain("yes");
    const all = await runJson<Endpoint>(["webhooks", "update", created.id, "--events", "all", "--description", "QA"], env);
    expect(all).toMatchObject({ event_types: null, description: "QA" });
    const disabled = await runJson<Endpoint>(["webhooks", "update", created.id, "--disable", "--yes"], env);
    expect(disabled).toMatchObject({ enabled: false, disabled_reason: "disabled_by_client" });
    expect(await runJson<Endpoint>(["webhooks", "get", created.id], env)).toMatchObject({ enabled: false });
    expect((await runJson<Endpoint>(["webhooks", "update", created.id, "--enable"], env)).enabled).toBe(true);
    const bad = await runCli(["webhooks", "update", created.id, "--events", "transaction.reversed"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown event type transaction.reversed");
    const nothing = await runCli(["webhooks", "update", created.id], env);
    expect(nothing.code).toBe(2);
    await runJson(["webhooks", "remove", created.id, "--yes"], env);
  });

  test("rotate-secret shows the new secret once with the warning; ping verifies with both secrets during the overlap", async () => {
    const env = cli.apiEnv();
    const created = await runJson<Endpoint>(["webhooks", "add", receiver.url], env);
    const rotated = await runCli(["webhooks", "rotate-secret", created.id, "--overlap", "1h", "--json"], env);
    expect(rotated.code).toBe(0);
    const data = JSON.parse(rotated.stdout) as Endpoint;
    expect(data.secret).not.toBe(created.secret);
    expect(rotated.stderr).toContain("shown only once");
    expect(rotated.stderr).toContain("The old secret also signs until");
    const overlap = Date.parse(data.previous_secret_expires_at ?? "") - Date.now();
    expect(overlap).toBeGreaterThan(3_000_000);
    expect(overlap).toBeLessThan(3_700_000);

    const before = receiver.received.length;
    const ping = await runJson<Schemas["WebhookPingResult"]>(["webhooks", "ping", created.id], env);
    expect(ping).toMatchObject({ endpoint_id: created.id, delivered: true, status_code: 200 });
    const request = receiver.received[before];
    if (!request) throw new Error("no ping received");
    expect(verifyWebhook(created.secret, request)).toMatchObject({ type: "webhook_endpoint.ping" });
    expect(verifyWebhook(data.secret, request)).toMatchObject({ type: "webhook_endpoint.ping" });

    receiver.failNext(1);
    const failed = await runCli(["webhooks", "ping", created.id], env);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({ delivered: false, status_code: 500, error: "HTTP 500" });
    expect(failed.stderr).toContain("did not accept the ping: HTTP 500");
    const badOverlap = await runCli(["webhooks", "rotate-secret", created.id, "--overlap", "8d"], env);
    expect(badOverlap.code).toBe(2);
    await runJson(["webhooks", "remove", created.id, "--yes"], env);
  });

  test("resend-failed sends the failed deliveries of a date range again", async () => {
    const env = cli.apiEnv();
    const own = startWebhookReceiver();
    const created = await runJson<Endpoint>(["webhooks", "add", own.url], env);
    own.failNext(1);
    const { eventId } = await enqueueTestEvent(cli.server, cli.account.id);
    await webhookRunner(cli.server.deps, "cli-test").tick();
    const today = new Date();
    const day = `${today.getFullYear()}-${String(today.getMonth() + 1).padStart(2, "0")}-${String(today.getDate()).padStart(2, "0")}`;
    const tomorrow = new Date(today.getTime() + 86_400_000);
    const next = `${tomorrow.getFullYear()}-${String(tomorrow.getMonth() + 1).padStart(2, "0")}-${String(tomorrow.getDate()).padStart(2, "0")}`;
    // Yesterday (local) to tomorrow: whatever the hour and time zone, the event is inside.
    const yesterday = new Date(today.getTime() - 86_400_000);
    const prev = `${yesterday.getFullYear()}-${String(yesterday.getMonth() + 1).padStart(2, "0")}-${String(yesterday.getDate()).padStart(2, "0")}`;
    const resent = await runJson<{ scheduled: number }>(
      ["webhooks", "resend-failed", "--from", prev, "--to", next, "--endpoint", created.id],
      env,
    );
    expect(resent.scheduled).toBe(1);
    await webhookRunner(cli.server.deps, "cli-test").tick();
    expect(own.accepted().map((r) => r.headers["webhook-id"])).toEqual([eventId]);
    const again = await runJson<{ scheduled: number }>(["webhooks", "resend-failed", "--from", prev, "--to", next], env);
    expect(again.scheduled).toBe(0);
    const missing = await runCli(["webhooks", "resend-failed", "--from", day], env);
    expect(missing.code).toBe(2);
    await own.close();
  });
});
