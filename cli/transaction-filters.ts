import { type Command, Option } from "commander";
import { type TransactionStatus, transactionStatuses } from "../generated/constants.ts";
import { addCatalogueFilters, type CatalogueFilters } from "./catalogue-filters.ts";
import { addDateRange } from "./dates.ts";

/** The filters both transaction lists take: the key's own (`transactions list`) and every account's (`admin`). */
export interface TransactionFilters extends CatalogueFilters {
  status?: TransactionStatus;
  destination?: string;
  from?: string;
  to?: string;
  search?: string;
}

/** Adds --status, --destination, --network, --service, --from, --to, then --search, which each list matches its own way. */
export function addTransactionFilters(command: Command, searchHelp: string): Command {
  return addDateRange(
    addCatalogueFilters(
      command
        .addOption(new Option("--status <status>", "only this status").choices(transactionStatuses))
        .option("--destination <value>", "only this phone, meter or smartcard (the real number)"),
      "only this network, disco or biller",
      "only this service",
    ),
  ).option("--search <text>", searchHelp);
}

/** Those filters as the query of either list. */
export function transactionFilterQuery(flags: TransactionFilters): TransactionFilters {
  const { status, destination, network, service, from, to, search } = flags;
  return { status, destination, network, service, from, to, search };
}
