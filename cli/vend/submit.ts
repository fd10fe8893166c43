import { call, type VendClient } from "../client.ts";
import { type Context, newIdempotencyKey } from "../context.ts";
import { confirmOrCancel } from "../prompt.ts";
import { type Transaction, transactionDetailColumns } from "../views.ts";
import type { CommonVendFlags } from "./options.ts";

interface TransactionAnswer {
  data?: { data: Transaction };
  error?: unknown;
  response: Response;
}

/** On a terminal without --yes, the person confirms the price and destination before anything is sent. */
export async function confirmVend(ctx: Context, flags: CommonVendFlags, summary: string): Promise<void> {
  if (ctx.interactive && !flags.yes) await confirmOrCancel(summary);
}

/**
 * Sends one vend under an Idempotency-Key (printed first, so a failed attempt can be retried with it)
 * and prints the transaction as the API returned it.
 */
export async function submitVend(
  ctx: Context,
  flags: CommonVendFlags,
  send: (client: VendClient, idempotencyKey: string) => Promise<TransactionAnswer>,
): Promise<void> {
  const client = ctx.clients.api();
  const key = flags.idempotencyKey ?? newIdempotencyKey();
  await ctx.printer.note(`Idempotency-Key: ${key}`);
  const { data, response } = await call(send(client, key));
  if (response.headers.get("idempotent-replayed") === "true") {
    await ctx.printer.note("Replayed: the answer stored for this Idempotency-Key (no new transaction)");
  }
  await ctx.printer.record(data, transactionDetailColumns);
}
