import { randomUUID } from "node:crypto";
import type { ApiPrincipal } from "../auth/service.ts";
import { transactions } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { AppError } from "../errors.ts";
import { randomBase62 } from "../lib/random.ts";
import { presentTransaction, type Transaction } from "../transactions/present.ts";
import { holdFunds } from "../wallet/service.ts";
import type { VendOrder } from "./requests.ts";

export const newReference = () => `txn_${randomBase62(24)}`;

/**
 * The provider that will carry a vend. Test mode always uses the built-in sandbox; live
 * mode has no provider configured yet, so it has no route.
 */
export function routeFor(mode: ApiPrincipal["mode"]): string {
  if (mode === "test") return "sandbox";
  throw new AppError("NO_ROUTE", "No provider route is configured for live vends; nothing was created or charged");
}

/**
 * Accepts a resolved order inside the caller's transaction: the wallet hold (guarded, so the
 * available balance can never go negative), the `queued` transaction and its ledger entry.
 * Throws 402 with nothing written when the available balance does not cover the price.
 */
export async function acceptVend(
  tx: Executor,
  principal: ApiPrincipal,
  order: VendOrder,
  provider: string,
): Promise<Transaction> {
  const id = randomUUID();
  const reference = newReference();
  await holdFunds(tx, principal, order.priceKobo, { id, reference });
  const [row] = await tx
    .insert(transactions)
    .values({
      id,
      reference,
      accountId: principal.accountId,
      mode: principal.mode,
      status: "queued",
      productCode: order.product.code,
      network: order.product.network,
      service: order.product.service,
      destination: order.destination,
      amountKobo: order.amountKobo,
      priceKobo: order.priceKobo,
      metadata: order.metadata,
      clientReference: order.clientReference,
      provider,
      nextAttemptAt: new Date(),
    })
    .returning();
  if (!row) throw new Error("transaction insert returned nothing");
  return presentTransaction(row);
}
