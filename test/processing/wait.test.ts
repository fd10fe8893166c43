import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/load-config.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import { fastProcessing, sandboxCallback } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const sandbox = { ...loadConfig({}).providers.sandbox, callbackDelayMs: 300 };
const pendingBody = { product_code: "mtn-airtime", phone_number: "08031234444", amount_kobo: 10_000 };
const timed = async <T>(fn: () => Promise<T>) => {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
};

describe("wait (openapi.yaml, the Wait parameter): capped by MAX_WAIT_SECONDS, a whole number ≥ 0", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(fastProcessing({ maxWaitSeconds: 1, providers: { sandbox } }), { background: true });
  });
  afterAll(() => server.close());

  test("wait=600 is capped by MAX_WAIT_SECONDS and still answers 202 with the transaction as it stands", async () => {
    const { client } = await fundedAccount(server, 100_000);
    const { value: res, ms } = await timed(() => client.post("/api/v1/vend", pendingBody, { ...idem(), query: { wait: 600 } }));
    expect(res.status).toBe(202);
    expect(res.json.data.status).toBe("pending");
    expect(ms).toBeGreaterThanOrEqual(950);
    expect(ms).toBeLessThan(2500);
  });

  test("wait must be a whole number ≥ 0", async () => {
    const { client } = await fundedAccount(server, 100_000);
    for (const wait of ["-1", "soon", "1.5"]) {
      const res = await client.post("/api/v1/vend", pendingBody, { ...idem(), query: { wait } });
      expect(res.status).toBe(400);
      expect(res.json.data.errors[0].field).toBe("wait");
    }
  });
});

describe("wait wakes when the order becomes final", () => {
  // Waits of up to 30 s, so "woken" and "timed out" are far apart: a busy machine (a 2-core box running the
  // suite in parallel) can take a second or two to process and wake, which a 1 s cap could not tell from
  // the end of the wait. wait-latency (bench/) measures how quick the wake-up is.
  const wellBeforeTheEndMs = 5000;
  let longWaits: TestServer;
  beforeAll(async () => {
    longWaits = await startTestServer(fastProcessing({ maxWaitSeconds: 30, providers: { sandbox } }), { background: true });
  });
  afterAll(() => longWaits.close());

  test("a vend that becomes final answers promptly, not at the end of the wait", async () => {
    const { client } = await fundedAccount(longWaits, 100_000);
    const { value: res, ms } = await timed(() =>
      client.post("/api/v1/vend", { ...pendingBody, phone_number: "08031232222" }, { ...idem(), query: { wait: 600 } }),
    );
    expect(res.json.data.status).toBe("successful");
    expect(ms).toBeLessThan(wellBeforeTheEndMs);
  });

  test("GET /api/v1/transactions/{reference}?wait wakes when a callback makes it final", async () => {
    const { client } = await fundedAccount(longWaits, 100_000);
    const accepted = await client.post("/api/v1/vend", pendingBody, { ...idem(), query: { wait: 1 } });
    const reference: string = accepted.json.data.reference;
    const waiting = timed(() => client.get(`/api/v1/transactions/${reference}`, { query: { wait: 30 } }));
    // A moment for the long-poll to read the order as pending, so the callback wakes it rather than being read.
    await Bun.sleep(100);
    const callback = sandboxCallback({ event_id: "w1", reference, status: "failed", provider_reference: "W" });
    await longWaits.anonymous.post("/callbacks/providers/sandbox", undefined, { raw: callback.raw, headers: callback.headers });
    // Timed from the callback's answer (the order is final from then on), so a busy machine's slow callback
    // handling does not count against the wake-up.
    const calledBack = performance.now();
    const { value: res } = await waiting;
    const ms = performance.now() - calledBack;
    expect(res.status).toBe(200);
    expect(res.json.data.status).toBe("failed");
    expect(ms).toBeLessThan(wellBeforeTheEndMs);
  });
});

describe("wait and the request deadline", () => {
  test("answered at least one second before REQUEST_TIMEOUT_SECONDS, whatever MAX_WAIT_SECONDS says", async () => {
    const server = await startTestServer(fastProcessing({ maxWaitSeconds: 25, requestTimeoutSeconds: 3 }), { background: true });
    try {
      const { client } = await fundedAccount(server, 100_000);
      const { value: res, ms } = await timed(() => client.post("/api/v1/vend", pendingBody, { ...idem(), query: { wait: 600 } }));
      expect(res.status).toBe(202);
      // The server answers at 2 s (REQUEST_TIMEOUT_SECONDS less one); seen from the client a busy machine adds
      // up to a second, so the bound checked is the one that matters: before the 3 s request timeout.
      expect(ms).toBeLessThan(3000);
      expect(ms).toBeGreaterThan(1500);
    } finally {
      await server.close();
    }
  });

  test("a long-poll past Bun's default 10 s idle timeout is not cut off", async () => {
    const server = await startTestServer(fastProcessing({ maxWaitSeconds: 12, requestTimeoutSeconds: 14 }), { background: true });
    try {
      const { client } = await fundedAccount(server, 100_000);
      const { value: res, ms } = await timed(() => client.post("/api/v1/vend", pendingBody, { ...idem(), query: { wait: 11 } }));
      expect(res.status).toBe(202);
      expect(res.json.data.status).toBe("pending");
      expect(ms).toBeGreaterThanOrEqual(10_900);
    } finally {
      await server.close();
    }
  }, 30_000);
});
