import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { components } from "../../generated/openapi-types.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import { startTestServer, type TestServer, testAdminToken } from "../helpers/server.ts";
import { cliCommand, cliEnv, removeConfigDirs } from "./cli.ts";

type Transaction = components["schemas"]["Transaction"];
type Product = components["schemas"]["Product"];
type Network = components["schemas"]["Network"];

const script = Bun.which("script");
const down = "\x1b[B";
const enter = "\r";
// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escape sequences are what we strip
const ansi = /\x1b\[[0-9;?]*[A-Za-z]/g;

let server: TestServer;
let account: Awaited<ReturnType<typeof fundedAccount>>;
let env: Record<string, string | undefined>;

beforeAll(async () => {
  server = await startTestServer();
  account = await fundedAccount(server, 10_000_000, "interactive");
  env = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_API_KEY: account.testKey, TERM: "xterm", COLUMNS: "120" });
});
afterAll(async () => {
  removeConfigDirs();
  await server.close();
});

const shellQuote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`;

/** vendctl on a real pseudo-terminal (util-linux `script`): we read the screen and type keys. */
function onTerminal(args: string[], environment = env) {
  const proc = Bun.spawn([script ?? "script", "-qefc", cliCommand(args).map(shellQuote).join(" "), "/dev/null"], {
    env: environment as Record<string, string>,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  let screen = "";
  let seen = 0;
  void (async () => {
    const decoder = new TextDecoder();
    const reader = proc.stdout.getReader();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      screen += decoder.decode(chunk.value).replace(ansi, "");
    }
  })();
  return {
    proc,
    screen: () => screen,
    /** Waits for `text` to appear after what earlier waits consumed. */
    async expectPrompt(text: string, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const at = screen.indexOf(text, seen);
        if (at >= 0) {
          seen = at + text.length;
          return;
        }
        if (proc.exitCode !== null) break;
        await Bun.sleep(20);
      }
      throw new Error(`no "${text}" on the terminal; screen so far:\n${screen}`);
    },
    type(keys: string) {
      proc.stdin.write(keys);
      proc.stdin.flush();
    },
  };
}

async function transactionsOf(key: string): Promise<Transaction[]> {
  return (await server.client(key).get("/api/v1/transactions", { query: { limit: 100 } })).json.data.items;
}

describe.skipIf(!script)("interactive use on a pseudo-terminal", () => {
  test("vend data: pick network and product from the live catalogue, type the phone, confirm the price; the chosen product is vended", async () => {
    const networks: Network[] = (
      await server.client(account.testKey).get("/api/v1/catalogue/networks", { query: { service: "data" } })
    ).json.data;
    const networkIndex = networks.findIndex((n) => n.code === "airtel");
    const products: Product[] = (
      await server.client(account.testKey).get("/api/v1/catalogue/products", { query: { network: "airtel", service: "data" } })
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
    const price = (chosen.price_kobo / 100).toFixed(2);
    await terminal.expectPrompt(`Buy ${chosen.code} for 08021234567, paying NGN ${price}?`);
    terminal.type(`y${enter}`);
    expect(await terminal.proc.exited).toBe(0);
    const screen = terminal.screen();
    expect(screen).toContain("Idempotency-Key: ");
    expect(screen).toMatch(new RegExp(`PRODUCT\\s+${chosen.code}`));
    const [latest] = await transactionsOf(account.testKey);
    expect(latest).toMatchObject({
      product_code: chosen.code,
      network: "airtel",
      service: "data",
      price_kobo: chosen.price_kobo,
    });
    expect(screen).toContain(latest?.reference ?? "no reference");
  });

  test("vend cable: pick the biller, type the smartcard, see the customer, pick the bouquet", async () => {
    const client = server.client(account.testKey);
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
    await terminal.expectPrompt("Product");
    terminal.type(enter);
    await terminal.expectPrompt(`Pay ${bouquets[0]?.code} for smartcard 7012345678 (${customer.customer_name}`);
    terminal.type(`y${enter}`);
    expect(await terminal.proc.exited).toBe(0);
    const [latest] = await transactionsOf(account.testKey);
    expect(latest).toMatchObject({ service: "cable", network: "gotv", product_code: bouquets[0]?.code });
  });

  test("vend airtime: asks only for what the flags left out, shows the discounted price; declining sends nothing", async () => {
    const before = (await transactionsOf(account.testKey)).length;
    const terminal = onTerminal(["vend", "airtime", "--network", "mtn", "--phone", "08031234567"]);
    await terminal.expectPrompt("Amount (NGN)");
    terminal.type(`100${enter}`);
    await terminal.expectPrompt("Buy NGN 100.00 mtn airtime for 08031234567, paying NGN 97.00?");
    terminal.type(`n${enter}`);
    expect(await terminal.proc.exited).toBe(130);
    expect(terminal.screen()).toContain("cancelled; nothing was sent");
    expect(terminal.screen()).not.toContain("Network");
    expect((await transactionsOf(account.testKey)).length).toBe(before);
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
    terminal.type(`${server.url}${enter}`);
    await terminal.expectPrompt("API key");
    terminal.type(`${account.testKey}${enter}`);
    await terminal.expectPrompt("Admin token");
    terminal.type(`${testAdminToken}${enter}`);
    expect(await terminal.proc.exited).toBe(0);
    expect(terminal.screen()).not.toContain(account.testKey);
    expect(terminal.screen()).not.toContain(testAdminToken);
    const saved = JSON.parse(readFileSync(join(login.VENDCTL_CONFIG_DIR ?? "", "config.json"), "utf8"));
    expect(saved.profiles.default).toEqual({ baseUrl: server.url, apiKey: account.testKey, adminToken: testAdminToken });
  });
});
