import { call, type VendClient } from "../client.ts";
import { newIdempotencyKey } from "../context.ts";
import { type Transaction, transactionDetailColumns } from "../views.ts";
import type { CommonVendFlags } from "./options.ts";
import type { VendSession } from "./session.ts";

interface TransactionAnswer {
  data?: { data: Transaction };
  error?: unknown;
  response: Response;
}

/**
 * Sends one vend under an Idempotency-Key (printed first, so a failed attempt can be retried with it)
 * and prints the transaction as the API returned it.
 */
export async function submitVend(
  session: VendSession,
  flags: CommonVendFlags,
  send: (client: VendClient, idempotencyKey: string) => Promise<TransactionAnswer>,
): Promise<void> {
  const { ctx } = session;
  const key = flags.idempotencyKey ?? newIdempotencyKey();
  await ctx.printer.note(`Idempotency-Key: ${key}`);
  const { data, response } = await call(send(session.client, key));
  if (response.headers.get("idempotent-replayed") === "true") {
    await ctx.printer.note("Replayed: the answer stored for this Idempotency-Key (no new transaction)");
  }
  await ctx.printer.record(data, transactionDetailColumns);
}
