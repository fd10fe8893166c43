import { Command, Option } from "commander";
import { resolveTransactionRequestStatuses } from "../../../generated/constants.ts";
import type { components } from "../../../generated/openapi-fetch-client.ts";
import { unwrap } from "../../client.ts";
import { contextOf, withExample } from "../../context.ts";
import type { Column } from "../../output.ts";
import { confirmOrCancel } from "../../prompt.ts";
import { transactionDetailColumns } from "../../views.ts";

type Schemas = components["schemas"];
type ResolveRequest = Schemas["ResolveTransactionRequest"];

interface ResolveFlags {
  status: ResolveRequest["status"];
  note: string;
  token?: string;
  units?: string;
  providerReference?: string;
  yes?: boolean;
}

const resolvedColumns: Column<Schemas["AdminTransaction"]>[] = [
  ...transactionDetailColumns,
  { key: "account_id", header: "ACCOUNT" },
  { key: "provider" },
];

const consequence = (status: ResolveRequest["status"]) =>
  status === "successful" ? "its hold is captured" : "its hold is released";

/**
 * An operator settles an order the provider never will: the same completion as a provider callback (money
 * moved once, the client's webhook sent). Asks to confirm on a terminal unless --yes.
 */
export const transactionsResolveCommand = withExample(
  new Command("resolve")
    .description("Complete an open (stuck) order by hand as successful or failed, with a note (admin token)")
    .argument("<reference>", "transaction reference (txn_…)")
    .addOption(new Option("--status <status>", "the outcome").choices(resolveTransactionRequestStatuses).makeOptionMandatory())
    .requiredOption("--note <text>", "why (1 to 500 characters); kept on the ledger entry")
    .option("--token <token>", "the electricity token (required for a successful electricity order)")
    .option("--units <units>", "electricity units, as the provider states them")
    .option("--provider-reference <ref>", "the provider's own reference for the order")
    .option("-y, --yes", "do not ask for confirmation"),
  'vendctl transactions resolve txn_4kq9Zr2mXc81LwPb7sTfYhQe --status successful --note "Confirmed by the provider" --yes',
).action(async (reference: string, flags: ResolveFlags, command: Command) => {
  const ctx = contextOf(command);
  if (ctx.interactive && !flags.yes) {
    await confirmOrCancel(`Resolve ${reference} as ${flags.status} (${consequence(flags.status)} and the client is told)?`);
  }
  const body: ResolveRequest = {
    status: flags.status,
    note: flags.note,
    ...(flags.token === undefined ? {} : { token: flags.token }),
    ...(flags.units === undefined ? {} : { units: flags.units }),
    ...(flags.providerReference === undefined ? {} : { provider_reference: flags.providerReference }),
  };
  const resolved = await unwrap(
    ctx.clients.admin().POST("/admin/v1/transactions/{reference}/resolve", { params: { path: { reference } }, body }),
  );
  await ctx.printer.record(resolved, resolvedColumns);
});
