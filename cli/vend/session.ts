import type { Command } from "commander";
import type { VendClient } from "../client.ts";
import { type Context, contextOf } from "../context.ts";
import { parseNgn } from "../money.ts";
import { confirmOrCancel, requireFlags } from "../prompt.ts";
import { describePrice } from "./catalogue.ts";
import type { CommonVendFlags } from "./options.ts";

/** What one vend command works with. */
export interface VendSession {
  ctx: Context;
  client: VendClient;
  /** A person can be asked: a terminal, and no --yes. */
  canAsk: boolean;
  /** --amount in kobo, when given. */
  amountKobo: number | undefined;
}

/**
 * Starts a vend: reads --amount, then fails naming every missing flag in `required` when nobody can be
 * asked, before anything is sent.
 */
export function openVend(command: Command, flags: CommonVendFlags & { amount?: string }, required: Record<string, unknown>) {
  const ctx = contextOf(command);
  const canAsk = ctx.interactive && !flags.yes;
  const amountKobo = flags.amount === undefined ? undefined : parseNgn(flags.amount, "--amount");
  requireFlags(required, canAsk);
  const session: VendSession = { ctx, client: ctx.clients.api(), canAsk, amountKobo };
  return session;
}

/** When a person can be asked: quotes the price and asks to confirm `<summary>, paying <price>?`. */
export async function confirmPrice(
  session: VendSession,
  quote: () => Promise<number | undefined>,
  summary: string,
): Promise<void> {
  if (!session.canAsk) return;
  const price = await quote();
  await confirmOrCancel(`${summary}, paying ${describePrice(price)}?`);
}
