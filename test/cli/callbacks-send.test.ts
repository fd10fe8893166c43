import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { cliEnv, removeConfigDirs, runCli } from "./cli.ts";

/**
 * `callbacks send` signs what it sends; a recording receiver in place of the service checks the bearer
 * token, the signature over the raw bytes and the body (the real endpoint is exercised in pending-endpoints.test.ts
 * once it is implemented).
 */
interface Received {
  path: string;
  authorization: string | null;
  signature: string | null;
  raw: string;
}

const received: Received[] = [];
let receiver: ReturnType<typeof Bun.serve>;

const transaction = {
  id: "0b7f3c2e-9a1d-4f5e-8c6b-2d4e6f8a0b1c",
  reference: "txn_4kq9Zr2mXc81LwPb7sTfYhQe",
  client_reference: null,
  mode: "test",
  status: "successful",
  product_code: "ikedc-prepaid",
  network: "ikedc",
  service: "electricity",
  destination: "4503****567",
  amount_kobo: 100000,
  price_kobo: 100000,
  metadata: {},
  created_at: "2026-11-21T09:30:00.000Z",
  completed_at: "2026-11-21T09:30:04.000Z",
};

beforeAll(() => {
  receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      received.push({
        path: new URL(request.url).pathname,
        authorization: request.headers.get("authorization"),
        signature: request.headers.get("x-provider-signature"),
        raw: await request.text(),
      });
      return Response.json({ success: true, code: "OK", message: "Callback applied", data: transaction });
    },
  });
});
afterAll(() => {
  receiver.stop(true);
  removeConfigDirs();
});

/** `t=<unix seconds>,sha256=<hex HMAC-SHA256 of "<t>.<raw body>">`, with t close to now (or as given). */
function expectSigned(received: Received | undefined, secret: string, t?: number) {
  const match = /^t=(\d+),sha256=([0-9a-f]{64})$/.exec(received?.signature ?? "");
  expect(match).not.toBeNull();
  const signedAt = Number(match?.[1]);
  if (t === undefined) expect(Math.abs(signedAt - Date.now() / 1000)).toBeLessThan(60);
  else expect(signedAt).toBe(t);
  expect(match?.[2]).toBe(createHmac("sha256", secret).update(`${signedAt}.${received?.raw}`).digest("hex"));
}

describe("callbacks send", () => {
  test("defaults: the sandbox token and secret, a correct signature over the exact body", async () => {
    const env = cliEnv({ VENDCTL_BASE_URL: `http://127.0.0.1:${receiver.port}` });
    const result = await runCli(
      [
        "callbacks",
        "send",
        transaction.reference,
        "--status",
        "successful",
        "--token",
        "1234-5678",
        "--units",
        "45.6",
        "--receipt",
        "R-1",
        "--json",
      ],
      env,
    );
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(transaction);
    const last = received.at(-1);
    expect(last?.path).toBe("/callbacks/providers/sandbox");
    expect(last?.authorization).toBe("Bearer sandbox-callback-token");
    expectSigned(last, "sandbox-callback-secret");
    const body = JSON.parse(last?.raw ?? "{}");
    expect(body).toMatchObject({
      reference: transaction.reference,
      status: "successful",
      token: "1234-5678",
      units: "45.6",
      receipt_number: "R-1",
    });
    expect(body.event_id).toMatch(/^cb_[0-9a-f]{24}$/);
    expect(body.provider_reference).toMatch(/^SBX-/);
  });

  test("token and secret from the environment, then from flags; --provider-reference and --event-id are sent as given", async () => {
    const env = cliEnv({
      VENDCTL_BASE_URL: `http://127.0.0.1:${receiver.port}`,
      VENDCTL_SANDBOX_TOKEN: "env-token",
      VENDCTL_SANDBOX_SECRET: "env-secret",
    });
    const args = [
      "callbacks",
      "send",
      transaction.reference,
      "--status",
      "failed",
      "--event-id",
      "cb_1",
      "--provider-reference",
      "P-9",
    ];
    expect((await runCli(args, env)).code).toBe(0);
    const fromEnv = received.at(-1);
    expect(fromEnv?.authorization).toBe("Bearer env-token");
    expectSigned(fromEnv, "env-secret");
    expect(JSON.parse(fromEnv?.raw ?? "{}")).toEqual({
      event_id: "cb_1",
      reference: transaction.reference,
      status: "failed",
      provider_reference: "P-9",
    });
    expect((await runCli([...args, "--sandbox-token", "flag-token", "--sandbox-secret", "flag-secret"], env)).code).toBe(0);
    const fromFlags = received.at(-1);
    expect(fromFlags?.authorization).toBe("Bearer flag-token");
    expectSigned(fromFlags, "flag-secret");
  });

  test("--timestamp signs with the given time (to drill the service's replay window)", async () => {
    const env = cliEnv({ VENDCTL_BASE_URL: `http://127.0.0.1:${receiver.port}` });
    const args = ["callbacks", "send", transaction.reference, "--status", "successful", "--timestamp", "1700000000"];
    expect((await runCli(args, env)).code).toBe(0);
    expectSigned(received.at(-1), "sandbox-callback-secret", 1_700_000_000);
    expect((await runCli([...args.slice(0, -1), "yesterday"], env)).code).toBe(2);
  });

  test("--status is required and checked", async () => {
    const env = cliEnv({ VENDCTL_BASE_URL: `http://127.0.0.1:${receiver.port}` });
    expect((await runCli(["callbacks", "send", transaction.reference], env)).code).toBe(2);
    expect((await runCli(["callbacks", "send", transaction.reference, "--status", "pending"], env)).code).toBe(2);
  });
});
