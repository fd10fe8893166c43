// Runs once, in the embedded run: it never uses the suite's database (see test/helpers/runs-once.ts).
import { describe, expect, test } from "bun:test";
import type { components } from "../../generated/openapi-types.ts";
import { cliServer, runCli, runJson } from "./cli.ts";

type Schemas = components["schemas"];
type Wallet = Schemas["Wallet"];
type Transaction = Schemas["Transaction"];

const cli = cliServer({ account: { name: "alert-cli", kobo: 1_000_000 } });

describe("vendctl wallet alert", () => {
  test("set 5000.50 shows the threshold; balance shows it; off clears it", async () => {
    const set = await runJson<Wallet>(["wallet", "alert", "set", "5000.50"], cli.apiEnv());
    expect(set.low_balance_threshold_kobo).toBe(500_050);
    const table = await runCli(["wallet", "balance", "--table"], cli.apiEnv());
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/ALERT BELOW\s+NGN 5,000\.50/);
    expect((await runJson<Wallet>(["wallet", "balance"], cli.apiEnv())).low_balance_threshold_kobo).toBe(500_050);
    const off = await runJson<Wallet>(["wallet", "alert", "off"], cli.apiEnv());
    expect(off.low_balance_threshold_kobo).toBeNull();
    expect((await runCli(["wallet", "balance", "--table"], cli.apiEnv())).stdout).toMatch(/ALERT BELOW\s+-/);
  });

  test("a threshold above the balance alerts at once: the event is listed", async () => {
    await runJson<Wallet>(["wallet", "alert", "set", "20000"], cli.apiEnv());
    const events = await cli.server.client(cli.account.testKey).get("/api/v1/events", { query: { type: "wallet.balance_low" } });
    expect(events.json.data.items).toHaveLength(1);
    expect(events.json.data.items[0].data).toMatchObject({ available_kobo: 1_000_000, threshold_kobo: 2_000_000 });
    await runJson<Wallet>(["wallet", "alert", "off"], cli.apiEnv());
  });

  test("a bad amount is a usage error (exit 2) and changes nothing", async () => {
    const bad = await runCli(["wallet", "alert", "set", "five"], cli.apiEnv());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("AMOUNT");
    expect((await runJson<Wallet>(["wallet", "balance"], cli.apiEnv())).low_balance_threshold_kobo).toBeNull();
  });
});

describe("vendctl transactions list --client-reference", () => {
  test("only the orders with exactly that client reference", async () => {
    const client = cli.server.client(cli.account.testKey);
    const order = (ref: string) => ({
      product_code: "mtn-airtime",
      phone_number: "08031234567",
      amount_kobo: 10_000,
      client_reference: ref,
    });
    const vend = async (ref: string) => {
      const res = await client.post("/api/v1/vend", order(ref), { headers: { "idempotency-key": crypto.randomUUID() } });
      expect(res.status).toBe(202);
      return res.json.data.reference as string;
    };
    const wanted = await vend("cli-order-1");
    await vend("cli-order-10");
    await vend("CLI-ORDER-1");
    const listed = await runJson<Transaction[]>(["transactions", "list", "--client-reference", "cli-order-1"], cli.apiEnv());
    expect(listed.map((t) => t.reference)).toEqual([wanted]);
  });
});
