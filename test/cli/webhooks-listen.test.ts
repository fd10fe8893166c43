import { afterAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { spawnProcess } from "../helpers/process.ts";
import { cliCommand, cliEnv, removeConfigDirs } from "./cli.ts";

const secret = `whsec_${randomBytes(24).toString("base64")}`;

afterAll(() => removeConfigDirs());

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
