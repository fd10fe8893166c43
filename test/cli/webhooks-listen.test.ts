import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import type { components } from "../../generated/openapi-types.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import { spawnProcess } from "../helpers/process.ts";
import { fastProcessing } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { cliCommand, cliEnv, droppingTarget, removeConfigDirs } from "./cli.ts";

type Schemas = components["schemas"];

const secret = `whsec_${randomBytes(24).toString("base64")}`;

let server: TestServer;
let testKey: string;
let liveKey: string;

beforeAll(async () => {
  // Processing and webhook delivery run in the server, as with `npm start`.
  server = await startTestServer(fastProcessing(), { background: true });
  const account = await fundedAccount(server, 10_000_000, "webhooks-listen");
  testKey = account.testKey;
  liveKey = account.liveKey;
});
afterAll(async () => {
  removeConfigDirs();
  await server.close();
});

function signedEvent(id = `msg_${randomBytes(8).toString("hex")}`) {
  const payload = JSON.stringify({
    id: `evt_${randomBytes(8).toString("hex")}`,
    type: "transaction.successful",
    created_at: new Date().toISOString(),
    mode: "test",
    data: { reference: "txn_4kq9Zr2mXc81LwPb7sTfYhQe", status: "successful", amount_kobo: 10_000 },
  });
  const timestamp = new Date();
  const headers = {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(id, timestamp, payload),
  };
  return { payload, headers };
}

async function startListener(extra: string[]) {
  const listener = spawnProcess(cliCommand(["webhooks", "listen", "--port", "0", "--secret", secret, ...extra]), cliEnv());
  const [, url] = await listener.waitFor(/Listening on (http:\/\/\S+)/);
  return { listener, url: url ?? "" };
}

describe("webhooks listen", () => {
  test("a correctly signed request is reported valid (200); a tampered one INVALID (400)", async () => {
    const { listener, url } = await startListener(["--table"]);
    try {
      const good = signedEvent("msg_good");
      const ok = await fetch(url, { method: "POST", headers: good.headers, body: good.payload });
      expect(ok.status).toBe(200);
      await listener.waitFor(
        /msg_good {2}transaction\.successful {2}txn_4kq9Zr2mXc81LwPb7sTfYhQe {2}successful {2}signature valid/,
      );
      const bad = signedEvent("msg_bad");
      const tampered = bad.payload.replace('"amount_kobo":10000', '"amount_kobo":99999999');
      const refused = await fetch(url, { method: "POST", headers: bad.headers, body: tampered });
      expect(refused.status).toBe(400);
      await listener.waitFor(/msg_bad .* signature INVALID/);
      const forged = signedEvent("msg_forged");
      const otherSecret = new Webhook(`whsec_${randomBytes(24).toString("base64")}`);
      const headers = { ...forged.headers, "webhook-signature": otherSecret.sign("msg_forged", new Date(), forged.payload) };
      expect((await fetch(url, { method: "POST", headers, body: forged.payload })).status).toBe(400);
      await listener.waitFor(/msg_forged .* signature INVALID/);
    } finally {
      expect(await listener.stop("SIGINT")).toBe(0);
    }
  });

  test("--json prints one JSON line per request; --forward passes the raw request on and answers with its status", async () => {
    const received: { body: string; signature: string | null }[] = [];
    const app = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(request) {
        received.push({ body: await request.text(), signature: request.headers.get("webhook-signature") });
        return new Response("accepted", { status: 202 });
      },
    });
    const { listener, url } = await startListener(["--json", "--forward", `http://127.0.0.1:${app.port}/hooks`]);
    try {
      const event = signedEvent("msg_forward");
      const answer = await fetch(url, { method: "POST", headers: event.headers, body: event.payload });
      expect(answer.status).toBe(202);
      expect(received).toEqual([{ body: event.payload, signature: event.headers["webhook-signature"] }]);
      const [line] = await listener.waitFor(/\{"received_at".*\}\n/);
      const printed = JSON.parse(line);
      expect(printed).toMatchObject({ webhook_id: "msg_forward", signature: "valid", event: JSON.parse(event.payload) });
    } finally {
      await listener.stop();
      app.stop(true);
    }
  });

  test("a secret that is not whsec_… base64 is a usage error", async () => {
    const listener = spawnProcess(cliCommand(["webhooks", "listen", "--port", "0", "--secret", "whsec_%%%"]), cliEnv());
    expect(await listener.proc.exited).toBe(2);
  });
});

async function endpointIds(): Promise<string[]> {
  const endpoints: Schemas["WebhookEndpoint"][] = (await server.client(testKey).get("/api/v1/webhook-endpoints")).json.data;
  return endpoints.map((e) => e.id);
}

/** A local app that records what `--forward-to` passes on. */
function receiver(status = 202) {
  const received: { method: string; body: string; headers: Record<string, string> }[] = [];
  const app = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const headers: Record<string, string> = {};
      request.headers.forEach((value, key) => {
        headers[key] = value;
      });
      received.push({ method: request.method, body: await request.text(), headers });
      return new Response("accepted", { status });
    },
  });
  return { received, url: `http://127.0.0.1:${app.port}/hooks`, stop: () => app.stop(true) };
}

