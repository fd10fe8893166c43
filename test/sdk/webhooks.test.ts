import { describe, expect, test } from "bun:test";
import { constructEvent, WebhookVerificationError } from "../../sdk/src/index.ts";
import { generateWebhookSecret } from "../../src/webhooks/secret.ts";
import { signedWebhookHeaders } from "../../src/webhooks/signing.ts";

const event = {
  id: "evt_0123456789",
  type: "transaction.successful",
  created_at: "2026-11-26T10:00:00.000Z",
  mode: "test",
  data: { reference: "txn_abc", status: "successful" },
};
const body = JSON.stringify(event);
const minutes = (n: number) => new Date(Date.now() + n * 60_000);

async function refusal(pending: Promise<unknown>): Promise<string> {
  const error = await pending.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(WebhookVerificationError);
  return (error as Error).message;
}

describe("constructEvent verifies what the service signs", () => {
  test("a webhook signed by the service's signer verifies, from a string, bytes, Headers or node:http headers", async () => {
    const secret = generateWebhookSecret();
    const headers = signedWebhookHeaders(secret, event.id, body);
    expect(await constructEvent(body, headers, secret)).toEqual(event as never);
    expect(await constructEvent(new TextEncoder().encode(body), new Headers(headers), secret)).toEqual(event as never);
    const nodeStyle = { ...headers, "webhook-signature": [headers["webhook-signature"] ?? ""], host: "x" };
    expect(await constructEvent(Buffer.from(body), nodeStyle, secret)).toEqual(event as never);
  });

  test("during a rotation both signatures are sent, and either secret verifies", async () => {
    const [current, previous] = [generateWebhookSecret(), generateWebhookSecret()];
    const headers = signedWebhookHeaders([current, previous], event.id, body);
    expect(headers["webhook-signature"]?.split(" ")).toHaveLength(2);
    expect((await constructEvent(body, headers, current)).id).toBe(event.id);
    expect((await constructEvent(body, headers, previous)).id).toBe(event.id);
    expect((await constructEvent(body, headers, [generateWebhookSecret(), previous])).id).toBe(event.id);
  });

  test("a changed body, another id, another secret or a missing header is refused", async () => {
    const secret = generateWebhookSecret();
    const headers = signedWebhookHeaders(secret, event.id, body);
    expect(await refusal(constructEvent(body.replace("successful", "failed"), headers, secret))).toBe(
      "No matching webhook signature",
    );
    expect(await refusal(constructEvent(body, { ...headers, "webhook-id": "evt_other" }, secret))).toBe(
      "No matching webhook signature",
    );
    expect(await refusal(constructEvent(body, headers, generateWebhookSecret()))).toBe("No matching webhook signature");
    const { "webhook-signature": _, ...unsigned } = headers;
    expect(await refusal(constructEvent(body, unsigned, secret))).toContain("Missing");
    expect(await refusal(constructEvent(body, { ...headers, "webhook-signature": "v2,abc" }, secret))).toBe(
      "No matching webhook signature",
    );
  });

  test("the timestamp must be within five minutes either way", async () => {
    const secret = generateWebhookSecret();
    expect((await constructEvent(body, signedWebhookHeaders(secret, event.id, body, minutes(-4)), secret)).id).toBe(event.id);
    expect((await constructEvent(body, signedWebhookHeaders(secret, event.id, body, minutes(4)), secret)).id).toBe(event.id);
    const old = signedWebhookHeaders(secret, event.id, body, minutes(-6));
    expect(await refusal(constructEvent(body, old, secret))).toBe("Webhook timestamp is too old");
    const future = signedWebhookHeaders(secret, event.id, body, minutes(6));
    expect(await refusal(constructEvent(body, future, secret))).toBe("Webhook timestamp is too new");
    expect((await constructEvent(body, old, secret, { toleranceSeconds: 600 })).id).toBe(event.id);
    expect(await refusal(constructEvent(body, { ...old, "webhook-timestamp": "soon" }, secret))).toContain("timestamp");
  });
});
