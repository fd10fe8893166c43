import { Command, Option } from "commander";
import { resolveTransactionRequestStatuses } from "../../../generated/constants.ts";
import type { components } from "../../../generated/openapi-fetch-client.ts";
import { formatNgn } from "../../../src/lib/shared/money.ts";
import { transactionReferenceArgument } from "../../arguments.ts";
import { unwrap, type VendClient } from "../../client.ts";
import { confirmDestructive, willAsk, yesOption } from "../../confirm-destructive.ts";
import { contextOf, withExample } from "../../context.ts";
import type { Column } from "../../output.ts";
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

/** `as failed and release NGN 500.00 to the wallet`: what resolving does to the order's hold, read from the API. */
async function whatResolvingDoes(admin: VendClient, reference: string, status: ResolveRequest["status"]): Promise<string> {
  const { price_kobo } = await unwrap(admin.GET("/admin/v1/transactions/{reference}", { params: { path: { reference } } }));
  const held = `NGN ${formatNgn(price_kobo)}`;
  return status === "successful" ? `as successful and capture the ${held} held` : `as failed and release ${held} to the wallet`;
}

/**
 * An operator settles an order the provider never will: the same completion as a provider callback (money
 * moved once, the client's webhook sent). Asks to confirm on a terminal; --yes without one.
 */
export const transactionsResolveCommand = (): Command =>
  withExample(
    new Command("resolve")
      .description(
        "Complete an open (stuck) order by hand as successful or failed, with a note (admin token). " +
          "Asks to confirm on a terminal; --yes without one",
      )
      .addArgument(transactionReferenceArgument())
      .addOption(new Option("--status <status>", "the outcome").choices(resolveTransactionRequestStatuses).makeOptionMandatory())
      .requiredOption("--note <text>", "why (1 to 500 characters); kept on the ledger entry")
      .option("--token <token>", "the electricity token (required for a successful electricity order)")
      .option("--units <units>", "electricity units, as the provider states them")
      .option("--provider-reference <ref>", "the provider's own reference for the order")
      .addOption(yesOption()),
    'vendctl transactions resolve txn_4kq9Zr2mXc81LwPb7sTfYhQe --status successful --note "Confirmed by the provider" --yes',
  ).action(async (reference: string, flags: ResolveFlags, command: Command) => {
    const ctx = contextOf(command);
    const admin = ctx.clients.admin();
    const effect = willAsk(ctx, flags.yes) ? await whatResolvingDoes(admin, reference, flags.status) : `as ${flags.status}`;
    await confirmDestructive(ctx, flags.yes, `Resolve ${reference} ${effect}`, "The client is told by webhook");
    const body: ResolveRequest = {
      status: flags.status,
      note: flags.note,
      ...(flags.token === undefined ? {} : { token: flags.token }),
      ...(flags.units === undefined ? {} : { units: flags.units }),
      ...(flags.providerReference === undefined ? {} : { provider_reference: flags.providerReference }),
    };
    const resolved = await unwrap(
      admin.POST("/admin/v1/transactions/{reference}/resolve", { params: { path: { reference } }, body }),
    );
    await ctx.printer.record(resolved, resolvedColumns);
  });
