import { describe, expect, test } from "bun:test";
import { asc, eq, sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { processingRunner } from "../../src/background.ts";
import { ledgerEntries } from "../../src/db/schema/index.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { fastProcessing, transactionRow, vendAirtime } from "../helpers/processing.ts";
import { cliServer, runCli, runJson } from "./cli.ts";
import { onTerminal, script } from "./terminal.ts";

type AdminTransaction = components["schemas"]["AdminTransaction"];

const cli = cliServer({ config: fastProcessing(), account: { name: "funded", kobo: 1_000_000 } });
const server = () => cli.server;
const client = () => cli.account.client;
const admin = () => cli.adminEnv();

const db = () => server().database.handle.db;
const tick = () => processingRunner({ ...server().deps, apiBaseUrl: server().url }, "cli-worker").tick();

/** A 4444 order, sent (pending) and accepted `minutes` ago. */
async function pendingSince(minutes: number): Promise<string> {
  const reference = await vendAirtime(client(), "08031234444");
  await tick();
  await db().execute(
    sql`update transactions set created_at = now() - make_interval(mins => ${minutes}) where reference = ${reference}`,
  );
  expect((await transactionRow(db(), reference)).status).toBe("pending");
  return reference;
}

describe("vendctl transactions stuck / resolve (admin token)", () => {
  test("stuck lists pending orders past STUCK_AFTER_MINUTES; resolve --yes settles one once", async () => {
    const stuck = await pendingSince(45);
    const fresh = await pendingSince(1);

    const listed = await runJson<AdminTransaction[]>(["transactions", "stuck", "--all"], admin());
    expect(listed.map((t) => t.reference)).toEqual([stuck]);
    expect(listed[0]).toMatchObject({ status: "pending", provider: "sandbox" });
    const table = await runCli(["transactions", "stuck", "--mode", "test"], admin());
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(stuck);
    expect(table.stdout).not.toContain(fresh);

    const resolved = await runJson<AdminTransaction>(
      [
        "transactions",
        "resolve",
        stuck,
        "--status",
        "successful",
        "--note",
        "Confirmed by the provider",
        "--provider-reference",
        "PR-7",
        "--yes",
      ],
      admin(),
    );
    expect(resolved).toMatchObject({ reference: stuck, status: "successful" });
    expect(resolved.metadata.resolved_by_operator).toBe("true");
    const row = await transactionRow(db(), stuck);
    const entries = await db()
      .select()
      .from(ledgerEntries)
      .where(eq(ledgerEntries.transactionId, row.id))
      .orderBy(asc(ledgerEntries.id));
    expect(entries.map((e) => [e.kind, e.note])).toEqual([
      ["hold", null],
      ["capture", "Resolved by operator: Confirmed by the provider"],
    ]);
    expect(await runJson<AdminTransaction[]>(["transactions", "stuck"], admin())).toEqual([]);

    const again = await runCli(["transactions", "resolve", stuck, "--status", "failed", "--note", "again", "--yes"], admin());
    expect(again.code).toBe(1);
    expect(again.stderr).toStartWith("CONFLICT: ");
    expect(again.stderr).toContain("already successful");
    expect(await db().select().from(ledgerEntries).where(eq(ledgerEntries.transactionId, row.id))).toHaveLength(2);

    const noNote = await runCli(["transactions", "resolve", fresh, "--status", "failed", "--yes"], admin());
    expect(noNote.code).toBe(2);
    expect(noNote.stderr).toContain("--note");
    const failed = await runJson<AdminTransaction>(
      ["transactions", "resolve", fresh, "--status", "failed", "--note", "drill", "--yes"],
      admin(),
    );
    expect(failed.status).toBe("failed");
    expect(await reconcileWallets(db())).toEqual([]);
    expect((await client().get("/api/v1/wallet")).json.data.held_kobo).toBe(0);
  }, 60_000);
});

describe.skipIf(!script)("vendctl transactions resolve on a terminal", () => {
  test("asks to confirm: declining sends nothing (exit 130); agreeing resolves", async () => {
    const reference = await pendingSince(40);
    const args = ["transactions", "resolve", reference, "--status", "failed", "--note", "Provider never delivered"];
    const prompt = `Resolve ${reference} as failed`;
    const terminal = { ...admin(), TERM: "xterm", COLUMNS: "120" };
    const declined = onTerminal(args, terminal);
    await declined.answer(prompt, "n");
    expect(await declined.exited()).toBe(130);
    expect((await transactionRow(db(), reference)).status).toBe("pending");
    const agreed = onTerminal(args, terminal);
    await agreed.answer(prompt, "y");
    expect(await agreed.exited()).toBe(0);
    expect(agreed.screen()).toMatch(/STATUS\s+failed/);
    expect((await transactionRow(db(), reference)).status).toBe("failed");
    expect(await reconcileWallets(db())).toEqual([]);
  }, 60_000);
});
