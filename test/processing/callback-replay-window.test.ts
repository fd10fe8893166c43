import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { processingRunner } from "../../src/background.ts";
import { loadConfig } from "../../src/load-config.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

/**
 * The replay window at its edges, in both directions, with the window the environment sets and the default:
 * a correctly signed callback whose timestamp is a little outside the window (future or past) is refused and
 * changes nothing; a little inside, it is applied. Margins of 20 s keep the test clear of the clock moving
 * while it runs.
 */

const token = "window-callback-token";
const secret = "window-callback-secret";
const margin = 20;

/** The sandbox scheme written out: `t=<unix seconds>,sha256=<hex HMAC-SHA256 of "<t>.<raw body>">`. */
function signedAt(offsetSeconds: number, body: Record<string, unknown>) {
  const t = Math.floor(Date.now() / 1000) + offsetSeconds;
  const raw = JSON.stringify(body);
  const mac = createHmac("sha256", secret).update(`${t}.${raw}`).digest("hex");
  return {
    raw,
    headers: {
      authorization: `Bearer ${token}`,
      "x-provider-signature": `t=${t},sha256=${mac}`,
      "content-type": "application/json",
    },
  };
}

interface StoredCallback {
  event_id: string;
  http_status: number;
  result_code: string;
  signature_valid: boolean;
}

function windowSuite(title: string, env: Record<string, string>, windowSeconds: number) {
  describe(title, () => {
    let server: TestServer;
    let client: HttpClient;

    beforeAll(async () => {
      const configured = loadConfig(env);
      expect(configured.callbacks.replayWindowSeconds).toBe(windowSeconds);
      server = await startTestServer(
        fastProcessing({
          callbacks: configured.callbacks,
          providers: {
            sandbox: {
              ...configured.providers.sandbox,
              callbackDelayMs: 3_600_000,
              callbackToken: token,
              callbackSecret: secret,
              latencyMs: 0,
            },
          },
        }),
      );
      client = (await fundedAccount(server, 1_000_000, "Window Ltd")).client;
    }, 60_000);
    afterAll(() => server.close());

    /** A 4444 vend (the sandbox leaves it pending), sent by one worker tick. */
    async function pendingVend(): Promise<string> {
      const res = await client.post(
        "/api/v1/vend",
        { product_code: "mtn-airtime", phone_number: "08031234444", amount_kobo: 10_000 },
        idem(),
      );
      expect(res.status).toBe(202);
      await processingRunner({ ...server.deps, apiBaseUrl: server.url }, "window-worker").tick();
      const reference: string = res.json.data.reference;
      expect((await client.get(`/api/v1/transactions/${reference}`)).json.data.status).toBe("pending");
      return reference;
    }

    const post = (signed: ReturnType<typeof signedAt>) =>
      server.anonymous.post("/callbacks/providers/sandbox", undefined, { raw: signed.raw, headers: signed.headers });

    for (const [direction, sign] of [
      ["in the future", 1],
      ["in the past", -1],
    ] as const) {
      test(`${direction}: ${windowSeconds + margin} s away is refused, ${windowSeconds - margin} s away is applied`, async () => {
        const reference = await pendingVend();
        const body = (event_id: string) => ({ event_id, reference, status: "successful", provider_reference: `P-${event_id}` });
        const before = (await client.get("/api/v1/wallet")).json.data;

        const outside = await post(signedAt(sign * (windowSeconds + margin), body(`${direction}-outside`)));
        expect(outside.status).toBe(401);
        expect(outside.json).toMatchObject({ success: false, code: "UNAUTHENTICATED", data: null });
        expect(outside.json.message).toContain(`${windowSeconds}-second replay window`);
        // Refused: still pending, the wallet as it was.
        expect((await client.get(`/api/v1/transactions/${reference}`)).json.data.status).toBe("pending");
        expect((await client.get("/api/v1/wallet")).json.data).toEqual(before);

        const inside = await post(signedAt(sign * (windowSeconds - margin), body(`${direction}-inside`)));
        expect(inside.status).toBe(200);
        expect(inside.json.data).toMatchObject({ reference, status: "successful" });
        const after = (await client.get("/api/v1/wallet")).json.data;
        expect(after.held_kobo).toBe(before.held_kobo - 9_700);
        expect(after.balance_kobo).toBe(before.balance_kobo - 9_700);

        // Both stored; the refused one authentic (its signature matches) but out of time.
        const listed = await server.admin.get("/admin/v1/callbacks", { query: { reference } });
        expect(listed.status).toBe(200);
        const items = listed.json.data.items as StoredCallback[];
        expect(items.map((c) => [c.event_id, c.http_status, c.result_code, c.signature_valid])).toEqual([
          [`${direction}-inside`, 200, "OK", true],
          [`${direction}-outside`, 401, "UNAUTHENTICATED", true],
        ]);
        const reconciliation = await server.admin.get("/admin/v1/reconciliation");
        expect(reconciliation.json.data).toMatchObject({ balanced: true, discrepancies: [] });
      });
    }
  });
}

windowSuite(
  "CALLBACK_REPLAY_WINDOW_SECONDS=60 bounds sandbox callbacks at 60 s either way",
  { CALLBACK_REPLAY_WINDOW_SECONDS: "60" },
  60,
);
windowSuite("without CALLBACK_REPLAY_WINDOW_SECONDS the window is 300 s either way", {}, 300);
