import type { Command } from "commander";
import { isMeterNumber, isSmartcardNumber, normalisePhone } from "../../src/lib/shared/destinations.ts";
import { collectPairs, integerOption } from "../context.ts";
import { parseNgn } from "../money.ts";
import { ask } from "../prompt.ts";

/** Flags every vend takes. */
export interface CommonVendFlags {
  clientReference?: string;
  metadata?: Record<string, string>;
  idempotencyKey?: string;
  wait?: number;
  yes?: boolean;
}

export function addCommonVendOptions(command: Command): Command {
  return command
    .option("--client-reference <ref>", "your own reference, echoed on the transaction")
    .option("--metadata <key=value>", "metadata to attach (repeatable)", collectPairs)
    .option("--idempotency-key <key>", "reuse the key of an earlier attempt (a retry); default: a new random key")
    .option("--wait <seconds>", "long-poll up to this many seconds for a final status", integerOption(0))
    .option("-y, --yes", "never prompt: no questions, no confirmation");
}

/** The body fields every vend shares, with absent values left out. */
export function commonBody(flags: CommonVendFlags): { client_reference?: string; metadata?: Record<string, string> } {
  return {
    ...(flags.clientReference ? { client_reference: flags.clientReference } : {}),
    ...(flags.metadata ? { metadata: flags.metadata } : {}),
  };
}

/** Query and header parameters of a vend call. */
export function vendParams(key: string, flags: CommonVendFlags) {
  return { header: { "Idempotency-Key": key }, query: flags.wait === undefined ? {} : { wait: flags.wait } };
}

export const validPhone = (value: string): true | string =>
  normalisePhone(value) !== null || "a Nigerian phone number such as 08031234567";
export const validMeter = (value: string): true | string => isMeterNumber(value) || "11 to 13 digits";
export const validSmartcard = (value: string): true | string => isSmartcardNumber(value) || "10 to 12 digits";

/** Asks for an amount in NGN (`example` shows one when the answer is not an amount) and returns it in kobo. */
export async function askAmount(example: string): Promise<number> {
  const validate = (value: string): true | string =>
    /^\d+(\.\d{1,2})?$/.test(value.trim()) || `an amount in NGN, e.g. ${example}`;
  return parseNgn(await ask("Amount (NGN)", { validate }));
}
