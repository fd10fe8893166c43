import { describe, expect, test } from "bun:test";
import type { components } from "../../generated/openapi-types.ts";
import { idem } from "../helpers/accounts.ts";
import { cliServer, runCli, runJson } from "./cli.ts";

type PricePlan = components["schemas"]["PricePlan"];
type AccountDetail = components["schemas"]["AccountDetail"];

/**
 * `vendctl plans`: scriptable (flags, --yes, --json), refusals with their exit codes. Money: one vend after the
 * move, whose hold must be the plan's price (face value less its discount, rounded down), worked out here.
 */
const cli = cliServer({ account: { name: "plans", kobo: 1_000_000 } });
const admin = () => cli.adminEnv();

describe("vendctl plans", () => {
  test("create, list, show, update (set, unset), assign; the account's next order pays the plan's price", async () => {
    const created = await runJson<PricePlan>(
      [
        "plans",
        "create",
        "silver",
        "--description",
        "Mid resellers",
        "--discount",
        "service:airtime=400",
        "--discount",
        "product:glo-airtime=100",
      ],
      admin(),
    );
    expect(created).toMatchObject({
      name: "silver",
      description: "Mid resellers",
      discounts: [
        { scope: "service", code: "airtime", discount_bps: 400 },
        { scope: "product", code: "glo-airtime", discount_bps: 100 },
      ],
      account_count: 0,
    });

    const table = await runCli(["plans", "list", "--table"], admin());
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/NAME\s+DESCRIPTION\s+DISCOUNTS\s+ACCOUNTS/);
    expect(table.stdout).toContain("service:airtime=400 product:glo-airtime=100");

    const updated = await runJson<PricePlan>(
      ["plans", "update", "silver", "--set", "network:mtn=250", "--unset", "product:glo-airtime", "--note", "test", "--yes"],
      admin(),
    );
    expect(updated.discounts).toEqual([
      { scope: "service", code: "airtime", discount_bps: 400 },
      { scope: "network", code: "mtn", discount_bps: 250 },
    ]);
    expect(await runJson<PricePlan>(["plans", "show", "silver"], admin())).toEqual(updated);

    const moved = await runJson<AccountDetail>(["plans", "assign", cli.account.id, "silver", "--yes"], admin());
    expect(moved.price_plan).toBe("silver");
    expect((await runJson<PricePlan>(["plans", "show", "silver"], admin())).account_count).toBe(1);

    // network:mtn (250) is more specific than service:airtime (400).
    const res = await cli.account.client.post(
      "/api/v1/vend",
      { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 12_345 },
      idem(),
    );
    expect(res.status).toBe(202);
    const price = 12_345 - Math.floor((12_345 * 250) / 10_000);
    expect(res.json.data.price_kobo).toBe(price);
    const wallet = (await cli.account.client.get("/api/v1/wallet")).json.data;
    expect(wallet).toMatchObject({ balance_kobo: 1_000_000, held_kobo: price, available_kobo: 1_000_000 - price });
  }, 60_000);

  test("refusals: usage errors exit 2 before any request; the server's 400 and 404 exit 1 naming the field", async () => {
    const badFlag = await runCli(["plans", "create", "x", "--discount", "service:data=20000"], admin());
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toContain("basis points");
    const noYes = await runCli(["plans", "assign", cli.account.id, "standard"], admin());
    expect(noYes.code).toBe(2);
    expect(noYes.stderr).toContain("--yes");
    const nothing = await runCli(["plans", "update", "silver"], admin());
    expect(nothing.code).toBe(2);

    const unknownKey = await runCli(["plans", "create", "bronze", "--discount", "product:no-such-product=10"], admin());
    expect(unknownKey.code).toBe(1);
    expect(unknownKey.stderr).toContain("discounts[0].code");
    const unknownPlan = await runCli(["plans", "assign", cli.account.id, "platinum", "--yes"], admin());
    expect(unknownPlan.code).toBe(1);
    expect(unknownPlan.stderr).toContain("plan");
    const missing = await runCli(["plans", "show", "platinum"], admin());
    expect(missing.code).toBe(1);
    expect((await runJson<PricePlan[]>(["plans", "list"], admin())).map((p) => p.name)).toEqual(["silver", "standard"]);
  }, 60_000);
});
