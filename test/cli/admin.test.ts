import { describe, expect, test } from "bun:test";
import type { components } from "../../generated/openapi-types.ts";
import { expectRecordedByAnswer } from "../helpers/accounts.ts";
import { cliEnv, cliServer, runCli, runJson } from "./cli.ts";

type Schemas = components["schemas"];

// The shortest propagation bound allowed: a revocation's answer waits at most that for the processes to refuse it.
const cli = cliServer({ config: { keyPropagationMs: 200 } });
const admin = () => cli.adminEnv();

const testKeyOf = (created: Schemas["AccountCreated"]) => created.keys.find((k) => k.mode === "test")?.key ?? "";

describe("accounts and keys (admin token)", () => {
  test("accounts create prints the account and both keys once; accounts list finds it", async () => {
    const created = await runJson<Schemas["AccountCreated"]>(["accounts", "create", "--name", "Acme Stores"], admin());
    expect(created.account.name).toBe("Acme Stores");
    expect(created.keys.map((k) => k.mode).sort()).toEqual(["live", "test"]);
    expect(testKeyOf(created)).toMatch(/^rg_test_[0-9A-Za-z]{32,}$/);
    const listed = await runJson<Schemas["Account"][]>(["accounts", "list", "--search", "acme", "--all"], admin());
    expect(listed.map((a) => a.id)).toContain(created.account.id);
    const table = await runCli(["accounts", "create", "--name", "Tabled", "--table"], admin());
    expect(table.stdout).toMatch(/TEST_KEY\s+rg_test_/);
    expect(table.stderr).toContain("shown only once");
  });

  test("keys create makes a working key; keys revoke stops it from the recorded revoked_at", async () => {
    const created = await runJson<Schemas["AccountCreated"]>(["accounts", "create", "--name", "Keys Ltd"], admin());
    const key = await runJson<Schemas["ApiKeyCreated"]>(["keys", "create", created.account.id, "--mode", "test"], admin());
    expect(key).toMatchObject({ account_id: created.account.id, mode: "test", revoked_at: null });
    const asKey = cliEnv({ VENDCTL_BASE_URL: cli.server.url, VENDCTL_API_KEY: key.key });
    expect((await runCli(["wallet", "balance", "--json"], asKey)).code).toBe(0);
    const keys = await runJson<Schemas["ApiKey"][]>(["keys", "list", created.account.id], admin());
    expect(keys.map((k) => k.id)).toContain(key.id);
    const revoked = await runJson<Schemas["ApiKey"]>(["keys", "revoke", key.id, "--yes"], admin());
    expect(revoked.revoked_at).not.toBeNull();
    expectRecordedByAnswer(revoked.revoked_at);
    const refused = await runCli(["wallet", "balance"], asKey);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toStartWith("UNAUTHENTICATED: ");
  });

  test("wallet fund --account credits either mode through the admin API, with a note", async () => {
    const created = await runJson<Schemas["AccountCreated"]>(["accounts", "create", "--name", "Credited"], admin());
    const credit = await runJson<Schemas["WalletMovement"]>(
      ["wallet", "fund", "2500.50", "--account", created.account.id, "--mode", "live", "--note", "Bank transfer 88213", "--yes"],
      admin(),
    );
    expect(credit.entry).toMatchObject({
      kind: "credit",
      amount_kobo: 250_050,
      note: "Bank transfer 88213",
      wallet_mode: "live",
    });
    expect(credit.wallet).toMatchObject({ mode: "live", balance_kobo: 250_050 });
    const liveKey = created.keys.find((k) => k.mode === "live")?.key;
    const balance = await runJson<Schemas["Wallet"]>(
      ["wallet", "balance"],
      cliEnv({ VENDCTL_BASE_URL: cli.server.url, VENDCTL_API_KEY: liveKey }),
    );
    expect(balance.balance_kobo).toBe(250_050);
  });

  test("admin commands without the admin token: usage error; with a wrong one: the API's 401", async () => {
    const none = await runCli(["accounts", "list"], cliEnv({ VENDCTL_BASE_URL: cli.server.url }));
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("no admin token");
    const wrong = await runCli(["accounts", "list"], { ...admin(), VENDCTL_ADMIN_TOKEN: "not-the-admin-token" });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toStartWith("UNAUTHENTICATED: ");
  });
});
