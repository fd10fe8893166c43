import { type Command, Option } from "commander";
import { collectPairs, integerOption, withExample } from "../context.ts";

/** `--phone`, `--product` and `--amount` are spelled the same by every vend command; each says what they mean for it. */
export const phoneOption = (help: string) => new Option("--phone <number>", help);
export const productOption = (help: string) => new Option("--product <code>", help);
export const amountOption = (help: string) => new Option("--amount <ngn>", help);
/** The cable TV biller, for paying and for verifying a smartcard. */
export const billerOption = () => new Option("--biller <code>", "dstv, gotv, startimes or showmax");

/** Flags every vend takes. */
export interface CommonVendFlags {
  clientReference?: string;
  metadata?: Record<string, string>;
  idempotencyKey?: string;
  wait?: number;
  yes?: boolean;
}

/** A vend command: `command` with its own options, then the options every vend takes, the example, the action. */
export function vendCommand<F extends CommonVendFlags>(
  command: Command,
  example: string,
  action: (flags: F, command: Command) => Promise<void>,
): Command {
  const withCommon = command
    .option("--client-reference <ref>", "your own reference, echoed on the transaction")
    .option("--metadata <key=value>", "metadata to attach (repeatable)", collectPairs)
    .option("--idempotency-key <key>", "reuse the key of an earlier attempt (a retry); default: a new random key")
    .option(
      "--wait <seconds>",
      "follow the vend up to this many seconds until its status is final (progress on a terminal; a hint if it is not)",
      integerOption(0),
    )
    .option("-y, --yes", "never prompt: no questions, no confirmation (required for a live key's vend without a terminal)");
  return withExample(withCommon, example).action(action);
}

/** The body fields every vend shares, with absent values left out. */
export function commonBody(flags: CommonVendFlags): { client_reference?: string; metadata?: Record<string, string> } {
  return {
    ...(flags.clientReference ? { client_reference: flags.clientReference } : {}),
    ...(flags.metadata ? { metadata: flags.metadata } : {}),
  };
}

/**
 * Header and query parameters of a vend call. The call itself never waits: --wait long-polls the
 * transaction afterwards, so progress can be shown and a wait longer than the server's cap still works.
 */
export function vendParams(key: string) {
  return { header: { "Idempotency-Key": key }, query: {} };
}
