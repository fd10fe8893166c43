// Runs once, in the embedded run: it never uses the suite's database (see test/helpers/runs-once.ts).
import { describe, expect, test } from "bun:test";
import type { components } from "../../generated/openapi-types.ts";
import { cliServer, runCli, runJson } from "./cli.ts";

type Product = components["schemas"]["Product"];

const cli = cliServer({ account: { name: "updated", kobo: 0 } });
const admin = () => cli.adminEnv();
const asKey = () => cli.apiEnv();
const find = (products: Product[], code: string) => products.find((p) => p.code === code);

describe("vendctl products and updated_at", () => {
  test("list shows UPDATED; an operator's change moves it, an edit that changes nothing does not", async () => {
    const table = await runCli(["products", "list", "--network", "gotv", "--table", "--utc"], asKey());
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/ACTIVE\s+UPDATED \(UTC\)/);

    const before = find(await runJson<Product[]>(["products", "list", "--network", "gotv"], asKey()), "gotv-smallie");
    if (!before?.price_kobo) throw new Error("gotv-smallie is not listed with a price");
    const same = await runJson<Product>(
      ["products", "update", "gotv-smallie", "--price", String(before.price_kobo / 100), "--yes"],
      admin(),
    );
    expect(same.updated_at).toBe(before.updated_at);

    const changed = await runJson<Product>(["products", "update", "gotv-smallie", "--price", "1234.50", "--yes"], admin());
    expect(changed.price_kobo).toBe(123_450);
    expect(Date.parse(changed.updated_at)).toBeGreaterThan(Date.parse(before.updated_at));
    const after = find(await runJson<Product[]>(["products", "list", "--network", "gotv"], asKey()), "gotv-smallie");
    expect(after?.updated_at).toBe(changed.updated_at);
  }, 60_000);
});
