import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { components } from "../../generated/openapi-types.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { cliEnv, removeConfigDirs, runCli, runJson } from "./cli.ts";

type Transaction = components["schemas"]["Transaction"];

let server: TestServer;
let env: Record<string, string | undefined>;

beforeAll(async () => {
  server = await startTestServer();
  const account = await fundedAccount(server, 10_000_000, "vend-amounts");
  env = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_API_KEY: account.testKey });
});
afterAll(async () => {
  removeConfigDirs();
  await server.close();
});

const countTransactions = async () => (await runJson<Transaction[]>(["transactions", "list", "--all"], env)).length;

describe("--amount is checked against the catalogue before anything is sent (exit 2)", () => {
  const phone = ["--phone", "08031234567", "--yes"];
  const refused: { name: string; args: string[]; message: string }[] = [
    {
      name: "airtime below the product's range",
      args: ["vend", "airtime", "--network", "mtn", ...phone, "--amount", "10"],
      message: "error: --amount 10 is out of range: MTN Airtime takes NGN 50.00 to NGN 50000.00\n",
    },
    {
      name: "airtime above the range, the product named by --product",
      args: ["vend", "airtime", "--network", "glo", "--product", "glo-airtime", ...phone, "--amount", "50000.50"],
      message: "error: --amount 50000.50 is out of range: Glo Airtime takes NGN 50.00 to NGN 50000.00\n",
    },
    {
      name: "a fixed-price data bundle",
      args: ["vend", "data", "--product", "mtn-data-1gb-1d", ...phone, "--amount", "400"],
      message: "error: MTN 1GB (1 day) costs NGN 500.00; leave out --amount (or pass --amount 500)\n",
    },
    {
      name: "a fixed-price cable bouquet",
      args: [
        "vend",
        "cable",
        "--biller",
        "dstv",
        "--smartcard",
        "7031234567",
        "--product",
        "dstv-padi",
        "--yes",
        "--amount",
        "400",
      ],
      message: "costs NGN ",
    },
    {
      name: "electricity below the disco's minimum",
      args: ["vend", "electricity", "--disco", "ikedc", "--meter", "45031234567", "--yes", "--amount", "500"],
      message: "error: --amount 500 is out of range: Ikeja Electric Prepaid takes NGN 1000.00 to NGN 500000.00\n",
    },
  ];
  for (const { name, args, message } of refused) {
    test(name, async () => {
      const before = await countTransactions();
      const result = await runCli([...args, "--json"], env);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(message);
      expect(result.stderr).not.toContain("Idempotency-Key");
      expect(result.stderr).not.toContain("amount_kobo");
      expect(result.stdout).toBe("");
      expect(await countTransactions()).toBe(before);
    });
  }

  test("the cable message names the bouquet's price, taken from the catalogue", async () => {
    const bouquets = (
      await server.client(env.VENDCTL_API_KEY ?? "").get("/api/v1/catalogue/products", {
        query: { network: "dstv", service: "cable" },
      })
    ).json.data as components["schemas"]["Product"][];
    const padi = bouquets.find((p) => p.code === "dstv-padi");
    if (!padi?.price_kobo) throw new Error("catalogue lacks dstv-padi");
    const naira = padi.price_kobo / 100;
    const result = await runCli(
      ["vend", "cable", "--biller", "dstv", "--smartcard", "7031234567", "--product", "dstv-padi", "--amount", "1", "--yes"],
      env,
    );
    expect(result.stderr).toBe(`error: ${padi.name} costs NGN ${naira}.00; leave out --amount (or pass --amount ${naira})\n`);
  });

  test("an amount that fits is sent: the bundle's own price, and airtime within the range", async () => {
    const data = await runJson<Transaction>(
      ["vend", "data", "--product", "mtn-data-1gb-1d", "--phone", "08031234567", "--amount", "500", "--yes"],
      env,
    );
    expect(data).toMatchObject({ product_code: "mtn-data-1gb-1d", amount_kobo: 50_000 });
    const airtime = await runJson<Transaction>(
      ["vend", "airtime", "--network", "mtn", "--phone", "08031234567", "--amount", "50", "--yes"],
      env,
    );
    expect(airtime).toMatchObject({ product_code: "mtn-airtime", amount_kobo: 5_000 });
    const cable = await runJson<Transaction>(
      ["vend", "cable", "--biller", "dstv", "--smartcard", "7031234567", "--product", "dstv-padi", "--yes"],
      env,
    );
    expect(cable).toMatchObject({ product_code: "dstv-padi" });
  });
});