describe("webhooks listen is stopped by the user", () => {
  test("Ctrl-C exits 0, also when the signal arrives twice (the vendctl wrapper passes it on)", async () => {
    const { listener } = await startListener([]);
    listener.proc.kill("SIGINT");
    listener.proc.kill("SIGINT");
    expect(await listener.proc.exited).toBe(0);
    expect(listener.proc.signalCode).toBeNull();
  });

  test("SIGTERM exits 0", async () => {
    const { listener } = await startListener([]);
    listener.proc.kill("SIGTERM");
    listener.proc.kill("SIGTERM");
    expect(await listener.proc.exited).toBe(0);
  });
});

describe("webhooks listen without --secret, like stripe listen", () => {
  test("registers a temporary test-mode endpoint at itself, verifies a real vend's delivery, forwards it signed, removes the endpoint on Ctrl-C", async () => {
    const app = receiver(202);
    const env = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_API_KEY: testKey });
    const listener = spawnProcess(cliCommand(["webhooks", "listen", "--port", "0", "--table", "--forward-to", app.url]), env);
    try {
      const [, endpointId, endpointUrl] = await listener.waitFor(/temporary test-mode webhook endpoint (\S+) for (\S+)/);
      const [, secret] = await listener.waitFor(/Webhook signing secret: (whsec_\S+)/);
      await listener.waitFor(/Listening on http:\/\/127\.0\.0\.1:\d+/);
      expect(listener.output()).toContain("temporary");
      const endpoints: Schemas["WebhookEndpoint"][] = (await server.client(testKey).get("/api/v1/webhook-endpoints")).json.data;
      expect(endpoints.find((e) => e.id === endpointId)).toMatchObject({ url: endpointUrl, mode: "test" });

      const body = { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 };
      const vend = await server.client(testKey).post("/api/v1/vend", body, idem());
      expect(vend.status).toBeLessThan(300);
      const reference: string = vend.json.data.reference;
      await listener.waitFor(
        new RegExp(`transaction\\.successful {2}${reference} {2}successful {2}signature valid {2}→ 202`),
        30_000,
      );
      const forwarded = app.received.find((r) => r.body.includes(reference));
      if (!forwarded || !secret) throw new Error("the delivery was not forwarded");
      expect(forwarded.method).toBe("POST");
      expect(forwarded.headers["content-type"]).toContain("application/json");
      const event = new Webhook(secret).verify(forwarded.body, forwarded.headers) as Schemas["WebhookEvent"];
      expect(event).toMatchObject({ type: "transaction.successful", data: { reference } });
    } finally {
      listener.proc.kill("SIGINT");
      expect(await listener.proc.exited).toBe(0);
      app.stop();
    }
    const [, endpointId] = listener.output().match(/temporary test-mode webhook endpoint (\S+)/) ?? [];
    expect(endpointId).toBeDefined();
    expect(await endpointIds()).not.toContain(endpointId);
    expect(listener.output()).toContain(`Removed the temporary endpoint ${endpointId}`);
  }, 60_000);

  test("SIGTERM removes the temporary endpoint too", async () => {
    const env = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_API_KEY: testKey });
    const listener = spawnProcess(cliCommand(["webhooks", "listen", "--port", "0", "--json"]), env);
    const [, endpointId = "none"] = await listener.waitFor(/temporary test-mode webhook endpoint (\S+)/);
    await listener.waitFor(/Listening on/);
    expect(await endpointIds()).toContain(endpointId);
    expect(await listener.stop("SIGTERM")).toBe(0);
    expect(await endpointIds()).not.toContain(endpointId);
  });

  test("a live key without --secret is a usage error, and nothing is registered", async () => {
    const before = await endpointIds();
    const env = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_API_KEY: liveKey });
    const listener = spawnProcess(cliCommand(["webhooks", "listen", "--port", "0"]), env);
    expect(await listener.proc.exited).toBe(2);
    expect(listener.output()).toContain("test key");
    expect(await endpointIds()).toEqual(before);
  });
});

describe("webhooks listen --forward-to", () => {
  test("an unreachable target is reported on each event's line and the listener keeps running", async () => {
    const target = await droppingTarget();
    const { listener, url } = await startListener(["--table", "--forward-to", target.url]);
    try {
      for (const id of ["msg_down_1", "msg_down_2"]) {
        const event = signedEvent(id);
        const signal = AbortSignal.timeout(15_000);
        const answer = await fetch(url, { method: "POST", headers: event.headers, body: event.payload, signal });
        expect(answer.status).toBe(502);
        await listener.waitFor(new RegExp(`${id} .*signature valid {2}→ forward failed: `));
      }
    } finally {
      expect(await listener.stop("SIGINT")).toBe(0);
      await target.close();
    }
  });
});

describe("webhooks listen against a server that refuses local URLs", () => {
  test("exits 1 with the API's refusal and a hint (--endpoint-url, --secret); nothing is left listening", async () => {
    const strict = await startTestServer({ webhooks: { ...server.deps.config.webhooks, allowPrivateUrls: false } });
    try {
      const account = await strict.createAccount("strict");
      const env = cliEnv({ VENDCTL_BASE_URL: strict.url, VENDCTL_API_KEY: account.testKey });
      const listener = spawnProcess(cliCommand(["webhooks", "listen", "--port", "0"]), env);
      expect(await listener.proc.exited).toBe(1);
      expect(listener.output()).toContain("VALIDATION_FAILED");
      expect(listener.output()).toContain("--endpoint-url");
    } finally {
      await strict.close();
    }
  });
});
