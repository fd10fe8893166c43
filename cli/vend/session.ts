import type { Command } from "commander";
import type { VendClient } from "../client.ts";
import { usesLiveKey } from "../config.ts";
import { confirmDestructive, requireConsent } from "../confirm-destructive.ts";
import { type Context, contextOf } from "../context.ts";
import { parseNgn } from "../money.ts";
import { requireFlags } from "../prompt.ts";
import { describePrice } from "./catalogue.ts";
import type { CommonVendFlags } from "./options.ts";

/** What one vend command works with. */
export interface VendSession {
  ctx: Context;
  client: VendClient;
  /** A person can be asked: a terminal, and no --yes. */
  canAsk: boolean;
  /** A live key: the vend is paid with real money, so it is confirmed (test vends never are). */
  live: boolean;
  /** --amount in kobo, when given. */
  amountKobo: number | undefined;
}

/**
 * Starts a vend: reads --amount, then fails naming every missing flag in `required` when nobody can be
 * asked, and, with a live key, without --yes when there is no terminal to confirm on; both before anything
 * is sent.
 */
export function openVend(command: Command, flags: CommonVendFlags & { amount?: string }, required: Record<string, unknown>) {
  const ctx = contextOf(command);
  const canAsk = ctx.interactive && !flags.yes;
  const amountKobo = flags.amount === undefined ? undefined : parseNgn(flags.amount, "--amount");
  requireFlags(required, canAsk);
  const live = usesLiveKey(ctx.config);
  if (live) requireConsent(ctx, flags.yes, `Vending ${command.name()} with a live key (real money)`);
  const session: VendSession = { ctx, client: ctx.clients.api(), canAsk, live, amountKobo };
  return session;
}

/**
 * A live vend when a person can be asked: quotes the price and asks to confirm `<summary>, paying <price>
 * from the live wallet?`. A test vend is never confirmed: QA scripts loop on them, on terminals too.
 */
export async function confirmPrice(
  session: VendSession,
  quote: () => Promise<number | undefined>,
  summary: string,
): Promise<void> {
  if (!session.live || !session.canAsk) return;
  const price = await quote();
  await confirmDestructive(
    session.ctx,
    false,
    `${summary}, paying ${describePrice(price)} from the live wallet`,
    "It is a real order, paid with real money",
  );
}
