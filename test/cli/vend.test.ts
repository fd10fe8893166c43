import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { transactions } from "../../src/db/schema/index.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { cliEnv, removeConfigDirs, runCli, runJson, startCli } from "./cli.ts";

type Schemas = components["schemas"];
type Transaction = Schemas["Transaction"];

let server: TestServer;
let env: Record<string, string | undefined>;

beforeAll(async () => {
  server = await startTestServer();
  const account = await server.createAccount("vend-cli");
  env = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_API_KEY: account.testKey });
  const funded = await runCli(["wallet", "fund", "5000", "--json"], env);
  expect(funded.code).toBe(0);
});
afterAll(async () => {
  removeConfigDirs();
  await server.close();
});

const keyOf = (stderr: string): string => stderr.match(/Idempotency-Key: (\S+)/)?.[1] ?? "";

describe("wallet", () => {
  test("wallet fund 5000 then wallet balance --json shows 500000 kobo", async () => {
    const wallet = await runJson<Schemas["Wallet"]>(["wallet", "balance"], env);
    expect(wallet).toEqual({
      mode: "test",
      currency: "NGN",
      balance_kobo: 500_000,
      held_kobo: 0,
      available_kobo: 500_000,
      low_balance_threshold_kobo: null,
    });
  });

  test("wallet fund prints its Idempotency-Key, and --idempotency-key replays instead of crediting twice", async () => {
    const account = await server.createAccount("fund-replay");
    const own = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_API_KEY: account.testKey });
    const first = await runCli(["wallet", "fund", "100.50", "--json"], own);
    const key = keyOf(first.stderr);
    expect(key).not.toBe("");
    expect(JSON.parse(first.stdout).entry.amount_kobo).toBe(10_050);
    const again = await runCli(["wallet", "fund", "100.50", "--idempotency-key", key, "--json"], own);
    expect(again.stdout).toBe(first.stdout);
    expect(again.stderr).toContain("Replayed");
    expect((await runJson<Schemas["Wallet"]>(["wallet", "balance"], own)).balance_kobo).toBe(10_050);
  });

  test("the table shows NGN with two decimals", async () => {
    const table = await runCli(["wallet", "balance", "--table"], env);
    expect(table.stdout).toMatch(/^MODE\s+test$/m);
    expect(table.stdout).toMatch(/^AVAILABLE\s+NGN [\d,]+\.\d{2}$/m);
  });
});

