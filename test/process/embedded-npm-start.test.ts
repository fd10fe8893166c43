// Runs once, in the embedded run: it never uses the suite's database (see test/helpers/runs-once.ts).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { childEnv, processTestMs, type StartedProcess, spawnProcess } from "../helpers/process.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * `npm start` on a new embedded directory, as a person runs it (LOG_LEVEL info): it says what it is doing,
 * each step with the seconds since it started. Then the in-process worker's database work must not hold
 * back the answers of requests whose handlers are done. PGlite runs each statement on the JavaScript thread; a
 * worker that goes from one statement to the next without giving the event loop a turn keeps every
 * finished answer unwritten until its backlog is gone.
 */
const main = join(import.meta.dir, "../../src/main.ts");
const root = mkdtempSync(join(tmpdir(), "vend-answers-"));
const batchSize = 1000;

let server: StartedProcess;
let url = "";
let key = "";

async function call(method: string, path: string, body?: unknown, idempotencyKey?: string) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { data: Record<string, unknown> } };
}

const orders = Array.from({ length: batchSize }, () => ({
  service: "airtime",
  product_code: "mtn-airtime",
  phone_number: "08031234567",
  amount_kobo: 10_000,
}));

type Counts = Record<"queued" | "processing" | "pending" | "successful" | "failed", number>;

async function batchCounts(id: string): Promise<{ counts: Counts; completed: boolean }> {
  const { body } = await call("GET", `/api/v1/vend/batches/${id}?limit=1`);
  const batch = body.data.batch as { counts: Counts; completed_at: string | null };
  return { counts: batch.counts, completed: batch.completed_at !== null };
}

beforeAll(async () => {
  server = spawnProcess(
    [process.execPath, main],
    // Without the image `npm install` prepares (embedded-image.test.ts), so initdb runs as it says.
    childEnv({
      VEND_DATA_DIR: join(root, "data"),
      PORT: "0",
      LOG_LEVEL: "info",
      RATE_LIMIT_PER_MINUTE: "0",
      VEND_EMBEDDED_IMAGE: "off",
    }),
  );
  [, url = ""] = await server.waitFor(/listening on (http:\/\/[^\s]+)/);
  [, key = ""] = await server.waitFor(/Test API key \(shown once, store it now\): (\S+)/);
  const funded = await call("POST", "/api/v1/wallet/fund", { amount_kobo: 100_000_000 }, "answers-fund");
  expect(funded.status).toBe(200);
}, processTestMs);

afterAll(async () => {
  await server?.stop("SIGKILL");
  rmSync(root, { recursive: true, force: true });
});

describe("a first npm start on a new embedded directory", () => {
  test("says when it creates the database files (initdb, most of a first start) and when that is done, with the time", () => {
    const output = server.output();
    const steps = [
      "Opening the embedded database in",
      "Creating the database files (initdb) [",
      "Database files created [",
      "Migrating the database: 1 of",
      'Creating the first account "default" [',
    ];
    const at = steps.map((step) => output.indexOf(step));
    expect(steps.filter((_, i) => (at[i] ?? -1) < 0)).toEqual([]);
    expect(at).toEqual([...at].sort((a, b) => a - b));
    expect(output).toMatch(/Migrating the database: 1 of \d+, \S+ \[\d+\.\d s\]/);
  });
});

describe("npm start on the embedded database, worker busy", () => {
  test(
    "a batch's 202 goes out when its handler is done, before the worker has processed it",
    async () => {
      const first = await call("POST", "/api/v1/vend/batches", { orders }, "answers-batch-1");
      expect(first.status).toBe(202);
      // The worker is now working through the first batch; the second is accepted beside it.
      const second = await call("POST", "/api/v1/vend/batches", { orders }, "answers-batch-2");
      expect(second.status).toBe(202);
      const { counts, completed } = await batchCounts(String(second.body.data.id));
      expect(completed).toBe(false);
      expect(counts.queued + counts.processing + counts.pending).toBeGreaterThan(0);
      await waitUntil(async () => (await batchCounts(String(second.body.data.id))).completed, {
        what: "the second batch processed",
        timeoutMs: 120_000,
        intervalMs: 200,
      });
    },
    processTestMs,
  );
});
