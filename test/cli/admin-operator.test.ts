import { beforeAll, describe, expect, test } from "bun:test";
import type { components } from "../../generated/openapi-types.ts";
import { processingRunner } from "../../src/background.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import { fastProcessing, transactionRow, vendAirtime } from "../helpers/processing.ts";
import { cliServer, runCli, runJson } from "./cli.ts";
import { onTerminal, script } from "./terminal.ts";

type Schemas = components["schemas"];
type AdminTransaction = Schemas["AdminTransaction"];

const cli = cliServer({ config: fastProcessing(), account: { name: "first", kobo: 1_000_000 } });
let second: Awaited<ReturnType<typeof fundedAccount>>;

beforeAll(async () => {
  second = await fundedAccount(cli.server, 1_000_000, "second");
});

const server = () => cli.server;
const first = () => cli.account;
const admin = () => cli.adminEnv();
const asKey = () => cli.apiEnv();
const tick = () => processingRunner({ ...server().deps, apiBaseUrl: server().url }, "admin-cli-worker").tick();
const references = (rows: { reference: string }[]) => rows.map((r) => r.reference).sort();

describe("vendctl admin transactions (admin token)", () => {
  test("list searches every account: by account, status, reference, phone and date, paged with --cursor", async () => {
    const a1 = await vendAirtime(first().client, "08031230001");
    const a2 = await vendAirtime(first().client, "08031231111");
    const b1 = await vendAirtime(second.client, "08039870002");
    await tick();

    const all = await runJson<AdminTransaction[]>(["admin", "transactions", "list", "--all"], admin());
    expect(references(all)).toEqual([a1, a2, b1].sort());
    expect(all.find((t) => t.reference === b1)?.account_id).toBe(second.id);

    const ofFirst = await runJson<AdminTransaction[]>(["admin", "txn", "list", "--account", first().id, "--all"], admin());
    expect(references(ofFirst)).toEqual([a1, a2].sort());
    const failed = await runJson<AdminTransaction[]>(["admin", "transactions", "list", "--status", "failed"], admin());
    expect(references(failed)).toEqual([a2]);
    expect(references(await runJson(["admin", "transactions", "list", "--search", b1], admin()))).toEqual([b1]);
    expect(references(await runJson(["admin", "transactions", "list", "--search", "+234 803 987 0002"], admin()))).toEqual([b1]);
    const today = new Date().toLocaleDateString("en-CA", { timeZone: "Africa/Lagos" });
    const dated = await runJson<AdminTransaction[]>(["admin", "transactions", "list", "--from", today, "--to", today, "--all"], {
      ...admin(),
      TZ: "Africa/Lagos",
    });
    expect(dated).toHaveLength(3);

    const page = await runCli(["admin", "transactions", "list", "--limit", "2", "--json"], admin());
    const cursor = /--cursor (\S+)/.exec(page.stderr)?.[1] ?? "";
    const rest = await runJson<AdminTransaction[]>(["admin", "transactions", "list", "--cursor", cursor], admin());
    expect([...JSON.parse(page.stdout), ...rest].map((t: AdminTransaction) => t.reference).sort()).toEqual(references(all));

    const table = await runCli(["admin", "transactions", "list", "--table"], admin());
    expect(table.stdout).toMatch(/REFERENCE\s+STATUS\s+ACCOUNT\s+MODE/);
    expect(table.stdout).toContain(second.id);

    const none = await runCli(["admin", "transactions", "list"], asKey());
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("no admin token");
  }, 60_000);

  test("get shows any account's transaction with its provider attempts", async () => {
    const reference = await vendAirtime(second.client, "08031234567");
    await tick();
    const shown = await runJson<AdminTransaction>(["admin", "transactions", "get", reference], admin());
    expect(shown).toMatchObject({ reference, account_id: second.id, provider: "sandbox", status: "successful" });
    const table = await runCli(["admin", "transactions", "get", reference, "--table"], admin());
    expect(table.stdout).toMatch(/ACCOUNT\s+/);
    expect(table.stdout).toMatch(/PROVIDER\s+REQUEST_ID\s+STATUS/);
    const missing = await runCli(["admin", "transactions", "get", "txn_doesnotexist000000000000"], admin());
    expect(missing.code).toBe(1);
    expect(missing.stderr).toStartWith("NOT_FOUND: ");
  });
});

describe("vendctl transactions requery (admin token)", () => {
  test("asks the provider now: a 5555 order left pending is found successful", async () => {
    const reference = await vendAirtime(first().client, "08031235555");
    await tick();
    expect((await transactionRow(server().database.handle.db, reference)).status).toBe("pending");
    const requeried = await runJson<AdminTransaction>(["transactions", "requery", reference], admin());
    expect(requeried).toMatchObject({ reference, status: "successful" });
    expect((await transactionRow(server().database.handle.db, reference)).status).toBe("successful");
    const help = await runCli(["transactions", "requery", "--help"], admin());
    expect(help.stdout).toContain("$ vendctl transactions requery txn_");
  });
});

