import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { components } from "../../generated/openapi-types.ts";
import { testAdminToken } from "../helpers/server.ts";
import { cliEnv, cliServer } from "./cli.ts";
import { down, enter, onTerminal as onPseudoTerminal, script } from "./terminal.ts";

type Transaction = components["schemas"]["Transaction"];
type Product = components["schemas"]["Product"];
type Network = components["schemas"]["Network"];

const cli = cliServer({ account: { name: "interactive", kobo: 10_000_000 }, env: { TERM: "xterm", COLUMNS: "120" } });
const env = () => cli.apiEnv();
const account = () => cli.account;

/** vendctl on a real pseudo-terminal with this file's environment (or another). */
const onTerminal = (args: string[], environment = env()) => onPseudoTerminal(args, environment);

async function transactionsOf(key: string): Promise<Transaction[]> {
  return (await cli.server.client(key).get("/api/v1/transactions", { query: { limit: 100 } })).json.data.items;
}

describe.skipIf(!script)("interactive use on a pseudo-terminal", () => {
  test("vend data: pick network and product from the live catalogue, type the phone; the chosen product is vended (a test key's vend asks no confirmation)", async () => {
    const networks: Network[] = (
      await cli.server.client(account().testKey).get("/api/v1/catalogue/networks", { query: { service: "data" } })
    ).json.data;
    const networkIndex = networks.findIndex((n) => n.code === "airtel");
    const products: Product[] = (
      await cli.server
        .client(account().testKey)
        .get("/api/v1/catalogue/products", { query: { network: "airtel", service: "data" } })
    ).json.data;
    const chosen = products[2];
    if (networkIndex < 0 || !chosen || chosen.price_kobo === null) throw new Error("catalogue lacks airtel data bundles");

    const terminal = onTerminal(["vend", "data"]);
    await terminal.expectPrompt("Network");
    terminal.type(down.repeat(networkIndex) + enter);
    await terminal.expectPrompt("Product");
    terminal.type(down.repeat(2) + enter);
    await terminal.expectPrompt("Phone number");
    terminal.type(`08021234567${enter}`);
    expect(await terminal.proc.exited).toBe(0);
    const screen = terminal.screen();
    expect(screen).not.toContain("(y/N)");
    expect(screen).toContain("Idempotency-Key: ");
    expect(screen).toMatch(new RegExp(`PRODUCT\\s+${chosen.code}`));
    const [latest] = await transactionsOf(account().testKey);
    expect(latest).toMatchObject({
      product_code: chosen.code,
      network: "airtel",
      service: "data",
      price_kobo: chosen.price_kobo,
    });
    expect(screen).toContain(latest?.reference ?? "no reference");
  });

  test("vend cable: pick the biller, type the smartcard, see the customer, pick the bouquet; sent without a confirmation", async () => {
    const client = cli.server.client(account().testKey);
    const billers: Network[] = (await client.get("/api/v1/catalogue/networks", { query: { service: "cable" } })).json.data;
    const gotv = billers.findIndex((n) => n.code === "gotv");
    const bouquets: Product[] = (await client.get("/api/v1/catalogue/products", { query: { network: "gotv", service: "cable" } }))
      .json.data;
    const customer = (await client.post("/api/v1/bills/cable/verify", { network: "gotv", smartcard_number: "7012345678" })).json
      .data;
    const terminal = onTerminal(["vend", "cable"]);
    await terminal.expectPrompt("Biller");
    terminal.type(down.repeat(gotv) + enter);
    await terminal.expectPrompt("Smartcard number");
    terminal.type(`7012345678${enter}`);
    await terminal.expectPrompt(`Customer: ${customer.customer_name}`);
    await terminal.expectPrompt("Product");
    terminal.type(enter);
    expect(await terminal.proc.exited).toBe(0);
    expect(terminal.screen()).not.toContain("(y/N)");
    const [latest] = await transactionsOf(account().testKey);
    expect(latest).toMatchObject({ service: "cable", network: "gotv", product_code: bouquets[0]?.code });
  });

  test("vend airtime with a live key: asks only for what the flags left out, shows the discounted price; declining sends nothing", async () => {
    const live = { ...env(), VENDCTL_API_KEY: account().liveKey };
    const before = (await transactionsOf(account().liveKey)).length;
    const terminal = onTerminal(["vend", "airtime", "--network", "mtn", "--phone", "08031234567"], live);
    await terminal.expectPrompt("Amount (NGN 50.00 to NGN 50000.00)");
    terminal.type(`100${enter}`);
    await terminal.expectPrompt("Buy NGN 100.00 mtn airtime for 08031234567, paying NGN 97.00 from the live wallet?");
    terminal.type(`n${enter}`);
    expect(await terminal.proc.exited).toBe(130);
    expect(terminal.screen()).toContain("cancelled; nothing was sent");
    expect(terminal.screen()).not.toContain("Network");
    expect((await transactionsOf(account().liveKey)).length).toBe(before);
  });

  test("with --yes on a terminal nothing is asked: missing input is a usage error", async () => {
    const terminal = onTerminal(["vend", "airtime", "--network", "mtn", "--yes"]);
    expect(await terminal.proc.exited).toBe(2);
    expect(terminal.screen()).toContain("missing --phone, --amount");
    expect(terminal.screen()).not.toContain("Phone number");
  });

  test("login asks for base URL, API key and admin token (hidden), checks them and writes the profile", async () => {
    const login = cliEnv({ TERM: "xterm", COLUMNS: "120" });
    const terminal = onTerminal(["login"], login);
    await terminal.expectPrompt("Base URL");
    terminal.type(`${cli.server.url}${enter}`);
    await terminal.expectPrompt("API key");
    terminal.type(`${account().testKey}${enter}`);
    await terminal.expectPrompt("Admin token");
    terminal.type(`${testAdminToken}${enter}`);
    expect(await terminal.proc.exited).toBe(0);
    expect(terminal.screen()).not.toContain(account().testKey);
    expect(terminal.screen()).not.toContain(testAdminToken);
    const saved = JSON.parse(readFileSync(join(login.VENDCTL_CONFIG_DIR ?? "", "config.json"), "utf8"));
    expect(saved.profiles.default).toEqual({ baseUrl: cli.server.url, apiKey: account().testKey, adminToken: testAdminToken });
  });
});
