// Runs once, in the embedded run: it never uses the suite's database (see test/helpers/runs-once.ts).
import { describe, expect, test } from "bun:test";
import type { components } from "../../generated/openapi-types.ts";
import { cliServer } from "./cli.ts";
import { down, enter, onTerminal, script } from "./terminal.ts";

type Transaction = components["schemas"]["Transaction"];
type Network = components["schemas"]["Network"];
type MeterVerification = components["schemas"]["MeterVerification"];

const backspace = "\x7f";

const cli = cliServer({ account: { name: "interactive-vend", kobo: 10_000_000 }, env: { TERM: "xterm", COLUMNS: "160" } });
const env = () => cli.apiEnv();
const account = () => cli.account;

async function transactionsOf(key: string): Promise<Transaction[]> {
  return (await cli.server.client(key).get("/api/v1/transactions", { query: { limit: 100 } })).json.data.items;
}

describe.skipIf(!script)("interactive vending on a pseudo-terminal", () => {
  test("airtime: the amount prompt shows the product's range and asks again for an amount outside it; a test vend is then sent", async () => {
    const before = (await transactionsOf(account().testKey)).length;
    const terminal = onTerminal(["vend", "airtime", "--network", "mtn", "--phone", "08031234567"], env());
    await terminal.expectPrompt("Amount (NGN 50.00 to NGN 50000.00)");
    terminal.type(`10${enter}`);
    await terminal.expectPrompt("at least NGN 50.00");
    terminal.type(`${backspace.repeat(2)}60000${enter}`);
    await terminal.expectPrompt("at most NGN 50000.00");
    terminal.type(`${backspace.repeat(5)}100${enter}`);
    expect(await terminal.proc.exited).toBe(0);
    expect((await transactionsOf(account().testKey)).length).toBe(before + 1);
    const [latest] = await transactionsOf(account().testKey);
    expect(latest).toMatchObject({ product_code: "mtn-airtime", amount_kobo: 10_000 });
  });

  test("electricity: the meter is verified before the amount; an unknown meter is asked again, the other answers kept", async () => {
    const client = cli.server.client(account().testKey);
    const discos: Network[] = (await client.get("/api/v1/catalogue/networks", { query: { service: "electricity" } })).json.data;
    const ikedc = discos.findIndex((n) => n.code === "ikedc");
    const meter = "45031234567";
    const customer: MeterVerification = (
      await client.post("/api/v1/bills/electricity/verify", { network: "ikedc", meter_number: meter, meter_type: "postpaid" })
    ).json.data;
    const before = (await transactionsOf(account().testKey)).length;

    const terminal = onTerminal(["vend", "electricity"], env());
    await terminal.expectPrompt("Disco");
    terminal.type(down.repeat(ikedc) + enter);
    await terminal.expectPrompt("Meter number");
    terminal.type(`45031230000${enter}`);
    await terminal.expectPrompt("Meter type");
    terminal.type(down + enter);
    await terminal.expectPrompt("No customer has meter 45031230000 at ikedc (postpaid)");
    expect(terminal.sinceLastPrompt()).not.toContain("Amount");
    await terminal.expectPrompt("Meter number");
    terminal.type(`${meter}${enter}`);
    await terminal.expectPrompt(`Customer: ${customer.customer_name}`);
    if (customer.address) await terminal.expectPrompt(customer.address);
    await terminal.expectPrompt("Amount (NGN 1000.00 to NGN 500000.00)");
    expect(terminal.screen()).not.toContain("CUSTOMER_NOT_FOUND");
    terminal.type(`500${enter}`);
    await terminal.expectPrompt("at least NGN 1000.00");
    terminal.type(`${backspace.repeat(3)}5000${enter}`);
    expect(await terminal.proc.exited).toBe(0);
    const all = await transactionsOf(account().testKey);
    expect(all.length).toBe(before + 1);
    expect(all[0]).toMatchObject({
      service: "electricity",
      network: "ikedc",
      product_code: "ikedc-postpaid",
      amount_kobo: 500_000,
      metadata: expect.objectContaining({ meter_type: "postpaid" }),
    });
  });

  test("electricity with --meter of an unknown customer on a terminal: asks for the meter number instead of failing", async () => {
    const terminal = onTerminal(
      ["vend", "electricity", "--disco", "ikedc", "--meter", "45031230000", "--meter-type", "prepaid", "--amount", "1000"],
      env(),
    );
    await terminal.expectPrompt("No customer has meter 45031230000 at ikedc (prepaid)");
    await terminal.expectPrompt("Meter number");
    terminal.type(`45031234567${enter}`);
    await terminal.expectPrompt("Customer: ");
    expect(await terminal.proc.exited).toBe(0);
    const [latest] = await transactionsOf(account().testKey);
    expect(latest).toMatchObject({ service: "electricity", network: "ikedc", amount_kobo: 100_000 });
    expect(latest?.destination.slice(-3)).toBe("567");
  });
});