describe("vendctl products", () => {
  test("list shows the catalogue with prices, ranges, discounts and active", async () => {
    const products = await runJson<Schemas["Product"][]>(["products", "list", "--service", "data", "--network", "mtn"], asKey());
    expect(products.length).toBeGreaterThan(0);
    expect(products.every((p) => p.service === "data" && p.network === "mtn" && p.active)).toBe(true);
    const table = await runCli(["products", "list", "--table"], asKey());
    expect(table.stdout).toMatch(/CODE\s+NAME\s+SERVICE\s+NETWORK\s+KIND\s+PRICE\s+MIN\s+MAX\s+DISCOUNT_BPS/);
    expect(table.stdout).toContain("mtn-data-1gb-1d");
  });

  test("update changes a price, takes a product off sale and back, with --yes", async () => {
    const priced = await runJson<Schemas["Product"]>(
      ["products", "update", "mtn-data-1gb-1d", "--price", "321.50", "--yes"],
      admin(),
    );
    expect(priced).toMatchObject({ code: "mtn-data-1gb-1d", price_kobo: 32_150 });
    const ranged = await runJson<Schemas["Product"]>(
      ["products", "update", "ikedc-prepaid", "--discount-bps", "250", "--yes"],
      admin(),
    );
    expect(ranged.discount_bps).toBe(250);

    expect(
      (await runJson<Schemas["Product"]>(["products", "update", "mtn-data-1gb-1d", "--disable", "--yes"], admin())).active,
    ).toBe(false);
    const listed = await runJson<Schemas["Product"][]>(["products", "list", "--network", "mtn"], asKey());
    expect(listed.map((p) => p.code)).not.toContain("mtn-data-1gb-1d");
    expect(
      (await runJson<Schemas["Product"]>(["products", "update", "mtn-data-1gb-1d", "--enable", "--yes"], admin())).active,
    ).toBe(true);

    const audit = await runJson<Schemas["AuditEntry"][]>(["audit", "list", "--target", "mtn-data-1gb-1d"], admin());
    expect(audit.map((e) => e.action)).toContain("updateProduct");
  });

  test.each([
    [["products", "update", "mtn-data-1gb-1d", "--yes"], "nothing to change"],
    [["products", "update", "mtn-data-1gb-1d", "--discount-bps", "10001", "--yes"], "0 to 10000"],
    [["products", "update", "mtn-data-1gb-1d", "--enable", "--disable", "--yes"], "not both"],
    [["products", "update", "mtn-data-1gb-1d", "--price", "3.141", "--yes"], "--price must be an amount in NGN"],
  ])("%p is a usage error: %s", async (args, message) => {
    const result = await runCli(args, admin());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });

  test("an edit the product's kind does not take is the API's validation error; an unknown code is NOT_FOUND", async () => {
    const wrongKind = await runCli(["products", "update", "mtn-data-1gb-1d", "--min", "100", "--yes"], admin());
    expect(wrongKind.code).toBe(1);
    expect(wrongKind.stderr).toContain("min_amount_kobo: can only be set on a range product");
    const unknown = await runCli(["products", "update", "no-such-product", "--price", "100", "--yes"], admin());
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toStartWith("NOT_FOUND: ");
  });
});

describe.skipIf(!script)("vendctl products update on a terminal", () => {
  test("asks to confirm, naming the change: no sends nothing (exit 130), yes updates", async () => {
    const args = ["products", "update", "glo-data-5gb-30d", "--price", "250"];
    const before = await runJson<Schemas["Product"][]>(["products", "list", "--network", "glo", "--service", "data"], asKey());
    const original = before.find((p) => p.code === "glo-data-5gb-30d")?.price_kobo;
    expect(original).not.toBe(25_000);
    const prompt = "Update glo-data-5gb-30d for every account: price = NGN 250.00?";
    const terminal = { ...admin(), TERM: "xterm", COLUMNS: "160" };
    const declined = onTerminal(args, terminal);
    await declined.answer(prompt, "n");
    expect(await declined.exited()).toBe(130);
    const unchanged = await runJson<Schemas["Product"][]>(["products", "list", "--network", "glo", "--service", "data"], asKey());
    expect(unchanged.find((p) => p.code === "glo-data-5gb-30d")?.price_kobo).toBe(original ?? -1);
    const agreed = onTerminal(args, terminal);
    await agreed.answer(prompt, "y");
    expect(await agreed.exited()).toBe(0);
    expect(agreed.screen()).toMatch(/PRICE\s+NGN 250\.00/);
  }, 60_000);
});

describe("vendctl wallet reconcile", () => {
  test("is listed under wallet and balances the books", async () => {
    expect((await runCli(["wallet", "--help"], admin())).stdout).toMatch(/reconcile\s/);
    const result = await runCli(["wallet", "reconcile", "--table"], admin());
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Books balanced");
  });
});
