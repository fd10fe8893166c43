import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import { cliEnv, cliServer, runCli } from "./cli.ts";

type Reconciliation = components["schemas"]["Reconciliation"];

const cli = cliServer();
const admin = () => cli.adminEnv();

describe("vendctl reconcile (admin token)", () => {
  test("balanced books: one line, or the API's data with --json; exit 0", async () => {
    await fundedAccount(cli.server, 250_000, "Reconciled Ltd");
    const table = await runCli(["reconcile", "--table"], admin());
    expect(table).toMatchObject({ code: 0, stdout: "Books balanced: 2 wallets checked\n" });
    const json = await runCli(["reconcile", "--json"], admin());
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as Reconciliation;
    expect(report).toMatchObject({ balanced: true, wallets_checked: 2, discrepancies: [] });
    expect(report.checked_at).toBeString();
  });

  test("unbalanced books: a table of the wallets that differ (or the data with --json), exit 1", async () => {
    const account = await fundedAccount(cli.server, 100_000, "Corrupted Ltd");
    await cli.server.database.handle.db.execute(
      sql`update wallets set held_kobo = held_kobo + 500 where account_id = ${account.id}::uuid and mode = 'test'`,
    );
    const table = await runCli(["reconcile", "--table"], admin());
    expect(table.code).toBe(1);
    expect(table.stdout).toMatch(/^WALLET\s+ACCOUNT\s+MODE\s+BALANCE\s+LEDGER_BALANCE\s+HELD\s+LEDGER_HELD\n/);
    expect(table.stdout).toContain(account.id);
    expect(table.stdout).toMatch(/test\s+NGN 1,000\.00\s+NGN 1,000\.00\s+NGN 5\.00\s+NGN 0\.00\n$/);
    expect(table.stderr).toBe("error: Books unbalanced: 1 of 4 wallets differ from their ledger\n");
    const json = await runCli(["reconcile", "--json"], admin());
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as Reconciliation;
    expect(report).toMatchObject({ balanced: false, wallets_checked: 4 });
    expect(report.discrepancies).toEqual([
      {
        wallet_id: expect.any(String),
        account_id: account.id,
        mode: "test",
        balance_kobo: 100_000,
        ledger_balance_kobo: 100_000,
        held_kobo: 500,
        ledger_held_kobo: 0,
      },
    ]);
  });

  test("without the admin token: usage error; with a wrong one: the API's 401", async () => {
    const none = await runCli(["reconcile"], cliEnv({ VENDCTL_BASE_URL: cli.server.url }));
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("no admin token");
    const wrong = await runCli(["reconcile"], { ...admin(), VENDCTL_ADMIN_TOKEN: "not-the-admin-token" });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toStartWith("UNAUTHENTICATED: ");
  });
});

describe("vendctl wallet reconcile (the documented name; top-level reconcile is its alias)", () => {
  test("exit 0 for a balanced account, 1 for an unbalanced one or the whole unbalanced books, 1 for an unknown account", async () => {
    const clean = await fundedAccount(cli.server, 40_000, "Clean Ltd");
    const dirty = await fundedAccount(cli.server, 60_000, "Dirty Ltd");
    await cli.server.database.handle.db.execute(
      sql`update wallets set balance_kobo = balance_kobo - 100 where account_id = ${dirty.id}::uuid and mode = 'test'`,
    );
    for (const command of [["wallet", "reconcile"], ["reconcile"]]) {
      const balanced = await runCli([...command, "--account", clean.id, "--table"], admin());
      expect([command, balanced.code, balanced.stdout]).toEqual([command, 0, "Books balanced: 2 wallets checked\n"]);
      const unbalanced = await runCli([...command, "--account", dirty.id, "--json"], admin());
      expect([command, unbalanced.code]).toEqual([command, 1]);
      const report = JSON.parse(unbalanced.stdout) as Reconciliation;
      expect(report).toMatchObject({ balanced: false, wallets_checked: 2 });
      expect(report.discrepancies.map((d) => [d.account_id, d.balance_kobo, d.ledger_balance_kobo])).toEqual([
        [dirty.id, 59_900, 60_000],
      ]);
      expect(unbalanced.stderr).toBe("error: Books unbalanced: 1 of 2 wallets differ from their ledger\n");
    }
    const everything = await runCli(["wallet", "reconcile", "--csv"], admin());
    expect(everything.code).toBe(1);
    expect(everything.stdout).toContain(dirty.id);
    expect(everything.stdout).not.toContain(clean.id);
    const unknown = await runCli(["wallet", "reconcile", "--account", "00000000-0000-4000-8000-000000000000"], admin());
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toStartWith("NOT_FOUND: ");
  });
});
