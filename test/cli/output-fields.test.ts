import { beforeAll, describe, expect, test } from "bun:test";
import type { components } from "../../generated/openapi-types.ts";
import { insertTransactions } from "../helpers/seed.ts";
import { cliServer, runCli } from "./cli.ts";

type Transaction = components["schemas"]["Transaction"];

const total = 7;
const cli = cliServer({ account: { name: "output-fields", kobo: 0 } });
const env = () => cli.apiEnv();
let listed: Transaction[];

beforeAll(async () => {
  const account = cli.account;
  await insertTransactions(cli.server.database.handle.db, { accountId: account.id, mode: "test", count: total });
  listed = (await cli.server.client(account.testKey).get("/api/v1/transactions", { query: { limit: 100 } })).json.data.items;
});

describe("--json FIELDS", () => {
  test("a list: each item keeps only the named fields, in that order", async () => {
    const result = await runCli(["transactions", "list", "--all", "--limit", "3", "--json", "reference,status"], env());
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(listed.map((t) => ({ reference: t.reference, status: t.status })));
  });

  test("--json=FIELDS on one object", async () => {
    const reference = listed[0]?.reference ?? "";
    const result = await runCli(["transactions", "get", reference, "--json=reference,amount_kobo"], env());
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ reference, amount_kobo: listed[0]?.amount_kobo });
  });

  test("`--json` before a command name is still the flag, not a field list", async () => {
    const result = await runCli(["--json", "transactions", "list"], env());
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(listed);
    const alias = await runCli(["--json", "txn", "list"], env());
    expect(JSON.parse(alias.stdout)).toEqual(listed);
  });

  test("an unknown field is a usage error (exit 2) naming the fields there are", async () => {
    const result = await runCli(["transactions", "list", "--json", "reference,colour"], env());
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("colour");
    expect(result.stderr).toMatch(/available: .*reference.*status/);
  });
});

describe("--jq", () => {
  test("strings are printed raw, one per line; --all hands jq the whole collected array", async () => {
    const refs = await runCli(["transactions", "list", "--all", "--limit", "2", "--jq", ".[].reference"], env());
    expect(refs.code).toBe(0);
    expect(refs.stdout).toBe(`${listed.map((t) => t.reference).join("\n")}\n`);
    const count = await runCli(["transactions", "list", "--all", "--limit", "2", "--jq", "length"], env());
    expect(count.stdout).toBe(`${total}\n`);
  });

  test("other values are compact JSON, one per line; combined with --json FIELDS", async () => {
    const result = await runCli(["transactions", "list", "--json", "reference,status", "--jq", ".[:2][]"], env());
    expect(result.code).toBe(0);
    const expected = listed.slice(0, 2).map((t) => JSON.stringify({ reference: t.reference, status: t.status }));
    expect(result.stdout).toBe(`${expected.join("\n")}\n`);
    const one = await runCli(["transactions", "get", listed[0]?.reference ?? "", "--jq", "{reference, amount_kobo}"], env());
    expect(one.stdout).toBe(`${JSON.stringify({ reference: listed[0]?.reference, amount_kobo: listed[0]?.amount_kobo })}\n`);
  });

  test("a bad expression is a usage error (exit 2) with jq's message; --jq with --csv too", async () => {
    const bad = await runCli(["transactions", "list", "--jq", ".[0"], env());
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toContain("syntax error");
    const csv = await runCli(["transactions", "list", "--jq", ".", "--csv"], env());
    expect(csv.code).toBe(2);
    expect(csv.stderr).toContain("--jq");
  });
});
