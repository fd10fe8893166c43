import { Argument } from "commander";

/** The `<reference>` of every command about one transaction. */
export const transactionReferenceArgument = (): Argument => new Argument("<reference>", "transaction reference (txn_…)");

/** The `<id>` of every command about one webhook endpoint. */
export const endpointIdArgument = (): Argument => new Argument("<id>", "endpoint id");
