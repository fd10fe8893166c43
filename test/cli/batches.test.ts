import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import type { components } from "../../generated/openapi-types.ts";
import { vendBatches } from "../../src/db/schema/index.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { cliEnv, removeConfigDirs, runCli, runJson } from "./cli.ts";

type VendBatch = components["schemas"]["VendBatch"];
type Env = Record<string, string | undefined>;

let server: TestServer;
let env: Env;
let posted: VendBatch;
/** Batches written directly, oldest first: day n of January 2026; odd days complete. */
const seeded: string[] = [];
const day = (n: number) => new Date(Date.UTC(2026, 0, 1 + n, 12));
const seededAt = (...days: number[]) => days.map((n) => seeded[n] as string);

beforeAll(async () => {
  server = await startTestServer();
  const account = await fundedAccount(server, 100_000, "CLI batches");
  env = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_API_KEY: account.testKey, TZ: "UTC" });
  for (let n = 0; n < 4; n++) {
    const [row] = await server.database.handle.db
      .insert(vendBatches)
      .values({ accountId: account.id, mode: "test", orderCount: 1, createdAt: day(n), completedAt: n % 2 === 1 ? day(n) : null })
      .returning();
    seeded.push((row as { id: string }).id);
  }
  const order = { service: "airtime", product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 };
  const res = await account.client.post("/api/v1/vend/batches", { orders: [order, { service: "airtime" }] }, idem());
  expect(res.status).toBe(202);
  posted = res.json.data;
});
afterAll(async () => {
  removeConfigDirs();
  await server.close();
});

describe("vendctl batches", () => {
  test("list --all follows cursors newest first; --completed and --open filter; --from/--to on created", async () => {
    const all = await runJson<VendBatch[]>(["batches", "list", "--all", "--limit", "2"], env);
    expect(all.map((b) => b.id)).toEqual([posted.id, ...[...seeded].reverse()]);
    expect(all[0]?.counts).toMatchObject({ queued: 1, invalid: 1 });
    const done = await runJson<VendBatch[]>(["batches", "list", "--completed", "--all"], env);
    expect(done.map((b) => b.id)).toEqual(seededAt(3, 1));
    const open = await runJson<VendBatch[]>(["batches", "list", "--open", "--all"], env);
    expect(open.map((b) => b.id)).toEqual([posted.id, ...seededAt(2, 0)]);
    const range = await runJson<VendBatch[]>(["batches", "list", "--from", "2026-01-02", "--to", "2026-01-03", "--all"], env);
    expect(range.map((b) => b.id)).toEqual(seededAt(2, 1));
  });

  test("without --all one page and a note naming the cursor to resume from", async () => {
    const first = await runCli(["batches", "list", "--limit", "2", "--table"], env);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(posted.id);
    expect(first.stdout).toContain("IN PROGRESS");
    const cursor = /--cursor (\S+)/.exec(first.stdout)?.[1];
    expect(cursor).toBeString();
    const rest = await runJson<VendBatch[]>(["batches", "list", "--cursor", cursor as string, "--all"], env);
    expect(rest.map((b) => b.id)).toEqual(seededAt(2, 1, 0));
  });

  test("list --csv has every count", async () => {
    const csv = await runCli(["batches", "list", "--all", "--csv"], env);
    expect(csv.code).toBe(0);
    const rows = parse(csv.stdout, { columns: true }) as Record<string, string>[];
    expect(rows[0]).toMatchObject({ id: posted.id, mode: "test", order_count: "2", queued: "1", invalid: "1", refused: "0" });
    expect(rows).toHaveLength(5);
  });

  test("get shows one batch with its counts and rejections; --json is the API's batch", async () => {
    const shown = await runCli(["batches", "get", posted.id, "--table"], env);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(posted.id);
    expect(shown.stdout).toContain("#1 400 VALIDATION_FAILED");
    expect(await runJson<VendBatch>(["batches", "get", posted.id], env)).toEqual(posted);
  });

  test("--completed with --open, or an unknown batch, fail with their exit codes", async () => {
    const both = await runCli(["batches", "list", "--completed", "--open"], env);
    expect(both.code).toBe(2);
    const missing = await runCli(["batches", "get", "00000000-0000-4000-8000-000000000000"], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("not found");
  });
});