describe("vend", () => {
  test("airtime with --yes --json: accepted, the key on stderr, and the same key returns the same transaction", async () => {
    const args = ["vend", "airtime", "--network", "mtn", "--phone", "08031234567", "--amount", "100", "--yes", "--json"];
    const first = await runCli(args, env);
    expect(first.code).toBe(0);
    const key = keyOf(first.stderr);
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    const transaction = JSON.parse(first.stdout) as Transaction;
    expect(transaction).toMatchObject({
      status: "queued",
      service: "airtime",
      network: "mtn",
      product_code: "mtn-airtime",
      amount_kobo: 10_000,
      destination: "0803****567",
    });
    const retry = await runCli([...args, "--idempotency-key", key], env);
    expect(retry.code).toBe(0);
    expect(keyOf(retry.stderr)).toBe(key);
    expect(retry.stderr).toContain("Replayed");
    expect(JSON.parse(retry.stdout)).toEqual(transaction);
    const all = await runJson<Transaction[]>(["transactions", "list", "--all"], env);
    expect(all.filter((t) => t.reference === transaction.reference)).toHaveLength(1);
  });

  test("reusing a key with another body is the API's IDEMPOTENCY_KEY_REUSED (exit 1)", async () => {
    const key = `reuse-${Date.now()}`;
    const base = ["vend", "airtime", "--network", "mtn", "--phone", "08031234567", "--yes", "--idempotency-key", key];
    expect((await runCli([...base, "--amount", "50"], env)).code).toBe(0);
    const changed = await runCli([...base, "--amount", "60"], env);
    expect(changed.code).toBe(1);
    expect(changed.stderr).toContain("IDEMPOTENCY_KEY_REUSED: ");
  });

  test("data, electricity and cable: one each, every field from flags", async () => {
    const data = await runJson<Transaction>(
      ["vend", "data", "--product", "mtn-data-1gb-1d", "--phone", "08031234567", "--network", "mtn", "--yes"],
      env,
    );
    expect(data).toMatchObject({ service: "data", product_code: "mtn-data-1gb-1d", status: "queued" });
    const electricity = await runJson<Transaction>(
      [
        "vend",
        "electricity",
        "--disco",
        "ikedc",
        "--meter",
        "45031234567",
        "--meter-type",
        "prepaid",
        "--amount",
        "1000",
        "--phone",
        "08031234567",
        "--client-reference",
        "order-77",
        "--metadata",
        "customer_id=c_42",
        "--metadata",
        "channel=cli",
        "--yes",
      ],
      env,
    );
    expect(electricity).toMatchObject({
      service: "electricity",
      network: "ikedc",
      amount_kobo: 100_000,
      client_reference: "order-77",
      metadata: { customer_id: "c_42", channel: "cli", meter_type: "prepaid" },
    });
    expect((await runCli(["wallet", "fund", "20000"], env)).code).toBe(0);
    const cable = await runJson<Transaction>(
      ["vend", "cable", "--biller", "dstv", "--smartcard", "7031234567", "--product", "dstv-compact", "--wait", "0", "--yes"],
      env,
    );
    expect(cable).toMatchObject({ service: "cable", network: "dstv", product_code: "dstv-compact" });
    const got = await runJson<Transaction>(["transactions", "get", cable.reference], env);
    expect(got).toEqual(cable);
  });

  test("without a terminal, missing input is a usage error and nothing is sent", async () => {
    const before = (await runJson<Transaction[]>(["transactions", "list", "--all"], env)).length;
    const result = await runCli(["vend", "data", "--phone", "08031234567"], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("missing --product");
    expect(result.stderr).not.toContain("Idempotency-Key");
    expect((await runJson<Transaction[]>(["transactions", "list", "--all"], env)).length).toBe(before);
  });
});

describe("transactions watch", () => {
  test("prints each status change and exits 0 once the transaction is final", async () => {
    const vended = await runJson<Transaction>(
      ["vend", "airtime", "--network", "glo", "--phone", "08051234567", "--amount", "50", "--yes"],
      env,
    );
    const watch = startCli(["transactions", "watch", vended.reference, "--wait", "1", "--jsonl"], env);
    await watch.waitFor(/"status":"queued"/);
    await server.database.handle.db
      .update(transactions)
      .set({ status: "successful", completedAt: new Date() })
      .where(eq(transactions.reference, vended.reference));
    expect((await watch.done).code).toBe(0);
    const states = watch
      .output()
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as Transaction).status);
    expect(states).toEqual(["queued", "successful"]);
  });
});

describe("catalogue, pricing, verify", () => {
  test("networks, services and products from the live catalogue", async () => {
    const networks = await runJson<Schemas["Network"][]>(["catalogue", "networks", "--service", "electricity"], env);
    expect(networks.map((n) => n.code)).toContain("ikedc");
    const services = await runJson<Schemas["Service"][]>(["catalogue", "services"], env);
    expect(services.map((s) => s.code).sort()).toEqual(["airtime", "cable", "data", "electricity"]);
    const products = await runJson<Schemas["Product"][]>(["catalogue", "--network", "mtn", "--service", "data"], env);
    expect(products.length).toBeGreaterThan(0);
    expect(products.every((p) => p.network === "mtn" && p.service === "data")).toBe(true);
  });

  test("pricing in kobo with --json, NGN in the table", async () => {
    const pricing = await runJson<Schemas["PricingItem"][]>(["pricing", "--network", "mtn", "--service", "airtime"], env);
    expect(pricing[0]).toMatchObject({ product_code: "mtn-airtime", kind: "range" });
    const table = await runCli(["pricing", "--service", "cable", "--table"], env);
    expect(table.stdout).toMatch(/dstv-compact\s.*NGN [\d,]+\.\d{2}/);
  });

  test("verify meter and smartcard", async () => {
    const meter = await runJson<Schemas["MeterVerification"]>(
      ["verify", "meter", "--disco", "ikedc", "--meter", "45031234567"],
      env,
    );
    expect(meter.customer_name.length).toBeGreaterThan(0);
    const card = await runJson<Schemas["SmartcardVerification"]>(
      ["verify", "smartcard", "--biller", "dstv", "--smartcard", "7031234567"],
      env,
    );
    expect(card.customer_name.length).toBeGreaterThan(0);
    const unknown = await runCli(["verify", "meter", "--disco", "ikedc", "--meter", "45031230000"], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toStartWith("CUSTOMER_NOT_FOUND: ");
  });
});
