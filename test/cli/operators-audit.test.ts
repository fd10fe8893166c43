import { describe, expect, test } from "bun:test";
import type { components } from "../../generated/openapi-types.ts";
import { idem } from "../helpers/accounts.ts";
import { cliEnv, cliServer, runCli, runJson } from "./cli.ts";

type Schemas = components["schemas"];

const cli = cliServer();
const admin = () => cli.adminEnv();

describe("vendctl operators and audit", () => {
  test("create prints the token once; whoami answers as that operator; a viewer's credit is refused (exit 1, FORBIDDEN)", async () => {
    const created = await runJson<Schemas["OperatorCreated"]>(
      ["operators", "create", "--name", "vee", "--role", "viewer"],
      admin(),
    );
    expect(created.operator).toMatchObject({ name: "vee", role: "viewer", created_by: "ADMIN_TOKEN" });
    expect(created.token).toMatch(/^op_/);
    const asVee = cliEnv({ VENDCTL_BASE_URL: cli.server.url, VENDCTL_ADMIN_TOKEN: created.token });
    const me = await runCli(["operators", "whoami", "--table"], asVee);
    expect(me.code).toBe(0);
    expect(me.stdout).toContain("vee");
    expect(me.stdout).toContain("viewer");

    const account = await cli.server.createAccount("Cli Audit");
    const refused = await runCli(["wallet", "fund", "100", "--account", account.id, "--note", "x"], asVee);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("FORBIDDEN");

    const listed = await runJson<Schemas["Operator"][]>(["operators", "list"], admin());
    expect(listed.map((o) => o.name)).toContain("vee");
    const revoked = await runJson<Schemas["Operator"]>(["operators", "revoke", created.operator.id ?? "", "--yes"], admin());
    expect(revoked.revoked_at).toBeString();
    expect((await runCli(["operators", "whoami"], asVee)).code).toBe(1);
  });

  test("audit list filters by operator and action; the table names the operator and the note", async () => {
    const account = await cli.server.createAccount("Cli Audit 2");
    const res = await cli.server.admin.post(
      `/admin/v1/accounts/${account.id}/wallet/credit`,
      { mode: "test", amount_kobo: 700, note: "cli-note" },
      idem(),
    );
    expect(res.status).toBe(200);
    const entries = await runJson<Schemas["AuditEntry"][]>(
      ["audit", "list", "--action", "creditWallet", "--target", account.id],
      admin(),
    );
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      operator: "ADMIN_TOKEN",
      action: "creditWallet",
      target_id: account.id,
      note: "cli-note",
    });
    const table = await runCli(["audit", "list", "--operator", "ADMIN_TOKEN", "--table"], admin());
    expect(table.code).toBe(0);
    expect(table.stdout.split("\n")[0]).toMatch(/^TIME\s+OPERATOR\s+ACTION\s+TARGET\s+ID\s+NOTE\s+REQUEST_ID/);
    expect(table.stdout).toContain("cli-note");
    expect(table.stdout).toContain("revokeOperator");
  });
});
