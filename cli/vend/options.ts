import type { Command } from "commander";
import { collectPairs, integerOption } from "../context.ts";

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
  /^(\+?234|0)[789][01]\d{8}$/.test(value.replace(/[\s-]/g, "")) || "a Nigerian phone number such as 08031234567";
export const validMeter = (value: string): true | string => /^\d{11,13}$/.test(value) || "11 to 13 digits";
export const validSmartcard = (value: string): true | string => /^\d{10,12}$/.test(value) || "10 to 12 digits";
